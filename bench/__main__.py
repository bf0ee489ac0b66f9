"""Run every benchmark and write bench/RESULTS.md: `python -m bench`.

Latency overhead and throughput (bench/pipeline.py), the embedded engines' speed and
memory (bench/engines.py, bench/extractor_quality.py, bench/checker_accuracy.py),
accuracy and extraction quality, retrieval speed at 10k and 100k passages (bench/retrieval.py;
`--million` adds 1M, several minutes more) and reliability under injected faults
(bench/reliability.py). Benchmarks print figures; they are not tests.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import time
from pathlib import Path

from bench import checker_accuracy, engines, extractor_quality, pipeline, reliability, retrieval

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%" if value <= 1 else f"{value:.1f}%"


def retrieval_table(results: list[dict]) -> str:
    """The retrieval benchmark as a Markdown table, with how each step in size grew."""
    rows = [
        "| backend | passages | load | loaded/s | query p50 | query p95 | store search p50 / p95 | evidence hit@3 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rows.append(
            f"| {r['backend']} | {r['passages']:,} | {r['load_seconds']} s | {r['passages_per_second']:,} "
            f"| {r['query_ms_p50']} ms ({r['query_ms_p50_range'][0]}–{r['query_ms_p50_range'][1]}) "
            f"| {r['query_ms_p95']} ms ({r['query_ms_p95_range'][0]}–{r['query_ms_p95_range'][1]}) "
            f"| {r['search_ms_p50']} / {r['search_ms_p95']} ms | {r['evidence_hit_at_3']} |"
        )
    notes = [
        "",
        "Query: one claim through the Retriever (store candidates, BM25 over the pool, top 3), 300 claims, "
        "3 passes: median pass (lowest–highest). Load: `bulk_load` (services/gateway/knowledge/bulk.py). "
        "1M passages: `python -m bench --million` or `python -m bench.retrieval --million`.",
        "",
        *(f"- {line}" for line in retrieval.growth(results)),
    ]
    return "\n".join(rows + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--million", action="store_true", help="retrieval at 1,000,000 passages too (minutes)")
    args = parser.parse_args()
    started = time.monotonic()
    lines: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    today = datetime.date.today().isoformat()
    say(f"# Benchmark results ({today})")
    say()
    say(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, `python -m bench`.")
    say()

    latency = asyncio.run(pipeline.measure_latency(20))
    say("## Latency overhead (fake models with fixed stage delays, 20 runs one after another)")
    say()
    say("| critical path | p50 | p50 / critical | p95 | p95 / critical | inside stages | between stages |")
    say("|---|---|---|---|---|---|---|")
    say(
        f"| {latency.critical_path_s:.2f} s | {latency.p50_s:.3f} s | {latency.p50_s / latency.critical_path_s:.2f}x "
        f"| {latency.p95_s:.3f} s | {latency.p95_s / latency.critical_path_s:.2f}x "
        f"| {latency.in_stage_overhead_ms:.0f} ms | {latency.between_stage_ms:.0f} ms |"
    )
    say()
    say(
        "Inside stages: gRPC hops gateway→service, prompt building, the HTTP call to the model server and "
        "parsing. Between stages: the gateway's stage-row commits, the title call's hop and event bookkeeping."
    )
    say()

    say("## Throughput (instant fake models, C concurrent streaming runs)")
    say()
    say("| C | runs/s | p50 | p99 | errors | gateway CPU per run | gateway peak memory |")
    say("|---|---|---|---|---|---|---|")
    for r in asyncio.run(pipeline.measure_throughput([50, 200, 500])):
        say(
            f"| {r.concurrency} | {r.runs_per_s:.1f} | {r.p50_s:.2f} s | {r.p99_s:.2f} s | {r.errors} "
            f"| {r.gateway_cpu_s_per_run * 1000:.1f} ms | {r.gateway_peak_mb:.0f} MB |"
        )
    say()

    extraction = extractor_quality.measure()
    checking = checker_accuracy.evaluate()
    memory = engines.service_peak_memory()
    say("## Embedded engines (single process)")
    say()
    say("| engine | claims/s | note |")
    say("|---|---|---|")
    say(f"| local/extractor | {extraction['local_extractor']['claims_per_s']:.0f} | on the factcheck-GPT responses |")
    say(f"| local/checker | {checking['engine_claims_per_s']:.0f} | 10 claims a prompt, 3 passages a claim |")
    say()
    say("Peak memory after a run on local models: " + ", ".join(f"{k} {v:.0f} MB" for k, v in memory.items()) + ".")
    say()

    say("## Accuracy: local/checker on Factcheck-Bench subtask 3 (held-out test split, by claim)")
    say()
    say("| system | balanced accuracy | accuracy |")
    say("|---|---|---|")
    for system, scores in checking["test"].items():
        say(f"| {system} | {_pct(scores['balanced_accuracy'])} | {_pct(scores['accuracy'])} |")
    say()
    matrix = checking["test"]["local/checker judge"]["confusion"]
    labels = list(matrix)
    say(
        "Confusion (rows gold, columns predicted): "
        + "; ".join(f"{gold}: " + ", ".join(f"{matrix[gold][p]}" for p in labels) for gold in labels)
        + f" (columns {', '.join(labels)})."
    )
    say()

    say("## Extraction quality: local/extractor against factcheck-GPT gold claims (content-word F1 ≥ 0.6)")
    say()
    say("| system | precision | recall | F1 |")
    say("|---|---|---|---|")
    for name, key in (("local/extractor", "local_extractor"), ("one claim per sentence", "baseline_sentences")):
        figures = extraction[key]
        say(f"| {name} | {figures['precision']:.3f} | {figures['recall']:.3f} | {figures['f1']:.3f} |")
    say()

    sizes = retrieval.DEFAULT_SIZES + ((retrieval.MILLION,) if args.million else ())
    say(f"## Retrieval (knowledge store, {', '.join(f'{s:,}' for s in sizes)} passages)")
    say()
    say(retrieval_table(retrieval.run(sizes, 300, passes=3)))
    say()

    tally = asyncio.run(reliability.main_async(60, 1))
    say("## Reliability under injected faults")
    say()
    say(
        f"{tally.runs} runs, {tally.faults} faults injected; correct terminal state {tally.correct}/{tally.runs}; "
        f"stage rows lost {tally.rows_lost}, duplicated {tally.rows_duplicated}."
    )
    say()
    say(f"Total benchmark time: {time.monotonic() - started:.0f} s.")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
