"""Turn the extractor model's text into ExtractedClaim values and place them in the content.

Models follow the requested format only approximately (markdown, \\r\\n, lower-case
types, missing lines), so parsing works line by line: that tolerates decoration
and stays linear on any input, where the spec's single regex can backtrack badly.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Iterable, Sequence

from factcheck.domain import CLAIM_TYPES, ExtractedClaim
from factcheck.spans import find_exact, find_folded, fold_text

MAX_CONTENT_LENGTH_DEFAULT = 20_000

TRUNCATION_NOTE = "[Content truncated to {max_length} characters. Claims beyond this point were not analyzed.]"

# Used when a claim's Type line is missing or names no known type.
DEFAULT_CLAIM_TYPE = "TECHNICAL"

_TYPES = "|".join(CLAIM_TYPES)
# Markdown a model may put in front of a label: indentation, bullets, headings, quotes, bold.
_LEAD = r"^[\s>#*_+\-]*"

# The spec's regex, one line at a time: CLAIM n: / Context: / Type: <known type>.
_STRICT_MARKER = re.compile(_LEAD + r"CLAIM\s+#?\d+[*_]*\s*:(.*)$", re.IGNORECASE)
_STRICT_TYPE = re.compile(_LEAD + r"Type[*_]*\s*:[\s*_`\[]*(" + _TYPES + ")", re.IGNORECASE)
# The fallback's looser block start: "Claim 3 -", "**Claim:**", "CLAIM #4." ...
_LENIENT_MARKER = re.compile(_LEAD + r"CLAIM(?:\s*#?\s*\d+)?[*_]*\s*[:.)\-\u2013\u2014](.*)$", re.IGNORECASE)
_CONTEXT = re.compile(_LEAD + r"Context[*_]*\s*:(.*)$", re.IGNORECASE)
_TYPE_LABEL = re.compile(_LEAD + r"Type[*_]*\s*:(.*)$", re.IGNORECASE)
_KNOWN_TYPE = re.compile(_TYPES, re.IGNORECASE)
_SUMMARY = re.compile(_LEAD + r"EXTRACTION\s+SUMMARY\b", re.IGNORECASE)

_QUOTE_PAIRS = (('"', '"'), ("\u201c", "\u201d"), ("[", "]"))


def parse_claims(text: str) -> list[ExtractedClaim]:
    """The extractor's claims, deduplicated, with ids claim_1..claim_n in output order.

    The strict CLAIM/Context/Type triplets are read first; only if there are none is
    the text split at line-leading "CLAIM n:" markers and each block read leniently.
    """
    lines = _without_summary(_lines(text))
    found = _parse_strict(lines) or _parse_lenient(lines)
    claims: list[ExtractedClaim] = []
    seen: set[str] = set()
    for claim, context, claim_type in found:
        if not claim or claim in seen:  # spec: exact duplicates are dropped, the first kept
            continue
        seen.add(claim)
        # A claim without a Context line is its own context.
        claims.append(ExtractedClaim(f"claim_{len(claims) + 1}", claim, context or claim, claim_type))
    return claims


def type_breakdown(claims: Iterable[ExtractedClaim]) -> dict[str, int]:
    """Claims per type for extract_complete: only the types present, in CLAIM_TYPES order."""
    counts = Counter(claim.type for claim in claims)
    return {name: counts[name] for name in CLAIM_TYPES if counts[name]}


def locate_claims(claims: Sequence[ExtractedClaim], content: str) -> list[ExtractedClaim]:
    """Claims with start/end offsets into content, so the UI can underline them.

    Tries an exact match first, then a match ignoring case and runs of whitespace
    (mapped back to exact original offsets); each also without trailing periods.
    A claim found nowhere gets no offsets.
    """
    folded: tuple[str, list[int]] | None = None  # built once, and only if some claim needs it
    located = []
    for claim in claims:
        candidates = _match_candidates(claim.claim)
        span = find_exact(content, candidates)
        if span is None and candidates:
            folded = folded or fold_text(content)
            span = find_folded(folded, candidates)
        start, end = span if span else (None, None)
        located.append(replace(claim, start=start, end=end))
    return located


def truncate_content(content: str, max_length: int) -> tuple[str, bool]:
    """Spec edge case "Content too long": cut to max_length characters and say so; returns (content, truncated)."""
    if len(content) <= max_length:
        return content, False
    note = TRUNCATION_NOTE.format(max_length=max_length)
    return f"{content[: max(max_length, 0)]}\n\n{note}", True


# --- parsing -------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _without_summary(lines: list[str]) -> list[str]:
    """Blank out the EXTRACTION SUMMARY section so it is never read as claims.

    The section ends only at a numbered "CLAIM n:" line (a model may put the summary
    first), so an unnumbered "Claim: ..." line inside it stays part of the summary.
    """
    kept = []
    in_summary = False
    for line in lines:
        if _SUMMARY.match(line):
            in_summary = True
        elif in_summary and _STRICT_MARKER.match(line):
            in_summary = False
        kept.append("" if in_summary else line)
    return kept


def _parse_strict(lines: list[str]) -> list[tuple[str, str, str]]:
    """The spec's format: a CLAIM line, then Context, then a known Type (blank lines between are tolerated)."""
    found = []
    i = 0
    while i < len(lines):
        marker = _STRICT_MARKER.match(lines[i])
        if marker:
            j = _next_non_blank(lines, i + 1)
            context = _CONTEXT.match(lines[j]) if j < len(lines) else None
            k = _next_non_blank(lines, j + 1) if context else len(lines)
            claim_type = _STRICT_TYPE.match(lines[k]) if k < len(lines) else None
            claim = _clean(marker.group(1))
            context_text = _clean(context.group(1)) if context else ""
            if claim_type and claim and context_text:
                found.append((claim, context_text, claim_type.group(1).upper()))
                i = k + 1
                continue
        i += 1
    return found


def _parse_lenient(lines: list[str]) -> list[tuple[str, str, str]]:
    """The spec's fallback: split at CLAIM markers; Context and Type are optional in each block."""
    blocks: list[list[str]] = []
    for line in lines:
        marker = _LENIENT_MARKER.match(line)
        if marker:
            blocks.append([marker.group(1)])
        elif blocks:
            blocks[-1].append(line)
    return [_parse_block(block) for block in blocks]


def _parse_block(block: list[str]) -> tuple[str, str, str]:
    """Claim text from the marker line (or the first plain line after it); first Context and Type win."""
    claim = _clean(block[0])
    context: str | None = None
    claim_type: str | None = None
    for line in block[1:]:
        if label := _CONTEXT.match(line):
            context = _clean(label.group(1)) if context is None else context
        elif label := _TYPE_LABEL.match(line):
            known = _KNOWN_TYPE.search(label.group(1))
            claim_type = claim_type or (known.group(0).upper() if known else DEFAULT_CLAIM_TYPE)
        elif not claim:
            claim = _clean(line)
    return claim, context or "", claim_type or DEFAULT_CLAIM_TYPE


def _next_non_blank(lines: list[str], i: int) -> int:
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


def _clean(text: str) -> str:
    """A field without markdown emphasis and without quotes/brackets wrapped around the whole of it."""
    text = text.strip().strip("*`").strip()
    for mark in ("__", "_"):
        if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
            text = text[len(mark) : -len(mark)].strip()
    for opening, closing in _QUOTE_PAIRS:
        # Only a pair that wraps everything: '"A" beats "B"' must stay as it is.
        if len(text) >= 2 and text[0] == opening and text[-1] == closing:
            inner = text[1:-1]
            if opening not in inner and closing not in inner:
                text = inner.strip()
    return text


# --- locating ------------------------------------------------------------------------------------


def _match_candidates(claim: str) -> list[str]:
    """The claim as written, then without trailing periods (content often continues the sentence)."""
    stripped = claim.strip()
    candidates = [stripped, stripped.rstrip(".").rstrip()]
    return [c for i, c in enumerate(candidates) if c and c not in candidates[:i]]
