"""Pipelined against sequential verification, end to end: the suite as processes, fake models.

The fake model server answers every call as a model writing at a fixed rate: after a fixed
time to the first token (FIRST_TOKEN_S) it writes TOKENS_PER_S tokens a second (a token is a
word with the whitespace before it). The extractor's answer is streamed (server-sent events),
so a pipelined run's checkers start on the first claims while the rest are being written;
the checkers, the reporter and the title get their whole answer once it is written. Checkers
explain each verdict in about EVIDENCE_WORDS words, as the verification prompt asks ("your
reasoning and any supporting or contradicting information"); the report is the fake server's
default (an evidence table, findings and the annotated content, so it grows with the claims).

For content of N claims (one claim a sentence), each repetition runs the same request once
sequentially and once pipelined (FactCheckConfig.pipelined), one after the other, on one
suite (SQLite), and reports end-to-end time (Run called to its last event), the time to
extract_complete and to all_checkers_complete, the pipelined/sequential ratio, and the
checker model calls a run makes (what the overlap costs: each call repeats the content).
The goal: pipelined ≤ 0.8× sequential for 10 claims.

    python -m bench.pipelined [--claims 10 30 100] [--repeat 3] [--tokens-per-s 200] [--database sqlite|postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field

import grpc

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.conftest import fresh_database, suite_environment
from tests.fake_model_server import KINDS, FakeModelServer, verdicts
from tests.processes import start_suite

CHECKERS = ["fake/checker-a", "fake/checker-b", "fake/checker-c"]
TOKENS_PER_S = 200.0
FIRST_TOKEN_S = 0.2
EVIDENCE_WORDS = 40
EVIDENCE = (
    "Reference sources agree with the figure and the date stated in the claim, and no credible source "
    "contradicts them; the wording matches the commonly cited account of the event, so the claim is "
    "accurate as stated, although the exact number is sometimes rounded differently in other reports."
)


def content_of(claims: int) -> str:
    """N factual sentences: the fake extractor makes one claim of each."""
    return " ".join(
        f"Landmark number {i} in the old city was completed in {1700 + i} and stands {50 + i} metres tall."
        for i in range(1, claims + 1)
    )


def request(claims: int, pipelined: bool) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(content_to_check=content_of(claims), checker_models=CHECKERS)
    if pipelined:
        config.pipelined = True
    return factcheck_pb2.RunRequest(
        question="Fact-check these landmarks", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config
    )


@dataclass
class Timing:
    total_s: float
    extracted_s: float  # Run called → extract_complete received
    verified_s: float  # Run called → all_checkers_complete received
    verify_calls: int = 0  # checker model calls of the run (each repeats the content in its prompt)


@dataclass
class SizeResult:
    claims: int
    sequential: list[Timing] = field(default_factory=list)
    pipelined: list[Timing] = field(default_factory=list)

    def median(self, mode: str, name: str = "total_s") -> float:
        return statistics.median(getattr(t, name) for t in getattr(self, mode))

    def ratios(self) -> list[float]:
        return [p.total_s / s.total_s for s, p in zip(self.sequential, self.pipelined)]


async def timed_run(stub, run_request: factcheck_pb2.RunRequest, claims: int, models: FakeModelServer) -> Timing:
    calls_before = len(models.requests)
    started = time.perf_counter()
    at: dict[str, float] = {}
    kinds = []
    extracted = 0
    async for response in stub.Run(run_request, timeout=600):
        kind = response.event.WhichOneof("event")
        kinds.append(kind)
        at.setdefault(kind, time.perf_counter() - started)
        if kind == "extract_complete":
            extracted = response.event.extract_complete.total_claims
    if kinds[-1] != "complete" or extracted != claims:
        raise RuntimeError(f"run did not complete with {claims} claims ({extracted}): {kinds[-3:]}")
    verify_calls = sum(r.kind == "verify" for r in models.requests[calls_before:])
    return Timing(at["complete"], at["extract_complete"], at["all_checkers_complete"], verify_calls)


async def measure(
    sizes: list[int], repeat: int, tokens_per_s: float = TOKENS_PER_S, database: str = "sqlite"
) -> list[SizeResult]:
    with ExitStack() as stack:
        models = stack.enter_context(FakeModelServer())
        for kind in KINDS:
            models.set_latency(kind, FIRST_TOKEN_S)
            models.set_token_rate(kind, tokens_per_s)
        for checker in CHECKERS:
            models.script(checker, verdicts(evidence=EVIDENCE))
        url = stack.enter_context(fresh_database(database, _temp_dir(stack)))
        suite = start_suite(suite_environment(models, url))
        stack.callback(suite.stop)
        async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
            stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            await timed_run(stub, request(3, pipelined=True), 3, models)  # warm-up: connections, imports
            results = []
            for claims in sizes:
                result = SizeResult(claims)
                for _ in range(repeat):
                    result.sequential.append(await timed_run(stub, request(claims, pipelined=False), claims, models))
                    result.pipelined.append(await timed_run(stub, request(claims, pipelined=True), claims, models))
                results.append(result)
                print(line(result), flush=True)
            return results


def _temp_dir(stack: ExitStack):
    from pathlib import Path

    return Path(stack.enter_context(tempfile.TemporaryDirectory()))


def _spread(values: list[float], unit: str = "s") -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}{unit}"
    return f"{statistics.median(values):.2f}{unit} ({min(values):.2f}–{max(values):.2f})"


def line(result: SizeResult) -> str:
    return (
        f"{result.claims} claims: sequential {_spread([t.total_s for t in result.sequential])}, "
        f"pipelined {_spread([t.total_s for t in result.pipelined])}, "
        f"ratio {_spread(result.ratios(), 'x')}; "
        f"verified at {result.median('sequential', 'verified_s'):.2f}s vs {result.median('pipelined', 'verified_s'):.2f}s "
        f"(extraction done at {result.median('sequential', 'extracted_s'):.2f}s vs "
        f"{result.median('pipelined', 'extracted_s'):.2f}s); checker calls {result.median('sequential', 'verify_calls'):g} "
        f"vs {result.median('pipelined', 'verify_calls'):g}"
    )


def markdown(results: list[SizeResult], tokens_per_s: float = TOKENS_PER_S) -> list[str]:
    """The pipelined section of bench/RESULTS.md (below its heading)."""
    repeat = len(results[0].sequential) if results else 0
    lines = [
        f"Every model call: {FIRST_TOKEN_S:g} s to the first token, then {tokens_per_s:g} tokens/s (the extractor "
        f"streams; checkers explain each verdict in about {EVIDENCE_WORDS} words); {len(CHECKERS)} checkers; "
        f"SQLite; median of {repeat} runs per mode (min–max).",
        "",
        "| claims | sequential | pipelined | pipelined / sequential | all checkers done: sequential, pipelined "
        "| checker calls: sequential, pipelined |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.claims} | {_spread([t.total_s for t in r.sequential])} | {_spread([t.total_s for t in r.pipelined])} "
            f"| {_spread(r.ratios(), 'x')} | {r.median('sequential', 'verified_s'):.2f} s, "
            f"{r.median('pipelined', 'verified_s'):.2f} s | {r.median('sequential', 'verify_calls'):g}, "
            f"{r.median('pipelined', 'verify_calls'):g} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tokens-per-s", type=float, default=TOKENS_PER_S)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    args = parser.parse_args()
    results = asyncio.run(measure(args.claims, args.repeat, args.tokens_per_s, args.database))
    print()
    print("\n".join(markdown(results, args.tokens_per_s)))


if __name__ == "__main__":
    main()
