"""Reliability under injected faults: every run must end in the right state with every stage row kept once.

Part 1, downstream faults: the suite as processes on SQLite, with two checker replicas behind
one target, and the fake model server scripted per run with random faults: 429 and 500
bursts, persistent failures, garbage output, slow answers, a reporter that fails, a client
that disconnects after the first event, and a checker replica killed mid-run (then restarted).
For each run it derives what must have happened from the faults injected (the terminal
status, and which stage rows must exist) and compares with what the gateway streamed and stored.

Part 2, durable runs (crash recovery), once per database: rounds of 1–3 concurrent runs with short
leases. In half of the rounds the gateway running the first run is SIGKILLed mid-run and
restarted at once (PostgreSQL: two replicas on one database, the other one or the restarted one
resumes the runs; SQLite: one gateway, the restarted one resumes them). Clients follow their
run through every break: a client whose stream breaks, or that drops it on purpose, reconnects
with Watch(after_seq) on a replica that is up (or retries Run with its request_id if it never
saw the run's id). Some runs are cancelled mid-stage while their model calls are held open.
Each run is checked against the store: terminal status (stored, GetResult, last event), stage
rows lost or duplicated or stored after Cancel answered, stored events (seq 1..N, each expected
event once), the events the client saw (exactly the stored ones, in order, once each), model
calls repeated for stages stored before a kill (fake model server requests), and the time from
the SIGKILL to the run's first new event.

Part 3, gateways that stop answering for their runs (bench/reliability_owners.py), once per database,
two replicas: an owner paused (SIGSTOP) mid-run, its run taken over and finished by the other
replica, then woken (SIGCONT); and Cancel on one replica of a run whose gateway was SIGKILLed, with
the default lease. It reports duplicate model calls for stored or taken-over stages (goal 0), the
time from Cancel to `cancelled` (goal under 2 s) and ledger rows against the calls the fake model
server answered (goal equal).

    python -m bench.reliability [--runs 60] [--rounds 24] [--owner-rounds 4] [--seed 1]
                                [--backend sqlite|postgresql|both|none]

(`--runs 0` leaves part 1 out, `--rounds 0` part 2, `--owner-rounds 0` part 3.)
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import signal
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bench.reliability_owners import OwnerTally, gateways_that_stop_answering, owner_rows, p50_max
from bench.reliability_owners import column as owner_column
from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.runs.events import TERMINAL_EVENTS, event_key
from factcheck_gateway.store import StageStore
from factcheck_gateway.store.models import Message
from tests.conftest import CHECKERS, FULL_SEQUENCE, fresh_database, suite_environment
from tests.fake_model_server import Behaviour, FakeModelServer, default_reply, delay, fail, garbage, hold_until_closed
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
        record = store.get_message(message_id, tenant_id=DEFAULT_TENANT)
        assert record is not None
        status = record.status
        if status != "RUNNING":
            return status
        await asyncio.sleep(0.05)
    return "RUNNING"


async def downstream_faults(runs: int, seed: int) -> Tally:
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


# --- durable runs: gateway kills and restarts, reconnecting watchers, cancellations -----------------

# Short leases, as in tests/test_durable_runs.py: a killed gateway's runs are taken over within seconds.
DURABLE_SETTINGS = {
    "FACTCHECK_RUN_LEASE_S": "1.5",
    "FACTCHECK_RECOVERY_INTERVAL_S": "0.3",
    "FACTCHECK_WATCH_POLL_S": "0.2",
}
EXTRACTOR, REPORTER = "fake/extractor", "fake/reporter"
# The model call behind each stored stage (the title is stored on the run's row, not as a stage).
STAGE_CALLS = {
    "extract": (EXTRACTOR, "extract"),
    "verify_0": (CHECKERS[0], "verify"),
    "verify_1": (CHECKERS[1], "verify"),
    "report": (REPORTER, "report"),
    "title": (REPORTER, "title"),
}
ALL_ROWS = frozenset({"extract", "verify_0", "verify_1", "report"})
# Where Cancel is sent (after this event) and the model calls held open from then on, so that
# the Cancel lands while they are in flight and the run cannot end any other way.
CANCEL_POINTS = {
    "extract_start": {(EXTRACTOR, "extract")},
    "verify_start": {(CHECKERS[0], "verify"), (CHECKERS[1], "verify")},
    "checker_complete": {(CHECKERS[1], "verify")},  # checker 0 answers, checker 1 is in flight
    "report_start": {(REPORTER, "report")},
    "report_complete": {(REPORTER, "title")},
}
# In a kill round the gateway running the round's first run is SIGKILLed 0–0.3 s after one of
# these events, while every model call takes KILL_LATENCY_S: mid-stage, or while a stage is stored.
KILL_POINTS = (
    "factcheck_start",
    "extract_complete",
    "verify_start",
    "checker_complete",
    "all_checkers_complete",
    "report_start",
    "report_complete",
)
KILL_LATENCY_S, LATENCY_S = 0.25, 0.1
KILL_SHARE, CANCEL_SHARE, DROP_SHARE, EARLY_DROP_SHARE = 0.5, 0.25, 0.35, 0.15
ROUND_TIMEOUT_S = 120.0
STREAM_TIMEOUT_S = 90.0
TAG = re.compile(r"bench-\d{5}")


class PerRunModels:
    """The fake model server scripted per run: each run's prompts carry its tag (in its content and
    question), so concurrent runs get their own behaviour and their model calls are counted apart."""

    def __init__(self, server: FakeModelServer) -> None:
        self._server = server
        self._lock = threading.Lock()
        self._plans: dict[str, tuple[float, set[tuple[str, str]]]] = {}
        routed = Behaviour("per-run", self._answer)
        for model in (EXTRACTOR, *CHECKERS, REPORTER):
            server.script(model, routed)

    def plan(self, tag: str, latency_s: float, held: set[tuple[str, str]]) -> None:
        with self._lock:
            self._plans[tag] = (latency_s, held)

    def _answer(self, request, stop):
        found = TAG.search(request.prompt)
        with self._lock:
            latency_s, held = self._plans.get(found.group(0) if found else "", (0.0, set()))
        if (request.model, request.kind) in held:
            return hold_until_closed(limit_s=STREAM_TIMEOUT_S)(request, stop)
        return delay(latency_s)(request, stop) if latency_s else default_reply()(request, stop)

    def calls(self, tag: str) -> Counter:
        """The run's model requests by (model, kind)."""
        return Counter((r.model, r.kind) for r in self._server.requests if tag in r.prompt)


class Gateways:
    """Gateway replicas on one database, each restarted on its own port so that clients find it again."""

    def __init__(self, env: dict[str, str], count: int) -> None:
        self._env = env
        self.processes: list[ServiceProcess] = []
        for _ in range(count):  # one after another: the first one migrates the database
            self.processes.append(start_service("gateway", env))
        self.ports = [p.target.rsplit(":", 1)[1] for p in self.processes]
        self.up = [True] * count
        self.kills = 0

    def target(self, index: int) -> str:
        return f"127.0.0.1:{self.ports[index]}"

    async def pick(self, rng: random.Random) -> int:
        """A replica that is up (waits while every one is down)."""
        while not (live := [i for i, up in enumerate(self.up) if up]):
            await asyncio.sleep(0.05)
        return rng.choice(live)

    async def kill(self, index: int) -> tuple[int, float]:
        """SIGKILL one replica; returns its pid and the moment of the signal."""
        self.up[index] = False
        self.kills += 1
        process = self.processes[index].process
        killed_at = time.monotonic()
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.wait)
        return process.pid, killed_at

    async def restart(self, index: int) -> None:
        env = {**self._env, "FACTCHECK_LISTEN": f"127.0.0.1:{self.ports[index]}"}
        self.processes[index] = await asyncio.to_thread(start_service, "gateway", env)
        self.up[index] = True

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


@dataclass
class KillMark:
    """A run caught unfinished by a gateway kill: what was stored then, and when it moved on."""

    killed_at: float
    last_seq: int
    stored: set[str]  # stage types (and "title") stored before the kill
    stored_at: float | None = None  # when the store first held a newer event
    claimed_at: float | None = None  # when another gateway held its lease
    by_restarted: bool | None = None  # claimed by the restarted gateway (or by the other replica)


@dataclass
class DurableRun:
    number: int
    replica: int
    rng: random.Random
    cancel_after: str | None = None
    # The client drops a stream after this many of its events (0: the Run call before reading anything).
    drops: list[int] = field(default_factory=list)
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    message_id: str | None = None
    received: list[tuple[factcheck_pb2.FactCheckEvent, float]] = field(default_factory=list)
    seen: defaultdict = field(default_factory=lambda: defaultdict(asyncio.Event))
    run_calls: int = 0
    watch_calls: int = 0
    dropped: int = 0  # streams the client dropped
    cancel_status: str | None = None
    rows_at_cancel: set[str] | None = None
    kills: list[KillMark] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        tag = self.tag
        self.request = factcheck_pb2.RunRequest(
            question=f"Fact-check {tag}",
            mode=factcheck_pb2.MODE_FACT_CHECK,
            mode_config=factcheck_pb2.FactCheckConfig(content_to_check=f"This is {tag}. {CONTENT}"),
            request_id=self.request_id,
        )

    @property
    def tag(self) -> str:
        return f"bench-{self.number:05d}"

    @property
    def last_seq(self) -> int:
        return self.received[-1][0].seq if self.received else 0

    @property
    def ended(self) -> bool:
        return bool(self.received) and self.received[-1][0].WhichOneof("event") in TERMINAL_EVENTS

    def receive(self, event: factcheck_pb2.FactCheckEvent) -> None:
        self.received.append((event, time.monotonic()))
        self.message_id = self.message_id or event.message_id
        self.seen[event.WhichOneof("event")].set()

    def expected_status(self) -> str:
        return "CANCELLED" if self.cancel_after else "COMPLETE"

    def expected_kinds(self) -> list[str]:
        if not self.cancel_after:
            return FULL_SEQUENCE
        return FULL_SEQUENCE[: FULL_SEQUENCE.index(self.cancel_after) + 1] + ["cancelled"]

    def expected_rows(self) -> set[str]:
        kinds = self.expected_kinds()
        rows = {"extract"} if "extract_complete" in kinds else set()
        rows |= {f"verify_{i}" for i in range(kinds.count("checker_complete"))}
        return rows | ({"report"} if "report_complete" in kinds else set())


@dataclass
class DurableTally:
    backend: str
    gateways: str
    runs: int = 0
    kills: int = 0
    dropped: int = 0
    cancels: int = 0
    watch_calls: int = 0
    run_retries: int = 0
    second_runs: int = 0
    interrupted: int = 0
    resumed_without_kill: int = 0
    correct: int = 0
    rows_lost: int = 0
    rows_duplicated: int = 0
    rows_after_cancel: int = 0
    watcher_lost: int = 0
    watcher_duplicated: int = 0
    watcher_out_of_order: int = 0
    store_lost: int = 0
    store_duplicated: int = 0
    store_gaps: int = 0
    stages_before_kill: int = 0
    repeated_calls: int = 0
    resume_s: list[float] = field(default_factory=list)
    claim_s: list[float] = field(default_factory=list)
    by_other: int = 0
    by_restarted: int = 0
    seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def faults(self) -> int:
        return self.kills + self.dropped + self.cancels


RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}


async def follow(gateways: Gateways, run: DurableRun) -> None:
    """The client: Run, and whenever its stream breaks or is dropped, Watch(after_seq) on a replica that is up
    (Run again with the same request_id if it never saw the run's id)."""
    drops = list(run.drops)
    replica = run.replica
    while not run.ended:
        async with grpc.aio.insecure_channel(gateways.target(replica)) as channel:
            stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            if run.message_id is None:
                run.run_calls += 1
                call = stub.Run(run.request, timeout=STREAM_TIMEOUT_S)
            else:
                run.watch_calls += 1
                request = factcheck_pb2.WatchRequest(message_id=run.message_id, after_seq=run.last_seq)
                call = stub.Watch(request, timeout=STREAM_TIMEOUT_S)
            try:
                await _read(call, run, drops)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRYABLE:
                    run.errors.append(f"{error.code().name}: {error.details()}")
                    return
                await asyncio.sleep(0.05)  # its gateway was killed: reconnect elsewhere
        replica = await gateways.pick(run.rng)


async def _read(call, run: DurableRun, drops: list[int]) -> None:
    """Read one stream until the run's final event, or until the client drops it as planned."""
    if drops and drops[0] == 0:  # dropped before reading anything
        drops.pop(0)
        await asyncio.sleep(run.rng.uniform(0, 0.05))
        call.cancel()
        run.dropped += 1
        return
    count = 0
    async for response in call:
        run.receive(response.event)
        count += 1
        if drops and count == drops[0] and not run.ended:
            drops.pop(0)
            call.cancel()
            run.dropped += 1
            await asyncio.sleep(run.rng.uniform(0, 0.3))
            return
    if not run.ended:
        run.errors.append(f"a stream ended without the final event after seq {run.last_seq}")


def stored_runs(store: StageStore, question: str) -> int:
    """How many runs the database holds for one request (each run's question carries its tag)."""
    with Session(store.engine) as session:
        return session.scalar(select(func.count()).select_from(Message).where(Message.question == question)) or 0


def _status_name(value: int) -> str:
    return factcheck_pb2.MessageStatus.Name(value).removeprefix("MESSAGE_STATUS_")


async def cancel_at(gateways: Gateways, store: StageStore, run: DurableRun) -> None:
    """Cancel the run on any replica that is up once it reached its cancel point (the held calls are in flight)."""
    await run.seen[run.cancel_after].wait()
    await asyncio.sleep(run.rng.uniform(0, 0.2))
    while run.cancel_status is None:
        async with grpc.aio.insecure_channel(gateways.target(await gateways.pick(run.rng))) as channel:
            stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            try:
                response = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=run.message_id), timeout=30)
                run.cancel_status = _status_name(response.status)
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.FAILED_PRECONDITION:  # a retry after the first one landed
                    found = re.search(r"status (\w+)", error.details() or "")
                    run.cancel_status = found.group(1) if found else error.details()
                elif error.code() in RETRYABLE:
                    await asyncio.sleep(0.05)
                else:
                    run.errors.append(f"Cancel: {error.code().name}: {error.details()}")
                    return
    assert run.message_id is not None  # (cancelled after its first event)
    run.rows_at_cancel = {row.id for row in await asyncio.to_thread(store.get_stages, run.message_id)}


async def kill_at(gateways: Gateways, store: StageStore, runs: list[DurableRun], kind: str, after_s: float) -> None:
    """SIGKILL the gateway of the round's first run after `kind` (+ after_s), restart it at once, and time how
    long each run it left unfinished takes to be claimed and to store its next event."""
    first = runs[0]
    await first.seen[kind].wait()
    await asyncio.sleep(after_s)
    pid, killed_at = await gateways.kill(first.replica)
    restart = asyncio.create_task(gateways.restart(first.replica))
    await asyncio.sleep(0.1)  # a commit the database was finishing when its client died has landed
    pending: list[tuple[str, KillMark]] = []
    for run in runs:
        record = await asyncio.to_thread(store.find_by_request_id, run.request_id, tenant_id=DEFAULT_TENANT)
        if record is None or record.finished or _owner_pid(record.lease_owner) != pid:
            continue
        stages = await asyncio.to_thread(store.get_stages, record.id)
        stored = {stage.stage_type for stage in stages} | ({"title"} if record.title else set())
        mark = KillMark(killed_at, record.last_seq, stored)
        run.kills.append(mark)
        pending.append((record.id, mark))
    marks, owners = [mark for _, mark in pending], {}
    while pending and time.monotonic() - killed_at < ROUND_TIMEOUT_S:
        for item in list(pending):
            message_id, mark = item
            record = await asyncio.to_thread(store.get_message, message_id, tenant_id=DEFAULT_TENANT)
            assert record is not None
            now = time.monotonic()
            if mark.claimed_at is None and _owner_pid(record.lease_owner) != pid:  # another gateway's, or ended
                mark.claimed_at, owners[id(mark)] = now, _owner_pid(record.lease_owner)
            if record.last_seq > mark.last_seq:
                mark.stored_at = now
                mark.claimed_at = mark.claimed_at or now
                pending.remove(item)
        await asyncio.sleep(0.02)
    await restart
    restarted_pid = gateways.processes[first.replica].process.pid
    for mark in marks:
        if owners.get(id(mark)) is not None:
            mark.by_restarted = owners[id(mark)] == restarted_pid


def _owner_pid(owner: str | None) -> int | None:
    """The process id in a lease owner (services/gateway/factcheck_gateway/runs/registry.py gateway_owner_id: host-pid-random)."""
    parts = (owner or "").rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None


async def durable_round(
    gateways: Gateways, models: PerRunModels, store: StageStore, rng: random.Random, first_number: int
) -> list[DurableRun]:
    """A few concurrent runs with their faults (at most one gateway kill)."""
    kill = rng.random() < KILL_SHARE
    runs: list[DurableRun] = []
    for number in range(first_number, first_number + rng.choice((1, 2, 3))):
        run = DurableRun(number, await gateways.pick(rng), random.Random(rng.random()))
        if not (kill and not runs) and rng.random() < CANCEL_SHARE:  # the kill follows the first run: never held
            run.cancel_after = rng.choice(list(CANCEL_POINTS))
        if rng.random() < DROP_SHARE:
            run.drops = [rng.randint(1, 8)] + ([rng.randint(1, 4)] if rng.random() < 0.5 else [])
        if rng.random() < EARLY_DROP_SHARE:  # it must retry Run with its request_id: it never saw the run's id
            run.drops.insert(0, 0)
        models.plan(run.tag, KILL_LATENCY_S if kill else LATENCY_S, CANCEL_POINTS.get(run.cancel_after or "", set()))
        runs.append(run)
    work = [follow(gateways, run) for run in runs]
    work += [cancel_at(gateways, store, run) for run in runs if run.cancel_after]
    if kill:
        work.append(kill_at(gateways, store, runs, rng.choice(KILL_POINTS), rng.uniform(0, 0.3)))
    try:
        await asyncio.wait_for(asyncio.gather(*work), ROUND_TIMEOUT_S)
    except TimeoutError:
        for run in runs:
            run.errors.append(f"the round did not end within {ROUND_TIMEOUT_S:.0f} s")
    give_up = time.monotonic() + 60
    while not all(gateways.up):  # a restart still under way after a timeout
        if time.monotonic() > give_up:
            raise RuntimeError("a killed gateway did not start again")
        await asyncio.sleep(0.1)
    return runs


async def check_run(
    gateways: Gateways, models: PerRunModels, store: StageStore, run: DurableRun, tally: DurableTally
) -> None:
    """Compare what the client saw, what the store holds and what the models were asked with what must be."""
    tally.runs += 1
    tally.dropped += run.dropped
    tally.watch_calls += run.watch_calls
    tally.run_retries += max(0, run.run_calls - 1)
    tally.cancels += 1 if run.cancel_after else 0
    tally.interrupted += len(run.kills)
    record = await asyncio.to_thread(store.find_by_request_id, run.request_id, tenant_id=DEFAULT_TENANT)
    if record is None:
        tally.wrong.append(f"{run.tag}: no run was stored for its request_id")
        return
    status = await wait_done(store, record.id)
    record = await asyncio.to_thread(store.get_message, record.id, tenant_id=DEFAULT_TENANT)
    assert record is not None
    stages = await asyncio.to_thread(store.get_stages, record.id)
    stored = await asyncio.to_thread(store.events_after, record.id, 0, 100_000)
    async with grpc.aio.insecure_channel(gateways.target(await gateways.pick(run.rng))) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        result = await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=record.id), timeout=30)
    problems = list(run.errors)
    found: Counter = Counter()  # this run's lost, duplicated and repeated items, by DurableTally field
    found["second_runs"] = await asyncio.to_thread(stored_runs, store, run.request.question) - 1

    # Stage rows: each expected one exactly once; none stored after Cancel answered.
    rows = Counter(stage.stage_type for stage in stages)
    expected_rows = run.expected_rows()
    found["rows_lost"] = len(expected_rows - set(rows))
    found["rows_duplicated"] = sum(n - 1 for n in rows.values() if n > 1)
    if set(rows) - expected_rows:
        problems.append(f"unexpected rows {sorted(set(rows) - expected_rows)}")
    if run.rows_at_cancel is not None:
        found["rows_after_cancel"] = len({stage.id for stage in stages} - run.rows_at_cancel)

    # Stored events: seq 1..N, every expected event once, no event stored twice.
    events = [factcheck_pb2.FactCheckEvent.FromString(e.payload) for e in stored]
    seqs = [e.seq for e in stored]
    found["store_gaps"] = (max(seqs) - len(set(seqs))) if seqs else 0
    found["store_duplicated"] = sum(n - 1 for n in Counter(event_key(e) for e in events).values() if n > 1)
    kinds, expected_kinds = Counter(e.WhichOneof("event") for e in events), Counter(run.expected_kinds())
    found["store_lost"] = sum((expected_kinds - kinds).values())
    if kinds - expected_kinds:
        problems.append(f"unexpected events {dict(kinds - expected_kinds)}")

    # What the client saw over all its streams: exactly the stored events, in order, once each.
    received = [event for event, _ in run.received]
    got = {event.seq: event for event in received}
    found["watcher_lost"] = sum(1 for e in events if got.get(e.seq) != e)
    found["watcher_duplicated"] = len(received) - len(got)
    found["watcher_out_of_order"] = sum(1 for a, b in zip(received, received[1:]) if b.seq < a.seq)

    # Stages stored before a kill were not asked of their model again.
    calls = models.calls(run.tag)
    stored_stages = set(rows) | ({"title"} if record.title else set())
    if unseen := sorted(stage for stage in stored_stages if calls[STAGE_CALLS[stage]] == 0):
        problems.append(f"no model request seen for stored {unseen}")  # the per-run count would be meaningless
    before_kill = set().union(*(mark.stored for mark in run.kills)) if run.kills else set()
    tally.stages_before_kill += len(before_kill)
    found["repeated_calls"] = sum(max(0, calls[STAGE_CALLS[stage]] - 1) for stage in before_kill)

    # Time from the kill to the run's first new event (stored, or received by the client).
    for mark in run.kills:
        seen = [t for event, t in run.received if event.seq > mark.last_seq and t >= mark.killed_at]
        moments = [t for t in (mark.stored_at, min(seen, default=None)) if t is not None]
        if moments:
            tally.resume_s.append(min(moments) - mark.killed_at)
        else:
            problems.append(f"not resumed after the kill at seq {mark.last_seq}")
        if mark.claimed_at is not None:
            tally.claim_s.append(mark.claimed_at - mark.killed_at)
        tally.by_restarted += mark.by_restarted is True
        tally.by_other += mark.by_restarted is False
    if record.resume_count > len(run.kills):
        tally.resumed_without_kill += 1
        tally.notes.append(f"{run.tag} {record.id}: resumed {record.resume_count} time(s), drops {run.drops}")

    expected = run.expected_status()
    last_kind = received[-1].WhichOneof("event") if received else None
    checks = {
        "status": status == expected,
        "GetResult": _status_name(result.result.status) == expected,
        "client's last event": last_kind == run.expected_kinds()[-1],
        "message id": run.message_id == record.id,
        "Cancel answer": run.cancel_after is None or run.cancel_status == "CANCELLED",
    }
    problems += [f"{name} wrong" for name, ok in checks.items() if not ok]
    if all(checks.values()) and not run.errors:
        tally.correct += 1
    for name, count in found.items():
        setattr(tally, name, getattr(tally, name) + count)
    problems += [f"{name} {count}" for name, count in found.items() if count]
    if problems:
        tally.wrong.append(
            f"{run.tag} {record.id}: cancel_after={run.cancel_after} drops={run.drops} kills={len(run.kills)} "
            f"resumes={record.resume_count} -> {status} (Cancel {run.cancel_status}, client ended on {last_kind}), "
            f"rows {dict(rows)}: {'; '.join(problems)}"
        )


async def durable_runs(backend: str, rounds: int, seed: int) -> DurableTally:
    """Rounds of concurrent runs on one database with gateway kills, dropped streams and cancellations.

    PostgreSQL: two gateway replicas (a killed one is restarted; the other resumes its runs or the
    restarted one does, whichever claims them first). SQLite: one gateway, restarted after each kill.
    """
    replicas = 2 if backend == "postgresql" else 1
    tally = DurableTally(backend, "2 replicas" if replicas == 2 else "1 gateway, restarted")
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch, fresh_database(backend, Path(scratch)) as database:
        with FakeModelServer() as server:
            models = PerRunModels(server)
            env = {**suite_environment(server, database), **DURABLE_SETTINGS}
            workers = {name: start_service(name, env) for name in ("extractor", "checker", "reporter")}
            gateways = None
            store = StageStore(database)
            try:
                env.update({f"FACTCHECK_{name.upper()}_TARGET": s.target for name, s in workers.items()})
                gateways = Gateways(env, replicas)
                number = 1
                for _ in range(rounds):
                    runs = await durable_round(gateways, models, store, rng, number)
                    number += len(runs)
                    for run in runs:
                        await check_run(gateways, models, store, run, tally)
                tally.kills = gateways.kills
            finally:
                store.close()
                if gateways is not None:
                    gateways.stop()
                for worker in workers.values():
                    worker.stop()
    tally.seconds = time.monotonic() - started
    return tally


# --- report ---------------------------------------------------------------------------------------------


@dataclass
class Report:
    downstream: Tally | None
    durable: list[DurableTally]
    owners: list[OwnerTally] = field(default_factory=list)


def durable_rows(tallies: list[DurableTally]) -> list[tuple[str, list[str]]]:
    """The durable-runs table: one row per figure, one column per backend."""

    def row(label: str, value) -> tuple[str, list[str]]:
        return label, [str(value(t)) for t in tallies]

    return [
        row("runs", lambda t: t.runs),
        row("faults injected", lambda t: t.faults),
        row("  gateway SIGKILLs (then restarted)", lambda t: t.kills),
        row("  streams dropped by the client", lambda t: t.dropped),
        row("  Cancel mid-run", lambda t: t.cancels),
        row("runs interrupted by a kill", lambda t: t.interrupted),
        row("  resumed by the other replica / restarted one", lambda t: f"{t.by_other} / {t.by_restarted}"),
        row("runs resumed without a kill (lease lapsed)", lambda t: t.resumed_without_kill),
        row("reconnections (Watch after_seq)", lambda t: t.watch_calls),
        row("Run retried with its request_id / second runs", lambda t: f"{t.run_retries} / {t.second_runs}"),
        row("correct terminal state", lambda t: f"{t.correct}/{t.runs}"),
        row("stage rows lost / duplicated", lambda t: f"{t.rows_lost} / {t.rows_duplicated}"),
        row("stage rows stored after Cancel", lambda t: t.rows_after_cancel),
        row(
            "events lost / duplicated, watchers",
            lambda t: (
                f"{t.watcher_lost} / {t.watcher_duplicated}"
                + (f" ({t.watcher_out_of_order} out of order)" if t.watcher_out_of_order else "")
            ),
        ),
        row("events lost / duplicated, store", lambda t: f"{t.store_lost} / {t.store_duplicated}"),
        row("gaps in stored seq", lambda t: t.store_gaps),
        row("repeated model calls, stored stages", lambda t: f"{t.repeated_calls} (of {t.stages_before_kill})"),
        row("kill to claimed by a gateway, p50 / max", lambda t: p50_max(t.claim_s)),
        row("kill to resumed (next event), p50 / max", lambda t: p50_max(t.resume_s)),
        row("time", lambda t: f"{t.seconds:.0f} s"),
    ]


def _column(t: DurableTally) -> str:
    return f"{'SQLite' if t.backend == 'sqlite' else 'PostgreSQL'}, {t.gateways}"


def _print_table(rows: list[tuple[str, list[str]]], columns: list[str]) -> None:
    width = max(len(label) for label, _ in rows) + 2
    widths = [max(len(c), 12) + 2 for c in columns]
    print("  " + " " * width + "".join(c.rjust(w) for c, w in zip(columns, widths)))
    for label, values in rows:
        print("  " + label.ljust(width) + "".join(v.rjust(w) for v, w in zip(values, widths)))


def print_report(report: Report) -> None:
    tally = report.downstream
    if tally is not None:
        print("Downstream faults (SQLite, one gateway, two checker replicas)")
        print(f"  runs                         {tally.runs}")
        by_fault = ", ".join(f"{k} {v}" for k, v in sorted(tally.by_fault.items()))
        print(f"  faults injected              {tally.faults}  ({by_fault})")
        print(f"  correct terminal state       {tally.correct}/{tally.runs}")
        print(f"  stage rows lost              {tally.rows_lost}")
        print(f"  stage rows duplicated        {tally.rows_duplicated}")
        for line in tally.wrong[:10]:
            print("    wrong:", line)
    if report.durable:
        print()
        print("Durable runs: gateway kills and restarts, reconnecting watchers, cancellations")
        _print_table(durable_rows(report.durable), [_column(t) for t in report.durable])
        for t in report.durable:
            for line in t.wrong[:10]:
                print(f"    wrong ({t.backend}):", line)
            for line in t.notes[:10]:
                print(f"    resumed without a kill ({t.backend}):", line)
    if report.owners:
        print()
        print("Gateways that stop answering: a paused owner woken after the take-over, Cancel after a kill")
        _print_table(owner_rows(report.owners), [owner_column(t) for t in report.owners])
        for o in report.owners:
            for line in o.wrong[:10]:
                print(f"    wrong ({o.backend}):", line)


def markdown(report: Report) -> list[str]:
    """The reliability section of bench/RESULTS.md (below its heading)."""
    tally = report.downstream
    lines = []
    if tally is not None:
        lines.append(
            f"Downstream faults (SQLite, one gateway, two checker replicas): {tally.runs} runs, {tally.faults} "
            f"faults injected; correct terminal state {tally.correct}/{tally.runs}; stage rows lost "
            f"{tally.rows_lost}, duplicated {tally.rows_duplicated}."
        )
    if not report.durable:
        return lines + owner_markdown(report.owners)
    settings = ", ".join(f"{k} {v}" for k, v in DURABLE_SETTINGS.items())
    lines += [
        "",
        "Durable runs: rounds of 1–3 concurrent runs; in half of them the gateway running the first run is "
        "SIGKILLed mid-run (and restarted at once); clients drop their stream and reconnect with "
        f"Watch(after_seq) on a replica that is up; some runs are cancelled mid-stage ({settings}).",
        "",
        "| | " + " | ".join(_column(t) for t in report.durable) + " |",
        "|---|" + "---|" * len(report.durable),
    ]
    lines += [f"| {label.strip()} | " + " | ".join(values) + " |" for label, values in durable_rows(report.durable)]
    lines += [
        "",
        "Events are compared with the stored run_events (seq 1..N, every expected event once) and with what "
        "each client received over all its streams; repeated model calls count the fake model server's "
        "requests for stages stored before the kill. Kill to claimed: until another gateway holds the run's "
        "lease (the lease lapsing, then a recovery pass); kill to resumed: until the run's first new event is "
        f"stored or received (it includes the interrupted stage's {KILL_LATENCY_S} s model call). Runs resumed "
        "without a kill: their lease lapsed with no kill, e.g. a Run dropped by its client while the gateway "
        "was recording it (leased but never started; recovery takes it over once its lease lapses).",
    ]
    return lines + owner_markdown(report.owners)


def owner_markdown(owners: list[OwnerTally]) -> list[str]:
    if not owners:
        return []
    lines = [
        "",
        "Gateways that stop answering for their runs (two replicas per database): an owner paused (SIGSTOP) "
        "mid-run, after the fast checker's result or elsewhere, while the slow checker's call is in flight; the "
        "other replica takes the run over (lease 1.5 s) and finishes it; the paused gateway is woken (SIGCONT) "
        "and watched for 3 s. And Cancel on one replica of a run whose gateway was SIGKILLed mid-verify, with "
        "the default lease (30 s), recovery and poll settings, while a watcher follows the run there.",
        "",
        "| | " + " | ".join(owner_column(t) for t in owners) + " |",
        "|---|" + "---|" * len(owners),
    ]
    lines += [f"| {label.strip()} | " + " | ".join(values) + " |" for label, values in owner_rows(owners)]
    return lines


def measure(runs: int, rounds: int, seed: int, backends: tuple[str, ...], owner_rounds: int = 4) -> Report:
    downstream = asyncio.run(downstream_faults(runs, seed)) if runs else None
    durable = [asyncio.run(durable_runs(backend, rounds, seed)) for backend in backends] if rounds else []
    owners = [asyncio.run(gateways_that_stop_answering(backend, owner_rounds)) for backend in backends if owner_rounds]
    return Report(downstream, durable, owners)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60, help="runs with downstream faults")
    parser.add_argument("--rounds", type=int, default=24, help="rounds of durable runs per database")
    parser.add_argument(
        "--owner-rounds", type=int, default=4, help="paused-owner and cancel-after-kill runs per database"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both", "none"], default="both")
    parser.add_argument("--markdown", action="store_true", help="also print the section of bench/RESULTS.md")
    args = parser.parse_args()
    backends = {"both": ("sqlite", "postgresql"), "none": ()}.get(args.backend, (args.backend,))
    started = time.monotonic()
    report = measure(args.runs, args.rounds, args.seed, backends, args.owner_rounds)
    print_report(report)
    print(f"\ntime {time.monotonic() - started:.0f} s")
    if args.markdown:
        print("\n" + "\n".join(markdown(report)))


if __name__ == "__main__":
    main()
