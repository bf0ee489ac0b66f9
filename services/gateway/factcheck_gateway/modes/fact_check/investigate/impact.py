"""Re-assessing a confirmed claim's impact tier with the evidence that confirmed it: both ways
(up or down), logged and stored.

The queue's tier (flags.impact_tier) is CRITICAL when the claim addresses the run's question or carries
a contradiction (ANOMALY). Once the claim is CONFIRMED, the same assessment runs again on the claim
together with the confirming sources' sentences about it:
- promotion: the confirming evidence ties the claim to the question (its sentences about the claim
  hold QUESTION_OVERLAP or more of the question's content words) though the claim's own words did not;
- demotion: the claim was CRITICAL only for its contradiction, which the confirmation has settled, and
  neither the claim nor its evidence addresses the question.
The queue's order is not changed (it ran before); the human review of a claim that was CRITICAL at
either point is still asked for.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from factcheck_gateway.modes.fact_check.investigate.decide import CONFIRMED
from factcheck_gateway.modes.fact_check.investigate.flags import (
    CRITICAL,
    LESS_CRITICAL,
    QUESTION_OVERLAP,
    addresses_question,
    content_stems,
)

log = logging.getLogger(__name__)
# A confirming sentence is about the claim when it holds this share of the claim's content words.
ABOUT_CLAIM = 0.5


@dataclass(frozen=True)
class ImpactReassessment:
    tier: str
    reasoning: str

    def changed(self, original: str) -> bool:
        return self.tier != original


def reassess(claim: str, original: str, status: str, confirming: list[str], question: str) -> ImpactReassessment | None:
    """The tier a CONFIRMED claim has with its confirming evidence (`confirming`: the counted supporting
    sources' texts); None for any other status (only a confirmed claim is re-assessed)."""
    if status != CONFIRMED:
        return None
    wanted = content_stems(claim)
    about = [
        sentence
        for text in confirming
        for sentence in re.split(r"(?<=[.!?])\s+", text)
        if wanted and len(content_stems(sentence) & wanted) / len(wanted) >= ABOUT_CLAIM
    ]
    asked = content_stems(question)
    held = set().union(*(content_stems(s) for s in about)) & asked if about else set()
    evidence_addresses = bool(asked) and len(held) / len(asked) >= QUESTION_OVERLAP
    if addresses_question(claim, question):
        tier, reasoning = CRITICAL, "the claim addresses the run's question"
    elif evidence_addresses:
        tier = CRITICAL
        reasoning = f"the confirming evidence ties it to the run's question ({', '.join(sorted(held))})"
        if original != CRITICAL:
            reasoning += ": promoted"
    else:
        tier = LESS_CRITICAL
        reasoning = "neither the claim nor its confirming evidence addresses the run's question" + (
            "; its contradiction is settled by the confirmation: demoted" if original == CRITICAL else ""
        )
    if tier != original:
        log.info("impact tier re-assessed: %s -> %s (%s)", original, tier, reasoning)
    return ImpactReassessment(tier, reasoning)
