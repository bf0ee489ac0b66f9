"""Run every benchmark and write bench/RESULTS.md: `python -m bench`.

Latency overhead and throughput (bench/pipeline.py), pipelined against sequential
verification at a fixed model token rate (bench/pipelined.py), the embedded engines' speed and
memory (bench/engines.py, bench/extractor_quality.py, bench/checker_accuracy.py),
accuracy and extraction quality, retrieval speed (bench/retrieval.py) and reliability
under injected faults, gateway kills, dropped streams and cancellations on SQLite and
PostgreSQL (bench/reliability.py). Benchmarks print figures; they are not tests.
"""

from __future__ import annotations

import asyncio
import datetime
import os
import platform
import time
from pathlib import Path

from bench import checker_accuracy, engines, extractor_quality, pipeline, pipelined, reliability, retrieval

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%" if value <= 1 else f"{value:.1f}%"


def main() -> None:
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

    say("## Pipelined verification (models writing at a fixed token rate)")
    say()
    for line in pipelined.markdown(asyncio.run(pipelined.measure([10, 30, 100], repeat=3))):
        say(line)
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

    say("## Retrieval (knowledge store, ≥ 10,000 passages)")
    say()
    say("| backend | passages | indexed/s | query p50 | query p95 |")
    say("|---|---|---|---|---|")
    for r in retrieval.run(12_000, 300):
        say(
            f"| {r['backend']} | {r['passages']} | {r['passages_per_second']} | {r['query_ms_p50']} ms | {r['query_ms_p95']} ms |"
        )
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
