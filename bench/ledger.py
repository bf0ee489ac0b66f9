"""What the ledger costs, and what the verification cache saves.

1. Ledger overhead: two suites side by side (four processes each, fake models), one with the
   ledger off (FACTCHECK_LEDGER_ENABLED=false: no wrapping, no ledger rows) and one with it on
   (and a price table), runs alternating between them so that the machine's noise hits both
   alike: K sequential runs at bench/pipeline.py's fixed model latencies (latency p50 and gateway CPU per
   run, as bench/pipeline.py measures them), then C concurrent runs with instant models (gateway
   CPU per run under load). Both backends.
2. The same 10-claim text checked twice, then with one sentence changed, with the cache on
   (mode_config.use_cache), at the fixed latencies and a GPT-4o-like price ($2.50 / $10 per
   million tokens): each run's model calls, tokens, cost, cache hits, latency, and the claims each
   checker was sent.
3. Cache hit rate on a realistic stream: every Factcheck-Bench response (94) checked, then
   re-checked with one sentence edited (the annotators' revision of a false sentence when there is
   one, else a changed number or word), with the built-in local/ engines, cache on: the share of
   verifications served from the cache in the re-checks and over the whole stream.

    python -m bench.ledger [--runs 8] [--concurrency 100] [--backend sqlite|postgresql|both]
                           [--responses 94] [--skip overhead,repeat,stream]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Set as AbstractSet
from contextlib import ExitStack
from pathlib import Path

import grpc

from bench.data import read_jsonl
from bench.pipeline import (
    AFTER_RUN_S,
    BACKENDS,
    CHECKERS,
    CONTENT,
    EXTRACTOR,
    QUESTION,
    REPORTER,
    _set_latencies,
    content_of,
    cpu_seconds,
)
from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.conftest import fresh_database, suite_environment
from tests.fake_model_server import FakeModelServer, claim_ids_in_verify_prompt
from tests.processes import Suite, start_suite

PRICES = {"fake": {"input": 2.5, "output": 10.0}}
LOCAL_EXTRACTOR, LOCAL_CHECKERS, LOCAL_REPORTER = "local/extractor", ["local/checker"], "local/reporter"


def request(
    content: str, *, use_cache: bool = False, checkers=CHECKERS, extractor=EXTRACTOR, reporter=REPORTER
) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(
        content_to_check=content,
        extractor_model=extractor,
        checker_models=checkers,
        reporter_model=reporter,
        use_cache=use_cache,
    )
    return factcheck_pb2.RunRequest(question=QUESTION, mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config)


async def run(stub, req) -> tuple[float, list[factcheck_pb2.FactCheckEvent]]:
    started = time.perf_counter()
    events = [r.event async for r in stub.Run(req, timeout=300)]
    return time.perf_counter() - started, events


def start(models: FakeModelServer, database: str, **extra: str) -> Suite:
    env = {**suite_environment(models, database), "FACTCHECK_MODEL_MAX_CONCURRENCY": "1024", **extra}
    return start_suite(env)


# --- 1. overhead -------------------------------------------------------------------------------------


async def _overhead(suites: dict[str, Suite], models: FakeModelServer, runs: int, concurrency: int) -> dict:
    figures: dict[str, dict[str, list[float]]] = {name: {"latency": [], "cpu": [], "load_cpu": []} for name in suites}
    options = [*CHANNEL_OPTIONS, ("grpc.max_concurrent_streams", 1000)]
    channels = {
        name: grpc.aio.insecure_channel(suite.gateway_target, options=options) for name, suite in suites.items()
    }
    stubs = {name: factcheck_pb2_grpc.FactCheckServiceStub(channel) for name, channel in channels.items()}
    pids = {name: suite.services["gateway"].process.pid for name, suite in suites.items()}
    try:
        _set_latencies(models, 0.0)
        for name in suites:
            await run(stubs[name], request(CONTENT))  # warm-up
        for _ in range(runs):
            for name in suites:
                before = cpu_seconds(pids[name])
                seconds, events = await run(stubs[name], request(CONTENT))
                await asyncio.sleep(AFTER_RUN_S)
                assert events[-1].WhichOneof("event") == "complete"
                figures[name]["latency"].append(seconds)
                figures[name]["cpu"].append(cpu_seconds(pids[name]) - before)
        models.reset()
        for _ in range(2):
            for name in suites:
                before = cpu_seconds(pids[name])
                await asyncio.gather(*(run(stubs[name], request(CONTENT)) for _ in range(concurrency)))
                await asyncio.sleep(AFTER_RUN_S)
                figures[name]["load_cpu"].append((cpu_seconds(pids[name]) - before) / concurrency)
    finally:
        for channel in channels.values():
            await channel.close()
    return {
        name: {
            "latency_p50_s": statistics.median(f["latency"]),
            "cpu_per_run_ms": statistics.median(f["cpu"]) * 1000,
            "cpu_per_run_under_load_ms": min(f["load_cpu"]) * 1000,
        }
        for name, f in figures.items()
    }


def measure_overhead(backend: str, runs: int, concurrency: int) -> dict:
    with ExitStack() as stack, FakeModelServer() as models:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        suites = {}
        try:
            for name, enabled in (("off", "false"), ("on", "true")):
                (scratch / name).mkdir()
                database = stack.enter_context(fresh_database(backend, scratch / name))
                suites[name] = start(
                    models, database, FACTCHECK_LEDGER_ENABLED=enabled, FACTCHECK_MODEL_PRICES=json.dumps(PRICES)
                )
            return asyncio.run(_overhead(suites, models, runs, concurrency))
        finally:
            for suite in suites.values():
                suite.stop()


# --- 2. the same text twice, then one sentence changed ----------------------------------------------


async def _repeat(suite: Suite, models: FakeModelServer) -> list[dict]:
    text = content_of(10)
    changed = text.replace(
        "Bridge 5 over the river was completed in 1805", "Bridge 5 over the river was completed in 1905"
    )
    assert changed != text
    _set_latencies(models, 0.0)
    rows = []
    async with grpc.aio.insecure_channel(suite.gateway_target, options=CHANNEL_OPTIONS) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for label, content in (("first", text), ("same text again", text), ("one sentence changed", changed)):
            seen = len(models.requests)
            seconds, events = await run(stub, request(content, use_cache=True))
            usage = events[-1].complete.usage
            verify_prompts = [r for r in models.requests[seen:] if r.kind == "verify"]
            rows.append(
                {
                    "run": label,
                    "latency_s": seconds,
                    "model_calls": usage.calls,
                    "checker_calls": len(verify_prompts),
                    "claims_sent_to_checkers": sum(len(claim_ids_in_verify_prompt(r.prompt)) for r in verify_prompts),
                    "cache_hits": usage.cache_hits,
                    "tokens": usage.total_tokens,
                    "cost_usd": usage.cost_usd,
                }
            )
    return rows


def measure_repeat(backend: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as scratch, fresh_database(backend, Path(scratch)) as database:
        with FakeModelServer() as models:
            suite = start(models, database, FACTCHECK_MODEL_PRICES=json.dumps(PRICES))
            try:
                return asyncio.run(_repeat(suite, models))
            finally:
                suite.stop()


# --- 3. Factcheck-Bench responses re-checked with small edits ---------------------------------------


_NUMBER = re.compile(r"\b(\d{2,4})\b")


def edited(item: dict) -> tuple[str, str]:
    """The response with one sentence edited, and how."""
    response = item["response"]
    sentences = [s for s in (item.get("sentences") or {}).values() if isinstance(s, dict)]
    for sentence in sentences:
        old, new = sentence.get("text", ""), (sentence.get("revised_decontext") or "").strip()
        if old and new and old in response and new != old and sentence.get("sentence_factuality_label") is False:
            return response.replace(old, new, 1), "annotators' revision"
    if match := _NUMBER.search(response):
        return response[: match.start()] + str(int(match.group(1)) + 1) + response[match.end() :], "a number changed"
    words = response.split()
    return " ".join(words[:-1] + ["indeed", words[-1]]), "a word added"


async def _stream(target: str, responses: list[dict]) -> dict:
    counts = {"original": [0, 0], "edited": [0, 0]}  # [cached verifications, verifications]
    how: dict[str, int] = {}
    async with grpc.aio.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for item in responses:
            text, change = edited(item)
            how[change] = how.get(change, 0) + 1
            for kind, content in (("original", item["response"]), ("edited", text)):
                _, events = await run(
                    stub,
                    request(
                        content,
                        use_cache=True,
                        checkers=LOCAL_CHECKERS,
                        extractor=LOCAL_EXTRACTOR,
                        reporter=LOCAL_REPORTER,
                    ),
                )
                for event in events:
                    if event.WhichOneof("event") == "checker_complete":
                        verifications = event.checker_complete.verifications
                        counts[kind][0] += sum(v.cached for v in verifications)
                        counts[kind][1] += len(verifications)
    cached = counts["original"][0] + counts["edited"][0]
    total = counts["original"][1] + counts["edited"][1]
    return {
        "responses": len(responses),
        "edits": how,
        "edited_hit_rate": counts["edited"][0] / max(counts["edited"][1], 1),
        "edited_verifications": counts["edited"][1],
        "stream_hit_rate": cached / max(total, 1),
        "stream_verifications": total,
    }


def measure_stream(limit: int) -> dict:
    from tests.inprocess import inprocess_settings, serve_everything

    responses = [item for item in read_jsonl("factcheck-bench/factcheck-GPT-benchmark.jsonl") if item.get("response")]
    responses = responses[:limit]

    async def measure(database: str) -> dict:
        settings = inprocess_settings(
            "http://127.0.0.1:9",
            database,
            default_extractor_model="local/extractor",
            default_checker_models=["local/checker"],
            default_reporter_model="local/reporter",
        )
        async with serve_everything(settings) as running:
            return await _stream(running.target, responses)

    with tempfile.TemporaryDirectory() as scratch, fresh_database("sqlite", Path(scratch)) as database:
        from factcheck_gateway.store.migrate import upgrade_database

        upgrade_database(database)
        return asyncio.run(measure(database))


# --- report ------------------------------------------------------------------------------------------


def markdown(overhead: dict, repeat: dict, stream: dict | None) -> list[str]:
    lines = []
    if overhead:
        lines += [
            "| backend | ledger | latency p50 (fixed model latencies) | gateway CPU per run | gateway CPU per run under load |",
            "|---|---|---|---|---|",
        ]
        for backend, by_state in overhead.items():
            for state in ("off", "on"):
                f = by_state[state]
                lines.append(
                    f"| {backend} | {state} | {f['latency_p50_s'] * 1000:.0f} ms | {f['cpu_per_run_ms']:.1f} ms "
                    f"| {f['cpu_per_run_under_load_ms']:.1f} ms |"
                )
        lines.append("")
    if repeat:
        lines += [
            "| backend | run | latency | model calls | checker calls | claims sent to checkers | cache hits | tokens | cost |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for backend, rows in repeat.items():
            for row in rows:
                lines.append(
                    f"| {backend} | {row['run']} | {row['latency_s'] * 1000:.0f} ms | {row['model_calls']} "
                    f"| {row['checker_calls']} | {row['claims_sent_to_checkers']} | {row['cache_hits']} "
                    f"| {row['tokens']} | ${row['cost_usd']:.5f} |"
                )
        lines.append("")
    if stream:
        edits = ", ".join(f"{how} {count}" for how, count in stream["edits"].items())
        lines += [
            "| responses | edits | hit rate of the re-checks | hit rate of the whole stream |",
            "|---|---|---|---|",
            f"| {stream['responses']} | {edits} | {stream['edited_hit_rate']:.1%} of {stream['edited_verifications']} "
            f"verifications | {stream['stream_hit_rate']:.1%} of {stream['stream_verifications']} |",
            "",
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--responses", type=int, default=94)
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: overhead, repeat, stream")
    args = parser.parse_args()
    backends = BACKENDS if args.backend == "both" else (args.backend,)
    started = time.monotonic()
    figures = measure(backends, args.runs, args.concurrency, args.responses, skip=set(args.skip.split(",")))
    print("\n".join(markdown(*figures)))
    print(f"time: {time.monotonic() - started:.0f} s")


def measure(
    backends=BACKENDS,
    runs: int = 8,
    concurrency: int = 100,
    responses: int = 94,
    *,
    skip: AbstractSet[str] = frozenset(),
) -> tuple[dict, dict, dict | None]:
    """Every section: (overhead by backend, the repeated text by backend, the Factcheck-Bench stream)."""
    overhead, repeat, stream = {}, {}, None
    for backend in backends:
        if "overhead" not in skip:
            print(f"{backend}: ledger overhead", file=sys.stderr, flush=True)
            overhead[backend] = measure_overhead(backend, runs, concurrency)
        if "repeat" not in skip:
            print(f"{backend}: the same text twice, then one sentence changed", file=sys.stderr, flush=True)
            repeat[backend] = measure_repeat(backend)
    if "stream" not in skip:
        print(f"Factcheck-Bench stream, {responses} responses", file=sys.stderr, flush=True)
        stream = measure_stream(responses)
    return overhead, repeat, stream


if __name__ == "__main__":
    main()
