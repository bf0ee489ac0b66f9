"""Two evaluations side by side (CompareEvaluations): per checker and set both measured, the
difference in balanced accuracy on the items both judged, with a paired bootstrap 95% interval, and
the items where their answers differ.

Shared items: the same set, item id and label, answered in both (failed calls left out; an unreadable
answer counts as wrong, as in the scores). The bootstrap resamples the shared items with replacement
within each label (balanced accuracy weighs the labels equally, so their sizes stay fixed), keeping
each item's two answers together: per label only the items one evaluation got right and the other
wrong move the difference, so a resample draws how many of each there are (a multinomial, drawn as two
exact binomials) instead of every item. The percentile interval of RESAMPLES differences, with a fixed
seed: the same two evaluations always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from factcheck.evaluation.metrics import balanced_accuracy
from factcheck.evaluation.sets import LABELS
from factcheck_gateway.evaluations.store import ItemResult

RESAMPLES = 2_000
SEED = 42
CONFIDENCE = 0.95
# Above this variance a binomial is drawn from its normal approximation (rounded, clamped): exact enough
# for an interval, and a draw costs the same whatever n is.
NORMAL_ABOVE_VARIANCE = 100.0


@dataclass(frozen=True)
class Disagreement:
    checker_model: str
    set_name: str
    item_id: str
    label: str
    answer: ItemResult  # A's
    other: ItemResult  # B's


@dataclass(frozen=True)
class Comparison:
    checker_model: str
    set_name: str
    shared: int
    balanced_accuracy: float  # A's, on the shared items
    other_balanced_accuracy: float  # B's
    low: float  # the interval of B − A
    high: float
    disagreements: tuple[Disagreement, ...]

    @property
    def difference(self) -> float:
        return self.other_balanced_accuracy - self.balanced_accuracy


def _answers_by_item(items: Sequence[ItemResult]) -> dict[tuple[str, str, str], ItemResult]:
    return {(a.checker_model, a.set_name, a.item_id): a for a in items if not a.failed}


def _same_answer(one: ItemResult, other: ItemResult) -> bool:
    if one.unreadable or other.unreadable:
        return one.unreadable == other.unreadable
    return one.verdict == other.verdict


def compare(
    answers: Sequence[ItemResult],
    other_answers: Sequence[ItemResult],
    checker_models: Sequence[str],
    sets: Sequence[str],
) -> list[Comparison]:
    """Per checker model, then set (those given: the ones both evaluations measured), the comparison."""
    mine, theirs = _answers_by_item(answers), _answers_by_item(other_answers)
    rng = random.Random(SEED)
    found = []
    for model in checker_models:
        for set_name in sets:
            pairs = [
                (answer, other)
                for key, answer in mine.items()
                if key[0] == model
                and key[1] == set_name
                and (other := theirs.get(key)) is not None
                and other.label == answer.label
            ]
            pairs.sort(key=lambda pair: pair[0].item_id)
            found.append(_comparison(model, set_name, pairs, rng))
    return found


def _comparison(
    model: str, set_name: str, pairs: list[tuple[ItemResult, ItemResult]], rng: random.Random
) -> Comparison:
    support, right, other_right = [0, 0, 0], [0, 0, 0], [0, 0, 0]
    only_mine, only_theirs = [0, 0, 0], [0, 0, 0]  # per label: right in A only, in B only
    for answer, other in pairs:
        label = LABELS.index(answer.label)
        support[label] += 1
        right[label] += answer.correct
        other_right[label] += other.correct
        only_mine[label] += answer.correct and not other.correct
        only_theirs[label] += other.correct and not answer.correct
    low, high = _interval(support, only_mine, only_theirs, rng)
    return Comparison(
        checker_model=model,
        set_name=set_name,
        shared=len(pairs),
        balanced_accuracy=balanced_accuracy(support, right),
        other_balanced_accuracy=balanced_accuracy(support, other_right),
        low=low,
        high=high,
        disagreements=tuple(
            Disagreement(model, set_name, answer.item_id, answer.label, answer, other)
            for answer, other in pairs
            if not _same_answer(answer, other)
        ),
    )


def _interval(
    support: list[int], only_mine: list[int], only_theirs: list[int], rng: random.Random
) -> tuple[float, float]:
    """The percentile interval of B − A over RESAMPLES stratified resamples (0, 0 without shared items)."""
    labels = [index for index, count in enumerate(support) if count]
    if not labels:
        return 0.0, 0.0
    differences = []
    for _ in range(RESAMPLES):
        total = 0.0
        for index in labels:
            n = support[index]
            p_mine, p_theirs = only_mine[index] / n, only_theirs[index] / n
            drawn_mine = binomial(n, p_mine, rng)
            rest = 1.0 - p_mine
            drawn_theirs = binomial(n - drawn_mine, p_theirs / rest, rng) if rest > 0 else 0
            total += (drawn_theirs - drawn_mine) / n
        differences.append(total / len(labels))
    differences.sort()
    tail = (1 - CONFIDENCE) / 2
    return differences[int(math.floor(tail * RESAMPLES))], differences[int(math.ceil((1 - tail) * RESAMPLES)) - 1]


def binomial(n: int, p: float, rng: random.Random) -> int:
    """A draw of Binomial(n, p): exact by geometric skips between successes (about n·min(p, 1 − p)
    steps), or from the normal approximation when the variance is large."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - binomial(n, 1.0 - p, rng)
    variance = n * p * (1 - p)
    if variance > NORMAL_ABOVE_VARIANCE:
        return min(n, max(0, round(rng.gauss(n * p, math.sqrt(variance)))))
    log_q = math.log1p(-p)
    successes, trial = 0, 0
    while True:
        trial += int(math.log(1.0 - rng.random()) / log_q) + 1  # the trial of the next success
        if trial > n:
            return successes
        successes += 1
