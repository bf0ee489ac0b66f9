"""The evaluation metrics against small examples worked out by hand."""

from __future__ import annotations

import pytest

from factcheck.evaluation.metrics import (
    CalibrationBin,
    ClassScore,
    Latency,
    ScoredItem,
    latency,
    nearest_rank,
    score,
)

V, D, U = "VERIFIED", "DISPUTED", "UNVERIFIABLE"

# gold, predicted, confidence, unreadable, latency: ten answers, one unreadable, two from the cache.
EXAMPLE = [
    ScoredItem(V, V, "HIGH", False, 100),
    ScoredItem(V, V, "HIGH", False, 200),
    ScoredItem(V, D, "MEDIUM", False, 300),
    ScoredItem(V, U, "LOW", False, None, cached=True),
    ScoredItem(D, D, "HIGH", False, 400),
    ScoredItem(D, U, "MEDIUM", False, 500),
    ScoredItem(U, U, "LOW", False, 600),
    ScoredItem(U, U, "HIGH", False, 700),
    ScoredItem(U, "", "", True, 800),
    ScoredItem(U, U, "MEDIUM", False, None, cached=True),
]


def test_accuracy_counts_an_unreadable_answer_as_wrong() -> None:
    scores = score(EXAMPLE)
    assert scores.items == 10
    assert scores.accuracy == pytest.approx(6 / 10)
    assert scores.unreadable_rate == pytest.approx(0.1)
    assert scores.cached == 2


def test_confusion_rows_are_gold_columns_predicted() -> None:
    # The unreadable answer is in no column: its row (UNVERIFIABLE) sums to 3 of its 4 items.
    assert score(EXAMPLE).confusion == ((2, 1, 1), (0, 1, 1), (0, 0, 3))


def test_precision_recall_and_balanced_accuracy() -> None:
    scores = score(EXAMPLE)
    assert scores.classes == (
        ClassScore(V, precision=1.0, recall=0.5, support=4, predicted=2),
        ClassScore(D, precision=0.5, recall=0.5, support=2, predicted=2),
        ClassScore(U, precision=0.6, recall=0.75, support=4, predicted=5),
    )
    assert scores.balanced_accuracy == pytest.approx((0.5 + 0.5 + 0.75) / 3)


def test_disputed_rate_on_supported_claims() -> None:
    assert score(EXAMPLE).disputed_rate_on_supported == pytest.approx(1 / 4)
    assert score([ScoredItem(D, D, "HIGH", False, 1)]).disputed_rate_on_supported is None


def test_calibration_reads_each_level_as_its_stated_probability() -> None:
    scores = score(EXAMPLE)
    high, medium, low = scores.calibration
    assert (high, low) == (CalibrationBin("HIGH", 0.9, 1.0, 4), CalibrationBin("LOW", 0.5, 0.5, 2))
    assert (medium.confidence, medium.stated, medium.accuracy, medium.count) == ("MEDIUM", 0.7, pytest.approx(1 / 3), 3)
    # 4/9 · |1 − 0.9| + 3/9 · |1/3 − 0.7| + 2/9 · |0.5 − 0.5| over the nine readable answers.
    assert scores.expected_calibration_error == pytest.approx(4 / 9 * 0.1 + 3 / 9 * (0.7 - 1 / 3))
    assert scores.expected_calibration_error == pytest.approx(1 / 6)


def test_latency_over_the_answers_that_had_one() -> None:
    assert score(EXAMPLE).latency == Latency(400, 800, 800, 800, 800, count=8)


def test_nearest_rank_percentiles() -> None:
    values = [10 * n for n in range(1, 21)]  # 10 .. 200
    assert latency(values) == Latency(p50_ms=100, p90_ms=180, p95_ms=190, p99_ms=200, max_ms=200, count=20)
    assert latency([5]) == Latency(5, 5, 5, 5, 5, 1)
    assert latency([]) is None
    assert nearest_rank([1, 2, 3], 0) == 1  # rank ⌈0⌉ is the smallest, not an index before it


def test_balanced_accuracy_is_over_the_gold_classes_present() -> None:
    items = [ScoredItem(V, V, "HIGH", False, 1), ScoredItem(U, V, "LOW", False, 1), ScoredItem(U, U, "LOW", False, 1)]
    scores = score(items)
    assert scores.balanced_accuracy == pytest.approx((1.0 + 0.5) / 2)  # no gold DISPUTED: not averaged in
    assert scores.classes[1] == ClassScore(D, 0.0, 0.0, 0, 0)  # never predicted: precision 0


def test_empty_input_gives_zeros_and_nones() -> None:
    scores = score([])
    assert (scores.items, scores.accuracy, scores.balanced_accuracy, scores.unreadable_rate, scores.cached) == (
        0,
        0.0,
        0.0,
        0.0,
        0,
    )
    assert scores.confusion == ((0, 0, 0), (0, 0, 0), (0, 0, 0))
    assert scores.expected_calibration_error is None and scores.calibration == ()
    assert scores.disputed_rate_on_supported is None and scores.latency is None


def test_only_unreadable_answers_have_no_calibration() -> None:
    scores = score([ScoredItem(V, "", "", True, 10)])
    assert scores.accuracy == 0.0 and scores.unreadable_rate == 1.0
    assert scores.expected_calibration_error is None
    assert scores.disputed_rate_on_supported == 0.0


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (ScoredItem("TRUE", V, "HIGH", False, 1), "gold verdict 'TRUE'"),
        (ScoredItem(V, "", "HIGH", False, 1), "predicted verdict ''"),
        (ScoredItem(V, V, "SURE", False, 1), "confidence 'SURE'"),
    ],
)
def test_a_value_outside_the_vocabulary_is_refused(item: ScoredItem, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        score([item])
