"""CompareEvaluations' arithmetic: the shared items, the difference in balanced accuracy, and the paired
bootstrap interval, checked against a plain item-by-item bootstrap of the same items."""

from __future__ import annotations

import random
import statistics

import pytest

from factcheck.evaluation.metrics import balanced_accuracy
from factcheck.evaluation.sets import LABELS
from factcheck_gateway.evaluations.compare import binomial, compare
from factcheck_gateway.evaluations.store import ItemResult


def answer(item_id: str, label: str, verdict: str | None, **flags) -> ItemResult:
    return ItemResult("m/a", "s", item_id, label, verdict=verdict, confidence="HIGH" if verdict else None, **flags)


def paired(rng: random.Random, n: int) -> tuple[list[ItemResult], list[ItemResult]]:
    """Two evaluations of one checker on n items: B is right a little more often than A."""
    mine, theirs = [], []
    for number in range(n):
        label = LABELS[number % 3]
        wrong = LABELS[(number + 1) % 3]
        mine.append(answer(f"i{number}", label, label if rng.random() < 0.6 else wrong))
        theirs.append(answer(f"i{number}", label, label if rng.random() < 0.7 else wrong))
    return mine, theirs


def plain_bootstrap(pairs, resamples: int, rng: random.Random) -> tuple[float, float]:
    """The same interval the slow way: resample the items themselves, within each label."""
    by_label = {label: [p for p in pairs if p[0].label == label] for label in LABELS}
    differences = []
    for _ in range(resamples):
        support, right, other_right = [0, 0, 0], [0, 0, 0], [0, 0, 0]
        for index, label in enumerate(LABELS):
            members = by_label[label]
            for mine, theirs in (rng.choice(members) for _ in members):
                support[index] += 1
                right[index] += mine.correct
                other_right[index] += theirs.correct
        differences.append(balanced_accuracy(support, other_right) - balanced_accuracy(support, right))
    differences.sort()
    return differences[int(0.025 * resamples)], differences[int(0.975 * resamples) - 1]


def test_the_interval_is_the_item_bootstrap_s():
    mine, theirs = paired(random.Random(1), 300)
    [found] = compare(mine, theirs, ["m/a"], ["s"])
    low, high = plain_bootstrap(list(zip(mine, theirs)), 2000, random.Random(2))
    assert found.shared == 300
    assert found.low == pytest.approx(low, abs=0.012) and found.high == pytest.approx(high, abs=0.012)
    assert found.low < found.difference < found.high


def test_only_items_both_judged_count_and_unreadable_answers_are_wrong():
    mine = [
        answer("a", "VERIFIED", "VERIFIED"),
        answer("b", "DISPUTED", None, unreadable=True),
        answer("c", "UNVERIFIABLE", None, failed=True, error="down"),  # not judged in A
        answer("d", "VERIFIED", "VERIFIED"),
    ]
    theirs = [
        answer("a", "VERIFIED", "VERIFIED"),
        answer("b", "DISPUTED", "DISPUTED"),
        answer("c", "UNVERIFIABLE", "UNVERIFIABLE"),
        answer("d", "DISPUTED", "DISPUTED"),  # another label: not the same item
        answer("e", "VERIFIED", "VERIFIED"),  # not in A
    ]
    [found] = compare(mine, theirs, ["m/a"], ["s"])
    assert found.shared == 2
    assert (found.balanced_accuracy, found.other_balanced_accuracy) == (0.5, 1.0)
    assert [item.item_id for item in found.disagreements] == ["b"]


def test_the_same_evaluation_compared_with_itself_is_no_difference():
    mine, _ = paired(random.Random(3), 60)
    [found] = compare(mine, mine, ["m/a"], ["s"])
    assert (found.difference, found.low, found.high, found.disagreements) == (0.0, 0.0, 0.0, ())


@pytest.mark.parametrize("n, p", [(40, 0.1), (1000, 0.02), (5000, 0.3), (7, 0.9)])
def test_the_binomial_draws_have_its_mean_and_variance(n, p):
    rng = random.Random(4)
    draws = [binomial(n, p, rng) for _ in range(4000)]
    assert all(0 <= draw <= n for draw in draws)
    assert statistics.fmean(draws) == pytest.approx(n * p, rel=0.05, abs=0.1)
    assert statistics.pvariance(draws) == pytest.approx(n * p * (1 - p), rel=0.12)
