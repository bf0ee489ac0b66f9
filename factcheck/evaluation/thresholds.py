"""Fitting a binary checker's decision threshold on labelled answers: a pure function, no I/O.

A binary checker (an `onnx/` model, a model of a grounding dialect) reads each claim's P(supported) against a
threshold: VERIFIED at or above it, UNVERIFIABLE below (factcheck/core/model_verdicts.py). Some verdicts do not
rest on the threshold (a DISPUTED from a contradiction, a claim not checked, unread passages that might
contradict it, an answer that could not be read): those are not VERIFIED at any threshold.

The fit maximises the balanced accuracy of VERIFIED against not VERIFIED, (TPR + TNR) / 2, over the
candidate thresholds: the distinct P(supported) of the answers the threshold decides. Balanced accuracies
are compared exactly (as fractions), and among the candidates that tie at the best the middle one is taken
(the lower of the two middle ones for an even count): a threshold inside a plateau of equally good ones,
not at its edge. Items labelled DISPUTED and UNVERIFIABLE are both "not VERIFIED".
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

# ThresholdCriterion, as the evaluation stores it.
BALANCED_ACCURACY = "balanced_accuracy"


@dataclass(frozen=True)
class ThresholdItem:
    """One answer: whether its label is VERIFIED, and its P(supported) when the threshold decides its verdict
    (None: not VERIFIED at any threshold)."""

    verified: bool
    support: float | None


@dataclass(frozen=True)
class ThresholdFit:
    threshold: float
    balanced_accuracy: float
    candidates: int


class NoFit(ValueError):
    """No threshold can be fitted on these answers: why."""


def balanced_accuracy_at(items: Sequence[ThresholdItem], threshold: float) -> float:
    """The balanced accuracy of VERIFIED (P(supported) at or above `threshold`) against not, on `items`; 0 when
    they hold no item of one of the two classes."""
    positives = [item for item in items if item.verified]
    negatives = [item for item in items if not item.verified]
    if not positives or not negatives:
        return 0.0
    hits = sum(1 for item in positives if item.support is not None and item.support >= threshold)
    rejections = sum(1 for item in negatives if item.support is None or item.support < threshold)
    return (hits / len(positives) + rejections / len(negatives)) / 2


def fit_threshold(items: Sequence[ThresholdItem]) -> ThresholdFit:
    """The threshold of best balanced accuracy on `items` (see the module docstring); NoFit saying why there is
    none."""
    positives = sorted(item.support for item in items if item.verified and item.support is not None)
    negatives = sorted(item.support for item in items if not item.verified and item.support is not None)
    verified = sum(1 for item in items if item.verified)
    others = len(items) - verified
    if not verified:
        raise NoFit("no item is labelled VERIFIED, so no threshold can tell VERIFIED from the rest")
    if not others:
        raise NoFit("every item is labelled VERIFIED, so no threshold can tell VERIFIED from the rest")
    candidates = sorted({*positives, *negatives})
    if not candidates:
        raise NoFit(
            "no answer's verdict rests on the threshold (each was DISPUTED by a contradiction, not checked, or "
            "unreadable)"
        )
    fixed_negatives = others - len(negatives)
    # Balanced accuracy × 2 × verified × others, an integer: hits × others + rejections × verified.
    best_score, tied = -1, []
    for threshold in candidates:
        hits = len(positives) - bisect_left(positives, threshold)
        rejections = fixed_negatives + bisect_left(negatives, threshold)
        score = hits * others + rejections * verified
        if score > best_score:
            best_score, tied = score, [threshold]
        elif score == best_score:
            tied.append(threshold)
    chosen = tied[(len(tied) - 1) // 2]
    return ThresholdFit(chosen, best_score / (2 * verified * others), len(candidates))
