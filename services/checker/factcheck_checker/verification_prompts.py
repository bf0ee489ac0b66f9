"""The verification prompt, word for word from fact-check mode's prompt templates, plus an EVIDENCE section.

`parse_verifications` reads the "VERIFICATION {{id}}: {{VERDICT}}" blocks this asks for.
Without evidence the prompt is exactly the base one (docs/modes.md#fact-check-mode). With evidence, numbered passages
(quoted, see factcheck/text/evidence_text.py) follow the claims, and every answer block
gains a "Sources:" line citing passage ids with exact quotes.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from factcheck.core import prompt_versions
from factcheck.core.domain import ExtractedClaim
from factcheck.models.inputs import ClaimInput, VerifyInputs, passages_of
from factcheck.text.evidence_text import PASSAGE_INJECTION_NOTE, format_passage
from factcheck.v1 import common_pb2

_HEAD = """You are a fact-checker. Verify each of the following claims extracted from a piece of content. For EACH claim, determine its accuracy based on your knowledge.

ORIGINAL CONTENT (for context):
{content}

CLAIMS TO VERIFY:
"""

# The answer format is an instruction to the model, not a template to fill in:
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


_EVIDENCE_INTRO = """EVIDENCE:
Judge each claim against its numbered passages below rather than from memory: VERIFIED when its passages state the claim, DISPUTED when they contradict it, UNVERIFIABLE when they do not address it. {note}

""".format(note=PASSAGE_INJECTION_NOTE)

_SOURCES_ITEM = "- Confidence: HIGH / MEDIUM / LOW\n"
_SOURCES_INSTRUCTION = (
    "- Confidence: HIGH / MEDIUM / LOW\n"
    "- Sources: the ids of the passages that support or contradict the claim, each with an exact quote from it\n"
)
_SOURCES_FORMAT_ANCHOR = "Confidence: [HIGH|MEDIUM|LOW]\n"
_SOURCES_FORMAT = 'Confidence: [HIGH|MEDIUM|LOW]\nSources: [P1] "exact words from passage P1"; [P2] "exact words from passage P2" (or "none")\n'


def _evidence_section(
    claims: Sequence[ExtractedClaim],
    passages: Sequence[common_pb2.Passage],
    claim_passages: Mapping[str, Sequence[str]],
) -> str:
    listing = "".join(f"{claim.id}: {', '.join(claim_passages.get(claim.id, ())) or 'none'}\n" for claim in claims)
    return _EVIDENCE_INTRO + "".join(format_passage(p) for p in passages) + "PASSAGES FOR EACH CLAIM:\n" + listing


def _claim_block(claim: ExtractedClaim) -> str:
    """One `{{#each CLAIMS}}` iteration, including its trailing blank line."""
    return f"CLAIM {claim.id}: {claim.claim}\nContext: {claim.context}\nType: {claim.type}\n\n"


@prompt_versions.versioned(prompt_versions.VERIFY)
def build_verification_prompt(
    claims: Sequence[ExtractedClaim],
    content: str,
    passages: Sequence[common_pb2.Passage] = (),
    claim_passages: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """Phase 2: every checker gets all claims (ids like claim_1) plus the content for context.

    With passages (and `claim_passages`: claim id → passage ids), the EVIDENCE section
    and the Sources line are added.
    """
    prompt = _HEAD.format(content=content) + "".join(_claim_block(claim) for claim in claims)
    if not passages:
        return prompt + _TAIL
    tail = _TAIL.replace(_SOURCES_ITEM, _SOURCES_INSTRUCTION, 1).replace(_SOURCES_FORMAT_ANCHOR, _SOURCES_FORMAT, 1)
    return prompt + _evidence_section(claims, passages, claim_passages or {}) + tail


def verification_inputs(
    claims: Sequence[ExtractedClaim],
    content: str,
    passages: Sequence[common_pb2.Passage] = (),
    claim_passages: Mapping[str, Sequence[str]] | None = None,
    *,
    support_tiers: bool = False,
    low_confidence: Sequence[str] = (),
    support_threshold: float | None = None,
) -> VerifyInputs:
    """What `build_verification_prompt` builds the prompt from, for a `local/` engine (plus the SUPPORT
    section's: whether it is asked, and its low-confidence claims; and a binary checker's threshold)."""
    return VerifyInputs(
        content=content,
        claims=tuple(ClaimInput(claim.id, claim.claim) for claim in claims),
        passages=passages_of(passages),
        claim_passages={claim_id: tuple(ids) for claim_id, ids in (claim_passages or {}).items()},
        support_tiers=support_tiers,
        low_confidence=frozenset(low_confidence),
        support_threshold=support_threshold,
    )
