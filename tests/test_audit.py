"""The audit of a checker's answer (factcheck/core/audit.py), what a flagged verification counts as in the
consensus, and the gateway's and checker service's parts of it (the run's audit, the cache, unresolved citations).
Through the services: tests/test_audit_e2e.py."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factcheck.core.audit import (
    AUDITED,
    DISABLED,
    FABRICATED_QUOTE,
    NO_PASSAGES,
    UNSUPPORTED_DETAIL,
    AuditPassage,
    Counted,
    audit,
    counted_as,
)
from factcheck.core.domain import AuditFlag, Citation, ClaimVerification, ExtractedClaim
from factcheck.v1 import checker_pb2, common_pb2
from factcheck_checker.citations import resolve_citations
from factcheck_gateway.consensus import calculate_consensus
from factcheck_gateway.consensus.weighted import fit_weights
from factcheck_gateway.modes.fact_check.audit import audit_response
from factcheck_gateway.verification_cache import cached

APOLLO = AuditPassage(
    "P1",
    "Apollo 11 was the first crewed mission to land on the Moon. The lunar module Eagle landed on 20 July 1969.",
    ("Apollo 11",),
)
EIFFEL = AuditPassage(
    "P2",
    "The Eiffel Tower is on the Champ de Mars in Paris. It was completed in 1889 as the entrance arch to the "
    "World's Fair of that year.",
    ("The Eiffel Tower",),
)
GIVEN = {p.id: p for p in (APOLLO, EIFFEL)}


def answer(verdict: str = "VERIFIED", evidence: str = "", quotes: dict[str, str] | None = None, unresolved=()):
    citations = tuple(Citation(passage_id, quote=quote) for passage_id, quote in (quotes or {}).items())
    return ClaimVerification(
        "claim_1",
        verdict,
        evidence,
        None,
        "HIGH",
        "fake/m",
        citations,
        unresolved_citations=tuple(Citation(p, quote=q) for p, q in unresolved),
    )


def flags(verification: ClaimVerification, claim: str, passages=(APOLLO,), quotable=()) -> list[tuple[str, str]]:
    return [(f.kind, f.detail) for f in audit(verification, claim, list(passages), GIVEN, quotable)]


# --- quotes ------------------------------------------------------------------------------------------------


def test_a_quote_the_cited_passage_holds_is_not_flagged_whatever_its_spacing_case_and_quote_marks():
    claim = "The Eiffel Tower was completed in 1889."
    for quote in (
        "It was completed in 1889",
        "it  was\ncompleted IN 1889",
        "the entrance arch to the World\u2019s Fair",  # curly apostrophe, straight in the passage
        "completed in 1889 ... the World's Fair",  # cut with an ellipsis: each piece is there
        "completed in 1889 \u2026 entrance arch",
    ):
        assert flags(answer(quotes={"P2": quote}), claim, [EIFFEL]) == [], quote


def test_a_quote_the_cited_passage_does_not_hold_is_fabricated():
    claim = "Apollo 11 landed on the Moon in 1969."
    fabricated = answer(quotes={"P1": "Eagle landed on the Moon on 20 July 1969"})
    assert flags(fabricated, claim) == [
        (FABRICATED_QUOTE, 'quote not in P1: "Eagle landed on the Moon on 20 July 1969"')
    ]
    # A quote from another passage the checker was given is still not in the one it cites.
    assert flags(answer(quotes={"P1": "It was completed in 1889"}), claim)[0][0] == FABRICATED_QUOTE
    # A passage the checker was never given.
    assert flags(answer(quotes={"P9": "landed on 20 July 1969"}), claim) == [
        (FABRICATED_QUOTE, 'quote cites P9, which the checker was not given: "landed on 20 July 1969"')
    ]
    # What the checker service could not resolve is audited the same way; a citation without a quote is none.
    assert flags(answer(unresolved=[("P1", "landed on the Moon in 1969")]), claim)[0][0] == FABRICATED_QUOTE
    assert flags(answer(quotes={"P1": ""}), claim) == []


def test_quoted_words_in_the_evidence_line_must_occur_too():
    claim = "Apollo 11 landed on the Moon in 1969."
    faithful = answer(evidence='P1 says "The lunar module Eagle landed on 20 July 1969." It is "first" of its kind.')
    assert flags(faithful, claim) == []
    # Quoting the claim, its sentence or the checked content is no fabrication; a one- or two-word quote is emphasis.
    content = "Everyone knows that Apollo 11 landed on the Moon in 1969, as the papers wrote."
    quoting = answer(evidence='The text says "as the papers wrote" and the claim "landed on the Moon in 1969".')
    assert flags(quoting, claim, quotable=(claim, content)) == []
    assert flags(answer(evidence='It is "the first" landing.'), claim) == []
    fabricated = answer(evidence="The source says \u201cEagle touched down on the Moon in 1969\u201d.")
    assert flags(fabricated, claim) == [
        (FABRICATED_QUOTE, 'quote in the evidence not in the passages: "Eagle touched down on the Moon in 1969"')
    ]
    # The same fabricated quote in the Sources line and the Evidence line is one flag.
    twice = answer(evidence='P1: "Eagle touched down in 1969"', quotes={"P1": "Eagle touched down in 1969"})
    assert [kind for kind, _ in flags(twice, claim)] == [FABRICATED_QUOTE]


# --- details -----------------------------------------------------------------------------------------------


def test_a_verified_claim_with_a_specific_no_passage_states_is_flagged_once_per_specific():
    assert flags(answer(), "Apollo 11 landed on the Moon in 1972.") == [
        (UNSUPPORTED_DETAIL, "unsupported detail: 1972")
    ]
    assert flags(answer(), "Apollo 11 was the first crewed mission to land on Mars.") == [
        (UNSUPPORTED_DETAIL, "unsupported detail: Mars")
    ]
    assert [d for _, d in flags(answer(), "Apollo 12 landed on Mars in 1972.")] == [
        "unsupported detail: Apollo 12",
        "unsupported detail: Mars",
        "unsupported detail: 1972",
    ]
    # Every specific stated (normalised: "20 July 1969" holds 1969) in some passage of the claim: nothing.
    assert flags(answer(), "Apollo 11 landed on the Moon in 1969.") == []
    # Only the claim's passages count, and a title is evidence (the grounding rules read it as such).
    assert flags(answer(), "The Eiffel Tower was completed in 1889.", [APOLLO])[0][0] == UNSUPPORTED_DETAIL
    titled = AuditPassage("P3", "It was completed in 1889.", ("The Eiffel Tower",))
    assert flags(answer(), "The Eiffel Tower was completed in 1889.", [titled]) == []


def test_only_a_verified_verdict_is_held_to_every_specific():
    for verdict in ("DISPUTED", "UNVERIFIABLE"):
        assert flags(answer(verdict), "Apollo 11 landed on the Moon in 1972.") == []


# --- what a verification counts as ---------------------------------------------------------------------------


def test_a_flagged_verified_counts_as_unverifiable_at_low_confidence_and_says_why():
    flag = AuditFlag(UNSUPPORTED_DETAIL, "unsupported detail: 1972", "fake/m")
    counted = counted_as(replace(answer(), audit_flags=(flag,)))
    assert (counted.verdict, counted.confidence) == ("UNVERIFIABLE", "LOW")
    assert counted.reason == "fake/m's VERIFIED counted as UNVERIFIABLE: unsupported detail: 1972"
    # Unflagged, or another verdict however flagged: counted as given.
    assert counted_as(answer()) == Counted("VERIFIED", "HIGH")
    disputed = ClaimVerification("claim_1", "DISPUTED", "", "x", "MEDIUM", "m", audit_flags=(flag,))
    assert (counted_as(disputed).verdict, counted_as(disputed).reason) == ("DISPUTED", "")


CLAIM = ExtractedClaim("claim_1", "Apollo 11 landed on the Moon in 1972.", "", "DATE")
FLAG = AuditFlag(UNSUPPORTED_DETAIL, "unsupported detail: 1972", "a")


def vote(verdict: str, model: str, flagged: bool = False, correction: str | None = None) -> list[ClaimVerification]:
    citations = (Citation("P1", quote="landed"),)
    flagged_by = (AuditFlag(FLAG.kind, FLAG.detail, model),) if flagged else ()
    return [ClaimVerification("claim_1", verdict, "e", correction, "HIGH", model, citations, audit_flags=flagged_by)]


def test_the_majority_counts_a_flagged_verified_as_unverifiable_and_its_note_says_why():
    [alone] = calculate_consensus([CLAIM], [vote("VERIFIED", "a", flagged=True)])
    assert (alone.consensus_verdict, alone.consensus_confidence, alone.agreement_rate) == ("UNVERIFIABLE", "LOW", 100.0)
    assert alone.audit_note == "a's VERIFIED counted as UNVERIFIABLE: unsupported detail: 1972."
    assert alone.verdicts[0].verdict == "VERIFIED"  # kept as the checker gave it, flags and all
    # Two VERIFIED, one flagged: 1 VERIFIED against 1 UNVERIFIABLE is VERIFIED by rule 4, half agreeing.
    [split] = calculate_consensus([CLAIM], [vote("VERIFIED", "a", flagged=True), vote("VERIFIED", "b")])
    assert (split.consensus_verdict, split.agreement_rate) == ("VERIFIED", 50.0)
    # A flagged VERIFIED against a DISPUTED: UNVERIFIABLE against DISPUTED is DISPUTED (rule 5), with its correction.
    [disputed] = calculate_consensus(
        [CLAIM], [vote("VERIFIED", "a", flagged=True), vote("DISPUTED", "b", correction="In 1969.")]
    )
    assert (disputed.consensus_verdict, disputed.correction) == ("DISPUTED", "In 1969.")
    # Without flags the same answers are VERIFIED: the audit is what changed it.
    [plain] = calculate_consensus([CLAIM], [vote("VERIFIED", "a")])
    assert (plain.consensus_verdict, plain.audit_note) == ("VERIFIED", "")


def test_the_weighted_consensus_counts_it_the_same_way():
    weights = fit_weights("e", {"a": ((8, 1, 1), (1, 8, 1), (1, 1, 8)), "b": ((8, 1, 1), (1, 8, 1), (1, 1, 8))})
    [c] = calculate_consensus([CLAIM], [vote("VERIFIED", "a", flagged=True)], weights, ["a"])
    assert c.consensus_verdict == "UNVERIFIABLE" and "a's VERIFIED counted as UNVERIFIABLE" in c.audit_note


# --- the gateway's audit of a run's answers ---------------------------------------------------------------------


def verify_exchange():
    request = checker_pb2.VerifyRequest(
        model="fake/m",
        content="Apollo 11 landed on the Moon in 1972. Water boils at 100 degrees.",
        claims=[
            common_pb2.Claim(
                id="claim_1", claim="Apollo 11 landed on the Moon in 1972.", type=common_pb2.CLAIM_TYPE_DATE
            ),
            common_pb2.Claim(id="claim_2", claim="Water boils at 100 degrees.", type=common_pb2.CLAIM_TYPE_STATISTIC),
        ],
        passages=[common_pb2.Passage(id="P1", source_id="apollo", source_title="Apollo 11", text=APOLLO.text)],
        evidence=[common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1"])],
    )
    response = checker_pb2.VerifyResponse(
        model="fake/m",
        verifications=[
            ClaimVerification("claim_1", "VERIFIED", "", None, "HIGH", "fake/m").to_proto(),
            ClaimVerification("claim_2", "VERIFIED", "", None, "HIGH", "fake/m").to_proto(),
        ],
    )
    return request, response


def test_the_run_audits_claims_with_passages_and_says_which_it_did_not():
    request, response = verify_exchange()
    audit_response(request, response, enabled=True)
    first, second = (ClaimVerification.from_proto(v) for v in response.verifications)
    assert first.audit_status == AUDITED and [f.detail for f in first.audit_flags] == ["unsupported detail: 1972"]
    assert first.audit_flags[0].checker_model == "fake/m"
    assert second.audit_status == NO_PASSAGES and second.audit_flags == ()  # no passages: nothing to hold it to


def test_with_the_audit_off_nothing_is_flagged_and_every_answer_says_so():
    request, response = verify_exchange()
    audit_response(request, response, enabled=True)
    audit_response(request, response, enabled=False)  # (an answer audited before is audited afresh)
    verifications = [ClaimVerification.from_proto(v) for v in response.verifications]
    assert [(v.audit_status, v.audit_flags) for v in verifications] == [(DISABLED, ()), (DISABLED, ())]
    [c] = calculate_consensus([CLAIM], [verifications])
    assert c.consensus_verdict == "VERIFIED" and c.audit_note == ""


def test_the_checker_service_keeps_what_it_could_not_resolve_for_the_audit():
    passages = {"P1": common_pb2.Passage(id="P1", source_id="apollo", text=APOLLO.text)}
    given = answer(quotes={"P1": "landed on 20 July 1969"})
    given = replace(given, citations=(*given.citations, Citation("P1", quote="in 1972")))
    [resolved], dropped = resolve_citations([given], passages)
    assert dropped == 1 and [c.quote for c in resolved.citations] == ["landed on 20 July 1969"]
    assert resolved.unresolved_citations == (Citation("P1", quote="in 1972"),)


@pytest.mark.parametrize("label", ["P1", "P7"])
def test_the_cache_keeps_unresolved_citations_by_passage_index_and_no_audit(label):
    stored = ClaimVerification(
        "claim_1",
        "VERIFIED",
        "e",
        None,
        "HIGH",
        "m",
        (Citation("P1", quote="landed"), Citation("P5", quote="elsewhere")),
        audit_flags=(FLAG,),
        audit_status=AUDITED,
        unresolved_citations=(Citation(label, quote="in 1972"),),
    ).to_proto()
    reused = ClaimVerification.from_proto(cached._reused(cached._storable(stored, ["P1"]), "claim_4", ["P3"]))
    assert reused.cached and reused.audit_flags == () and reused.audit_status == ""  # audited again where reused
    assert [c.passage_id for c in reused.citations] == ["P3"]  # P5 was not the claim's: no passage of this run
    # An unresolved citation keeps its quote (the audit flags it again); a label that was not the claim's names none.
    assert reused.unresolved_citations == (Citation("P3" if label == "P1" else "", quote="in 1972"),)
