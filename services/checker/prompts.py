"""The verification prompt, word for word from the spec (section B).

`parse_verifications` reads the "VERIFICATION {{id}}: {{VERDICT}}" blocks this asks for.
"""

from __future__ import annotations

from typing import Sequence

from factcheck.domain import ExtractedClaim

_HEAD = """You are a fact-checker. Verify each of the following claims extracted from a piece of content. For EACH claim, determine its accuracy based on your knowledge.

ORIGINAL CONTENT (for context):
{content}

CLAIMS TO VERIFY:
"""

# The spec's answer format is an instruction to the model, not a template to fill in:
# "{{id}}" and "{{VERDICT}}" stay literal so the model sees the shape to copy.
_TAIL = """
For EACH claim, provide:
- Verdict: VERIFIED (accurate) / DISPUTED (inaccurate or misleading) / UNVERIFIABLE (cannot determine)
- Evidence: Your reasoning and any supporting or contradicting information
- If DISPUTED: The correct information
- Confidence: HIGH / MEDIUM / LOW

Format:

VERIFICATION {{id}}: {{VERDICT}}
Evidence: [your reasoning]
Correction: [correct information if DISPUTED, otherwise "N/A"]
Confidence: [HIGH|MEDIUM|LOW]

...

VERIFICATION SUMMARY:
Verified: [count]
Disputed: [count]
Unverifiable: [count]"""


def _claim_block(claim: ExtractedClaim) -> str:
    """One `{{#each CLAIMS}}` iteration, including its trailing blank line."""
    return f"CLAIM {claim.id}: {claim.claim}\nContext: {claim.context}\nType: {claim.type}\n\n"


def build_verification_prompt(claims: Sequence[ExtractedClaim], content: str) -> str:
    """Phase 2: every checker gets all claims (ids like claim_1) plus the content for context."""
    return _HEAD.format(content=content) + "".join(_claim_block(claim) for claim in claims) + _TAIL
