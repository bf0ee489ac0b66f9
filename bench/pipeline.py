"""End-to-end latency overhead and streaming throughput of the suite (four processes, fake models).

Latency: the fake model server answers each stage after a fixed delay (generate 400 ms,
extract 300 ms, checkers 200/350/500 ms, report 300 ms, title 100 ms); K runs one after
another. The critical path is the sum of the stage delays counting the slowest checker
(1.6 s); the report gives end-to-end time against it, and where the rest goes, from the
events' timestamps (inside stages: gRPC hops, prompt building, parsing; between stages:
the gateway's database writes and bookkeeping).

Throughput: an instant fake model server and C concurrent streaming runs, for each C.
Reports runs/s, p50/p99 latency, errors, the gateway's CPU seconds per run and its peak
memory (from /proc).

    python -m bench.pipeline [--runs 20] [--concurrency 50 200 500]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass

import grpc

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.conftest import suite_environment
from tests.fake_model_server import FakeModelServer
from tests.processes import Suite, start_suite

CHECKERS = ["fake/checker-fast", "fake/checker-mid", "fake/checker-slow"]
LATENCY_S = {"generate": 0.4, "extract": 0.3, "report": 0.3, "title": 0.1}
CHECKER_LATENCY_S = dict(zip(CHECKERS, (0.2, 0.35, 0.5)))
CRITICAL_PATH_S = sum(LATENCY_S.values()) + max(CHECKER_LATENCY_S.values())
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _request(question: bool) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(checker_models=CHECKERS)
    if question:
        config.generator_model = "fake/generator"
    else:
        config.content_to_check = "The Eiffel Tower was completed in 1889. It is about 330 metres tall."
    return factcheck_pb2.RunRequest(
        question="Tell me about the Eiffel Tower", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config
    )


def _start(models: FakeModelServer) -> Suite:
    env = suite_environment(models, f"sqlite:///{tempfile.mkdtemp()}/bench.db")
    # The default of 16 concurrent model calls per provider would be the bottleneck under load.
    env["FACTCHECK_MODEL_MAX_CONCURRENCY"] = "1024"
    return start_suite(env)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class LatencyResult:
    runs: int
    critical_path_s: float
    p50_s: float
    p95_s: float
    in_stage_overhead_ms: float
    between_stage_ms: float


async def _timed_run(stub, request) -> tuple[float, list[factcheck_pb2.FactCheckEvent]]:
    started = time.perf_counter()
    events = [r.event async for r in stub.Run(request, timeout=120)]
    return time.perf_counter() - started, events


def _seconds(event) -> float:
    return event.timestamp.seconds + event.timestamp.nanos / 1e9


def _split_overhead(events) -> tuple[float, float]:
    """(time inside stages beyond the model delays, time between stages), in ms, from event timestamps."""
    at = {}
    for event in events:
        at.setdefault(event.WhichOneof("event"), _seconds(event))
    stages = [
        ("generate_start", "generate_complete", LATENCY_S["generate"]),
        ("extract_start", "extract_complete", LATENCY_S["extract"]),
        ("verify_start", "all_checkers_complete", max(CHECKER_LATENCY_S.values())),
        ("report_start", "report_complete", LATENCY_S["report"]),
    ]
    inside = sum((at[end] - at[start] - model) for start, end, model in stages)
    total = at["complete"] - at["factcheck_start"]
    between = total - sum(at[end] - at[start] for start, end, _ in stages) - LATENCY_S["title"]
    return inside * 1000, between * 1000


async def measure_latency(runs: int) -> LatencyResult:
    with FakeModelServer() as models:
        for kind, seconds in LATENCY_S.items():
            models.set_latency(kind, seconds)
        for model, seconds in CHECKER_LATENCY_S.items():
            models.set_latency(model, seconds)
        suite = _start(models)
        try:
            async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
                stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
                await _timed_run(stub, _request(question=True))  # warm-up: connections, imports
                timings, inside, between = [], [], []
                for _ in range(runs):
                    seconds, events = await _timed_run(stub, _request(question=True))
                    assert events[-1].WhichOneof("event") == "complete", events[-1]
                    timings.append(seconds)
                    split = _split_overhead(events)
                    inside.append(split[0])
                    between.append(split[1])
        finally:
            suite.stop()
    return LatencyResult(
        runs=runs,
        critical_path_s=CRITICAL_PATH_S,
        p50_s=statistics.median(timings),
        p95_s=_percentile(timings, 0.95),
        in_stage_overhead_ms=statistics.median(inside),
        between_stage_ms=statistics.median(between),
    )


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def peak_memory_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class ThroughputResult:
    concurrency: int
    runs_per_s: float
    p50_s: float
    p99_s: float
    errors: int
    gateway_cpu_s_per_run: float
    gateway_peak_mb: float


async def _throughput_round(stub, concurrency: int, pid: int) -> ThroughputResult:
    async def one():
        try:
            seconds, events = await _timed_run(stub, _request(question=False))
            return seconds, events[-1].WhichOneof("event") == "complete"
        except grpc.aio.AioRpcError:
            return None, False

    cpu_before = _cpu_seconds(pid)
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one() for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    cpu = _cpu_seconds(pid) - cpu_before
    latencies = [s for s, ok in outcomes if ok]
    return ThroughputResult(
        concurrency=concurrency,
        runs_per_s=len(latencies) / elapsed,
        p50_s=statistics.median(latencies) if latencies else float("nan"),
        p99_s=_percentile(latencies, 0.99) if latencies else float("nan"),
        errors=sum(not ok for _, ok in outcomes),
        gateway_cpu_s_per_run=cpu / concurrency,
        gateway_peak_mb=peak_memory_mb(pid),
    )


async def measure_throughput(levels: list[int]) -> list[ThroughputResult]:
    with FakeModelServer() as models:
        suite = _start(models)
        pid = suite.services["gateway"].process.pid
        try:
            options = [("grpc.max_concurrent_streams", 1000)]
            async with grpc.aio.insecure_channel(suite.gateway_target, options=options) as channel:
                stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
                await _timed_run(stub, _request(question=False))
                return [await _throughput_round(stub, level, pid) for level in levels]
        finally:
            suite.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[50, 200, 500])
    args = parser.parse_args()
    latency = asyncio.run(measure_latency(args.runs))
    print(
        f"latency: {latency.runs} runs, critical path {latency.critical_path_s:.2f} s, "
        f"p50 {latency.p50_s:.3f} s ({latency.p50_s / latency.critical_path_s:.2f}x), "
        f"p95 {latency.p95_s:.3f} s ({latency.p95_s / latency.critical_path_s:.2f}x); "
        f"overhead inside stages {latency.in_stage_overhead_ms:.0f} ms, between stages {latency.between_stage_ms:.0f} ms"
    )
    for r in asyncio.run(measure_throughput(args.concurrency)):
        print(
            f"throughput C={r.concurrency}: {r.runs_per_s:.1f} runs/s, p50 {r.p50_s:.2f} s, p99 {r.p99_s:.2f} s, "
            f"errors {r.errors}, gateway {r.gateway_cpu_s_per_run * 1000:.1f} ms CPU/run, peak {r.gateway_peak_mb:.0f} MB"
        )


if __name__ == "__main__":
    main()
