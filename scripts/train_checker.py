"""Fit the combiner of `local/checker` (nli_judge's decision) and write it into the model card.

    python -m scripts.train_checker features [--part base|extra]   # read the examples: build/checker/
    python -m scripts.train_checker fit        # fit, cross-validate, write model.json's "combiner"

Run from the repository root, with the `nli` extra installed (numpy, onnxruntime, tokenizers) and the
public sources prepared (`python -m scripts.nli_sources`, see its docstring). `features` reads each
example exactly as the checker reads a claim at run time (`nli_judge.read`: every sentence, the
context windows, the pieces, the lexical rules) and takes about 10 minutes on two cores; `fit` takes
seconds and is deterministic.

Training examples (claim, passages, verdict); nothing else is read:
- Factcheck-Bench subtask 3, the TRAIN split of bench/checker_accuracy.py only (its test split is
  never read): each (claim, evidence passage) pair, and each claim with all its passages together
  (VERIFIED when one completely supports it, else DISPUTED when one refutes it, else UNVERIFIABLE),
  as the checker reads a claim listed with several passages.
- FEVER (as entailment pairs) and FoolMeTwice, the claims `scripts/train_nli.py` held out of the
  entailment model's training (its public dev set), so the combiner learns how far the model's
  readings can be trusted on pairs it has not seen; FEVER's not_entailment pairs are left out
  (they do not say whether the evidence refutes the claim or only fails to state it).
- The extra sources of `scripts/checker_sources.py` (read only when prepared).
- Contrastive pairs made from the supported examples above: the claim with a figure or a year
  changed, negated, its quantifier strengthened ("some" → "all") or its modal hardened ("may" →
  "will"): DISPUTED, the evidence unchanged. They teach the disputes the checker must catch.
The public evaluation sets (WiCE, CLIMATE-FEVER, LLM-AggreFact) are never read.

Model: a multinomial logistic regression over `nli_judge.FEATURES`, standardised, with class-balanced
sample weights (each verdict weighs the same in total; within a verdict Factcheck-Bench's web pages
carry FACTCHECK_BENCH_SHARE of it and the other sources share the rest), its L2 penalty chosen by
5-fold cross-validation grouped by claim (scored on Factcheck-Bench's pairs), then refitted on
everything. Its probabilities are the verdicts' scores; `bench/checker_accuracy.py` reports their
calibration on data it never saw.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.checker_accuracy import GOLD_VERDICT, STANCE_FILE, data_dir, hash_fraction, is_test_claim
from factcheck_engines import nli_judge
from factcheck_engines.judge import PassageText
from factcheck_engines.nli_model import EntailmentModel
from scripts.nli_sources import prepared
from scripts.train_nli import DEV_SALT, SHIPPED, _changed_figure, _is_public_dev

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "checker"
# One file per part: the base examples, and the extra sources (computed apart, when prepared).
FEATURE_FILES = {"base": BUILD / "features-base.jsonl", "extra": BUILD / "features-extra.jsonl"}
VERDICTS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
PUBLIC_LABEL = {"SUPPORTED": "VERIFIED", "REFUTED": "DISPUTED", "UNRELATED": "UNVERIFIABLE"}
# The extra sources' "not enough information" is the checker's UNVERIFIABLE.
EXTRA_LABEL = {"SUPPORTED": "VERIFIED", "REFUTED": "DISPUTED", "NOT_SUPPORTED": "UNVERIFIABLE"}
SEED = 20261127
FOLDS = 5
L2_GRID = (0.0003, 0.001, 0.003, 0.01, 0.03)
STEPS = 3000
THREADS = 2
# The share of each verdict's weight that Factcheck-Bench's examples carry (cross-validated on its
# train split: 59.1 balanced accuracy at 0.8, 58.6 at 1.0, 56.8 at 0.5).
FACTCHECK_BENCH_SHARE = 0.8
# Extra prepared sources (scripts/checker_sources.py), each capped so no one set dominates.
EXTRA_PER_SOURCE = 3000

_FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w.])")
_AUXILIARY = re.compile(r"\b(is|are|was|were|has|have|had|can|will|does|did)\b(?! not\b)")
_NEGATED = re.compile(r"\b(is|are|was|were|has|have|had|can|will|does|did) not\b")
_WEAK_QUANTIFIER = re.compile(r"\b(some|many|several|most)\b", re.IGNORECASE)
_MODAL = re.compile(r"\b(may|might|could)\b")


# --- examples -----------------------------------------------------------------------


def examples(part: str = "base") -> list[dict]:
    """The training examples {source, group, claim, passages, verdict} of one part (base: Factcheck-Bench
    and the held-out FEVER/FoolMeTwice pairs; extra: scripts/checker_sources.py's), contrastive twins
    included; `group` keeps one claim's examples in one cross-validation fold."""
    if part == "extra":
        extra = _extra_examples()
        return extra + contrastive(extra)
    made: list[dict] = []
    by_claim: dict[str, list[dict]] = defaultdict(list)
    for line in (data_dir() / STANCE_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if is_test_claim(row["claim"]):
            continue
        by_claim[row["claim"]].append(row)
        made.append(_example("factcheck-bench", row["claim"], [row["evidence"]], GOLD_VERDICT[row["stance"]]))
    for claim, rows in by_claim.items():
        stances = {row["stance"] for row in rows}
        verdict = (
            "VERIFIED" if "completely-support" in stances else "DISPUTED" if "refute" in stances else "UNVERIFIABLE"
        )
        made.append(_example("factcheck-bench-claims", claim, [row["evidence"] for row in rows], verdict))
    for name in ("fever_rte", "fm2"):
        for row in prepared(name):
            if _is_public_dev(row["claim"]) and row["label"] in PUBLIC_LABEL:
                made.append(_example(name, row["claim"], [row["evidence"]], PUBLIC_LABEL[row["label"]]))
    made += contrastive(made)
    return made


def _example(source: str, claim: str, passages: list[str], verdict: str) -> dict:
    return {"source": source, "group": claim, "claim": claim, "passages": passages, "verdict": verdict}


def _extra_examples() -> list[dict]:
    try:
        from scripts.checker_sources import SOURCES, prepared_rows
    except ImportError:
        return []
    made = []
    for source in SOURCES:
        rows = [row for row in prepared_rows(source.name) if row["label"] in EXTRA_LABEL]
        random.Random(SEED).shuffle(rows)
        made += [
            _example(source.name, row["claim"], [row["evidence"]], EXTRA_LABEL[row["label"]])
            for row in rows[:EXTRA_PER_SOURCE]
        ]
    return made


def contrastive(supported_from: list[dict]) -> list[dict]:
    """DISPUTED twins of single-passage VERIFIED examples: a figure changed, the claim negated, its
    quantifier strengthened, or its modal hardened (the first change that applies, in a seeded order)."""
    rng = random.Random(SEED)
    made = []
    for example in supported_from:
        if example["verdict"] != "VERIFIED" or len(example["passages"]) != 1:
            continue
        changes = [_change_figure, _negate, _strengthen_quantifier, _harden_modal]
        rng.shuffle(changes)
        for change in changes:
            claim = change(example["claim"], example["passages"][0], rng)
            if claim and claim != example["claim"]:
                made.append(
                    {**example, "source": example["source"] + "+contrast", "claim": claim, "verdict": "DISPUTED"}
                )
                break
    return made


def _change_figure(claim: str, evidence: str, rng: random.Random) -> str | None:
    shared = [m for m in _FIGURE.finditer(claim) if m.group(1) in evidence]
    if not shared:
        return None
    match = rng.choice(shared)
    return claim[: match.start(1)] + _changed_figure(match.group(1), rng) + claim[match.end(1) :]


def _negate(claim: str, evidence: str, rng: random.Random) -> str | None:
    if _NEGATED.search(claim):  # "was not" → "was": the evidence states the negation
        return None if _NEGATED.search(evidence) is None else _NEGATED.sub(r"\1", claim, count=1)
    return _AUXILIARY.sub(r"\1 not", claim, count=1) if _AUXILIARY.search(claim) else None


def _strengthen_quantifier(claim: str, evidence: str, rng: random.Random) -> str | None:
    match = _WEAK_QUANTIFIER.search(claim)
    if not match:
        return None
    word = "All" if match.group(1)[0].isupper() else "all"
    return claim[: match.start(1)] + word + claim[match.end(1) :]


def _harden_modal(claim: str, evidence: str, rng: random.Random) -> str | None:
    return _MODAL.sub("will", claim, count=1) if _MODAL.search(claim) else None


# --- features -----------------------------------------------------------------------


def write_features(part: str) -> int:
    model = EntailmentModel(SHIPPED)
    items = examples(part)
    path = FEATURE_FILES[part]
    print(f"{len(items)} examples: {dict(Counter((e['source'], e['verdict']) for e in items))}", flush=True)

    def features(example: dict) -> dict | None:
        passages = [PassageText(f"P{i}", text) for i, text in enumerate(example["passages"], 1)]
        reading = nli_judge.read(example["claim"], passages, model)
        if reading is None:
            return None
        return {k: example[k] for k in ("source", "group", "verdict")} | {"features": reading.features}

    BUILD.mkdir(parents=True, exist_ok=True)
    written = 0
    with ThreadPoolExecutor(THREADS) as pool, path.open("w", encoding="utf-8") as out:
        for done, row in enumerate(pool.map(features, items), 1):
            if row is not None:
                out.write(json.dumps(row) + "\n")
                written += 1
            if done % 500 == 0:
                print(f"  {done}/{len(items)}", flush=True)
    print(f"{written} feature rows in {path}")
    return 0


# --- the fit ------------------------------------------------------------------------


def fit(x, y, weights, l2: float):
    """Weighted, L2-penalised multinomial logistic regression by Nesterov gradient descent from
    zeros, a fixed number of steps (the loss is convex); (coefficients, bias)."""
    import numpy as np

    design = np.hstack([x, np.ones((len(x), 1))])
    onehot = np.eye(len(VERDICTS))[y]
    curvature = 0.5 * np.linalg.eigvalsh((design * weights[:, None]).T @ design).max() + l2
    step = 1.0 / curvature
    theta = np.zeros((design.shape[1], len(VERDICTS)))
    previous = theta.copy()
    penalty = np.ones_like(theta)
    penalty[-1] = 0.0  # the bias is not penalised
    for iteration in range(1, STEPS + 1):
        look = theta + (iteration - 1) / (iteration + 2) * (theta - previous)
        z = design @ look
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        gradient = design.T @ ((p - onehot) * weights[:, None]) + l2 * penalty * look
        previous, theta = theta, look - step * gradient
    return theta[:-1], theta[-1]


def sample_weights(rows: list[dict]):
    """Each verdict weighs the same in total. Within a verdict, Factcheck-Bench's examples (its
    contrastive twins included) weigh FACTCHECK_BENCH_SHARE: web pages as evidence, what the
    checker reads at run time; the other sources share the rest equally."""
    import numpy as np

    home = [r["source"].startswith("factcheck-bench") for r in rows]
    counts = Counter((r["verdict"], h, r["source"] if not h else "") for r, h in zip(rows, home))
    others = Counter(v for v, h, _ in counts if not h)
    w = []
    for r, h in zip(rows, home):
        share = FACTCHECK_BENCH_SHARE if h else (1 - FACTCHECK_BENCH_SHARE) / others[r["verdict"]]
        if h and not others[r["verdict"]]:
            share = 1.0
        w.append(share / counts[r["verdict"], h, r["source"] if not h else ""])
    return np.array(w)


def balanced_accuracy(gold, predicted) -> float:
    recalls = [sum(p == g for p, g2 in zip(predicted, gold) if g2 == g) / gold.count(g) for g in sorted(set(gold))]
    return 100 * sum(recalls) / len(recalls)


def fit_combiner() -> int:
    import numpy as np

    rows = [
        json.loads(line)
        for path in FEATURE_FILES.values()
        if path.is_file()
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    names = list(nli_judge.FEATURES)
    raw = np.array([[r["features"][n] for n in names] for r in rows])
    mean, scale = raw.mean(axis=0), raw.std(axis=0)
    scale[scale == 0] = 1.0
    x = (raw - mean) / scale
    y = np.array([VERDICTS.index(r["verdict"]) for r in rows])
    weights = sample_weights(rows)
    fold = np.array([int(hash_fraction(DEV_SALT + "combiner:", r["group"]) * FOLDS) for r in rows])
    by_l2 = {}
    for l2 in L2_GRID:
        predicted = np.zeros(len(rows), dtype=int)
        for k in range(FOLDS):
            train = fold != k
            w = weights[train] / weights[train].sum()
            coef, bias = fit(x[train], y[train], w, l2)
            predicted[~train] = (x[~train] @ coef + bias).argmax(axis=1)
        by_l2[l2] = _per_source(rows, y, predicted)
        print(f"l2={l2}: cross-validated balanced accuracy {json.dumps(by_l2[l2])}")
    l2 = max(L2_GRID, key=lambda value: by_l2[value]["factcheck-bench"])
    coef, bias = fit(x, y, weights / weights.sum(), l2)
    card_path = SHIPPED / "model.json"
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["combiner"] = {
        "features": [
            {"name": n, "mean": round(float(m), 6), "scale": round(float(s), 6)} for n, m, s in zip(names, mean, scale)
        ],
        "weights": {v: [round(float(c), 6) for c in coef[:, i]] for i, v in enumerate(VERDICTS)},
        "bias": {v: round(float(bias[i]), 6) for i, v in enumerate(VERDICTS)},
        "l2": l2,
        "trained_on": dict(sorted(Counter(f"{r['source']} {r['verdict']}" for r in rows).items())),
        "cross_validated_balanced_accuracy": by_l2[l2],
    }
    card_path.write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(f"chose l2={l2}; wrote the combiner into {card_path}")
    return 0


def _per_source(rows: list[dict], y, predicted) -> dict[str, float]:
    out = {"all": round(balanced_accuracy(list(y), list(predicted)), 2)}
    for source in sorted({r["source"] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r["source"] == source]
        gold = [int(y[i]) for i in idx]
        if len(set(gold)) > 1:
            out[source] = round(balanced_accuracy(gold, [int(predicted[i]) for i in idx]), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("features", "fit"))
    parser.add_argument("--part", choices=tuple(FEATURE_FILES), default="base", help="which examples to read")
    args = parser.parse_args(argv)
    return write_features(args.part) if args.command == "features" else fit_combiner()


if __name__ == "__main__":
    sys.exit(main())
