"""The four-tier consensus of one claim, beside the three-tier majority one
(services/gateway/factcheck_gateway/consensus/combine.py).

Each checker gives a tier or abstains (services/checker/factcheck_checker/support.py holds the per-checker rules:
a tier always rests on a verbatim quote). The claim's tier, conservatively:

1. No evidence passage was retrieved for the claim → abstained (no checker saw evidence).
2. Abstentions: when more than half of the checkers that answered abstained → abstained.
   LOW confidence level (routing): any abstention → abstained; the claim is judged only when
   every checker saw evidence and committed to a tier.
3. Among the votes (non-abstained tiers), the most frequent tier wins; a tie goes to the less
   supportive tier, in the order CONTRADICTED, UNSUPPORTED, PARTIAL, SUPPORTED.
4. SUPPORTED needs more than half of the votes; otherwise, when SUPPORTED and PARTIAL together
   have more than half, the claim is PARTIAL. LOW confidence level: SUPPORTED needs every vote.

How the tiers relate to the three verdicts: SUPPORTED and PARTIAL are what a VERIFIED checker
says when its passages state all or part of the claim, CONTRADICTED what a DISPUTED one says
with a quote against it, UNSUPPORTED (or abstained) what an UNVERIFIABLE one says. The two are
computed independently (the three-tier consensus is unchanged) and can differ: a claim VERIFIED by
majority whose checkers cite no verbatim quote is abstained here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

SUPPORTED, PARTIAL, UNSUPPORTED, CONTRADICTED = "supported", "partial", "unsupported", "contradicted"
# Ties go to the first of these.
LEAST_SUPPORTIVE_FIRST = (CONTRADICTED, UNSUPPORTED, PARTIAL, SUPPORTED)


@dataclass(frozen=True)
class Vote:
    checker_index: int
    tier: str | None  # None: abstained


@dataclass(frozen=True)
class TierDecision:
    tier: str | None  # None when abstained
    abstained: bool
    rule: str  # which rule decided, for the stored reasoning


def decide_tier(votes: Sequence[Vote], *, has_evidence: bool, low_confidence: bool) -> TierDecision:
    if not has_evidence:
        return TierDecision(None, True, "no evidence passage was retrieved for the claim")
    if not votes:
        return TierDecision(None, True, "no checker answered")
    abstentions = sum(1 for v in votes if v.tier is None)
    if low_confidence and abstentions:
        return TierDecision(None, True, "low-confidence claim: a checker abstained, so the claim is not judged")
    if abstentions * 2 > len(votes):
        return TierDecision(None, True, f"{abstentions} of {len(votes)} checkers abstained")
    counts = Counter(v.tier for v in votes if v.tier is not None)
    total = sum(counts.values())
    top = max(counts.values())
    tier = next(t for t in LEAST_SUPPORTIVE_FIRST if counts.get(t, 0) == top)
    if tier == SUPPORTED:
        needed_all = low_confidence and counts[SUPPORTED] < total
        if needed_all or counts[SUPPORTED] * 2 <= total:
            tier = PARTIAL if (counts[SUPPORTED] + counts.get(PARTIAL, 0)) * 2 > total else tier
            if tier == SUPPORTED:  # no majority either way: the least supportive tier voted
                tier = next(t for t in LEAST_SUPPORTIVE_FIRST if counts.get(t, 0))
            return TierDecision(tier, False, "support short of the majority (or unanimity) it needs")
    return TierDecision(tier, False, f"{counts[tier]} of {total} voting checkers")
