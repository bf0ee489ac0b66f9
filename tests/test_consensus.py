"""calculateConsensus: the eight rules by example, then against a brute-force oracle."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck.core.domain import ClaimVerification, ExtractedClaim
from factcheck_gateway.consensus import MISSING_EVIDENCE, calculate_consensus

CLAIM = ExtractedClaim(id="claim_1", claim="ARPANET launched in 1969", context="ARPANET launched in 1969.", type="DATE")


def v(
    verdict: str, confidence: str = "HIGH", correction: str | None = None, claim_id: str = "claim_1", model: str = "m"
):
    return ClaimVerification(claim_id, verdict, f"evidence for {verdict}", correction, confidence, model)


def consensus_of(*checkers: list[ClaimVerification]):
    (result,) = calculate_consensus([CLAIM], list(checkers))
    return result


# --- rules by example ---------------------------------------------------------------------------------


def test_unanimous_verified():
    c = consensus_of([v("VERIFIED")], [v("VERIFIED")], [v("VERIFIED")])
    assert (c.consensus_verdict, c.consensus_confidence, c.agreement_rate, c.correction) == (
        "VERIFIED",
        "HIGH",
        100.0,
        None,
    )


def test_claim_fields_are_copied_and_verdicts_kept_in_checker_order():
    checkers = [[v("VERIFIED", model="a")], [v("DISPUTED", model="b")], [v("VERIFIED", model="c")]]
    c = consensus_of(*checkers)
    assert (c.claim_id, c.claim, c.context, c.type) == (CLAIM.id, CLAIM.claim, CLAIM.context, CLAIM.type)
    assert [x.checker_model for x in c.verdicts] == ["a", "b", "c"]


def test_rule_2_majority_wins_and_rule_6_agreement_is_unrounded():
    c = consensus_of([v("VERIFIED")], [v("DISPUTED", correction="x")], [v("VERIFIED")])
    assert c.consensus_verdict == "VERIFIED"
    assert c.agreement_rate == 2 / 3 * 100
    assert c.correction is None  # rule 8 only applies to a DISPUTED consensus


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["VERIFIED", "DISPUTED"], "DISPUTED"),  # rule 3
        (["DISPUTED", "VERIFIED"], "DISPUTED"),  # rule 3, order does not matter
        (["VERIFIED", "UNVERIFIABLE"], "VERIFIED"),  # rule 4
        (["UNVERIFIABLE", "DISPUTED"], "DISPUTED"),  # rule 4
        (["VERIFIED", "DISPUTED", "UNVERIFIABLE"], "DISPUTED"),  # rule 5
        (["VERIFIED", "VERIFIED", "DISPUTED", "DISPUTED"], "DISPUTED"),  # rule 3 with four checkers
        (["UNVERIFIABLE", "UNVERIFIABLE", "VERIFIED", "VERIFIED"], "VERIFIED"),  # rule 4 with four checkers
    ],
)
def test_ties_are_decided_conservatively_with_low_confidence(verdicts, expected):
    c = consensus_of(*[[v(name, "HIGH")] for name in verdicts])
    assert c.consensus_verdict == expected
    assert c.consensus_confidence == "LOW"  # edge case: an even split is never confident
    assert c.agreement_rate == pytest.approx(100 / len(set(verdicts)))


def test_a_minority_split_is_not_a_tie():
    c = consensus_of(
        [v("DISPUTED", "HIGH")], [v("DISPUTED", "HIGH")], [v("VERIFIED", "LOW")], [v("UNVERIFIABLE", "LOW")]
    )
    assert (c.consensus_verdict, c.consensus_confidence, c.agreement_rate) == ("DISPUTED", "HIGH", 50.0)


@pytest.mark.parametrize(
    ("confidences", "expected"),
    [
        (["HIGH", "HIGH", "LOW"], "HIGH"),
        (["LOW", "MEDIUM", "MEDIUM"], "MEDIUM"),
        (["HIGH", "MEDIUM"], "MEDIUM"),  # tie -> the lower
        (["HIGH", "LOW", "MEDIUM"], "LOW"),  # three-way tie -> the lowest
    ],
)
def test_rule_7_confidence_is_the_majoritys_most_common(confidences, expected):
    checkers = [[v("VERIFIED", conf)] for conf in confidences]
    assert consensus_of(*checkers).consensus_confidence == expected


def test_rule_7_ignores_confidence_of_the_minority():
    c = consensus_of([v("VERIFIED", "MEDIUM")], [v("VERIFIED", "MEDIUM")], [v("DISPUTED", "HIGH")])
    assert c.consensus_confidence == "MEDIUM"


def test_rule_8_most_common_correction():
    c = consensus_of(
        [v("DISPUTED", correction="A")],
        [v("DISPUTED", correction="B")],
        [v("DISPUTED", correction="B")],
        [v("VERIFIED")],
    )
    assert (c.consensus_verdict, c.correction) == ("DISPUTED", "B")


def test_rule_8_tie_goes_to_the_first_checker_and_empty_corrections_do_not_count():
    c = consensus_of([v("DISPUTED", correction="")], [v("DISPUTED", correction="B")], [v("DISPUTED", correction="A")])
    assert c.correction == "B"
    assert consensus_of([v("DISPUTED", correction=None)], [v("DISPUTED", correction="  ")]).correction is None


def test_a_checker_that_skips_the_claim_counts_as_unverifiable():
    c = consensus_of([v("VERIFIED", model="a")], [v("VERIFIED", claim_id="claim_9", model="b")], [])
    assert [x.verdict for x in c.verdicts] == ["VERIFIED", "UNVERIFIABLE", "UNVERIFIABLE"]
    placeholder = c.verdicts[1]
    assert (placeholder.evidence, placeholder.confidence, placeholder.correction) == (MISSING_EVIDENCE, "LOW", None)
    assert placeholder.checker_model == "b"
    assert (c.consensus_verdict, c.consensus_confidence) == ("UNVERIFIABLE", "LOW")


def test_zero_checkers():
    c = consensus_of()
    assert (c.consensus_verdict, c.consensus_confidence, c.agreement_rate, c.verdicts) == (
        "UNVERIFIABLE",
        "LOW",
        0.0,
        (),
    )


def test_every_claim_gets_a_result_in_claim_order():
    claims = [ExtractedClaim(f"claim_{i}", f"c{i}", "", "STATISTIC") for i in (2, 1, 3)]
    checker = [v("DISPUTED", claim_id="claim_1"), v("VERIFIED", claim_id="claim_2")]
    result = calculate_consensus(claims, [checker])
    assert [(c.claim_id, c.consensus_verdict) for c in result] == [
        ("claim_2", "VERIFIED"),
        ("claim_1", "DISPUTED"),
        ("claim_3", "UNVERIFIABLE"),
    ]
    assert calculate_consensus([], [checker]) == []


# --- brute-force oracle -------------------------------------------------------------------------------

VERDICT_NAMES = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
# Among verdicts sharing the top count, the one listed first here wins (rules 3-5).
TIE_PRIORITY = ("DISPUTED", "VERIFIED", "UNVERIFIABLE")
# Among confidences sharing the top count, the one listed first here wins (rule 7).
CONFIDENCE_PRIORITY = ("LOW", "MEDIUM", "HIGH")


def oracle(claim_id: str, checkers: list[list[ClaimVerification]]):
    """The rules restated directly: returns (verdict, confidence, agreement, correction, votes)."""
    votes = []
    for checker in checkers:
        mine = [x for x in checker if x.claim_id == claim_id]
        votes.append(
            (mine[0].verdict, mine[0].confidence, mine[0].correction) if mine else ("UNVERIFIABLE", "LOW", None)
        )
    if not votes:
        return "UNVERIFIABLE", "LOW", 0.0, None, votes
    tally = {name: [vote[0] for vote in votes].count(name) for name in VERDICT_NAMES}
    best = max(tally.values())
    contenders = [name for name in TIE_PRIORITY if tally[name] == best]
    verdict = contenders[0]
    if len(contenders) > 1:
        confidence = "LOW"
    else:
        confs = [vote[1] for vote in votes if vote[0] == verdict]
        confidence = next(
            c for c in CONFIDENCE_PRIORITY if confs.count(c) == max(map(confs.count, CONFIDENCE_PRIORITY))
        )
    agreement = tally[verdict] * 100 / len(votes)
    correction = None
    if verdict == "DISPUTED":
        texts = [vote[2] for vote in votes if vote[0] == "DISPUTED" and vote[2] is not None and vote[2].strip() != ""]
        if texts:
            correction = sorted(texts, key=lambda t: (-texts.count(t), texts.index(t)))[0]
    return verdict, confidence, agreement, correction, votes


CLAIM_IDS = ["claim_1", "claim_2", "claim_3"]
verifications = st.builds(
    ClaimVerification,
    claim_id=st.sampled_from(CLAIM_IDS + ["claim_99"]),
    verdict=st.sampled_from(VERDICT_NAMES),
    evidence=st.just("e"),
    correction=st.sampled_from([None, "", " ", "fix A", "fix B"]),
    confidence=st.sampled_from(CONFIDENCE_PRIORITY),
    checker_model=st.sampled_from(["m1", "m2"]),
)


@settings(max_examples=300, deadline=None)
@given(checkers=st.lists(st.lists(verifications, max_size=5), min_size=1, max_size=4))
def test_matches_brute_force_oracle(checkers):
    claims = [ExtractedClaim(cid, cid, "", "DATE") for cid in CLAIM_IDS]
    for c in calculate_consensus(claims, checkers):
        verdict, confidence, agreement, correction, votes = oracle(c.claim_id, checkers)
        assert (c.consensus_verdict, c.consensus_confidence, c.correction) == (verdict, confidence, correction)
        assert math.isclose(c.agreement_rate, agreement)
        assert [(x.verdict, x.confidence, x.correction) for x in c.verdicts] == votes


@settings(max_examples=100, deadline=None)
@given(checkers=st.lists(st.lists(verifications, max_size=5), min_size=1, max_size=4))
def test_invariants(checkers):
    claims = [ExtractedClaim(cid, cid, "", "DATE") for cid in CLAIM_IDS]
    for c in calculate_consensus(claims, checkers):
        assert len(c.verdicts) == len(checkers)
        counts = [sum(x.verdict == name for x in c.verdicts) for name in VERDICT_NAMES]
        assert c.agreement_rate * len(checkers) / 100 == pytest.approx(max(counts))
        assert 0 < c.agreement_rate <= 100
        assert c.correction is None or c.consensus_verdict == "DISPUTED"
