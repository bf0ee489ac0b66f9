"""Train the verifier behind `local/checker` and write engines/factcheck_engines/data/verifier.json.

Run from the repository root: `python -m scripts.train_verifier` (about two minutes on two
cores; pure Python, no extra packages). Deterministic: the same data gives the same file.

Data: only the train split of Factcheck-Bench subtask 3 (see bench/checker_accuracy.py for
the split by claim; the test split is never read here):
1. Term weights: IDF of each word stem over the distinct train passages,
   log((N + 1) / (df + 1)) + 1. Stems seen in one passage only are left out of the file;
   they (and unseen stems) get the weight of df = 1.
2. Features: `judge.passage_features` for every train pair.
3. Classifier: a multinomial logistic regression on the standardised features, with
   class-balanced sample weights (each verdict weighs the same in total) and an L2
   penalty chosen by 4-fold cross-validation on the train split, folds by claim, for
   the balanced accuracy of `judge` itself (the classifier inside its hard rules and
   same-subject gate). Fitted by full-batch gradient descent from zeros, a fixed number
   of steps.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import operator
from collections import Counter
from pathlib import Path
from typing import Sequence

from bench.checker_accuracy import (
    LABELS,
    StancePair,
    balanced_accuracy,
    confusion_matrix,
    data_dir,
    load_pairs,
    split_by_claim,
)
from factcheck_engines.judge import PassageText, judge, passage_features, term_stems
from factcheck_engines.verifier_model import MODEL_PATH, VerifierModel

L2_CHOICES = (0.001, 0.003, 0.01)
FOLDS = 4
STEPS = 800


def idf_table(passages: Sequence[str]) -> tuple[dict[str, float], float]:
    """(IDF of stems seen in at least two passages, IDF of a stem seen once)."""
    document_frequency = Counter(stem for text in passages for stem in set(term_stems(text)))
    total = len(passages)

    def idf(df: int) -> float:
        return round(math.log((total + 1) / (df + 1)) + 1, 3)

    return {stem: idf(df) for stem, df in document_frequency.items() if df >= 2}, idf(1)


def feature_rows(pairs: Sequence[StancePair], model: VerifierModel) -> tuple[list[str], list[list[float]]]:
    rows = [passage_features(p.claim, PassageText("P1", p.evidence), model) for p in pairs]
    names = list(rows[0])
    return names, [[row[name] for name in names] for row in rows]


def standardisation(rows: Sequence[Sequence[float]]) -> tuple[list[float], list[float]]:
    columns = list(zip(*rows))
    means = [sum(c) / len(c) for c in columns]
    scales = [math.sqrt(sum((v - m) ** 2 for v in c) / len(c)) or 1.0 for c, m in zip(columns, means)]
    return means, scales


def fit(rows: Sequence[Sequence[float]], labels: Sequence[int], l2: float) -> tuple[list[list[float]], list[float]]:
    """Class-balanced, L2-penalised multinomial logistic regression; (weights, bias).

    Nesterov-accelerated gradient descent with step 1/L, L a bound on the curvature
    (half the largest eigenvalue of the weighted second-moment matrix, plus l2), from
    zeros for a fixed number of steps: the loss is convex, so this reaches its optimum.
    """
    k = len(LABELS)
    counts = Counter(labels)
    sample_weight = [1 / (k * counts[y]) for y in labels]  # sums to 1
    design = [list(row) + [1.0] for row in rows]  # last column: the bias
    columns = [list(c) for c in zip(*design)]
    step = 1 / (0.5 * _largest_eigenvalue(columns, sample_weight) + l2)
    theta = [[0.0] * len(columns) for _ in range(k)]
    previous = [list(t) for t in theta]
    for iteration in range(1, STEPS + 1):
        momentum = (iteration - 1) / (iteration + 2)
        look = [[t + momentum * (t - p) for t, p in zip(tc, pc)] for tc, pc in zip(theta, previous)]
        gradient = _gradient(look, design, columns, labels, sample_weight, l2)
        previous = theta
        theta = [[v - step * g for v, g in zip(lc, gc)] for lc, gc in zip(look, gradient)]
    return [t[:-1] for t in theta], [t[-1] for t in theta]


def _gradient(theta, design, columns, labels, sample_weight, l2) -> list[list[float]]:
    k = len(theta)
    residuals = [[0.0] * len(design) for _ in range(k)]
    for i, row in enumerate(design):
        probabilities = _softmax([sum(map(operator.mul, t, row)) for t in theta])
        for c in range(k):
            residuals[c][i] = sample_weight[i] * (probabilities[c] - (c == labels[i]))
    last = len(columns) - 1
    return [
        [
            sum(map(operator.mul, column, residuals[c])) + (l2 * theta[c][j] if j != last else 0.0)
            for j, column in enumerate(columns)
        ]
        for c in range(k)
    ]


def _largest_eigenvalue(columns: Sequence[Sequence[float]], sample_weight: Sequence[float]) -> float:
    """Largest eigenvalue of sum_i w_i x_i x_i^T, by power iteration."""
    d = len(columns)
    moment = [
        [sum(a * b * w for a, b, w in zip(columns[p], columns[q], sample_weight)) for q in range(d)] for p in range(d)
    ]
    vector = [1.0] * d
    value = 1.0
    for _ in range(100):
        product = [sum(map(operator.mul, line, vector)) for line in moment]
        value = math.sqrt(sum(v * v for v in product))
        vector = [v / value for v in product]
    return value


def predict(weights: list[list[float]], bias: list[float], row: Sequence[float]) -> int:
    logits = [b + sum(map(operator.mul, w, row)) for w, b in zip(weights, bias)]
    return logits.index(max(logits))


def choose_l2(pairs: Sequence[StancePair], rows: Sequence[Sequence[float]], labels: Sequence[int], make_model) -> float:
    """The L2 penalty with the best cross-validated balanced accuracy of `judge` (folds by claim).

    Each fold's classifier is scored twice on the held-out claims: alone (argmax), and end to
    end, inside `judge` with its hard rules and same-subject gate; the choice is by the latter.
    """
    folds = [_fold(p.claim) for p in pairs]
    scores = {}
    for l2 in L2_CHOICES:
        gold, predicted, judged = [], [], []
        for fold in range(FOLDS):
            train = [i for i, f in enumerate(folds) if f != fold]
            held = [i for i, f in enumerate(folds) if f == fold]
            weights, bias = fit([rows[i] for i in train], [labels[i] for i in train], l2)
            model = make_model(weights, bias)
            gold += [LABELS[labels[i]] for i in held]
            predicted += [LABELS[predict(weights, bias, rows[i])] for i in held]
            judged += [judge(pairs[i].claim, [PassageText("P1", pairs[i].evidence)], model).verdict for i in held]
        classifier = balanced_accuracy(confusion_matrix(gold, predicted))
        scores[l2] = balanced_accuracy(confusion_matrix(gold, judged))
        print(f"  l2={l2:<7} cross-validated balanced accuracy: classifier {classifier:.1f}%, judge {scores[l2]:.1f}%")
    return max(L2_CHOICES, key=lambda l2: (scores[l2], l2))


def train(pairs: Sequence[StancePair]) -> VerifierModel:
    train_pairs, _ = split_by_claim(pairs)
    idf, default_idf = idf_table(sorted({p.evidence for p in train_pairs}))
    weighting = VerifierModel(idf, default_idf, (), (), (), {}, {})
    names, raw = feature_rows(train_pairs, weighting)
    means, scales = standardisation(raw)
    rows = [[(v - m) / s for v, m, s in zip(row, means, scales)] for row in raw]
    labels = [LABELS.index(p.gold) for p in train_pairs]
    print(f"train split: {len(train_pairs)} pairs, {len(names)} features, {len(idf)} weighted stems")
    rounded_means = tuple(round(m, 6) for m in means)
    rounded_scales = tuple(round(s, 6) for s in scales)

    def make_model(weights: list[list[float]], bias: list[float]) -> VerifierModel:
        return VerifierModel(
            idf=idf,
            default_idf=default_idf,
            feature_names=tuple(names),
            mean=rounded_means,
            scale=rounded_scales,
            weights={label: tuple(round(w, 6) for w in weights[c]) for c, label in enumerate(LABELS)},
            bias={label: round(bias[c], 6) for c, label in enumerate(LABELS)},
        )

    l2 = choose_l2(train_pairs, rows, labels, make_model)
    weights, bias = fit(rows, labels, l2)
    print(f"chosen l2={l2}")
    return make_model(weights, bias)


def _softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    exps = [math.exp(v - top) for v in logits]
    total = sum(exps)
    return [v / total for v in exps]


def _fold(claim: str) -> int:
    return hashlib.sha256(("fold:" + claim).encode("utf-8")).digest()[0] % FOLDS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder holding factcheck-bench/ (default: shared/data beside the repository folder)",
    )
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    args = parser.parse_args()
    model = train(load_pairs(args.data_dir or data_dir()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(model.to_json(), separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
