"""Run every benchmark and write bench/RESULTS.md: `python -m bench`.

What the gateway adds (bench/pipeline.py: latency against the model critical path and
against direct service calls, gateway CPU per run at 100 and 500 concurrent runs, cost as
the claims grow; `--runs`, `--claims`, `--growth-postgresql` and `--repeat` for the longer
variants), pipelined against sequential verification at a fixed model token rate
(bench/pipelined.py), the embedded engines' speed and
memory (bench/engines.py, bench/extractor_quality.py, bench/checker_accuracy.py), claim-level
citations (bench/citations.py: citation precision, the correction pass, numeric QA),
accuracy and extraction quality, the verification loop on Factcheck-Bench (bench/investigation.py),
retrieval speed and hit@3 at 10k and 100k passages, loaded and asked through the API (bench/retrieval.py;
`--million` adds 1M, a long load) and reliability under injected faults, gateway
kills, dropped streams and cancellations on SQLite and PostgreSQL (bench/reliability.py).
Benchmarks print figures; they are not tests.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import time
from pathlib import Path

from bench import (
    checker_accuracy,
    citations,
    engines,
    extractor_quality,
    investigation,
    ledger,
    pipeline,
    pipelined,
    reliability,
    retrieval,
)

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%" if value <= 1 else f"{value:.1f}%"


def retrieval_table(results: list[dict]) -> str:
    """The retrieval benchmark as a Markdown table: each corpus as loaded, then after maintenance."""
    rows = [
        "| backend | corpus | passages | load | query p50 | query p95 | questions / common p95 | hit@3 | exact BM25 "
        "hit@3 | = exact | after maintenance: p95 | hit@3 | = exact | top 3 changed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        common = "–" if r["common_ms_p95"] is None else f"{r['common_ms_p95']}"
        after = r.get("maintained")
        maintained = (
            f"{after['query_ms_p95']} ms | {after['hit_at_3']} | {after['same_as_reference']} | {r['top3_changed']}"
            if after
            else "– | – | – | –"
        )
        rows.append(
            f"| {r['backend']} | {r['corpus']} | {r['passages']:,} | {r['load_seconds']} s "
            f"| {r['query_ms_p50']} ms ({r['query_ms_p50_range'][0]}–{r['query_ms_p50_range'][1]}) "
            f"| {r['query_ms_p95']} ms ({r['query_ms_p95_range'][0]}–{r['query_ms_p95_range'][1]}) "
            f"| {r['fact_ms_p95']} / {common} ms | {r['hit_at_3']} | {r['reference_hit_at_3']} "
            f"| {r['same_as_reference']} | {maintained} |"
        )
    notes = [
        "",
        "Each corpus loaded through AddDocuments into its own gateway process and asked through "
        "KnowledgeService.Search (top 3) from a client, as loaded (no maintenance by hand), then again after "
        "ANALYZE/optimize/VACUUM (SQLite) or VACUUM ANALYZE (PostgreSQL). easy: 300 paraphrased questions about "
        "planted facts and 200 common-word queries; hard: 300 questions of bench/retrieval_questions.py. 3 passes: "
        "median pass (lowest–highest). hit@3 against an exact BM25 over every passage; = exact: share of questions "
        "answered with exact BM25's passages. 1M passages: `python -m bench --million` or "
        "`python -m bench.retrieval --million`.",
    ]
    return "\n".join(rows + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8, help="latency rounds per title latency in bench.pipeline")
    parser.add_argument(
        "--claims", type=int, nargs="*", default=[1, 10, 100, 300], help="bench.pipeline growth sizes (none: skip)"
    )
    parser.add_argument("--growth-postgresql", action="store_true", help="the growth section on PostgreSQL too")
    parser.add_argument("--repeat", type=int, default=1, help="repeat bench.pipeline, print median and range")
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

    say("## What the gateway adds (fake models, four processes; SQLite and PostgreSQL)")
    say()
    repeats = [
        pipeline.measure(
            pipeline.BACKENDS,
            runs=args.runs,
            sizes=args.claims,
            growth_backends=pipeline.BACKENDS if args.growth_postgresql else ("sqlite",),
            progress=lambda line: print(line, flush=True),
        )
        for _ in range(args.repeat)
    ]
    for line in pipeline.markdown(repeats, heading="###"):
        say(line)

    say("## Pipelined verification (models writing at a fixed token rate)")
    say()
    for line in pipelined.markdown(asyncio.run(pipelined.measure([10, 30, 100], repeat=3))):
        say(line)
    say()

    say("## The model-call ledger and the verification cache (bench/ledger.py)")
    say()
    for line in ledger.markdown(*ledger.measure()):
        say(line)

    extraction = extractor_quality.measure()
    checking = checker_accuracy.evaluate()
    memory = engines.service_peak_memory()
    say("## Embedded engines (single process)")
    say()
    say("| engine | claims/s | note |")
    say("|---|---|---|")
    say(f"| local/extractor | {extraction['local_extractor']['claims_per_s']:.0f} | on the factcheck-GPT responses |")
    for engine, measured in checking["engines"].items():
        say(
            f"| local/checker-{engine} | {measured['claims_per_s']:.0f} | 10 claims a prompt, 3 passages a claim; "
            f"{measured['claims_per_cpu_s']:.0f} claims per CPU-second, peak {measured['peak_mb']:.0f} MB |"
        )
    say()
    say("Peak memory after a run on local models: " + ", ".join(f"{k} {v:.0f} MB" for k, v in memory.items()) + ".")
    say()

    say("## Accuracy: local/checker on Factcheck-Bench subtask 3 (held-out test split, by claim)")
    say()
    say("| system | balanced accuracy | accuracy | ECE |")
    say("|---|---|---|---|")
    for system, scores in checking["test"].items():
        ece = "–" if scores["ece"] is None else f"{scores['ece']:.1f}"
        say(f"| {system} | {_pct(scores['balanced_accuracy'])} | {_pct(scores['accuracy'])} | {ece} |")
    say()
    matrix = checking["test"][checker_accuracy.LEXICAL]["confusion"]
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

    say("## The verification loop on Factcheck-Bench (local engines, SQLite)")
    say()
    say(asyncio.run(investigation.main_async(None, 5)))
    say(citations.format_report(citations.evaluate()))
    say()

    sizes = retrieval.DEFAULT_SIZES + ((retrieval.MILLION,) if args.million else ())
    say(f"## Retrieval (knowledge store, {', '.join(f'{s:,}' for s in sizes)} passages)")
    say()
    say(retrieval_table(retrieval.run(sizes, passes=3)))
    say()

    faults = reliability.measure(runs=60, rounds=24, seed=1, backends=("sqlite", "postgresql"))
    say("## Reliability under injected faults")
    say()
    for line in reliability.markdown(faults):
        say(line)
    say()
    say(f"Total benchmark time: {time.monotonic() - started:.0f} s.")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
