"""The reliability-weighted consensus (consensus/weighted.py, consensus/combine.py) on hand-computed cases."""

from __future__ import annotations

import itertools
import math

import pytest

from factcheck.core.domain import ClaimVerification, ExtractedClaim
from factcheck.core.weighting_text import describe_weighting
from factcheck.v1 import common_pb2, evaluation_pb2
from factcheck_gateway.consensus import MISSING_EVIDENCE, calculate_consensus
from factcheck_gateway.consensus.weighted import (
    UNIFORM_PRIOR,
    ConsensusWeights,
    confidence_of,
    fit_weights,
    label_prior,
    smoothed_verdict_given_label,
    verdict_weights,
)

CLAIM = ExtractedClaim(id="claim_1", claim="ARPANET launched in 1969", context="ARPANET launched in 1969.", type="DATE")
VERDICTS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")


def v(verdict: str, model: str, confidence: str = "HIGH", correction: str | None = None) -> ClaimVerification:
    return ClaimVerification("claim_1", verdict, f"evidence for {verdict}", correction, confidence, model)


def diagonal(right: int, wrong: int) -> tuple[tuple[int, ...], ...]:
    """Counts of a checker right `right` times per label and wrong `wrong` times towards each other label."""
    return tuple(tuple(right if label == verdict else wrong for verdict in range(3)) for label in range(3))


def weighted(weights: ConsensusWeights, *votes: tuple[str, str]):
    models = [model for model, _ in votes]
    (result,) = calculate_consensus([CLAIM], [[v(verdict, model)] for model, verdict in votes], weights, models)
    return result


# --- the smoothed tables and the log-odds weights -----------------------------------------------------


def test_laplace_smoothing_with_zero_counts():
    table = smoothed_verdict_given_label(((5, 0, 0), (0, 5, 0), (0, 0, 0)))
    assert table[0] == pytest.approx((6 / 8, 1 / 8, 1 / 8))
    assert table[1] == pytest.approx((1 / 8, 6 / 8, 1 / 8))
    assert table[2] == pytest.approx((1 / 3, 1 / 3, 1 / 3))  # a label never measured: no information
    assert all(p > 0 for row in table for p in row)


def test_log_odds_weights_by_hand():
    table = smoothed_verdict_given_label(((5, 0, 0), (0, 5, 0), (0, 0, 5)))
    # P(v | label = v) = 6/8, P(v | label ≠ v) = 1/8 under the uniform prior: ln 6 for each verdict.
    assert verdict_weights(table) == pytest.approx((math.log(6),) * 3)
    # With a prior, label ≠ v mixes the other rows by their prior shares.
    table = ((0.8, 0.1, 0.1), (0.5, 0.4, 0.1), (0.2, 0.2, 0.6))
    prior = (0.5, 0.25, 0.25)
    weights = verdict_weights(table, prior)
    assert weights[0] == pytest.approx(math.log(0.8) - math.log((0.25 * 0.5 + 0.25 * 0.2) / 0.5))
    assert weights[1] == pytest.approx(math.log(0.4) - math.log((0.5 * 0.1 + 0.25 * 0.2) / 0.75))
    assert weights[2] == pytest.approx(math.log(0.6) - math.log((0.5 * 0.1 + 0.25 * 0.1) / 0.75))


def test_a_checker_that_says_nothing_has_zero_weight():
    weights = fit_weights("e", {"m": ((10, 10, 10), (10, 10, 10), (10, 10, 10))})
    assert weights.checkers["m"].verdict_weights == pytest.approx((0.0, 0.0, 0.0))
    assert weights.checkers["m"].items == 90


def test_a_verdict_never_given_in_the_evaluation_counts_for_nothing():
    # Word overlap never says DISPUTED: smoothing alone would give DISPUTED a positive weight (1/13 of the
    # small DISPUTED row against 1/28 and 1/99 of the larger ones), read as evidence it never was.
    overlap = ((20, 0, 5), (4, 0, 6), (10, 0, 86))
    weights = fit_weights("e", {"a": diagonal(20, 5), "overlap": overlap})
    measured = weights.checkers["overlap"]
    assert measured.unmeasured == ("DISPUTED",)
    assert measured.verdict_weights[1] == 0.0 and measured.verdict_weights[0] > 0
    alone = weighted(fit_weights("e", {"a": diagonal(20, 5)}), ("a", "VERIFIED"))
    both = weighted(weights, ("a", "VERIFIED"), ("overlap", "DISPUTED"))
    assert both.consensus_verdict == alone.consensus_verdict == "VERIFIED"
    assert both.weighted_probability == pytest.approx(alone.weighted_probability)
    assert ConsensusWeights.from_json(weights.to_json()) == weights
    weighting = evaluation_pb2.ConsensusWeighting(
        used=evaluation_pb2.CONSENSUS_WEIGHTED,
        evaluation_id="e",
        checkers=[
            evaluation_pb2.CheckerReliability(
                checker_model="overlap",
                verdict_weights=measured.verdict_weights,
                unmeasured_verdicts=[common_pb2.VERDICT_DISPUTED],
            )
        ],
    )
    assert "overlap: VERIFIED +" in describe_weighting(weighting)
    assert "DISPUTED never given" in describe_weighting(weighting)


def test_pooled_label_prior_is_smoothed():
    prior = label_prior({"a": ((3, 0, 0), (1, 0, 0), (0, 0, 0)), "b": ((2, 1, 0), (0, 0, 0), (0, 0, 0))})
    assert prior == pytest.approx((7 / 10, 2 / 10, 1 / 10))


def test_counts_must_be_three_by_three():
    with pytest.raises(ValueError):
        smoothed_verdict_given_label(((1, 2), (3, 4)))
    with pytest.raises(ValueError):
        smoothed_verdict_given_label(((1, 0, 0), (0, -1, 0), (0, 0, 1)))


# --- the consensus ------------------------------------------------------------------------------------


def test_a_reliable_checker_outvotes_two_unreliable_ones():
    weights = fit_weights("eval-1", {"good": diagonal(90, 5), "weak-1": diagonal(40, 30), "weak-2": diagonal(40, 30)})
    c = weighted(weights, ("good", "VERIFIED"), ("weak-1", "DISPUTED"), ("weak-2", "DISPUTED"))
    # Posterior ∝ (91·31·31, 6·41·41, 6·31·31) over (VERIFIED, DISPUTED, UNVERIFIABLE), each row over 103.
    scores = (91 * 31 * 31, 6 * 41 * 41, 6 * 31 * 31)
    assert c.consensus_verdict == "VERIFIED"
    assert c.weighted_probability == pytest.approx(scores[0] / sum(scores))  # 0.8466
    assert c.consensus_confidence == "MEDIUM"
    assert c.agreement_rate == pytest.approx(100 / 3)
    assert c.correction is None
    # The majority says DISPUTED.
    (majority,) = calculate_consensus([CLAIM], [[v("VERIFIED", "good")], [v("DISPUTED", "w")], [v("DISPUTED", "w")]])
    assert majority.consensus_verdict == "DISPUTED"
    assert majority.weighted_probability is None


@pytest.mark.parametrize("checkers", [1, 2, 3, 4])
def test_equal_reliabilities_reproduce_the_majority(checkers):
    models = [f"m{i}" for i in range(checkers)]
    weights = fit_weights("e", {model: diagonal(70, 15) for model in models})
    for votes in itertools.product(VERDICTS, repeat=checkers):
        lists = [[v(verdict, model)] for model, verdict in zip(models, votes)]
        (majority,) = calculate_consensus([CLAIM], lists)
        (result,) = calculate_consensus([CLAIM], lists, weights, models)
        assert result.consensus_verdict == majority.consensus_verdict, votes
        assert result.agreement_rate == majority.agreement_rate
        assert result.citations == majority.citations


def test_ties_follow_the_spec_rules_with_low_confidence():
    weights = fit_weights("e", {"a": diagonal(50, 10), "b": diagonal(50, 10)})
    for pair, expected in [
        (("VERIFIED", "UNVERIFIABLE"), "VERIFIED"),  # rule 4
        (("VERIFIED", "DISPUTED"), "DISPUTED"),  # rule 3
        (("UNVERIFIABLE", "DISPUTED"), "DISPUTED"),  # rule 5
    ]:
        c = weighted(weights, ("a", pair[0]), ("b", pair[1]))
        assert c.consensus_verdict == expected
        assert c.consensus_confidence == "LOW"
        assert c.agreement_rate == 50.0
        assert c.weighted_probability == pytest.approx(51 * 11 / (2 * 51 * 11 + 11 * 11))


def test_unmeasured_checkers_tie_three_ways():
    weights = fit_weights("e", {"a": diagonal(0, 0), "b": diagonal(0, 0), "c": diagonal(0, 0)})
    c = weighted(weights, ("a", "VERIFIED"), ("b", "DISPUTED"), ("c", "UNVERIFIABLE"))
    assert (c.consensus_verdict, c.consensus_confidence) == ("DISPUTED", "LOW")  # rule 5, all three tied
    assert c.weighted_probability == pytest.approx(1 / 3)


def test_a_silent_checker_counts_as_unverifiable_under_its_own_weights():
    # "b" rarely says UNVERIFIABLE unless the claim is so: its silence is strong evidence for UNVERIFIABLE.
    weights = fit_weights("e", {"a": diagonal(50, 25), "b": ((90, 5, 1), (5, 90, 1), (5, 5, 90))})
    (c,) = calculate_consensus([CLAIM], [[v("VERIFIED", "a")], []], weights, ["a", "b"])
    assert c.verdicts[1].verdict == "UNVERIFIABLE"
    assert c.verdicts[1].evidence == MISSING_EVIDENCE
    assert c.verdicts[1].checker_model == "b"
    assert c.consensus_verdict == "UNVERIFIABLE"
    assert c.agreement_rate == 50.0


def test_correction_and_citations_come_from_the_checkers_of_the_chosen_verdict():
    weights = fit_weights("e", {"good": diagonal(90, 2), "weak": diagonal(35, 30)})
    lists = [
        [v("DISPUTED", "good", correction="It launched in 1969.")],
        [v("VERIFIED", "weak")],
        [v("VERIFIED", "weak")],
    ]
    (c,) = calculate_consensus([CLAIM], lists, weights, ["good", "weak", "weak"])
    assert c.consensus_verdict == "DISPUTED"
    assert c.correction == "It launched in 1969."
    assert c.consensus_confidence == "HIGH"
    assert c.weighted_probability is not None and c.weighted_probability >= 0.9


def test_confidence_levels():
    assert [confidence_of(p) for p in (0.95, 0.9, 0.89, 0.7, 0.69, 0.34)] == [
        "HIGH",
        "HIGH",
        "MEDIUM",
        "MEDIUM",
        "LOW",
        "LOW",
    ]


def test_the_weighted_consensus_needs_every_checkers_weights():
    weights = fit_weights("e", {"a": diagonal(5, 1)})
    with pytest.raises(ValueError, match="no weights for b"):
        calculate_consensus([CLAIM], [[v("VERIFIED", "a")], [v("VERIFIED", "b")]], weights, ["a", "b"])
    with pytest.raises(ValueError):
        calculate_consensus([CLAIM], [[v("VERIFIED", "a")]], weights, [])


def test_weights_survive_json_as_stored():
    weights = fit_weights("eval-7", {"a": diagonal(9, 1), "b": ((3, 2, 1), (0, 4, 0), (1, 1, 7))})
    again = ConsensusWeights.from_json(weights.to_json())
    assert again == weights
    assert again.prior == UNIFORM_PRIOR
    assert list(again.checkers) == ["a", "b"]


def test_the_weighted_probability_is_on_the_proto():
    weights = fit_weights("e", {"a": diagonal(9, 1)})
    c = weighted(weights, ("a", "VERIFIED"))
    message = c.to_proto()
    assert message.HasField("weighted_probability")
    assert message.weighted_probability == pytest.approx(10 / 14)  # row (9, 1, 1): P = (10, 2, 2) / 14
    (majority,) = calculate_consensus([CLAIM], [[v("VERIFIED", "a")]])
    assert not majority.to_proto().HasField("weighted_probability")
