"""Fit the confidence of `local/entailment`'s judge; write it to
engines/factcheck_engines/data/entailment_calibration.json.

Run from the repository root: `python -m scripts.fit_entailment_calibration` (seconds; deterministic).

Data: only the train split of Factcheck-Bench subtask 3 (bench/checker_accuracy.py's split by claim;
the test split, on which bench/entailment_calibration.py reports, is never read here). Every pair runs
through the local extractor and the judge; a pair whose extractor finds no statement is left out
(the empty-source rule pins its confidence at <= 20 whatever it is).

Per judge verdict, the judge's probability is cut into ten equal bins; each bin's confidence is how
often the verdict was right there (gold: completely-support -> SUPPORTED, refute -> CONTRADICTED,
otherwise NOT ENOUGH INFO), shrunk toward the verdict's overall accuracy with five pseudo-pairs,
then made non-decreasing in the probability (pool adjacent violators): a surer judge never gets
a lower confidence. The judge places this figure within the anchor band the text puts its verdict in
(engines/factcheck_engines/entailment.py, `within_band`): the table orders verdicts inside a band, it never
moves one out of it.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench.checker_accuracy import load_pairs, split_by_claim
from factcheck_engines.entailment import CALIBRATION_FILE, extract, judge_raw

BINS = 10
PSEUDO_PAIRS = 5
GOLD = {"VERIFIED": "SUPPORTED", "DISPUTED": "CONTRADICTED", "UNVERIFIABLE": "NOT ENOUGH INFO"}


def _pool_adjacent_violators(values: list[float], weights: list[float]) -> list[float]:
    blocks = [[v, w, 1] for v, w in zip(values, weights)]
    merged: list[list[float]] = []
    for block in blocks:
        merged.append(block)
        while len(merged) > 1 and merged[-2][0] > merged[-1][0]:
            (v1, w1, n1), (v2, w2, n2) = merged[-2], merged[-1]
            total = w1 + w2
            merged[-2:] = [[(v1 * w1 + v2 * w2) / total if total else (v1 + v2) / 2, total, n1 + n2]]
    out: list[float] = []
    for value, _, count in merged:
        out += [value] * int(count)
    return out


def fit() -> dict:
    train, _ = split_by_claim(load_pairs())
    observed: dict[str, list[tuple[float, bool]]] = {verdict: [] for verdict in GOLD.values()}
    for pair in train:
        statements = extract(pair.claim, pair.evidence)["statements"]
        if not statements:
            continue
        verdict, score, _ = judge_raw(pair.claim, statements)
        observed[verdict].append((score, GOLD[pair.gold] == verdict))
    table = {}
    for verdict, points in observed.items():
        prior = sum(ok for _, ok in points) / len(points) if points else 0.5
        rates: list[float] = []
        weights: list[float] = []
        for b in range(BINS):
            members = [ok for score, ok in points if min(int(score * BINS), BINS - 1) == b]
            rates.append((sum(members) + PSEUDO_PAIRS * prior) / (len(members) + PSEUDO_PAIRS))
            weights.append(len(members) + PSEUDO_PAIRS)
        monotone = _pool_adjacent_violators(rates, weights)
        table[verdict] = {
            "upper_edges": [round((b + 1) / BINS, 2) for b in range(BINS)],
            "confidence": [round(100 * rate) for rate in monotone],
            "pairs": len(points),
        }
    return {
        "source": "Factcheck-Bench subtask 3, train split (scripts/fit_entailment_calibration.py)",
        "verdicts": table,
    }


def main() -> None:
    result = fit()
    Path(CALIBRATION_FILE).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for verdict, row in result["verdicts"].items():
        print(f"{verdict:<16} {row['pairs']:>5} pairs  {row['confidence']}")


if __name__ == "__main__":
    main()
