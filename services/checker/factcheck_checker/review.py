"""The citation review prompt and its parser (claim-level citations).

After verification each claim's citations are reviewed against the run's whole evidence
pool: KEEP, REPLACE (by a better span), REMOVE, or ADD_ALTERNATE (a second span also
supports it), with reasoning; numeric claims also get a QA question answered from the
claim and from one span. The answer format:

    REVIEW claim_1: REPLACE
    Original: [P1]
    Corrected: [P3] "exact words from P3"
    Reasoning: ...
    QUESTION claim_1: What was the population of France in 2020?
    Claim answer: 67 million
    Evidence answer: [P3] "67.4 million"

Parsing follows the verification parser's rules (factcheck/text/protocol_lines.py): quoted or
code lines are never protocol; a header for a claim that was not asked about, or that was
already reviewed, opens a block that is discarded; a REVIEW or QUESTION header that says
what the untrusted text (claims and passages) says is a copy, read as text. The first of
each label in a block wins. Quotes are checked by the service (`check_review`): a corrected
quote or an evidence answer that does not occur in the span it names is dropped, so every
span the gateway stores was found verbatim in a source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from factcheck.models.inputs import Passage, ReviewClaim, ReviewInputs
from factcheck.text.evidence_text import PASSAGE_INJECTION_NOTE, format_passage
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of
from factcheck.text.spans import locate
from factcheck.text.text_safety import clean_text
from factcheck.v1 import citations_pb2, common_pb2

REVIEW_OPENING = "You are a citation reviewer."
CLAIMS_MARKER = "CLAIMS TO REVIEW:"
POOL_MARKER = "EVIDENCE POOL:"
FORMAT_MARKER = "Format:"
MAX_REASONING_CHARS = 1000
MAX_ANSWER_CHARS = 300

_INTRO = f"""{REVIEW_OPENING} Each claim below was verified against evidence and cites spans of the EVIDENCE POOL. For EACH claim decide, against the whole pool:
- KEEP: its cited span is the best support (or the best evidence against it)
- REPLACE: another span supports it better (give that span and an exact quote from it)
- REMOVE: no span of the pool supports it
- ADD_ALTERNATE: its cited span is right, and another span also supports it (give that span and a quote)
For each claim marked NUMERIC, also write one question whose answer is the claim's figure, the answer the claim gives, and the answer one span of the pool gives, copied exactly as the span writes it ("not stated" when no span states it for the same entity and year).

"""

_FORMAT = """Format:

REVIEW {{id}}: [KEEP|REPLACE|REMOVE|ADD_ALTERNATE]
Original: [P1] (or none)
Corrected: [P3] "exact words from P3" (or none)
Reasoning: [why]
QUESTION {{id}}: [question, NUMERIC claims only]
Claim answer: [the figure as the claim states it]
Evidence answer: [P3] "the figure exactly as P3 writes it" (or not stated)
"""

_LEAD = r"^[\s>#*_+\-]*"
_HEADER = re.compile(
    _LEAD + r"(REVIEW|QUESTION)\b[\s*_]*(?:CLAIM[\s_#-]*)?#?(\d+)\b[*_]*\s*[:.\-\u2013\u2014]?\s*(.*)$", re.IGNORECASE
)
_LABEL = re.compile(_LEAD + r"(Original|Corrected|Reasoning|Claim answer|Evidence answer)[*_]*\s*:(.*)$", re.IGNORECASE)
_DECISION = re.compile(r"\b(KEEP|REPLACE|REMOVE|ADD[_ ]ALTERNATE)\b", re.IGNORECASE)
_SPAN_REF = re.compile(
    r"\[?\s*P\s*(\d{1,6})\s*\]?\s*[:\-\u2013\u2014]?\s*(?:\"([^\"\n]*)\"|\u201c([^\u201d\n]*)\u201d)?"
)
_ECHO = re.compile(r"(REVIEW|QUESTION)[\W_]{0,20}?(?:CLAIM[\W_]{0,20}?)?(\d+)", re.IGNORECASE)
_TRAILING_NUMBER = re.compile(r"(\d+)$")

CORRECTIONS = {
    "KEEP": citations_pb2.CORRECTION_TYPE_KEEP,
    "REPLACE": citations_pb2.CORRECTION_TYPE_REPLACE,
    "REMOVE": citations_pb2.CORRECTION_TYPE_REMOVE,
    "ADD_ALTERNATE": citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE,
}


def build_review_prompt(claims: Sequence[citations_pb2.ReviewClaim], pool: Sequence[citations_pb2.PoolSpan]) -> str:
    lines = [_INTRO, CLAIMS_MARKER, ""]
    for item in claims:
        cited = ", ".join(item.cited_span_ids) or "none"
        lines.append(f"CLAIM {item.claim.id}: {' '.join(item.claim.claim.split())}")
        lines.append(f"Cited: {cited}")
        if item.HasField("numeric"):
            entity = " ".join(item.numeric.entity_reference.split()) or "unknown"
            lines.append(f"NUMERIC: {item.numeric.number.raw_value or 'figure'} (entity: {entity})")
        lines.append("")
    body = "\n".join(lines)
    passages = "".join(
        format_passage(common_pb2.Passage(id=s.id, source_id=s.source_id, source_title=s.source_title, text=s.text))
        for s in pool
    )
    return f"{body}\n{POOL_MARKER}\n{PASSAGE_INJECTION_NOTE}\n\n{passages}{_FORMAT}"


def review_inputs(claims: Sequence[citations_pb2.ReviewClaim], pool: Sequence[citations_pb2.PoolSpan]) -> ReviewInputs:
    """What `build_review_prompt` builds the prompt from, for a `local/` engine."""
    return ReviewInputs(
        claims=tuple(
            ReviewClaim(
                id=item.claim.id,
                text=item.claim.claim,
                cited=tuple(item.cited_span_ids),
                entity=item.numeric.entity_reference if item.HasField("numeric") else None,
            )
            for item in claims
        ),
        pool=tuple(Passage(id=s.id, title=s.source_title or s.source_id, text=s.text) for s in pool),
    )


@dataclass
class _Block:
    kind: str  # "review" or "question"
    claim_id: str
    head: str
    fields: dict[str, str] = field(default_factory=dict)


def parse_review(
    text: str, claim_ids: Sequence[str], untrusted: str = ""
) -> tuple[list[citations_pb2.ReviewedCorrection], list[citations_pb2.ReviewedQuestion]]:
    """The model's decisions and questions (unchecked: see `check_review`), each claim at most once."""
    by_number = {m.group(1).lstrip("0") or "0": cid for cid in claim_ids if (m := _TRAILING_NUMBER.search(cid))}
    echoes = {(m.group(1).upper(), m.group(2).lstrip("0") or "0") for m in _ECHO.finditer(untrusted)}
    blocks: list[_Block] = []
    seen: set[tuple[str, str]] = set()
    block: _Block | None = None
    for line in lines_of(text):
        if is_quoted_or_code(line):
            continue
        header = _HEADER.match(line)
        number = (header.group(2).lstrip("0") or "0") if header else ""
        if header and (header.group(1).upper(), number) not in echoes:
            kind, claim_id = header.group(1).lower(), by_number.get(number)
            block = None
            if claim_id is not None and (kind, claim_id) not in seen:
                seen.add((kind, claim_id))
                block = _Block(kind, claim_id, header.group(3).strip())
                blocks.append(block)
        elif block is not None and (label := _LABEL.match(line)):
            block.fields.setdefault(label.group(1).lower(), label.group(2).strip())
    corrections, questions = [], []
    for block in blocks:
        if block.kind == "review" and (decision := _DECISION.search(block.head)):
            corrections.append(_correction(block, decision.group(1).upper().replace(" ", "_")))
        elif block.kind == "question" and block.head:
            questions.append(_question(block))
    return corrections, questions


def _span(value: str) -> tuple[str, str]:
    match = _SPAN_REF.search(value or "")
    if match is None:
        return "", ""
    return f"P{match.group(1).lstrip('0') or '0'}", (match.group(2) or match.group(3) or "").strip()


def _correction(block: _Block, decision: str) -> citations_pb2.ReviewedCorrection:
    original, _ = _span(block.fields.get("original", ""))
    corrected, quote = _span(block.fields.get("corrected", ""))
    return citations_pb2.ReviewedCorrection(
        claim_id=block.claim_id,
        correction_type=CORRECTIONS[decision],
        original_span_id=original,
        corrected_span_id=corrected,
        corrected_quote=quote,
        reasoning=clean_text(block.fields.get("reasoning", ""))[:MAX_REASONING_CHARS],
    )


def _question(block: _Block) -> citations_pb2.ReviewedQuestion:
    span_id, answer = _span(block.fields.get("evidence answer", ""))
    return citations_pb2.ReviewedQuestion(
        claim_id=block.claim_id,
        question=clean_text(block.head.strip("[] "))[:MAX_ANSWER_CHARS],
        claim_answer=clean_text(block.fields.get("claim answer", "").strip("[]\"' "))[:MAX_ANSWER_CHARS],
        evidence_answer=answer[:MAX_ANSWER_CHARS],
        span_id=span_id if answer else "",
    )


def check_review(
    corrections: Sequence[citations_pb2.ReviewedCorrection],
    questions: Sequence[citations_pb2.ReviewedQuestion],
    claims: Mapping[str, citations_pb2.ReviewClaim],
    pool: Mapping[str, citations_pb2.PoolSpan],
) -> tuple[list[citations_pb2.ReviewedCorrection], list[citations_pb2.ReviewedQuestion], int]:
    """Server-side rules over the model's review; returns the kept corrections and questions, and how many
    were dropped:
    - REPLACE / ADD_ALTERNATE need a pool span and a quote found in it (exactly, or ignoring case and
      whitespace); the quote is replaced by the span's own text. REPLACE with the span already cited
      is KEEP; ADD_ALTERNATE of a span already cited is dropped.
    - REMOVE needs a cited span; a claim with none has nothing to remove (dropped).
    - `original_span_id` must be one of the claim's cited spans (else its first one).
    - An evidence answer must occur in the span it names; otherwise it becomes "not stated".
    """
    kept, dropped = [], 0
    for item in corrections:
        claim = claims.get(item.claim_id)
        cited = list(claim.cited_span_ids) if claim else []
        original = item.original_span_id if item.original_span_id in cited else (cited[0] if cited else "")
        fixed = citations_pb2.ReviewedCorrection()
        fixed.CopyFrom(item)
        fixed.original_span_id = original
        kind = item.correction_type
        if kind in (citations_pb2.CORRECTION_TYPE_REPLACE, citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE):
            span = pool.get(item.corrected_span_id)
            found = locate(span.text, item.corrected_quote) if span is not None and item.corrected_quote else None
            if found is None:
                dropped += 1
                continue
            assert span is not None  # (found in it)
            fixed.corrected_quote = span.text[found[0] : found[1]]
            if item.corrected_span_id in cited:
                if kind == citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE:
                    dropped += 1
                    continue
                fixed.correction_type = citations_pb2.CORRECTION_TYPE_KEEP
        elif kind == citations_pb2.CORRECTION_TYPE_REMOVE and not cited:
            dropped += 1
            continue
        if fixed.correction_type in (citations_pb2.CORRECTION_TYPE_KEEP, citations_pb2.CORRECTION_TYPE_REMOVE):
            fixed.corrected_span_id, fixed.corrected_quote = "", ""
        kept.append(fixed)
    checked = []
    for question in questions:
        fixed_question = citations_pb2.ReviewedQuestion()
        fixed_question.CopyFrom(question)
        span = pool.get(question.span_id)
        found = locate(span.text, question.evidence_answer) if span is not None and question.evidence_answer else None
        if found is None:
            fixed_question.evidence_answer, fixed_question.span_id = "", ""
        else:
            assert span is not None  # (found in it)
            fixed_question.evidence_answer = span.text[found[0] : found[1]]
        checked.append(fixed_question)
    return kept, checked, dropped


def untrusted_text(request: citations_pb2.ReviewCitationsRequest) -> str:
    return "\n".join([*(c.claim.claim for c in request.claims), *(s.text for s in request.pool)])
