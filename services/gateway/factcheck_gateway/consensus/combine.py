"""calculate_consensus: the majority verdict of all checkers, per claim; or, given a run's weights
(FactCheckConfig.consensus = CONSENSUS_WEIGHTED), the reliability-weighted verdict (weighted.py).

The rules (which verdict wins a tie, the agreement rate, the confidence, the correction) are stated in
docs/modes.md ("Consensus"). The fact-check mode runs this after the verify phase, and again on stored
verifications for GetResult (modes/fact_check/result.py, with the weights the run stored), so a stored
result always shows the current rules.

Every rule reads a verification's verdict and confidence as `factcheck.core.audit.counted_as` gives them: a
VERIFIED the gateway's audit flagged (a fabricated quote, an unsupported detail) counts as UNVERIFIABLE at LOW
confidence, and the claim's `audit_note` says so. The verifications themselves are kept as the checkers gave them.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from factcheck.core.audit import Counted, counted_as
from factcheck.core.domain import Citation, ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck_gateway.consensus.weighted import VERDICTS, ConsensusWeights, confidence_of, leaders, normalised

MISSING_EVIDENCE = "Checker did not address this claim"

# Rules 3-5: which verdict wins when several share the top count.
_TIE_WINNER = {
    frozenset({"VERIFIED", "DISPUTED"}): "DISPUTED",
    frozenset({"VERIFIED", "UNVERIFIABLE"}): "VERIFIED",
    frozenset({"DISPUTED", "UNVERIFIABLE"}): "DISPUTED",
    frozenset({"VERIFIED", "DISPUTED", "UNVERIFIABLE"}): "DISPUTED",
}

# Rule 7 tie-break: the lower confidence wins, so a split never overstates certainty.
_CONFIDENCE_RANK = {"LOW": 0, "MEDIUM": 1, "HIGH": 2}


def calculate_consensus(
    claims: Sequence[ExtractedClaim],
    all_verifications: Sequence[Sequence[ClaimVerification]],
    weights: ConsensusWeights | None = None,
    checker_models: Sequence[str] = (),
) -> list[ClaimConsensus]:
    """One ClaimConsensus per claim, in claim order; the outer list is one entry per checker.

    With `weights`, the weighted consensus: `checker_models` names the model of each entry of
    `all_verifications` (a checker's list may be empty), and `weights` must hold every one of them."""
    if weights is None:
        return [_claim_consensus(claim, all_verifications) for claim in claims]
    if len(checker_models) != len(all_verifications):
        raise ValueError("the weighted consensus needs the model of every checker")
    if missing := sorted(set(checker_models) - set(weights.checkers)):
        raise ValueError(f"no weights for {', '.join(missing)}")
    return [_weighted_claim_consensus(claim, all_verifications, weights, checker_models) for claim in claims]


def _claim_consensus(claim: ExtractedClaim, all_verifications: Sequence[Sequence[ClaimVerification]]) -> ClaimConsensus:
    verdicts = tuple(_verification_for(claim.id, checker) for checker in all_verifications)
    if not verdicts:
        return _consensus(claim, verdicts, (), "UNVERIFIABLE", "LOW", 0.0, None)
    counted = tuple(counted_as(v) for v in verdicts)
    verdict, tied = _majority_verdict(counted)
    majority = [c for c in counted if c.verdict == verdict]
    confidence = "LOW" if tied else _most_common_confidence(majority)
    agreement = len(majority) / len(verdicts) * 100
    correction = _majority_correction(verdicts, counted) if verdict == "DISPUTED" else None
    return _consensus(claim, verdicts, counted, verdict, confidence, agreement, correction)


def _weighted_claim_consensus(
    claim: ExtractedClaim,
    all_verifications: Sequence[Sequence[ClaimVerification]],
    weights: ConsensusWeights,
    checker_models: Sequence[str],
) -> ClaimConsensus:
    """The label with the highest posterior (ties: rules 3-5, and LOW confidence as rule 7 gives a tie);
    confidence from the posterior (weighted.confidence_of); agreement, correction and
    citations from the checkers that gave the chosen verdict, as under the majority."""
    verdicts = tuple(
        _verification_for(claim.id, checker, model) for checker, model in zip(all_verifications, checker_models)
    )
    if not verdicts:
        return _consensus(claim, verdicts, (), "UNVERIFIABLE", "LOW", 0.0, None)
    counted = tuple(counted_as(v) for v in verdicts)
    log_scores = weights.log_posterior(checker_models, [c.verdict for c in counted])
    top = leaders(log_scores)
    verdict = next(iter(top)) if len(top) == 1 else _TIE_WINNER[top]
    probability = normalised(log_scores)[VERDICTS.index(verdict)]  # (the posterior, computed once)
    confidence = "LOW" if len(top) > 1 else confidence_of(probability)
    agreement = sum(1 for c in counted if c.verdict == verdict) / len(verdicts) * 100
    correction = _majority_correction(verdicts, counted) if verdict == "DISPUTED" else None
    return _consensus(claim, verdicts, counted, verdict, confidence, agreement, correction, probability)


def _consensus(
    claim: ExtractedClaim,
    verdicts: tuple[ClaimVerification, ...],
    counted: Sequence[Counted],
    verdict: str,
    confidence: str,
    agreement: float,
    correction: str | None,
    weighted_probability: float | None = None,
) -> ClaimConsensus:
    return ClaimConsensus(
        claim_id=claim.id,
        claim=claim.claim,
        context=claim.context,
        type=claim.type,
        verdicts=verdicts,
        consensus_verdict=verdict,
        consensus_confidence=confidence,
        agreement_rate=agreement,
        correction=correction,
        citations=majority_citations(verdicts, verdict),
        weighted_probability=weighted_probability,
        audit_note=" ".join(f"{c.reason}." for c in counted if c.reason),
    )


def majority_citations(verdicts: Sequence[ClaimVerification], verdict: str) -> tuple[Citation, ...]:
    """Passages cited by the checkers whose verdict counted as the consensus verdict, each (passage, quote) once."""
    cited: dict[tuple[str, str], Citation] = {}
    for verification in verdicts:
        if counted_as(verification).verdict == verdict:
            for citation in verification.citations:
                cited.setdefault((citation.passage_id, citation.quote), citation)
    return tuple(cited.values())


def _verification_for(claim_id: str, checker: Sequence[ClaimVerification], model: str = "") -> ClaimVerification:
    """The checker's first verification of the claim; a silent checker counts as UNVERIFIABLE (the parser's rule)."""
    for verification in checker:
        if verification.claim_id == claim_id:
            return verification
    return ClaimVerification(
        claim_id=claim_id,
        verdict="UNVERIFIABLE",
        evidence=MISSING_EVIDENCE,
        correction=None,
        confidence="LOW",
        checker_model=checker[0].checker_model if checker else model,
    )


def _majority_verdict(counted: Sequence[Counted]) -> tuple[str, bool]:
    """Rules 1-5. Returns the winning verdict and whether it was decided by a tie."""
    counts = Counter(c.verdict for c in counted)
    top = max(counts.values())
    leaders = frozenset(name for name, n in counts.items() if n == top)
    if len(leaders) == 1:
        return next(iter(leaders)), False
    return _TIE_WINNER[leaders], True


def _most_common_confidence(majority: Sequence[Counted]) -> str:
    """Rule 7: the most frequent confidence of the majority; ties go to the lower one."""
    counts = Counter(c.confidence for c in majority)
    return max(counts, key=lambda name: (counts[name], -_CONFIDENCE_RANK.get(name, 0)))


def _majority_correction(verdicts: Sequence[ClaimVerification], counted: Sequence[Counted]) -> str | None:
    """Rule 8: most common non-empty correction of the verdicts counted as DISPUTED; ties go to the earliest checker."""
    corrections = [
        v.correction
        for v, c in zip(verdicts, counted)
        if c.verdict == "DISPUTED" and v.correction and v.correction.strip()
    ]
    if not corrections:
        return None
    counts = Counter(corrections)  # Counter keeps first-seen order, and max() keeps the first maximum.
    return max(counts, key=counts.__getitem__)
