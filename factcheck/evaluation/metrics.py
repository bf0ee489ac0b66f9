"""Scores of a checker's verdicts on a labelled set: pure functions of (gold, predicted) pairs, no I/O.

An unreadable answer (the model answered, but not in the verification format) is scored as wrong:
it counts in `items` and in its gold class's support, never as correct, and in no predicted column
(a confusion row then sums to less than its support). It states no confidence, so calibration
reads only the readable items.

Calibration reads the stated confidence as a probability that the verdict is right
(CONFIDENCE_PROBABILITY): HIGH 0.9, MEDIUM 0.7, LOW 0.5. Each level is a bin of a reliability
diagram (its stated probability against the share of its verdicts that were right), and the
expected calibration error is Σ count/N · |accuracy − stated| over the bins, N the readable items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from factcheck.evaluation.sets import LABELS

CONFIDENCES = ("HIGH", "MEDIUM", "LOW")
CONFIDENCE_PROBABILITY = {"HIGH": 0.9, "MEDIUM": 0.7, "LOW": 0.5}
PERCENTILES = (50, 90, 95, 99)


@dataclass(frozen=True)
class ScoredItem:
    gold: str  # one of LABELS
    predicted: str  # one of LABELS; ignored when unreadable
    confidence: str  # HIGH | MEDIUM | LOW; ignored when unreadable
    unreadable: bool
    latency_ms: int | None  # None when served from the cache
    cached: bool = False


@dataclass(frozen=True)
class ClassScore:
    """One verdict's scores. `precision` is 0 when the model never predicted the verdict (nothing to be
    right about); `recall` is 0 when the set has no item of it (`support` 0)."""

    verdict: str
    precision: float
    recall: float
    support: int  # items whose gold verdict this is
    predicted: int  # readable items the model gave this verdict


@dataclass(frozen=True)
class CalibrationBin:
    confidence: str  # HIGH | MEDIUM | LOW
    stated: float  # CONFIDENCE_PROBABILITY of the level
    accuracy: float  # the share of the level's verdicts that were right
    count: int


@dataclass(frozen=True)
class Latency:
    """Nearest-rank percentiles of the items that had a latency (not served from the cache), in ms."""

    p50_ms: int
    p90_ms: int
    p95_ms: int
    p99_ms: int
    max_ms: int
    count: int


@dataclass(frozen=True)
class Scores:
    items: int
    accuracy: float  # fractions 0-1 throughout
    balanced_accuracy: float  # the mean recall over the gold verdicts the set holds
    classes: tuple[ClassScore, ...]  # in LABELS order
    confusion: tuple[tuple[int, ...], ...]  # rows gold, columns predicted, both in LABELS order
    expected_calibration_error: float | None  # None without a readable item
    calibration: tuple[CalibrationBin, ...]  # the levels that occur, in CONFIDENCES order
    disputed_rate_on_supported: float | None  # gold VERIFIED predicted DISPUTED; None without gold VERIFIED
    unreadable_rate: float
    latency: Latency | None  # None when no item had a latency
    cached: int


def score(items: Sequence[ScoredItem]) -> Scores:
    """The scores of `items` (see the module docstring); an empty sequence gives zeros and Nones."""
    for item in items:
        _check(item)
    readable = [item for item in items if not item.unreadable]
    confusion = [[0] * len(LABELS) for _ in LABELS]
    for item in readable:
        confusion[LABELS.index(item.gold)][LABELS.index(item.predicted)] += 1
    support = [sum(item.gold == label for item in items) for label in LABELS]
    correct = [confusion[i][i] for i in range(len(LABELS))]
    predicted = [sum(row[j] for row in confusion) for j in range(len(LABELS))]
    classes = tuple(
        ClassScore(label, _share(correct[i], predicted[i]), _share(correct[i], support[i]), support[i], predicted[i])
        for i, label in enumerate(LABELS)
    )
    calibration = calibration_bins(readable)
    supported = support[LABELS.index("VERIFIED")]
    return Scores(
        items=len(items),
        accuracy=_share(sum(correct), len(items)),
        balanced_accuracy=balanced_accuracy(support, correct),
        classes=classes,
        confusion=tuple(tuple(row) for row in confusion),
        expected_calibration_error=expected_calibration_error(calibration),
        calibration=calibration,
        disputed_rate_on_supported=(
            confusion[LABELS.index("VERIFIED")][LABELS.index("DISPUTED")] / supported if supported else None
        ),
        unreadable_rate=_share(len(items) - len(readable), len(items)),
        latency=latency([item.latency_ms for item in items if item.latency_ms is not None]),
        cached=sum(item.cached for item in items),
    )


def balanced_accuracy(support: Sequence[int], correct: Sequence[int]) -> float:
    """The mean recall (correct / support) over the labels that have items; 0 when none has."""
    recalls = [right / count for count, right in zip(support, correct) if count]
    return sum(recalls) / len(recalls) if recalls else 0.0


def calibration_bins(readable: Sequence[ScoredItem]) -> tuple[CalibrationBin, ...]:
    """One bin per confidence level that occurs among `readable`: its stated probability and its accuracy."""
    bins = []
    for level in CONFIDENCES:
        members = [item for item in readable if item.confidence == level]
        if members:
            right = sum(item.predicted == item.gold for item in members)
            bins.append(CalibrationBin(level, CONFIDENCE_PROBABILITY[level], right / len(members), len(members)))
    return tuple(bins)


def expected_calibration_error(bins: Sequence[CalibrationBin]) -> float | None:
    """Σ count/N · |accuracy − stated| over `bins` (N: their items); None when they hold none."""
    total = sum(b.count for b in bins)
    return sum(b.count / total * abs(b.accuracy - b.stated) for b in bins) if total else None


def latency(values: Sequence[int]) -> Latency | None:
    """Nearest-rank p50/p90/p95/p99 and the maximum of `values`; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    p50, p90, p95, p99 = (nearest_rank(ordered, p) for p in PERCENTILES)
    return Latency(p50, p90, p95, p99, ordered[-1], len(ordered))


def nearest_rank(ordered: Sequence[int], percentile: int) -> int:
    """The nearest-rank percentile of the sorted `ordered`: its ⌈p/100 · n⌉-th smallest value (in whole
    numbers: 0.95 · 20 in floating point is not 19)."""
    return ordered[max(1, -(-percentile * len(ordered) // 100)) - 1]


def _check(item: ScoredItem) -> None:
    if item.gold not in LABELS:
        raise ValueError(f"gold verdict {item.gold!r} is not one of {', '.join(LABELS)}")
    if not item.unreadable and item.predicted not in LABELS:
        raise ValueError(f"predicted verdict {item.predicted!r} is not one of {', '.join(LABELS)}")
    if not item.unreadable and item.confidence not in CONFIDENCE_PROBABILITY:
        raise ValueError(f"confidence {item.confidence!r} is not one of {', '.join(CONFIDENCES)}")


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0
