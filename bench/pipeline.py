"""What the gateway adds: latency over the model critical path and direct calls, CPU per run, cost per claim.

Four processes and fake models: latency against the model critical path and against direct service
calls, the gateway's CPU per run under load, and its cost as the work grows.

Latency, at fixed model latencies (extract 400 ms, checkers 300/500/700 ms, report
400 ms; the title call instant, then 100 ms), K runs of user content one after another. Each round
measures, one right after the other so that the machine's noise hits them alike:
- the full run: `Run` through the gateway, its stream read to the last event;
- the floor: the same model calls made directly to the extractor, checker and reporter processes over
  gRPC, no gateway (Extract; the checkers' Verify in parallel; the consensus; Report; Title), once in the
  sequential order (Title after Report) and once with Title overlapped (started with Extract: it needs only
  the question and the content).
The model critical path is the sum of the stage delays counting the slowest checker (1.5 s; 1.6 s with
the 100 ms title after the report). Full run / floor is what the gateway adds (database writes, events,
its own hops); floor / critical path is what the services and transport add.

Throughput: an instant fake model server and C concurrent streaming runs (C=100, 500): runs/s, p50/p99,
errors, the gateway's CPU per run and its peak memory.

Growth: content of N sentences (the fake extractor makes one claim per sentence) at the fixed latencies
(title instant), full run against the floor, and the gateway's CPU per run, for N = 1, 10, 100, 300.

CPU is read from /proc: the run time of every thread of the gateway process (task/*/schedstat, ns; the
clock-tick counters of /proc/PID/stat are 10 ms coarse). Per-run CPU in the latency and growth
sections is the median of the CPU used from a run's start to 50 ms after its last event; in the
throughput section, the CPU of the whole round over its runs.

Every section runs on SQLite and PostgreSQL (127.0.0.1:5432, a schema of its own, dropped afterwards)
unless `--backend` says otherwise; the floor does not touch the database and is measured on the first
backend's suite. `--repeat 3` repeats everything with fresh processes and prints the median of the
repeats with their range. `--profile FILE` records the gateway with py-spy (raw collapsed stacks)
during the first throughput round of the first backend and prints where its CPU goes (py-spy slows
that round: profile in a run of its own, e.g. `--runs 0 --claims --backend sqlite --concurrency 100`).
`--save FILE` keeps the raw figures as JSON; `--load FILE` prints their tables again.

    python -m bench.pipeline [--runs 8] [--backend sqlite|postgresql|both] [--concurrency 100 500]
                             [--claims 1 10 100 300] [--growth-runs 5] [--growth-backend both]
                             [--repeat 1] [--profile FILE] [--save FILE] [--load FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from factcheck.core.domain import ClaimVerification, ExtractedClaim
from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    extractor_pb2,
    extractor_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    reporter_pb2,
    reporter_pb2_grpc,
)
from factcheck_gateway.consensus import calculate_consensus
from tests.conftest import fresh_database, suite_environment
from tests.fake_model_server import FakeModelServer
from tests.processes import Suite, start_suite

EXTRACTOR, REPORTER = "fake/extractor", "fake/reporter"
CHECKERS = ["fake/checker-fast", "fake/checker-mid", "fake/checker-slow"]
# The fixed model latencies every latency benchmark uses.
STAGE_LATENCY_S = {"extract": 0.4, "report": 0.4}
CHECKER_LATENCY_S = dict(zip(CHECKERS, (0.3, 0.5, 0.7)))
TITLE_LATENCIES_S = (0.0, 0.1)
MODEL_PATH_S = STAGE_LATENCY_S["extract"] + max(CHECKER_LATENCY_S.values()) + STAGE_LATENCY_S["report"]
QUESTION = "Tell me about the Eiffel Tower"
CONTENT = "The Eiffel Tower was completed in 1889. It is about 330 metres tall."
MAX_CONTENT_LENGTH = 50_000
BACKENDS = ("sqlite", "postgresql")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
RUN_TIMEOUT_S = 300
# CPU the gateway spends after a run's last event (closing the stream, releasing the lease) counts too.
AFTER_RUN_S = 0.05


def critical_path_s(title_s: float, *, overlapped: bool) -> float:
    """The model critical path: the stage delays with the slowest checker, the title after the report
    (the sequential order) or overlapped with the rest."""
    return max(MODEL_PATH_S, title_s) if overlapped else MODEL_PATH_S + title_s


def content_of(claims: int) -> str:
    """Content of `claims` distinct sentences of the same shape: the fake extractor makes one claim of each."""
    return " ".join(
        f"Bridge {n} over the river was completed in {1800 + n % 200} and is {100 + n} metres long."
        for n in range(1, claims + 1)
    )


# --- measuring -----------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """CPU time of every live thread of `pid` (ns resolution); the clock ticks of /proc/PID/stat if not readable."""
    total, found = 0, False
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                total += int(open(f"/proc/{pid}/task/{task}/schedstat").read().split()[0])
                found = True
            except (OSError, ValueError, IndexError):
                pass  # the thread ended
    except OSError:
        pass
    if found:
        return total / 1e9
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def cpu_ticks_seconds(pid: int) -> float:
    """The process's utime + stime from /proc/PID/stat (10 ms resolution, includes threads that ended)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def peak_memory_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _request(content: str) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(
        content_to_check=content,
        extractor_model=EXTRACTOR,
        checker_models=CHECKERS,
        reporter_model=REPORTER,
        max_content_length=MAX_CONTENT_LENGTH,
    )
    return factcheck_pb2.RunRequest(question=QUESTION, mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config)


async def gateway_run(stub, content: str) -> tuple[float, str]:
    """One run through the gateway: seconds to its last event, and that event's kind."""
    started = time.perf_counter()
    last = None
    async for response in stub.Run(_request(content), timeout=RUN_TIMEOUT_S):
        last = response.event
    elapsed = time.perf_counter() - started
    return elapsed, last.WhichOneof("event") if last is not None else "none"


@dataclass
class Direct:
    """Stubs straight to the three services, for the floor."""

    extractor: extractor_pb2_grpc.ExtractorServiceStub
    checker: checker_pb2_grpc.CheckerServiceStub
    reporter: reporter_pb2_grpc.ReporterServiceStub


async def direct_run(direct: Direct, content: str, *, title_overlapped: bool) -> float:
    """The gateway's model calls made directly, in the gateway's order: seconds until the last answer."""
    started = time.perf_counter()
    title_request = reporter_pb2.TitleRequest(model=REPORTER, question=QUESTION, content=content)
    title = (
        asyncio.ensure_future(direct.reporter.Title(title_request, timeout=RUN_TIMEOUT_S)) if title_overlapped else None
    )
    try:
        extracted = await direct.extractor.Extract(
            extractor_pb2.ExtractRequest(model=EXTRACTOR, content=content, max_content_length=MAX_CONTENT_LENGTH),
            timeout=RUN_TIMEOUT_S,
        )
        claims = [ExtractedClaim.from_proto(claim) for claim in extracted.claims]
        verified = await asyncio.gather(
            *(
                direct.checker.Verify(
                    checker_pb2.VerifyRequest(model=model, content=extracted.content, claims=extracted.claims),
                    timeout=RUN_TIMEOUT_S,
                )
                for model in CHECKERS
            )
        )
        consensus = calculate_consensus(
            claims, [[ClaimVerification.from_proto(v) for v in response.verifications] for response in verified]
        )
        await direct.reporter.Report(
            reporter_pb2.ReportRequest(
                model=REPORTER,
                content=extracted.content,
                consensus=[item.to_proto() for item in consensus],
                total_claims=len(claims),
                checker_count=len(CHECKERS),
                extractor_model=EXTRACTOR,
                checker_models=CHECKERS,
            ),
            timeout=RUN_TIMEOUT_S,
        )
        if title is None:
            title_request.content = extracted.content
            await direct.reporter.Title(title_request, timeout=RUN_TIMEOUT_S)
        else:
            await title
    finally:
        if title is not None and not title.done():
            title.cancel()
    return time.perf_counter() - started


@dataclass
class LatencyResult:
    """One backend, one title latency: K rounds of (full run, floors)."""

    backend: str
    title_s: float
    gateway_s: list[float] = field(default_factory=list)
    gateway_cpu_s: list[float] = field(default_factory=list)
    floor_spec_s: list[float] = field(default_factory=list)
    floor_overlap_s: list[float] = field(default_factory=list)
    failed: int = 0


@dataclass
class GrowthResult:
    backend: str
    claims: int
    content_chars: int
    gateway_s: list[float] = field(default_factory=list)
    gateway_cpu_s: list[float] = field(default_factory=list)
    floor_s: list[float] = field(default_factory=list)
    failed: int = 0


@dataclass
class ThroughputResult:
    backend: str
    concurrency: int
    runs_per_s: float
    p50_s: float
    p99_s: float
    errors: int
    gateway_cpu_s_per_run: float
    gateway_cpu_ticks_s_per_run: float
    gateway_peak_mb: float


@dataclass
class ProfileSummary:
    """Where a py-spy profile's samples are: shares of all samples."""

    samples: int
    groups: list[tuple[str, float]]  # by library, from each sample's innermost known frame
    own: list[tuple[str, float]]  # top functions by own time (the innermost Python frame)
    project: list[tuple[str, float]]  # the project's functions by inclusive time (each once per stack)
    threads: list[tuple[str, float]] = field(default_factory=list)  # event loop, worker threads, others


@dataclass
class Measurement:
    """One repeat: every section, every backend."""

    latency: list[LatencyResult] = field(default_factory=list)
    growth: list[GrowthResult] = field(default_factory=list)
    throughput: list[ThroughputResult] = field(default_factory=list)
    profile: ProfileSummary | None = None


def _set_latencies(models: FakeModelServer, title_s: float) -> None:
    models.reset()
    for kind, seconds in STAGE_LATENCY_S.items():
        models.set_latency(kind, seconds)
    for model, seconds in CHECKER_LATENCY_S.items():
        models.set_latency(model, seconds)
    models.set_latency("title", title_s)


async def _timed_gateway_run(stub, content: str, pid: int) -> tuple[float, float, bool]:
    cpu_before = cpu_seconds(pid)
    seconds, last = await gateway_run(stub, content)
    await asyncio.sleep(AFTER_RUN_S)
    return seconds, cpu_seconds(pid) - cpu_before, last == "complete"


async def measure_latency(
    suite: Suite, models: FakeModelServer, backend: str, runs: int, *, floor: bool
) -> list[LatencyResult]:
    pid = suite.services["gateway"].process.pid
    results = []
    async with (
        grpc.aio.insecure_channel(suite.gateway_target, options=CHANNEL_OPTIONS) as gateway_channel,
        _direct_channels(suite) as direct,
    ):
        stub = factcheck_pb2_grpc.FactCheckServiceStub(gateway_channel)
        for title_s in TITLE_LATENCIES_S:
            _set_latencies(models, title_s)
            await gateway_run(stub, CONTENT)  # warm-up: connections, caches
            if floor:
                await direct_run(direct, CONTENT, title_overlapped=False)
            result = LatencyResult(backend, title_s)
            for _ in range(runs):
                seconds, cpu, ok = await _timed_gateway_run(stub, CONTENT, pid)
                if not ok:
                    result.failed += 1
                    continue
                result.gateway_s.append(seconds)
                result.gateway_cpu_s.append(cpu)
                if floor:
                    result.floor_spec_s.append(await direct_run(direct, CONTENT, title_overlapped=False))
                    result.floor_overlap_s.append(await direct_run(direct, CONTENT, title_overlapped=True))
            results.append(result)
    return results


async def measure_growth(
    suite: Suite, models: FakeModelServer, backend: str, sizes: Sequence[int], runs: int
) -> list[GrowthResult]:
    pid = suite.services["gateway"].process.pid
    _set_latencies(models, 0.0)
    results = []
    async with (
        grpc.aio.insecure_channel(suite.gateway_target, options=CHANNEL_OPTIONS) as gateway_channel,
        _direct_channels(suite) as direct,
    ):
        stub = factcheck_pb2_grpc.FactCheckServiceStub(gateway_channel)
        for claims in sizes:
            content = content_of(claims)
            result = GrowthResult(backend, claims, len(content))
            await gateway_run(stub, content)  # warm-up at this size
            for _ in range(runs):
                seconds, cpu, ok = await _timed_gateway_run(stub, content, pid)
                if not ok:
                    result.failed += 1
                    continue
                result.gateway_s.append(seconds)
                result.gateway_cpu_s.append(cpu)
                result.floor_s.append(await direct_run(direct, content, title_overlapped=False))
            results.append(result)
    return results


class _direct_channels:
    """Channels from this process to the suite's extractor, checker and reporter (the gateway's options)."""

    def __init__(self, suite: Suite) -> None:
        self._channels = [
            grpc.aio.insecure_channel(suite.services[name].target, options=CHANNEL_OPTIONS)
            for name in ("extractor", "checker", "reporter")
        ]

    async def __aenter__(self) -> Direct:
        extractor, checker, reporter = self._channels
        return Direct(
            extractor_pb2_grpc.ExtractorServiceStub(extractor),
            checker_pb2_grpc.CheckerServiceStub(checker),
            reporter_pb2_grpc.ReporterServiceStub(reporter),
        )

    async def __aexit__(self, *exc_info: object) -> None:
        for channel in self._channels:
            await channel.close()


async def _throughput_round(stub, backend: str, concurrency: int, pid: int) -> ThroughputResult:
    async def one() -> tuple[float | None, bool]:
        try:
            seconds, last = await gateway_run(stub, CONTENT)
            return seconds, last == "complete"
        except grpc.aio.AioRpcError:
            return None, False

    cpu_before, ticks_before = cpu_seconds(pid), cpu_ticks_seconds(pid)
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    await asyncio.sleep(AFTER_RUN_S)
    cpu, ticks = cpu_seconds(pid) - cpu_before, cpu_ticks_seconds(pid) - ticks_before
    latencies = [s for s, ok in outcomes if ok and s is not None]
    return ThroughputResult(
        backend=backend,
        concurrency=concurrency,
        runs_per_s=len(latencies) / elapsed,
        p50_s=statistics.median(latencies) if latencies else float("nan"),
        p99_s=percentile(latencies, 0.99) if latencies else float("nan"),
        errors=sum(not ok for _, ok in outcomes),
        gateway_cpu_s_per_run=cpu / concurrency,
        gateway_cpu_ticks_s_per_run=ticks / concurrency,
        gateway_peak_mb=peak_memory_mb(pid),
    )


async def measure_throughput(
    suite: Suite, models: FakeModelServer, backend: str, levels: Sequence[int], profile: Path | None = None
) -> list[ThroughputResult]:
    models.reset()
    pid = suite.services["gateway"].process.pid
    options = [*CHANNEL_OPTIONS, ("grpc.max_concurrent_streams", 1000)]
    results = []
    async with grpc.aio.insecure_channel(suite.gateway_target, options=options) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        await asyncio.gather(*(gateway_run(stub, CONTENT) for _ in range(10)))  # warm-up
        for index, level in enumerate(levels):
            recorder = start_profiler(pid, profile) if profile is not None and index == 0 else None
            try:
                results.append(await _throughput_round(stub, backend, level, pid))
            finally:
                if recorder is not None:
                    stop_profiler(recorder)
    return results


def _start_suite(models: FakeModelServer, database_url: str) -> Suite:
    env = suite_environment(models, database_url)
    # The default of 16 concurrent model calls per provider would be the bottleneck under load.
    env["FACTCHECK_MODEL_MAX_CONCURRENCY"] = "1024"
    return start_suite(env)


def measure(
    backends: Sequence[str] = BACKENDS,
    *,
    runs: int = 8,
    levels: Sequence[int] = (100, 500),
    sizes: Sequence[int] = (1, 10, 100, 300),
    growth_runs: int = 5,
    growth_backends: Sequence[str] | None = None,
    profile: Path | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> Measurement:
    """Every section once, on each backend (a fresh suite and database each)."""
    measurement = Measurement()
    growth_backends = backends if growth_backends is None else growth_backends
    for index, backend in enumerate(backends):
        with tempfile.TemporaryDirectory() as scratch, fresh_database(backend, Path(scratch)) as database:
            with FakeModelServer() as models:
                suite = _start_suite(models, database)
                try:
                    if runs:
                        progress(f"{backend}: latency, {runs} rounds per title latency")
                        measurement.latency += asyncio.run(
                            measure_latency(suite, models, backend, runs, floor=index == 0)
                        )
                    if backend in growth_backends and sizes:
                        progress(f"{backend}: growth, claims {list(sizes)}, {growth_runs} runs each")
                        measurement.growth += asyncio.run(measure_growth(suite, models, backend, sizes, growth_runs))
                    progress(f"{backend}: throughput, C = {list(levels)}")
                    measurement.throughput += asyncio.run(
                        measure_throughput(suite, models, backend, levels, profile if index == 0 else None)
                    )
                finally:
                    suite.stop()
    if profile is not None and profile.exists():
        measurement.profile = summarise_profile(profile)
    return measurement


def load(path: Path) -> list[Measurement]:
    """Measurements written by `--save`."""
    return [
        Measurement(
            latency=[LatencyResult(**r) for r in m["latency"]],
            growth=[GrowthResult(**r) for r in m["growth"]],
            throughput=[ThroughputResult(**r) for r in m["throughput"]],
            profile=ProfileSummary(**m["profile"]) if m.get("profile") else None,
        )
        for m in json.loads(path.read_text(encoding="utf-8"))
    ]


# --- profiling -------------------------------------------------------------------------------------------


def start_profiler(pid: int, output: Path) -> subprocess.Popen:
    """py-spy recording `pid` as raw collapsed stacks (non-idle threads: ~ CPU) until stop_profiler."""
    executable = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    process = subprocess.Popen(
        [
            executable,
            "record",
            "--pid",
            str(pid),
            "--nonblocking",
            "--rate",
            "250",
            "--format",
            "raw",
            "--output",
            str(output),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # attached before the round starts
    if process.poll() is not None:
        assert process.stderr is not None  # (stderr=PIPE)
        raise RuntimeError(f"py-spy did not start: {process.stderr.read()}")
    return process


def stop_profiler(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)  # py-spy writes its output on Ctrl-C
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# Where a frame's file puts it, checked in this order (first match wins), for the grouped view.
PROFILE_GROUPS = (
    ("database: SQLAlchemy", ("sqlalchemy/",)),
    ("database: driver (sqlite3, psycopg)", ("sqlite3/", "psycopg/", "psycopg_pool/")),
    ("gRPC (grpc, grpc.aio)", ("grpc/", "grpc_status/")),
    ("protobuf", ("google/protobuf/",)),
    ("asyncio and threads", ("asyncio/", "concurrent/futures/", "threading.py")),
    ("logging and observability", ("logging/", "opentelemetry/", "prometheus_client/", "factcheck/kit/observability/")),
    ("gateway code (services/gateway/factcheck_gateway)", ("services/gateway/factcheck_gateway/",)),
    ("factcheck package", ("factcheck/",)),
)
_FRAME = re.compile(r"^(?P<function>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _frame_parts(frame: str) -> tuple[str, str]:
    match = _FRAME.match(frame.strip())
    return (match.group("function"), match.group("file")) if match else (frame.strip(), "")


def _group_of(path: str) -> str | None:
    for name, markers in PROFILE_GROUPS:
        if any(marker in path for marker in markers):
            return name
    return None


def _short(path: str) -> str:
    """A frame's file without its installation prefix: "sqlalchemy/engine/base.py", "services/gateway/factcheck_gateway/store/stage_store.py"."""
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1]
    if match := re.search(r"(?:^|/)((?:services|factcheck|tests|bench)/.*)$", path):
        return match.group(1)
    return re.sub(r"^.*/lib/python3\.\d+/", "", path)


def summarise_profile(path: Path, top: int = 15) -> ProfileSummary:
    """Shares of a py-spy raw (collapsed stacks) profile: by library, top functions by own time, and the
    project's own functions (services/, factcheck/) by inclusive time.

    Without --native, time in C code (sqlite3's engine, psycopg's libpq, gRPC's core) counts for the
    innermost Python frame calling it: SQLAlchemy's do_execute holds the statements' execution.
    """
    own: Counter[str] = Counter()
    groups: Counter[str] = Counter()
    project: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [_frame_parts(f) for f in stack.split(";") if f and not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        total += count
        function, file = frames[-1]
        own[f"{function} ({_short(file)})"] += count
        groups[next((g for _, f in reversed(frames) if (g := _group_of(f))), "other")] += count
        mine = {f"{function} ({_short(file)})" for function, file in frames if _is_project(file)}
        for name in mine:
            project[name] += count
        threads[_thread_of(stack)] += count
    if not total:
        return ProfileSummary(0, [], [], [])
    return ProfileSummary(
        samples=total,
        groups=[(name, count / total) for name, count in groups.most_common()],
        own=[(name, count / total) for name, count in own.most_common(top)],
        project=[(name, count / total) for name, count in project.most_common(top)],
        threads=[(name, count / total) for name, count in threads.most_common()],
    )


def _thread_of(stack: str) -> str:
    if "_worker (concurrent/futures/thread.py" in stack:
        return "worker threads (asyncio.to_thread)"
    if "run_forever (asyncio/base_events.py" in stack:
        return "event loop thread"
    return "other threads"


def _is_project(path: str) -> bool:
    return ("services/" in path or "factcheck/" in path) and "site-packages" not in path


# --- printing --------------------------------------------------------------------------------------------


def _spread(values: Iterable[float], fmt: Callable[[float], str]) -> str:
    """The median over repeats, with their range when there are several."""
    values = [v for v in values if v == v]  # drop NaN
    if not values:
        return "–"
    middle = fmt(statistics.median(values))
    if len(values) == 1:
        return middle
    return f"{middle} ({fmt(min(values))}–{fmt(max(values))})"


def _s(value: float) -> str:
    return f"{value:.3f} s"


def _ms(value: float) -> str:
    return f"{value * 1000:.1f} ms"


def _x(value: float) -> str:
    return f"{value:.3f}x"


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def markdown(repeats: Sequence[Measurement], *, heading: str = "###") -> list[str]:
    """The three sections as markdown (medians per repeat; with several repeats, median and range)."""
    lines: list[str] = []
    first = repeats[0]
    runs = max((len(r.gateway_s) + r.failed for r in first.latency), default=0)
    floor_by_title = [{r.title_s: r for r in m.latency if r.floor_spec_s} for m in repeats]
    lines += (
        []
        if not first.latency
        else [
            f"{heading} Latency: model critical path, direct service calls (the floor) and the full run",
            "",
            f"Fixed model latencies: extract {STAGE_LATENCY_S['extract'] * 1000:.0f} ms, checkers "
            + "/".join(f"{s * 1000:.0f}" for s in CHECKER_LATENCY_S.values())
            + f" ms, report {STAGE_LATENCY_S['report'] * 1000:.0f} ms; {runs} runs one after another, each followed "
            "by the floor in the spec's order and with the title overlapped. p50 over the runs"
            + (f"; median of {len(repeats)} repeats (range)." if len(repeats) > 1 else "."),
            "",
            "| backend | title call | critical path, title overlapped (spec order) | floor, spec order "
            "| floor, title overlapped | full run p50 | full run p95 | full run / critical path "
            "| full run / floor (spec order) | added by the gateway | gateway CPU per run |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
    )
    keys = [(r.backend, r.title_s) for r in first.latency]
    for backend, title_s in keys:
        rows = [next(r for r in m.latency if (r.backend, r.title_s) == (backend, title_s)) for m in repeats]
        floors = [f.get(title_s) for f in floor_by_title]
        overlapped = critical_path_s(title_s, overlapped=True)
        spec = critical_path_s(title_s, overlapped=False)
        p50 = [_median(r.gateway_s) for r in rows]
        floor_spec = [_median(f.floor_spec_s) if f else float("nan") for f in floors]
        floor_overlap = [_median(f.floor_overlap_s) if f else float("nan") for f in floors]
        failed = sum(r.failed for r in rows)
        lines.append(
            f"| {backend} | {title_s * 1000:.0f} ms | {overlapped:.2f} s ({spec:.2f} s) "
            f"| {_spread(floor_spec, _s)} | {_spread(floor_overlap, _s)} "
            f"| {_spread(p50, _s)}{f' ({failed} failed)' if failed else ''} "
            f"| {_spread([percentile(r.gateway_s, 0.95) if r.gateway_s else float('nan') for r in rows], _s)} "
            f"| {_spread([v / overlapped for v in p50], _x)} "
            f"| {_spread([g / f for g, f in zip(p50, floor_spec)], _x)} "
            f"| {_spread([g - f for g, f in zip(p50, floor_spec)], _ms)} "
            f"| {_spread([_median(r.gateway_cpu_s) for r in rows], _ms)} |"
        )
    if first.latency:
        lines += [
            "",
            "Critical path: the model delays with the slowest checker (the title after the report in brackets). Floor: "
            "Extract, the checkers' Verify in parallel, Report and Title called directly over gRPC from the benchmark, "
            "no gateway (measured on the first backend's processes; it does not touch the database). Added by the "
            "gateway: full run p50 − floor p50 in the spec's order. Gateway CPU per run: one run at a time, median.",
            "",
        ]

    lines += [
        f"{heading} Gateway CPU under load (instant fake models, C concurrent streaming runs)",
        "",
        "| backend | C | runs/s | p50 | p99 | errors | gateway CPU per run | gateway peak memory |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for backend, level in [(r.backend, r.concurrency) for r in first.throughput]:
        throughput_rows = [
            next(r for r in m.throughput if (r.backend, r.concurrency) == (backend, level)) for m in repeats
        ]
        lines.append(
            f"| {backend} | {level} | {_spread([r.runs_per_s for r in throughput_rows], lambda v: f'{v:.1f}')} "
            f"| {_spread([r.p50_s for r in throughput_rows], lambda v: f'{v:.2f} s')} "
            f"| {_spread([r.p99_s for r in throughput_rows], lambda v: f'{v:.2f} s')} "
            f"| {_spread([r.errors for r in throughput_rows], lambda v: f'{v:.0f}')} "
            f"| {_spread([r.gateway_cpu_s_per_run for r in throughput_rows], _ms)} "
            f"| {_spread([r.gateway_peak_mb for r in throughput_rows], lambda v: f'{v:.0f} MB')} |"
        )
    lines.append("")

    if first.growth:
        lines += [
            f"{heading} Cost as the work grows (claims per run, fixed model latencies, title instant)",
            "",
            "| backend | claims | content | floor p50 | full run p50 | added by the gateway | per extra claim "
            "| gateway CPU per run | per extra claim |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        verdicts = []
        for backend in dict.fromkeys(r.backend for r in first.growth):
            sizes = [r.claims for r in first.growth if r.backend == backend]
            added_prev = cpu_prev = None
            points_added, points_cpu = [], []
            for claims in sizes:
                growth_rows = [next(r for r in m.growth if (r.backend, r.claims) == (backend, claims)) for m in repeats]
                added = [_median(r.gateway_s) - _median(r.floor_s) for r in growth_rows]
                cpu = [_median(r.gateway_cpu_s) for r in growth_rows]
                step_added = step_cpu = "–"
                if added_prev is not None:
                    extra = claims - added_prev[0]
                    step_added_values = [(a - b) / extra for a, b in zip(added, added_prev[1])]
                    assert cpu_prev is not None  # (set with added_prev)
                    step_cpu_values = [(a - b) / extra for a, b in zip(cpu, cpu_prev[1])]
                    step_added = _spread(step_added_values, _us)
                    step_cpu = _spread(step_cpu_values, _us)
                points_added.append((claims, statistics.median(added)))
                points_cpu.append((claims, statistics.median(cpu)))
                failed = sum(r.failed for r in growth_rows)
                lines.append(
                    f"| {backend} | {claims} | {growth_rows[0].content_chars} chars "
                    f"| {_spread([_median(r.floor_s) for r in growth_rows], _s)} "
                    f"| {_spread([_median(r.gateway_s) for r in growth_rows], _s)}{f' ({failed} failed)' if failed else ''} "
                    f"| {_spread(added, _ms)} | {step_added} | {_spread(cpu, _ms)} | {step_cpu} |"
                )
                added_prev, cpu_prev = (claims, added), (claims, cpu)
            verdicts += _growth_verdicts(backend, "gateway CPU per run", points_cpu)
            verdicts += _growth_verdicts(backend, "latency added by the gateway", points_added)
        lines += [
            "",
            "Per extra claim: the increase over the previous row divided by the extra claims (the marginal cost); "
            "growth is linear when it stays flat, worse than linear when it rises. A step counts as worse than "
            f"linear when its cost per extra claim is over {SUPERLINEAR_FACTOR}x the step before's, allowing "
            f"{NOISE_S * 1000:.0f} ms of noise in each median (so the steps from 1 to 10 claims tell little).",
            "",
            *verdicts,
            "",
        ]

    profiled = [m.profile for m in repeats if m.profile]
    if profiled:
        profile = profiled[0]
        lines += [
            f"{heading} Where the gateway's CPU goes (py-spy, {first.throughput[0].backend}, "
            f"C={first.throughput[0].concurrency})",
            "",
            f"{profile.samples} samples of the gateway's busy threads (py-spy --nonblocking, idle threads left out). "
            "By library, from each sample's innermost known frame (time in C code counts for its Python caller):",
            "",
            "| part | share |",
            "|---|---|",
            *(f"| {name} | {share * 100:.1f}% |" for name, share in profile.groups),
            "",
            "By thread: " + ", ".join(f"{name} {share * 100:.1f}%" for name, share in profile.threads) + ".",
            "",
            "Top functions by own time:",
            "",
            "| function | share |",
            "|---|---|",
            *(f"| `{name}` | {share * 100:.1f}% |" for name, share in profile.own),
            "",
            "The project's functions by inclusive time (everything they call):",
            "",
            "| function | share |",
            "|---|---|",
            *(f"| `{name}` | {share * 100:.1f}% |" for name, share in profile.project),
            "",
        ]
    return lines


# A step whose cost per extra claim is this much above the step before's (beyond noise) is worse than linear.
SUPERLINEAR_FACTOR = 1.5
# What a median of a few runs on a shared machine can be off by; a step's per-claim cost is known only to
# within NOISE_S divided by its extra claims.
NOISE_S = 0.005


def _us(value: float) -> str:
    return f"{value * 1e6:.0f} µs"


def _growth_verdicts(backend: str, what: str, points: list[tuple[int, float]]) -> list[str]:
    """Whether a cost (seconds at each claim count, ascending) grows worse than linearly: a step whose cost
    per extra claim is above SUPERLINEAR_FACTOR times the previous step's (plus that step's noise per claim),
    by more than NOISE_S over the step."""
    if len(points) < 2:
        return []
    steps = [
        (claims, next_claims, (next_cost - cost) / (next_claims - claims))
        for (claims, cost), (next_claims, next_cost) in zip(points, points[1:])
    ]
    worse = []
    for (start, end, before), (_, next_end, step) in zip(steps, steps[1:]):
        bound = SUPERLINEAR_FACTOR * (max(before, 0.0) + NOISE_S / (end - start))
        if step > bound and (step - max(before, 0.0)) * (next_end - end) > NOISE_S:
            worse.append(f"{end}→{next_end} claims ({_us(step)} per extra claim against {_us(before)} before)")
    (first_claims, first_cost), (last_claims, last_cost) = points[0], points[-1]
    overall = (
        f"{_us((last_cost - first_cost) / (last_claims - first_claims))} per claim from {first_claims} to {last_claims}"
    )
    if worse:
        return [f"- {backend}, {what}: worse than linear at " + "; ".join(worse) + f" ({overall})."]
    return [f"- {backend}, {what}: linear or better within the noise ({overall})."]


def _repeat_progress(n: int, repeat: int, line: str) -> None:
    print(f"[repeat {n + 1}/{repeat}] {line}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="latency rounds per title latency (0: skip)")
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--claims", type=int, nargs="*", default=[1, 10, 100, 300], help="growth sizes (none: skip)")
    parser.add_argument("--growth-runs", type=int, default=5, help="runs per size in the growth section")
    parser.add_argument(
        "--growth-backend", choices=["sqlite", "postgresql", "both"], default="both", help="backends for growth"
    )
    parser.add_argument("--repeat", type=int, default=1, help="repeat everything, print median and range")
    parser.add_argument(
        "--profile", type=Path, help="py-spy raw profile of the first throughput round (py-spy slows that round)"
    )
    parser.add_argument("--save", type=Path, help="also write the raw measurements here (JSON)")
    parser.add_argument("--load", type=Path, help="print the tables of measurements saved earlier; measure nothing")
    args = parser.parse_args()
    pick = {"both": BACKENDS}
    backends = pick.get(args.backend, (args.backend,))
    growth_backends = [b for b in pick.get(args.growth_backend, (args.growth_backend,)) if b in backends]
    if args.load is not None:
        print("\n".join(markdown(load(args.load))))
        return
    started = time.monotonic()
    repeats = []
    for n in range(args.repeat):
        repeats.append(
            measure(
                backends,
                runs=args.runs,
                levels=args.concurrency,
                sizes=args.claims,
                growth_runs=args.growth_runs,
                growth_backends=growth_backends,
                profile=args.profile if n == 0 else None,
                progress=functools.partial(_repeat_progress, n, args.repeat),
            )
        )
    if args.save is not None:
        args.save.write_text(json.dumps([dataclasses.asdict(m) for m in repeats], indent=1), encoding="utf-8")
    for line in markdown(repeats):
        print(line)
    print(f"time: {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
