"""After the loop: impact re-assessment of confirmed claims, contradiction resolution
between claims, and the report's Investigation section after review decisions, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from factcheck_gateway.modes.fact_check.investigate import contradictions, impact, records
from factcheck_gateway.modes.fact_check.investigate.decide import CONFIRMED, REFUTED, SUPERSEDED, UNVERIFIABLE
from factcheck_gateway.modes.fact_check.investigate.flags import CRITICAL, LESS_CRITICAL

QUESTION = "Is the Gorlan harbour safe for ferries?"
CLAIM = "The Gorlan bridge carried 112,000 vehicles per day in 2019."


@pytest.mark.parametrize(
    "claim, original, status, confirming, tier, word",
    [
        # promotion: the evidence about the claim ties it to the question
        (
            CLAIM,
            LESS_CRITICAL,
            CONFIRMED,
            [
                "The Gorlan bridge carried 112,000 vehicles per day in 2019; the traffic makes the harbour unsafe for ferries."
            ],
            CRITICAL,
            "promoted",
        ),
        # the question's words in a sentence that is not about the claim do not promote it
        (
            CLAIM,
            LESS_CRITICAL,
            CONFIRMED,
            ["The Gorlan bridge carried 112,000 vehicles per day in 2019. Elsewhere, the harbour is safe for ferries."],
            LESS_CRITICAL,
            "neither",
        ),
        # demotion: CRITICAL only for a contradiction the confirmation settled
        (
            CLAIM,
            CRITICAL,
            CONFIRMED,
            ["The Gorlan bridge carried 112,000 vehicles per day in 2019."],
            LESS_CRITICAL,
            "demoted",
        ),
        # a claim that addresses the question stays CRITICAL
        ("The Gorlan harbour is safe for ferries.", CRITICAL, CONFIRMED, ["It is safe."], CRITICAL, "addresses"),
    ],
)
def test_a_confirmed_claim_is_reassessed_both_ways(claim, original, status, confirming, tier, word):
    reassessed = impact.reassess(claim, original, status, confirming, QUESTION)
    assert reassessed is not None and reassessed.tier == tier and word in reassessed.reasoning


@pytest.mark.parametrize("status", [REFUTED, SUPERSEDED, UNVERIFIABLE])
def test_only_a_confirmed_claim_is_reassessed(status):
    assert impact.reassess(CLAIM, CRITICAL, status, ["anything"], QUESTION) is None


def claim(claim_id: str, text: str, status: str, contradicts: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "claimId": claim_id,
        "claim": text,
        "contradicts": list(contradicts),
        "decision": {"status": status, "rule": "r", "reasoning": "own evidence", "confidence": 0.5},
        "contradictionLinks": [],
    }


@pytest.mark.parametrize(
    "a, b, winner, loser_status, kind",
    [
        # temporal by dates: the later confirmed claim wins, the earlier one is SUPERSEDED
        (
            ("Paris had 2.0 million in 2023.", CONFIRMED),
            ("Paris had 2.1 million in 2015.", UNVERIFIABLE),
            "a",
            SUPERSEDED,
            "TEMPORAL",
        ),
        # the loser's own evidence found a newer state: temporal
        (("The tower is 330 m.", CONFIRMED), ("The tower is 300 m.", SUPERSEDED), "a", SUPERSEDED, "TEMPORAL"),
        # factual (no dates): REFUTED
        (("The tower is 330 m.", CONFIRMED), ("The tower is 450 m.", UNVERIFIABLE), "a", REFUTED, "FACTUAL"),
        # the confirmed claim is the earlier one: unclear, so factual (refuted is the default)
        (
            ("Paris had 2.1 million in 2015.", CONFIRMED),
            ("Paris had 2.0 million in 2023.", UNVERIFIABLE),
            "a",
            REFUTED,
            "FACTUAL",
        ),
        # the other side is confirmed: it wins
        (("The tower is 450 m.", REFUTED), ("The tower is 330 m.", CONFIRMED), "b", REFUTED, "FACTUAL"),
        # both confirmed with different dates: the later one wins, temporally
        (
            ("Paris had 2.1 million in 2015.", CONFIRMED),
            ("Paris had 2.0 million in 2023.", CONFIRMED),
            "b",
            SUPERSEDED,
            "TEMPORAL",
        ),
    ],
)
def test_contradictions_are_resolved_and_linked_both_ways(a, b, winner, loser_status, kind):
    first, second = claim("a", a[0], a[1], ("b",)), claim("b", b[0], b[1], ("a",))
    before = {"a": a[1], "b": b[1]}
    changed = contradictions.resolve([first, second])
    won, lost = (first, second) if winner == "a" else (second, first)
    assert lost["decision"]["status"] == loser_status and won["decision"]["status"] == CONFIRMED
    assert won["contradictionLinks"] == [
        {
            "claimId": lost["claimId"],
            "role": "WINNER",
            "kind": kind,
            "reasoning": won["contradictionLinks"][0]["reasoning"],
        }
    ]
    assert [(x["claimId"], x["role"], x["kind"]) for x in lost["contradictionLinks"]] == [
        (won["claimId"], "LOSER", kind)
    ]
    assert changed == ([lost["claimId"]] if before[lost["claimId"]] != loser_status else [])
    if changed:
        assert lost["decision"]["resolvedFrom"]["status"] == before[lost["claimId"]]


@pytest.mark.parametrize(
    "a_status, b_status",
    [(UNVERIFIABLE, UNVERIFIABLE), (REFUTED, UNVERIFIABLE), (CONFIRMED, CONFIRMED)],
)
def test_nothing_is_resolved_without_exactly_one_winner(a_status, b_status):
    first = claim("a", "The tower is 330 m.", a_status, ("b",))
    second = claim("b", "The tower is 450 m.", b_status, ("a",))
    assert contradictions.resolve([first, second]) == []
    assert first["contradictionLinks"] == second["contradictionLinks"] == []


def test_each_pair_is_resolved_on_its_own():
    hub = claim("a", "The tower is 330 m.", CONFIRMED, ("b", "c"))
    others = [
        claim("b", "The tower is 450 m.", UNVERIFIABLE, ("a",)),
        claim("c", "The tower is 300 m.", UNVERIFIABLE, ("a",)),
    ]
    assert sorted(contradictions.resolve([hub, *others])) == ["b", "c"]
    assert [x["claimId"] for x in hub["contradictionLinks"]] == ["b", "c"]


def investigated(claim_id: str, status: str, review: bool) -> dict[str, Any]:
    return {
        **claim(claim_id, "text", status),
        "flags": ["ANOMALY"],
        "reviewRequired": review,
    }


@pytest.mark.parametrize(
    "decided, expected",
    [
        (None, "- c1: CONFIRMED (pending human review)"),
        (
            {"claimId": "c1", "state": "APPROVED", "status": None, "reason": "ok"},
            "- c1: CONFIRMED (approved by human review: ok)",
        ),
        (
            {"claimId": "c1", "state": "REJECTED", "status": None, "reason": "no"},
            "- c1: CONFIRMED (rejected by human review, the first pass's verdict stands: no)",
        ),
        (
            {"claimId": "c1", "state": "MODIFIED", "status": REFUTED, "reason": "wrong"},
            "- c1: REFUTED (set by human review, proposed CONFIRMED: wrong)",
        ),
    ],
)
def test_the_report_section_follows_the_review_decisions(decided, expected):
    data = {"claims": [investigated("c1", CONFIRMED, True), investigated("c2", REFUTED, False)]}
    body = "The report body."
    stored = body + records.report_section(data)
    text = records.report_text_with_decisions(stored, data, {"c1": decided} if decided else {})
    assert expected in text and text.startswith(body)
    assert "- c2: REFUTED, confidence" in text
    if decided:
        assert "pending" not in text
    # A report text that does not end with the section it was written with is left as it is.
    assert records.report_text_with_decisions("Other text.", data, {"c1": decided} if decided else {}) == "Other text."
