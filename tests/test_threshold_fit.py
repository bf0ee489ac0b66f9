"""The fit of a binary checker's threshold (factcheck/evaluation/thresholds.py) against a brute force over every
candidate, computed as fractions: the best balanced accuracy of VERIFIED against not, ties to the middle, answers
the threshold does not decide never VERIFIED; and the sets no threshold can be fitted on."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from factcheck.evaluation.thresholds import NoFit, ThresholdItem, balanced_accuracy_at, fit_threshold


def brute_force(items: list[ThresholdItem]) -> tuple[float, Fraction]:
    positives = sum(item.verified for item in items)
    negatives = len(items) - positives
    scores = {}
    for threshold in sorted({item.support for item in items if item.support is not None}):
        hits = sum(1 for i in items if i.verified and i.support is not None and i.support >= threshold)
        rejections = sum(1 for i in items if not i.verified and (i.support is None or i.support < threshold))
        scores[threshold] = (Fraction(hits, positives) + Fraction(rejections, negatives)) / 2
    best = max(scores.values())
    tied = [threshold for threshold, score in scores.items() if score == best]
    return tied[(len(tied) - 1) // 2], best


def test_the_fit_is_the_brute_forces_on_random_answers():
    rng = random.Random(20261206)
    fitted = 0
    for _ in range(400):
        items = [
            ThresholdItem(rng.random() < 0.35, None if rng.random() < 0.15 else round(rng.random(), 2))
            for _ in range(rng.randint(2, 60))
        ]
        try:
            fit = fit_threshold(items)
        except NoFit:
            continue
        threshold, best = brute_force(items)
        assert fit.threshold == threshold
        assert fit.balanced_accuracy == pytest.approx(float(best))
        assert balanced_accuracy_at(items, fit.threshold) == pytest.approx(float(best))
        fitted += 1
    assert fitted > 300


def test_ties_go_to_the_middle_candidate():
    # Every threshold from 0.4 to 0.6 separates the labels perfectly: the middle one of the three.
    items = [ThresholdItem(True, p) for p in (0.6, 0.9)] + [ThresholdItem(False, p) for p in (0.1, 0.2)]
    items += [ThresholdItem(True, 0.4), ThresholdItem(False, 0.35), ThresholdItem(True, 0.5)]
    assert fit_threshold(items).threshold == 0.4
    assert fit_threshold(items).balanced_accuracy == 1.0
    # An even number of tied candidates: the lower of the two middle ones.
    even = [ThresholdItem(True, 0.9), ThresholdItem(False, 0.1), ThresholdItem(True, 0.7), ThresholdItem(False, 0.3)]
    assert fit_threshold(even).threshold == 0.7


def test_answers_the_threshold_does_not_decide_are_never_verified():
    items = [ThresholdItem(True, None), ThresholdItem(True, 0.8), ThresholdItem(False, None), ThresholdItem(False, 0.3)]
    fit = fit_threshold(items)
    assert (fit.threshold, fit.candidates) == (0.8, 2)
    assert fit.balanced_accuracy == pytest.approx((1 / 2 + 1) / 2)


@pytest.mark.parametrize(
    ("items", "reason"),
    [
        ([ThresholdItem(False, 0.2), ThresholdItem(False, 0.7)], "no item is labelled VERIFIED"),
        ([ThresholdItem(True, 0.2)], "every item is labelled VERIFIED"),
        ([ThresholdItem(True, None), ThresholdItem(False, None)], "no answer's verdict rests on the threshold"),
    ],
)
def test_no_threshold_without_both_labels_or_a_candidate(items, reason):
    with pytest.raises(NoFit, match=reason):
        fit_threshold(items)
