"""Part 3 of bench.reliability: gateways that stop answering for their runs, once per database.

Two gateway replicas share one database (SQLite file or PostgreSQL) and one fake model server.

- Paused owner: a run starts on one replica with a fast and a slow checker; just after the fast
  checker's result (or at another point of the run) its gateway is paused (SIGSTOP); the other
  replica takes the run over once the lease lapses and finishes it; then the paused gateway is
  woken (SIGCONT) and given time to do whatever it still would. Short leases
  (bench.reliability.DURABLE_SETTINGS), so that the take-over comes within seconds.
- Cancel after kill: a run's gateway is SIGKILLed mid-verify (its model calls held open), then
  the run is cancelled on the other replica while a watcher there follows it. Default lease,
  recovery and poll settings: the lease has most of its term left.

Per run it counts, from the fake model server's requests (each run's prompts carry its tag):
duplicate model calls for stored or taken-over stages (a stage stored before the pause asked again,
a taken-over stage asked more than once by either owner, any call after the wake: goal 0; a stage the
paused gateway had asked but not stored, asked again by the new owner, is counted apart), the ledger's rows for the run
against the calls the fake server answered for it (goal equal), and for cancel-after-kill the
time from Cancel to its answer and to the watcher's `cancelled` event (goal under 2 s).
"""

from __future__ import annotations

import asyncio
import signal
import statistics
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.ledger.tables import ModelCallRecord
from factcheck_gateway.store import StageStore
from tests.conftest import CHECKERS, fresh_database, suite_environment
from tests.fake_model_server import Behaviour, FakeModelServer, default_reply, delay, hold_until_closed
from tests.processes import start_service

EXTRACTOR, REPORTER = "fake/extractor", "fake/reporter"
CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times."
)
# The model call behind each stage of a run (the title is stored on the run's row).
STAGE_CALLS = {
    "extract": (EXTRACTOR, "extract"),
    "verify_0": (CHECKERS[0], "verify"),
    "verify_1": (CHECKERS[1], "verify"),
    "report": (REPORTER, "report"),
    "title": (REPORTER, "title"),
}
# Short leases for the paused owner (the take-over must come while it is paused).
SHORT_LEASE = {"FACTCHECK_RUN_LEASE_S": "1.5", "FACTCHECK_RECOVERY_INTERVAL_S": "0.3", "FACTCHECK_WATCH_POLL_S": "0.2"}
SLOW_CHECKER_S = 3.0  # checker 1's every call: in flight when the owner is paused
# Where the owner is paused: after the fast checker's result (the main case), or elsewhere mid-run.
PAUSE_POINTS = ("checker_complete", "checker_complete", "verify_start", "extract_complete")
AWAKE_S = 3.0  # how long the woken gateway is watched for calls it should not make
STREAM_TIMEOUT_S = 90.0


class TaggedModels:
    """The fake model server's answers per run tag: every call answers (checker 1 slowly), except the calls of
    held runs, which are held open; counts the calls it answered per tag."""

    def __init__(self, server: FakeModelServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self.answered: Counter = Counter()  # (tag, model, kind) → answered calls
        for model in (EXTRACTOR, *CHECKERS, REPORTER):
            server.script(model, Behaviour("tagged", self._answer))

    def hold_checkers(self, tag: str) -> None:
        with self._lock:
            self._held.add(tag)

    def _answer(self, request, stop):
        tag = _tag_in(request.prompt)
        with self._lock:
            held = tag in self._held
        if held and request.kind == "verify":
            return hold_until_closed(limit_s=STREAM_TIMEOUT_S)(request, stop)
        behaviour = delay(SLOW_CHECKER_S) if request.model == CHECKERS[1] else default_reply()
        answer = behaviour(request, stop)
        if answer is not None:
            with self._lock:
                self.answered[(tag, request.model, request.kind)] += 1
        return answer

    def requests(self, tag: str) -> list:
        return [r for r in self.server.requests if tag in r.prompt]

    def answered_for(self, tag: str) -> int:
        with self._lock:
            return sum(n for (t, _, _), n in self.answered.items() if t == tag)


def _tag_in(prompt: str) -> str:
    start = prompt.find("owners-")
    return prompt[start : start + len("owners-00000")] if start >= 0 else ""


def _request(tag: str) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question=f"Fact-check {tag}",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=f"This is {tag}. {CONTENT}"),
    )


@dataclass
class OwnerTally:
    backend: str
    paused_runs: int = 0
    paused_correct: int = 0
    taken_over: int = 0
    not_ended_while_paused: int = 0  # e.g. SQLite: the owner was paused holding the database's write lock
    stored_stages_at_pause: int = 0
    duplicate_calls: int = 0  # stored or taken-over stages asked again (goal 0)
    in_flight_at_pause: int = 0  # calls answered to the paused owner, then asked by the new owner
    report_calls: list[int] = field(default_factory=list)
    cancel_runs: int = 0
    cancel_correct: int = 0
    cancel_answer_s: list[float] = field(default_factory=list)
    cancel_watcher_s: list[float] = field(default_factory=list)
    ledger_rows: int = 0
    answered_calls: int = 0
    seconds: float = 0.0
    wrong: list[str] = field(default_factory=list)


class Replicas:
    """Two gateway replicas on one database; a stopped one is restarted on its port."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = env
        self.processes = [start_service("gateway", env) for _ in range(2)]  # one after another: one migrates
        self.ports = [p.target.rsplit(":", 1)[1] for p in self.processes]

    def target(self, index: int) -> str:
        return f"127.0.0.1:{self.ports[index]}"

    async def restart(self, index: int) -> None:
        env = {**self._env, "FACTCHECK_LISTEN": f"127.0.0.1:{self.ports[index]}"}
        self.processes[index] = await asyncio.to_thread(start_service, "gateway", env)

    def stop(self) -> None:
        for process in self.processes:
            if process.process.poll() is None:
                process.process.send_signal(signal.SIGCONT)
            process.stop()


def _ledger_rows(store: StageStore, message_id: str) -> int:
    with Session(store.engine) as session:
        query = select(func.count()).where(ModelCallRecord.message_id == message_id, ModelCallRecord.method != "cache")
        return session.scalar(query) or 0


async def _read_until(call, kind: str) -> list[factcheck_pb2.FactCheckEvent]:
    events = []
    async for response in call:
        events.append(response.event)
        if response.event.WhichOneof("event") == kind:
            return events
    raise RuntimeError(f"the stream ended before {kind}")


async def _watch(target: str, message_id: str) -> list[factcheck_pb2.FactCheckEvent]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        request = factcheck_pb2.WatchRequest(message_id=message_id)
        return [response.event async for response in stub.Watch(request, timeout=STREAM_TIMEOUT_S)]


async def paused_owner(
    replicas: Replicas, models: TaggedModels, store: StageStore, tally: OwnerTally, tag: str, point: str, owner: int
) -> None:
    """Pause the run's gateway after `point`, let the other replica finish the run, wake the paused one."""
    other = 1 - owner
    process = replicas.processes[owner].process
    async with grpc.aio.insecure_channel(replicas.target(owner)) as channel:
        call = factcheck_pb2_grpc.FactCheckServiceStub(channel).Run(_request(tag), timeout=STREAM_TIMEOUT_S)
        events = await _read_until(call, point)
        process.send_signal(signal.SIGSTOP)
        message_id = events[0].message_id
        try:
            await asyncio.sleep(0.1)  # a commit the database was finishing when the gateway stopped has landed
            stored = {stage.stage_type for stage in await asyncio.to_thread(store.get_stages, message_id)}
            watched = await asyncio.wait_for(_watch(replicas.target(other), message_id), STREAM_TIMEOUT_S)
        except (TimeoutError, grpc.aio.AioRpcError):
            watched = []  # the run did not end while its gateway was paused: reported below
        finally:
            woken_at = time.monotonic()
            process.send_signal(signal.SIGCONT)
        await asyncio.sleep(AWAKE_S)
        call.cancel()
    record = await asyncio.to_thread(store.get_message, message_id, tenant_id=DEFAULT_TENANT)
    assert record is not None
    tally.paused_runs += 1
    tally.taken_over += record.resume_count >= 1
    tally.stored_stages_at_pause += len(stored)
    # Until the paused gateway is woken, the calls are the ones it made before the pause (some reach the
    # model server just after it: the checker service forwards them) and the new owner's, which had
    # finished the run by then: every call after the wake is the woken gateway's, and one too many.
    before: Counter = Counter()
    after: Counter = Counter()
    for request in models.requests(tag):
        (before if request.time < woken_at else after)[(request.model, request.kind)] += 1
    duplicates = 0
    last = watched[-1].WhichOneof("event") if watched else None
    if last != "complete":  # not finished while its owner was paused: who asked what after the wake is unknown
        tally.not_ended_while_paused += 1
        before, after = before + after, Counter()
    for stage, key in STAGE_CALLS.items():
        if stage in stored:  # stored before the pause: asked once, never again
            duplicates += before[key] - 1 + after[key]
        else:  # taken over: asked at most once by each owner, the paused one only before its pause
            duplicates += max(0, before[key] - 2) + after[key]
            tally.in_flight_at_pause += min(1, max(0, before[key] - 1))
    tally.duplicate_calls += duplicates
    tally.report_calls.append(before[STAGE_CALLS["report"]] + after[STAGE_CALLS["report"]])
    rows, answered = await asyncio.to_thread(_ledger_rows, store, message_id), models.answered_for(tag)
    tally.ledger_rows += rows
    tally.answered_calls += answered
    ok = record.status == "COMPLETE" and last == "complete" and duplicates == 0 and process.poll() is None
    tally.paused_correct += ok
    if not ok or rows != answered:
        tally.wrong.append(
            f"paused after {point}: {message_id} {record.status} (watcher ended on {last}), resumes "
            f"{record.resume_count}, stored at the pause {sorted(stored)}, calls before/after the wake "
            f"{dict(before)} / {dict(after)}, ledger rows {rows} for {answered} answered calls"
        )


async def cancel_after_kill(
    replicas: Replicas, models: TaggedModels, store: StageStore, tally: OwnerTally, tag: str, owner: int
) -> None:
    """SIGKILL the run's gateway mid-verify, then Cancel on the other replica while a watcher follows there."""
    other = 1 - owner
    models.hold_checkers(tag)
    async with grpc.aio.insecure_channel(replicas.target(owner)) as channel:
        call = factcheck_pb2_grpc.FactCheckServiceStub(channel).Run(_request(tag), timeout=STREAM_TIMEOUT_S)
        events = await _read_until(call, "verify_start")
        await asyncio.sleep(0.2)  # the checker calls reach the model server
        process = replicas.processes[owner].process
        process.send_signal(signal.SIGKILL)
        await asyncio.to_thread(process.wait)
    message_id = events[0].message_id
    async with grpc.aio.insecure_channel(replicas.target(other)) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        watcher = asyncio.create_task(_watch(replicas.target(other), message_id))
        await asyncio.sleep(0.3)
        asked_at = time.monotonic()
        status = "error"
        try:
            response = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=60)
            status = factcheck_pb2.MessageStatus.Name(response.status).removeprefix("MESSAGE_STATUS_")
        except grpc.aio.AioRpcError as error:
            status = f"{error.code().name}: {error.details()}"
        answered_s = time.monotonic() - asked_at
        try:
            watched = await asyncio.wait_for(watcher, STREAM_TIMEOUT_S)
        except (TimeoutError, grpc.aio.AioRpcError):
            watched = []
        watcher_s = time.monotonic() - asked_at
    restart = asyncio.create_task(replicas.restart(owner))
    record = await asyncio.to_thread(store.get_message, message_id, tenant_id=DEFAULT_TENANT)
    assert record is not None
    tally.cancel_runs += 1
    tally.cancel_answer_s.append(answered_s)
    last = watched[-1].WhichOneof("event") if watched else None
    if last == "cancelled":
        tally.cancel_watcher_s.append(watcher_s)
    rows, answered = await asyncio.to_thread(_ledger_rows, store, message_id), models.answered_for(tag)
    tally.ledger_rows += rows
    tally.answered_calls += answered
    ok = status == "CANCELLED" and record.status == "CANCELLED" and last == "cancelled"
    tally.cancel_correct += ok
    if not ok or rows != answered:
        tally.wrong.append(
            f"cancel after kill: {message_id} Cancel answered {status} after {answered_s:.1f} s, stored "
            f"{record.status}, watcher ended on {last} after {watcher_s:.1f} s; "
            f"ledger rows {rows} for {answered} answered calls"
        )
    await restart


async def gateways_that_stop_answering(backend: str, rounds: int) -> OwnerTally:
    """`rounds` paused-owner runs (short leases), then `rounds` cancel-after-kill runs (default settings)."""
    tally = OwnerTally(backend)
    started = time.monotonic()
    number = 0
    with tempfile.TemporaryDirectory() as scratch, fresh_database(backend, Path(scratch)) as database:
        with FakeModelServer() as server:
            models = TaggedModels(server)
            env = suite_environment(server, database)
            workers = {name: start_service(name, env) for name in ("extractor", "checker", "reporter")}
            store = StageStore(database)
            replicas: Replicas | None = None
            try:
                env.update({f"FACTCHECK_{name.upper()}_TARGET": s.target for name, s in workers.items()})
                for settings, scenario in ((SHORT_LEASE, "paused"), ({}, "cancel")):
                    replicas = Replicas({**env, **settings})
                    for index in range(rounds):
                        number += 1
                        tag = f"owners-{number:05d}"
                        if scenario == "paused":
                            point = PAUSE_POINTS[index % len(PAUSE_POINTS)]
                            await paused_owner(replicas, models, store, tally, tag, point, index % 2)
                        else:
                            await cancel_after_kill(replicas, models, store, tally, tag, index % 2)
                    replicas.stop()
                    replicas = None
            finally:
                store.close()
                if replicas is not None:
                    replicas.stop()
                for worker in workers.values():
                    worker.stop()
    tally.seconds = time.monotonic() - started
    return tally


def p50_max(values: list[float]) -> str:
    """Median and maximum of durations in seconds, or a dash for none."""
    if not values:
        return "–"
    return f"{statistics.median(values):.2f} s / {max(values):.2f} s"


def owner_rows(tallies: list[OwnerTally]) -> list[tuple[str, list[str]]]:
    """The table: one row per figure, one column per backend."""

    def row(label: str, value) -> tuple[str, list[str]]:
        return label, [str(value(t)) for t in tallies]

    return [
        row("paused-owner runs (SIGSTOP, take-over, SIGCONT)", lambda t: t.paused_runs),
        row("  correct (COMPLETE once, by the other replica)", lambda t: f"{t.paused_correct}/{t.paused_runs}"),
        row("  taken over by the other replica", lambda t: t.taken_over),
        row("  not finished while the owner was paused", lambda t: t.not_ended_while_paused),
        row(
            "  duplicate model calls, stored or taken-over stages",
            lambda t: f"{t.duplicate_calls} (stages stored at the pause: {t.stored_stages_at_pause})",
        ),
        row("  report calls per run (max)", lambda t: max(t.report_calls, default=0)),
        row("  unstored stages asked by both owners (before the pause)", lambda t: t.in_flight_at_pause),
        row("cancel-after-kill runs (default lease)", lambda t: t.cancel_runs),
        row("  correct (Cancel CANCELLED, watcher ends cancelled)", lambda t: f"{t.cancel_correct}/{t.cancel_runs}"),
        row("  Cancel to its answer, p50 / max", lambda t: p50_max(t.cancel_answer_s)),
        row("  Cancel to the watcher's `cancelled`, p50 / max", lambda t: p50_max(t.cancel_watcher_s)),
        row("ledger rows / calls the fake server answered", lambda t: f"{t.ledger_rows} / {t.answered_calls}"),
        row("time", lambda t: f"{t.seconds:.0f} s"),
    ]


def column(t: OwnerTally) -> str:
    return f"{'SQLite' if t.backend == 'sqlite' else 'PostgreSQL'}, 2 replicas"
