"""Four-tier support per checker (claim-level citations' four-tier VerificationVerdict).

With VerifyRequest.support_tiers (only sent with evidence) the verification prompt gains a
SUPPORT section after the prompt's own text, asking for one more line in every VERIFICATION block:
"Support: SUPPORTED | PARTIAL | UNSUPPORTED | CONTRADICTED | ABSTAIN", and naming the claims of
LOW confidence level, which must abstain unless a passage states or contradicts them.

The checker's word is then held to server-side rules, so a tier always rests on a quote that
really occurs in a passage (citations.py drops the others):
1. ABSTAIN → abstained (tier UNSUPPORTED).
2. No word: derived from the three-tier verdict: DISPUTED with a kept citation → CONTRADICTED,
   VERIFIED with a kept citation → SUPPORTED, anything else → abstained.
3. SUPPORTED, PARTIAL or CONTRADICTED without a kept citation → abstained (no evidence shown).
4. A tier that contradicts the checker's own verdict (SUPPORTED/PARTIAL with DISPUTED,
   CONTRADICTED with VERIFIED) → abstained: the checker disagrees with itself.
5. UNSUPPORTED with a kept citation stays UNSUPPORTED (the passage is about the claim but
   neither states nor denies it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from factcheck.core.domain import ClaimVerification
from factcheck.v1 import citations_pb2

SUPPORT_MARKER = "SUPPORT:"
TIERS = {
    "SUPPORTED": citations_pb2.SUPPORT_TIER_SUPPORTED,
    "PARTIAL": citations_pb2.SUPPORT_TIER_PARTIAL,
    "UNSUPPORTED": citations_pb2.SUPPORT_TIER_UNSUPPORTED,
    "CONTRADICTED": citations_pb2.SUPPORT_TIER_CONTRADICTED,
}

_SECTION = """

{marker}
Also add one line to each VERIFICATION block, right after its Confidence line:
Support: [SUPPORTED|PARTIAL|UNSUPPORTED|CONTRADICTED|ABSTAIN]
- SUPPORTED: the cited passages state the whole claim
- PARTIAL: they state some of the claim and say nothing about the rest
- UNSUPPORTED: they do not address the claim
- CONTRADICTED: they state something that directly opposes the claim
- ABSTAIN: the passages are not enough to decide
Every SUPPORTED, PARTIAL or CONTRADICTED answer needs a Sources line with an exact quote.
LOW-CONFIDENCE CLAIMS (answer ABSTAIN unless a passage states or contradicts them): {low}"""


def support_section(low_confidence_ids: Sequence[str]) -> str:
    """The SUPPORT section appended after the verification prompt."""
    return _SECTION.format(marker=SUPPORT_MARKER, low=", ".join(low_confidence_ids) or "none")


def low_confidence_ids(profiles: Sequence[citations_pb2.ClaimProfile]) -> list[str]:
    return [p.claim_id for p in profiles if p.confidence_level == citations_pb2.CONFIDENCE_LEVEL_LOW]


def claim_supports(
    verifications: Sequence[ClaimVerification], words: Mapping[str, str]
) -> list[citations_pb2.ClaimSupport]:
    """One ClaimSupport per verification, by the rules of the module docstring."""
    return [_support(v, words.get(v.claim_id)) for v in verifications]


def _support(verification: ClaimVerification, word: str | None) -> citations_pb2.ClaimSupport:
    cited = bool(verification.citations)
    if word is None:
        if cited and verification.verdict == "DISPUTED":
            word = "CONTRADICTED"
        elif cited and verification.verdict == "VERIFIED":
            word = "SUPPORTED"
        else:
            word = "ABSTAIN"
    if word in ("SUPPORTED", "PARTIAL", "CONTRADICTED") and not cited:
        word = "ABSTAIN"
    if (word in ("SUPPORTED", "PARTIAL") and verification.verdict == "DISPUTED") or (
        word == "CONTRADICTED" and verification.verdict == "VERIFIED"
    ):
        word = "ABSTAIN"
    if word == "ABSTAIN":
        return citations_pb2.ClaimSupport(
            claim_id=verification.claim_id, tier=citations_pb2.SUPPORT_TIER_UNSUPPORTED, abstained=True
        )
    return citations_pb2.ClaimSupport(claim_id=verification.claim_id, tier=TIERS[word])
