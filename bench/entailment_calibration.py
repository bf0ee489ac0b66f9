"""How well calibrated the entailment agents' confidence is, and how accurate the entailment checker
strategy is next to the lexical judge (local/checker-lexical), on the same labelled pairs.

Data and split: Factcheck-Bench's claim-evidence stance pairs, the held-out test split of
`bench/checker_accuracy.py` (by claim; the default judge was fitted on the other split). Gold:
completely-support -> VERIFIED, refute -> DISPUTED, partially-support and irrelevant -> UNVERIFIABLE.

Systems, each pair one claim against one passage:
- entailment agents: the four local/entailment agents through the same runner, rules and
  aggregation as CheckerService's ENTAILMENT_AGENTS strategy (factcheck.core.entailment_agents with
  run_agent on the model client), mapped SUPPORTED -> VERIFIED, CONTRADICTED -> DISPUTED,
  NOT ENOUGH INFO -> UNVERIFIABLE. The source type is the same for every pair ("web page
  retrieved as evidence"): reliability never decides a verdict anyway.
- lexical judge: the built-in lexical evidence judge (`judge.py`), as local/checker-lexical runs it.

Calibration: the final confidence (0-100) read as the probability that the final verdict is
right. Expected calibration error = sum over bins of (bin share) x |accuracy - mean confidence|,
over the confidence calibration anchor bands (0-39, 40-69, 70-89, 90-100) and over ten equal-width bins. The
reliability table gives, per anchor band, the pairs, the mean confidence and the accuracy.

Run from the repository root: `python -m bench.entailment_calibration` (`--all` for every pair).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from bench.checker_accuracy import (
    LABELS,
    DataMissingError,
    StancePair,
    balanced_accuracy,
    confusion_matrix,
    judge_predictions,
    load_pairs,
    split_by_claim,
)

ANCHOR_BANDS = ((0, 39), (40, 69), (70, 89), (90, 100))
SOURCE_TYPE = "web page retrieved as evidence"
MODEL = "local/entailment"
SPEC_VERDICT = {"SUPPORTED": "VERIFIED", "CONTRADICTED": "DISPUTED", "NOT ENOUGH INFO": "UNVERIFIABLE"}
CONCURRENCY = 8


@dataclass(frozen=True)
class Judged:
    verdict: str  # as a fact-check verdict: VERIFIED, DISPUTED or UNVERIFIABLE
    confidence: int  # final confidence 0-100
    error: str | None = None


async def agent_judgements(pairs: Sequence[StancePair]) -> list[Judged]:
    from factcheck.core.entailment_agents import AgentFailed, AgentModels, judge_item
    from factcheck.core.entailment_rules import verdict_name
    from factcheck.engines import register_builtin_engines
    from factcheck.kit.settings import Settings
    from factcheck.models.client import ModelClient
    from factcheck.models.errors import ModelError
    from factcheck.v1 import entailment_pb2 as pb
    from factcheck_checker.entailment.agents import run_agent

    register_builtin_engines()  # local/entailment answers in this process
    models = AgentModels(*(MODEL,) * 4)
    slots = asyncio.Semaphore(CONCURRENCY)
    async with ModelClient(Settings(model_max_concurrency=CONCURRENCY)) as client:

        async def call(request):
            try:
                return await run_agent(client, request, 60)
            except ModelError as error:
                raise AgentFailed(error.message) from None

        async def one(pair: StancePair) -> Judged:
            item = pb.EntailmentItem(claim=pair.claim, source_excerpt=pair.evidence, source_type=SOURCE_TYPE)
            async with slots:
                outcome = await judge_item(item, models, call)
            if outcome.final is None:
                return Judged("UNVERIFIABLE", 0, outcome.error)
            final = outcome.final
            return Judged(SPEC_VERDICT[verdict_name(final.final_verdict)], final.final_confidence)

        return await asyncio.gather(*(one(pair) for pair in pairs))


def expected_calibration_error(confidences: Sequence[float], correct: Sequence[bool], bins) -> float:
    total = len(confidences)
    error = 0.0
    for low, high in bins:
        members = [i for i, c in enumerate(confidences) if low <= c <= high]
        if members:
            accuracy = sum(correct[i] for i in members) / len(members)
            mean = sum(confidences[i] for i in members) / len(members) / 100
            error += len(members) / total * abs(accuracy - mean)
    return 100 * error


def reliability_table(confidences: Sequence[int], correct: Sequence[bool]) -> list[dict]:
    rows = []
    for low, high in ANCHOR_BANDS:
        members = [i for i, c in enumerate(confidences) if low <= c <= high]
        rows.append(
            {
                "band": f"{low}-{high}",
                "pairs": len(members),
                "mean_confidence": sum(confidences[i] for i in members) / len(members) if members else None,
                "accuracy": 100 * sum(correct[i] for i in members) / len(members) if members else None,
            }
        )
    return rows


def evaluate(every_pair: bool = False) -> dict:
    pairs = load_pairs()
    _, test = split_by_claim(pairs)
    chosen = pairs if every_pair else test
    gold = [p.gold for p in chosen]
    started = time.perf_counter()
    judged = asyncio.run(agent_judgements(chosen))
    agents_s = time.perf_counter() - started
    predicted = [j.verdict for j in judged]
    correct = [p == g for p, g in zip(predicted, gold)]
    confidences = [j.confidence for j in judged]
    default = judge_predictions(chosen)
    ten_bins = [(0, 9)] + [(10 * k, 10 * k + 9) for k in range(1, 9)] + [(90, 100)]
    agents_matrix = confusion_matrix(gold, predicted)
    default_matrix = confusion_matrix(gold, default)
    return {
        "split": "all pairs" if every_pair else "test split",
        "pairs": len(chosen),
        "failed_items": sum(1 for j in judged if j.error),
        "ece_anchor_bands": expected_calibration_error(confidences, correct, ANCHOR_BANDS),
        "ece_ten_bins": expected_calibration_error(confidences, correct, ten_bins),
        # The empty-source rule pins NOT ENOUGH INFO without statements at <= 20 however likely it
        # is right: the verdicts that assert entailment (VERIFIED / DISPUTED) show the anchors on their own.
        "ece_decisive": expected_calibration_error(
            [c for c, p in zip(confidences, predicted) if p != "UNVERIFIABLE"],
            [ok for ok, p in zip(correct, predicted) if p != "UNVERIFIABLE"],
            ANCHOR_BANDS,
        ),
        "decisive_pairs": sum(1 for p in predicted if p != "UNVERIFIABLE"),
        "reliability_by_verdict": {
            verdict: reliability_table(
                [c for c, p in zip(confidences, predicted) if p == verdict],
                [ok for ok, p in zip(correct, predicted) if p == verdict],
            )
            for verdict in LABELS
        },
        "reliability": reliability_table(confidences, correct),
        "agents": {
            "accuracy": 100 * sum(correct) / len(correct),
            "balanced_accuracy": balanced_accuracy(agents_matrix),
            "confusion": agents_matrix,
        },
        "default": {
            "accuracy": 100 * sum(p == g for p, g in zip(default, gold)) / len(gold),
            "balanced_accuracy": balanced_accuracy(default_matrix),
            "confusion": default_matrix,
        },
        "agents_pairs_per_s": len(chosen) / agents_s,
    }


def format_report(figures: dict) -> str:
    lines = [
        f"entailment agents (local/entailment) on Factcheck-Bench subtask 3, {figures['split']}: {figures['pairs']} pairs"
        f" ({figures['failed_items']} items failed)",
        "",
        f"expected calibration error: {figures['ece_anchor_bands']:.1f} points over the anchor bands, "
        f"{figures['ece_ten_bins']:.1f} over ten equal bins; {figures['ece_decisive']:.1f} over the anchor bands for the "
        f"{figures['decisive_pairs']} VERIFIED/DISPUTED verdicts alone",
        "",
        "reliability table (final confidence vs accuracy of the final verdict):",
        f"{'band':>8}{'pairs':>8}{'mean conf':>11}{'accuracy':>10}",
    ]
    for row in figures["reliability"]:
        mean = f"{row['mean_confidence']:.1f}" if row["mean_confidence"] is not None else "-"
        accuracy = f"{row['accuracy']:.1f}%" if row["accuracy"] is not None else "-"
        lines.append(f"{row['band']:>8}{row['pairs']:>8}{mean:>11}{accuracy:>10}")
    for verdict, rows in figures["reliability_by_verdict"].items():
        cells = [
            f"{row['band']} {row['pairs']} ({row['accuracy']:.0f}%)" if row["pairs"] else f"{row['band']} 0"
            for row in rows
        ]
        lines.append(f"  predicted {verdict:<13} " + ", ".join(cells))
    lines += ["", f"{'system':<34}{'balanced acc':>14}{'accuracy':>10}"]
    for name, key in (("entailment agents strategy", "agents"), ("lexical judge (local/checker-lexical)", "default")):
        lines.append(f"{name:<34}{figures[key]['balanced_accuracy']:>13.1f}%{figures[key]['accuracy']:>9.1f}%")
    for name, key in (("entailment agents strategy", "agents"), ("lexical judge (local/checker-lexical)", "default")):
        matrix = figures[key]["confusion"]
        lines += ["", f"confusion, {name} (rows gold, columns predicted):"]
        lines.append(f"{'':>14}" + "".join(f"{label:>14}" for label in LABELS))
        lines += [f"{g:>14}" + "".join(f"{matrix[g][p]:>14}" for p in LABELS) for g in LABELS]
    lines += ["", f"speed: {figures['agents_pairs_per_s']:.0f} pairs/s through the four agents (in-process)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Calibration and accuracy of the entailment agents on Factcheck-Bench."
    )
    parser.add_argument("--all", action="store_true", help="every pair, not only the held-out test split")
    args = parser.parse_args(argv)
    try:
        figures = evaluate(args.all)
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
