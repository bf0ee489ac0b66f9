"""Reliability-weighted consensus (FactCheckConfig.consensus = CONSENSUS_WEIGHTED) against the best single
checker and the majority with its tie rules, with three checkers on the shipped labelled sets.

Checkers: `local/checker` (the entailment model), `local/checker-lexical` and `local/checker-overlap` (word
overlap with the best passage: VERIFIED at or above the threshold fitted on Factcheck-Bench's train split, else
UNVERIFIABLE; it never disputes). Each engine judges each item as bench/checker_accuracy.py has its engines
judge (their judges over a prompt's claims, what the engine's checker runs).

Sets: the shipped ones (factcheck.evaluation.sets.load_shipped_set, what `factcheck eval` judges; evaluation
only, as in bench/checker_accuracy.py: nothing here trains the engines):
- Factcheck-Bench's held-out test split (bench/checker_accuracy.py's split: the engines' combiner and verifier
  were fitted on its train split), one item per (claim, evidence) pair, three verdicts;
- WiCE (claim level, the cited article as passages): VERIFIED or UNVERIFIABLE; scored as supported vs not (a
  DISPUTED verdict on an unsupported claim is right), as docs/benchmarks.md scores WiCE;
- CLIMATE-FEVER, one item per (claim, evidence sentence) pair, three verdicts.

Split: every set by claim (a claim's items all on one side) with a fixed hash (SHA-256 of a salt and the claim,
as bench/checker_accuracy.py splits), half FIT, half JUDGE. The FIT half's confusion counts (rows the label,
columns the verdict) are the evaluation the gateway would read: the weights (weighted_consensus.fit_weights)
come from them, pooled over the three sets as the gateway pools an evaluation's sets, and (second row) per set.
The best single checker is the one with the best balanced accuracy on the FIT half (chosen without looking at
the JUDGE half). Everything is scored on the JUDGE half: balanced accuracy (mean recall over the labels
present) and the share of supported (VERIFIED-labelled) items the system called DISPUTED. Both priors are
measured: uniform (what the gateway uses) and the FIT half's smoothed label shares.

Every engine's verdicts are cached in build/weighted-consensus/ (keyed by the items and the engine's model), so a
rerun takes seconds. `--limit N` keeps N claims of each set (a fixed hash draw) for a quick look.

Run from the repository root: `python -m bench.weighted_consensus`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from bench.checker_accuracy import (
    LABELS,
    DataMissingError,
    balanced_accuracy,
    confusion_matrix,
    hash_fraction,
    judge_items,
    nli_available,
)
from factcheck.core.domain import ClaimVerification, ExtractedClaim
from factcheck.evaluation.sets import load_shipped_set
from factcheck_engines.checker_overlap import OVERLAP_JUDGES, OVERLAP_THRESHOLD
from factcheck_engines.judge import PassageText
from factcheck_gateway.consensus import calculate_consensus
from factcheck_gateway.consensus.weighted import ConsensusWeights, fit_weights, label_prior

CHECKER = "local/checker"
LEXICAL = "local/checker-lexical"
OVERLAP = "local/checker-overlap"
CHECKERS = (CHECKER, LEXICAL, OVERLAP)
SETS = ("factcheck-bench", "wice", "climate-fever")
SPLIT_SALT = "factcheck-weighted-consensus-v1:"
FIT_FRACTION = 0.5
LIMIT_SALT = "factcheck-weighted-consensus-limit-v1:"
# The weights the gateway would use: pooled over the sets, uniform prior.
HEADLINE = "pooled, uniform prior"
BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED = 2000, 20261127
CACHE = Path(__file__).resolve().parent.parent / "build" / "weighted-consensus"


@dataclass(frozen=True)
class Item:
    claim: str
    passages: tuple[PassageText, ...]
    label: str  # VERIFIED / DISPUTED / UNVERIFIABLE
    binary: bool = False  # scored as supported vs not (WiCE)

    @property
    def fit(self) -> bool:
        return hash_fraction(SPLIT_SALT, self.claim) < FIT_FRACTION


def load_sets(limit: int | None = None) -> dict[str, list[Item]]:
    """The three shipped sets (factcheck.evaluation.sets, what `factcheck eval` judges) as items."""
    sets = {
        name: [
            Item(
                item.claim,
                tuple(PassageText(f"P{n}", e.text) for n, e in enumerate(item.evidence, 1)),
                item.label,
                binary=name == "wice",
            )
            for item in load_shipped_set(name)
        ]
        for name in SETS
    }
    if limit is not None:
        sets = {name: _limited(items, limit) for name, items in sets.items()}
    return sets


def _limited(items: list[Item], claims: int) -> list[Item]:
    kept = set(sorted({i.claim for i in items}, key=lambda c: hash_fraction(LIMIT_SALT, c))[:claims])
    return [i for i in items if i.claim in kept]


# --- the checkers' verdicts, cached -------------------------------------------------------------------


def verdicts(name: str, items: Sequence[Item]) -> dict[str, list[str]]:
    """Each checker's verdict on each item (from the cache when it holds them)."""
    return {
        CHECKER: _cached(name, "nli", items, lambda: [j.verdict for j in judge_items(_inputs(items), "nli")]),
        LEXICAL: _cached(name, "lexical", items, lambda: [j.verdict for j in judge_items(_inputs(items), "lexical")]),
        OVERLAP: _cached(name, "overlap", items, lambda: [j.verdict for j in OVERLAP_JUDGES.many(_inputs(items))]),
    }


def _inputs(items: Sequence[Item]) -> list[tuple[str, Sequence[PassageText]]]:
    return [(i.claim, i.passages) for i in items]


def _cached(name: str, engine: str, items: Sequence[Item], make: Callable[[], list[str]]) -> list[str]:
    key = hashlib.sha256(
        json.dumps([_engine_revision(engine)] + [[i.claim, [p.text for p in i.passages]] for i in items]).encode()
    ).hexdigest()[:16]
    path = CACHE / f"{name}-{engine}-{key}.json"
    if path.is_file():
        return json.loads(path.read_text())
    started = time.perf_counter()
    made = make()
    print(f"  {engine} on {name}: {len(items)} items in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(made))
    return made


def _engine_revision(engine: str) -> str:
    """What the cached verdicts depend on besides the items: the engines' code and their small data files
    (the model card records the model's SHA-256)."""
    engines = Path(__file__).resolve().parent.parent / "engines" / "factcheck_engines"
    files = sorted(engines.glob("*.py")) + sorted(engines.glob("data/**/*.json"))
    return hashlib.sha256(engine.encode() + b"".join(path.read_bytes() for path in files)).hexdigest()


# --- the systems ----------------------------------------------------------------------------------------


def confusions(items: Sequence[Item], made: dict[str, list[str]], keep: Sequence[bool]) -> dict[str, tuple]:
    """Per checker, its confusion counts on the kept items: rows the label, columns the verdict."""
    result = {}
    for checker in CHECKERS:
        counts = Counter((i.label, v) for i, v, k in zip(items, made[checker], keep) if k)
        result[checker] = tuple(tuple(counts[label, verdict] for verdict in LABELS) for label in LABELS)
    return result


def combined(items: Sequence[Item], made: dict[str, list[str]], weights: ConsensusWeights | None) -> list[str]:
    """The consensus verdict of the three checkers on each item (the gateway's calculate_consensus)."""
    claims = [ExtractedClaim(id=f"c{n}", claim=i.claim, context=i.claim, type="GENERAL") for n, i in enumerate(items)]
    per_checker = [
        [ClaimVerification(c.id, verdict, "", None, "MEDIUM", checker) for c, verdict in zip(claims, made[checker])]
        for checker in CHECKERS
    ]
    models = CHECKERS if weights is not None else ()
    return [c.consensus_verdict for c in calculate_consensus(claims, per_checker, weights, models)]


def scores(items: Sequence[Item], predicted: Sequence[str]) -> dict:
    """Balanced accuracy (percent) and the DISPUTED rate on supported items; WiCE as supported vs not."""
    scored = [_scored(i, p) for i, p in zip(items, predicted)]
    matrix = confusion_matrix([i.label for i in items], scored)
    supported = [p for i, p in zip(items, predicted) if i.label == "VERIFIED"]
    return {
        "balanced_accuracy": balanced_accuracy(matrix),
        "disputed_supported": 100 * supported.count("DISPUTED") / len(supported) if supported else None,
        "items": len(items),
    }


def _scored(item: Item, verdict: str) -> str:
    if item.binary and verdict == "DISPUTED":
        return "UNVERIFIABLE"  # not supported, whichever way the checker said so
    return verdict


def evaluate(limit: int | None = None) -> dict:
    sets = load_sets(limit)
    if not nli_available():
        raise DataMissingError("local/checker's entailment model is not installed (its runtime is missing)")
    made = {name: verdicts(name, items) for name, items in sets.items()}
    fit_keep = {name: [i.fit for i in items] for name, items in sets.items()}
    per_set_counts = {name: confusions(sets[name], made[name], fit_keep[name]) for name in sets}
    pooled_counts = {
        checker: tuple(
            tuple(sum(per_set_counts[name][checker][row][col] for name in sets) for col in range(3)) for row in range(3)
        )
        for checker in CHECKERS
    }
    weights = {
        "pooled, uniform prior": {name: fit_weights("fit-half", pooled_counts) for name in sets},
        "pooled, label-share prior": {
            name: fit_weights("fit-half", pooled_counts, label_prior(pooled_counts)) for name in sets
        },
        "per set, uniform prior": {name: fit_weights(name, per_set_counts[name]) for name in sets},
        "per set, label-share prior": {
            name: fit_weights(name, per_set_counts[name], label_prior(per_set_counts[name])) for name in sets
        },
    }
    # The best single checker, chosen on the FIT half (pooled over the sets).
    fit_items = [i for name in sets for i in sets[name] if i.fit]
    fit_scores = {
        checker: scores(fit_items, [v for name in sets for i, v in zip(sets[name], made[name][checker]) if i.fit])
        for checker in CHECKERS
    }
    best = max(CHECKERS, key=lambda checker: fit_scores[checker]["balanced_accuracy"])

    systems: dict[str, dict[str, list[str]]] = {
        checker: {name: made[name][checker] for name in sets} for checker in CHECKERS
    }
    systems["majority"] = {name: combined(sets[name], made[name], None) for name in sets}
    for variant, fitted in weights.items():
        systems[f"weighted ({variant})"] = {name: combined(sets[name], made[name], fitted[name]) for name in sets}

    figures: dict = {
        "limit": limit,
        "overlap_threshold": OVERLAP_THRESHOLD,
        "best_single": best,
        "sets": {
            name: {
                "fit_items": sum(fit_keep[name]),
                "judge_items": len(items) - sum(fit_keep[name]),
                "judge_claims": len({i.claim for i in items if not i.fit}),
                "judge_labels": dict(Counter(i.label for i in items if not i.fit)),
            }
            for name, items in sets.items()
        },
        "weights": {
            checker: {
                "verdict_weights": list(weights["pooled, uniform prior"]["wice"].checkers[checker].verdict_weights),
                "items": weights["pooled, uniform prior"]["wice"].checkers[checker].items,
            }
            for checker in CHECKERS
        },
        "systems": {},
    }
    for system, by_set in systems.items():
        row: dict = {}
        judge_all: list[Item] = []
        predicted_all: list[str] = []
        for name, items in sets.items():
            judged = [(i, v) for i, v in zip(items, by_set[name]) if not i.fit]
            row[name] = scores([i for i, _ in judged], [v for _, v in judged])
            judge_all += [i for i, _ in judged]
            predicted_all += [v for _, v in judged]
        row["pooled"] = scores(judge_all, predicted_all)
        row["mean"] = {
            "balanced_accuracy": sum(row[name]["balanced_accuracy"] for name in sets) / len(sets),
            "disputed_supported": sum(row[name]["disputed_supported"] or 0.0 for name in sets) / len(sets),
        }
        figures["systems"][system] = row
    weighted = f"weighted ({HEADLINE})"
    figures["intervals"] = {
        f"{weighted} − {other}": bootstrap_difference(sets, systems[weighted], systems[other])
        for other in ("majority", best)
    }
    return figures


def bootstrap_difference(
    sets: dict[str, list[Item]], first: dict[str, list[str]], second: dict[str, list[str]]
) -> tuple[float, float]:
    """95% interval (percentile bootstrap, claims resampled within each set, BOOTSTRAP_RESAMPLES draws) of
    the difference of two systems' mean-over-sets balanced accuracy on the JUDGE half, in points."""
    import numpy as np

    rng = np.random.default_rng(BOOTSTRAP_SEED)
    total = np.zeros(BOOTSTRAP_RESAMPLES)
    for name, items in sets.items():
        claims = sorted({i.claim for i in items if not i.fit})
        index = {claim: n for n, claim in enumerate(claims)}
        counts = np.zeros((3, len(claims), 3))  # [label totals, first right, second right] × claim × label
        for item, a, b in zip(items, first[name], second[name]):
            if item.fit:
                continue
            row, label = index[item.claim], LABELS.index(item.label)
            counts[0, row, label] += 1
            counts[1, row, label] += _scored(item, a) == item.label
            counts[2, row, label] += _scored(item, b) == item.label
        draws = rng.integers(0, len(claims), size=(BOOTSTRAP_RESAMPLES, len(claims)))
        sums = counts[:, draws, :].sum(axis=2)  # 3 × resamples × label
        present = sums[0] > 0
        for sign, right in ((1, sums[1]), (-1, sums[2])):
            recall = np.where(present, right / np.maximum(sums[0], 1), 0.0)
            total += sign * 100 * recall.sum(axis=1) / present.sum(axis=1) / len(sets)
    low, high = np.percentile(total, [2.5, 97.5])
    return float(low), float(high)


# --- report -----------------------------------------------------------------------------------------------


def format_report(figures: dict) -> str:
    lines = [
        "Reliability-weighted consensus: three checkers, weights fitted on one half of each set, judged on the other"
    ]
    if figures["limit"]:
        lines.append(f"(--limit {figures['limit']}: that many claims of each set)")
    lines.append(
        f"local/checker-overlap's threshold (from Factcheck-Bench's train split): {figures['overlap_threshold']:.2f}"
    )
    for name, part in figures["sets"].items():
        labels = ", ".join(f"{label} {part['judge_labels'].get(label, 0)}" for label in LABELS)
        lines.append(
            f"  {name}: FIT {part['fit_items']} items, JUDGE {part['judge_items']} items "
            f"({part['judge_claims']} claims; {labels})"
        )
    lines.append(f"best single checker (on the FIT half): {figures['best_single']}")
    lines.append("log-odds weights (pooled FIT half, uniform prior; VERIFIED / DISPUTED / UNVERIFIABLE):")
    for checker, weights in figures["weights"].items():
        values = " / ".join(f"{w:+.2f}" for w in weights["verdict_weights"])
        lines.append(f"  {checker:<24} {values}  ({weights['items']} items)")
    lines.append("")
    lines.append("JUDGE half: balanced accuracy % (DISPUTED on supported %)")
    columns = [*SETS, "pooled", "mean"]
    lines.append(f"{'system':<42}" + "".join(f"{c:>22}" for c in columns))
    for system, row in figures["systems"].items():
        cells = []
        for column in columns:
            cell = row[column]
            disputed = cell["disputed_supported"]
            cells.append(f"{cell['balanced_accuracy']:.1f} ({'-' if disputed is None else f'{disputed:.1f}'})")
        lines.append(f"{system:<42}" + "".join(f"{c:>22}" for c in cells))
    lines.append("(mean: of the three sets; pooled: every JUDGE item together, mostly CLIMATE-FEVER)")
    lines.append("")
    lines.append("95% bootstrap interval of the difference in mean balanced accuracy (points, claims resampled):")
    for name, (low, high) in figures["intervals"].items():
        lines.append(f"  {name}: {low:+.1f} to {high:+.1f}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="weighted consensus against the best single checker and the majority")
    parser.add_argument("--limit", type=int, help="claims kept of each set (a fixed draw); default: every claim")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        figures = evaluate(args.limit)
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    figures["seconds"] = time.perf_counter() - started
    print(json.dumps(figures, indent=2) if args.json else format_report(figures), end="\n" if args.json else "")
    print(f"({figures['seconds']:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
