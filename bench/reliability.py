"""Reliability under injected faults: every run must end in the right state with every stage row kept once.

Starts the suite as processes on SQLite, with two checker replicas behind one target,
and the fake model server scripted per run with random faults: 429 and 500 bursts,
persistent failures, garbage output, slow answers, a reporter that fails, a client that
disconnects after the first event, and a checker replica killed mid-run (then restarted).

For each run it derives what must have happened from the faults injected (the terminal
status, and which stage rows must exist) and compares with what the gateway streamed and
stored. Rows lost or duplicated must be 0.

    python -m bench.reliability [--runs 60] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field

import grpc

from factcheck.security.tenants import DEFAULT_TENANT
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from services.gateway.store import StageStore
from tests.conftest import CHECKERS, suite_environment
from tests.fake_model_server import FakeModelServer, default_reply, delay, fail, garbage
from tests.processes import ServiceProcess, start_service, start_suite

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times."
)
# Persistent faults make a model's call fail; bursts are retried away by the model client.
FAULTS = {
    "ok": lambda: [],
    "burst_429": lambda: [fail(429, retry_after=0.05)],
    "burst_500": lambda: [fail(500)],
    "slow": lambda: [delay(0.3)],
    "fails": lambda: [fail(500)] * 10,
    "garbage": lambda: [garbage()] * 10,
}
PERSISTENT = {"fails", "garbage"}


@dataclass
class Scenario:
    extractor: str
    checkers: list[str]
    reporter: str
    disconnect: bool
    kill_replica: bool

    @property
    def faults(self) -> list[str]:
        injected = [self.extractor, *self.checkers, self.reporter]
        faults = [f for f in injected if f != "ok"]
        return faults + (["disconnect"] if self.disconnect else []) + (["kill"] if self.kill_replica else [])

    def expected_status(self) -> set[str]:
        if self.extractor in PERSISTENT:
            return {"FAILED"}
        if all(c in PERSISTENT for c in self.checkers):
            return {"FAILED"}
        if self.kill_replica:  # the killed replica's call may fail; if it was the only working one, the run fails
            return {"COMPLETE", "FAILED"}
        return {"COMPLETE"}


@dataclass
class Tally:
    runs: int = 0
    faults: int = 0
    correct: int = 0
    rows_lost: int = 0
    rows_duplicated: int = 0
    by_fault: Counter = field(default_factory=Counter)
    wrong: list[str] = field(default_factory=list)


def random_scenario(rng: random.Random) -> Scenario:
    def pick() -> str:
        return rng.choice(list(FAULTS))

    return Scenario(
        extractor=rng.choice(["ok"] * 4 + list(FAULTS)),
        checkers=[pick(), pick()],
        reporter=rng.choice(["ok", "ok", "fails", "burst_500"]),
        disconnect=rng.random() < 0.15,
        kill_replica=rng.random() < 0.1,
    )


def script(models: FakeModelServer, scenario: Scenario) -> None:
    models.reset()
    ok = default_reply()
    models.script("fake/extractor", *FAULTS[scenario.extractor](), ok)
    for model, fault in zip(CHECKERS, scenario.checkers):
        behaviours = FAULTS[fault]()
        if scenario.kill_replica:
            behaviours = [delay(1.0)] + behaviours  # keep the call in flight while a replica dies
        models.script(model, *behaviours, ok)
    models.script("fake/reporter", *FAULTS[scenario.reporter](), ok)


async def run_one(stub, scenario: Scenario, replicas: list[ServiceProcess], restart) -> tuple[str, list[str]]:
    request = factcheck_pb2.RunRequest(
        question="q",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=CONTENT),
    )
    call = stub.Run(request, timeout=60)
    first = await call.read()
    message_id = first.event.message_id
    kinds = [first.event.WhichOneof("event")]
    if scenario.kill_replica:
        await asyncio.sleep(0.4)
        replicas[1].process.send_signal(signal.SIGKILL)
    if scenario.disconnect:
        call.cancel()
    else:
        while (response := await call.read()) is not grpc.aio.EOF:
            kinds.append(response.event.WhichOneof("event"))
    if scenario.kill_replica:
        replicas[1].process.wait()
        restart()
    return message_id, kinds


def expected_rows(scenario: Scenario, status: str) -> set[str]:
    """Rows a run must have stored, whatever else happened: its extraction, and its report when complete."""
    rows = set()
    if scenario.extractor not in PERSISTENT:
        rows.add("extract")
    if status == "COMPLETE":
        rows.add("report")
    return rows


async def wait_done(store: StageStore, message_id: str) -> str:
    for _ in range(600):
        status = store.get_message(message_id, tenant_id=DEFAULT_TENANT).status
        if status != "RUNNING":
            return status
        await asyncio.sleep(0.05)
    return "RUNNING"


async def main_async(runs: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    database = f"sqlite:///{tempfile.mkdtemp()}/reliability.db"
    with FakeModelServer() as models:
        env = {**suite_environment(models, database), "FACTCHECK_STAGE_TIMEOUT_MS": "10000"}
        replicas = [start_service("checker", env), start_service("checker", env)]
        ports = [r.target.rsplit(":", 1)[1] for r in replicas]

        def restart() -> None:
            replicas[1] = start_service("checker", {**env, "FACTCHECK_LISTEN": f"127.0.0.1:{ports[1]}"})

        suite = start_suite(env, checker_target="ipv4:" + ",".join(r.target for r in replicas))
        store = StageStore(database)
        try:
            async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
                stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
                for _ in range(runs):
                    scenario = random_scenario(rng)
                    script(models, scenario)
                    message_id, kinds = await run_one(stub, scenario, replicas, restart)
                    status = await wait_done(store, message_id)
                    rows = Counter(r.stage_type for r in store.get_stages(message_id))
                    checker_events = kinds.count("checker_complete")
                    tally.runs += 1
                    tally.faults += len(scenario.faults)
                    tally.by_fault.update(scenario.faults)
                    expected = expected_rows(scenario, status)
                    lost = len(expected - set(rows))
                    consistent = True
                    if not scenario.disconnect:  # every streamed checker result has its row
                        lost += max(0, checker_events - sum(n for t, n in rows.items() if t.startswith("verify_")))
                        consistent = (kinds[-1] == "complete") == (status == "COMPLETE")
                    tally.rows_lost += lost
                    tally.rows_duplicated += sum(n - 1 for n in rows.values() if n > 1)
                    if status in scenario.expected_status() and lost == 0 and consistent:
                        tally.correct += 1
                    else:
                        tally.wrong.append(
                            f"{message_id}: {scenario} -> {status} (streamed {kinds[-1]}), rows {dict(rows)}"
                        )
        finally:
            store.close()
            suite.stop()
            for replica in replicas:
                replica.stop()
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    tally = asyncio.run(main_async(args.runs, args.seed))
    print(f"runs                         {tally.runs}")
    print(
        f"faults injected              {tally.faults}  ({', '.join(f'{k} {v}' for k, v in sorted(tally.by_fault.items()))})"
    )
    print(f"correct terminal state       {tally.correct}/{tally.runs}")
    print(f"stage rows lost              {tally.rows_lost}")
    print(f"stage rows duplicated        {tally.rows_duplicated}")
    print(f"time                         {time.monotonic() - started:.1f} s")
    for line in tally.wrong[:10]:
        print("  wrong:", line)


if __name__ == "__main__":
    main()
