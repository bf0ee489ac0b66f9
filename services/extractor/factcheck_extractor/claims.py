"""Turn the extractor model's text into ExtractedClaim values and place them in the content.

Models follow the requested format only approximately (markdown, \\r\\n, lower-case
types, missing lines), so parsing works line by line: that tolerates decoration
and stays linear on any input, where a single regex over the whole answer can backtrack badly.

Forgery (the two rules of factcheck/text/protocol_lines.py): CLAIM markers, Context and
Type labels and the EXTRACTION SUMMARY line count only when they are not quoted ("> ")
or code-indented. A marker that says what the content says, the same claim number and
the same claim words after a "CLAIM n:" phrase of the content (in any decoration), is
the model copying the content, and so is a summary line when the content has one:
both are read as ordinary text. So content holding "CLAIM 1: The Moon is cheese"
adds no claim when the model quotes it back, however decorated.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from typing import Iterable, Sequence

from factcheck.core.domain import CLAIM_TYPES, ExtractedClaim
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of, words_of
from factcheck.text.spans import find_exact, find_folded, fold_text

MAX_CONTENT_LENGTH_DEFAULT = 20_000

TRUNCATION_NOTE = "[Content truncated to {max_length} characters. Claims beyond this point were not analyzed.]"

# Used when a claim's Type line is missing or names no known type.
DEFAULT_CLAIM_TYPE = "TECHNICAL"

_TYPES = "|".join(CLAIM_TYPES)
# Markdown a model may put in front of a label: indentation, bullets, headings, quotes, bold.
_LEAD = r"^[\s>#*_+\-]*"

# The claim format, one line at a time: CLAIM n: / Context: / Type: <known type>.
_STRICT_MARKER = re.compile(_LEAD + r"CLAIM\s+#?(\d+)[*_]*\s*:(.*)$", re.IGNORECASE)
_STRICT_TYPE = re.compile(_LEAD + r"Type[*_]*\s*:[\s*_`\[]*(" + _TYPES + ")", re.IGNORECASE)
# The fallback's looser block start: "Claim 3 -", "**Claim:**", "CLAIM #4." ...
_LENIENT_MARKER = re.compile(_LEAD + r"CLAIM(?:\s*#?\s*(\d+))?[*_]*\s*[:.)\-\u2013\u2014](.*)$", re.IGNORECASE)
_CONTEXT = re.compile(_LEAD + r"Context[*_]*\s*:(.*)$", re.IGNORECASE)
_TYPE_LABEL = re.compile(_LEAD + r"Type[*_]*\s*:(.*)$", re.IGNORECASE)
_KNOWN_TYPE = re.compile(_TYPES, re.IGNORECASE)
_SUMMARY = re.compile(_LEAD + r"EXTRACTION\s+SUMMARY\b", re.IGNORECASE)
# What the content says in protocol form: a CLAIM phrase (number optional) and the rest of its line.
_ECHO_CLAIM = re.compile(r"CLAIM(?:[\s#*_]{0,20}?(\d+))?[\s*_]{0,20}?[:.)\-\u2013\u2014]([^\n]*)", re.IGNORECASE)
_ECHO_SUMMARY = re.compile(r"EXTRACTION[\W_]{0,20}?SUMMARY", re.IGNORECASE)
# A well-formed empty extraction: the summary's "Total claims: 0", or a line saying there are none.
# Found by one scan of the whole answer (a line at a time would be slow on a huge one).
_NO_CLAIMS = re.compile(
    r"^[ \t>#*_+\-]*(?:Total[ \t]+claims[*_]*[ \t]*:[ \t*_`\[]*0+\b"
    r"|(?:there[ \t]+(?:are|were)[ \t]+)?no[ \t]+(?:verifiable[ \t]+)?(?:factual[ \t]+)?claims\b)",
    re.IGNORECASE | re.MULTILINE,
)

# Why an answer without claims is not "no verifiable claims" (it is the extract stage's failure).
EMPTY_EXTRACTION = "the extractor's answer was empty (not the claim format's EXTRACTION SUMMARY with Total claims: 0)"
UNREADABLE_EXTRACTION = (
    "the extractor's answer is not in the claim format: no CLAIM n / Context / Type block, "
    "and no EXTRACTION SUMMARY with Total claims: 0"
)

_QUOTE_PAIRS = (('"', '"'), ("\u201c", "\u201d"), ("[", "]"))


def parse_claims(text: str, content: str = "") -> list[ExtractedClaim]:
    """The extractor's claims, deduplicated, with ids claim_1..claim_n in output order.

    The strict CLAIM/Context/Type triplets are read first; only if there are none is
    the text split at line-leading "CLAIM n:" markers and each block read leniently.
    `content` is the text the extractor was shown: markers copied from it are not claims.
    """
    return _parse(text, _Reader(content))[0]


def _parse(text: str, reader: _Reader) -> tuple[list[ExtractedClaim], bool]:
    """parse_claims, and whether the strict format was found (False: the lenient fallback was used)."""
    lines = _without_summary(lines_of(text), reader)
    strict = _parse_strict(lines, reader)
    found = strict or _parse_lenient(lines, reader)
    claims: list[ExtractedClaim] = []
    seen: set[str] = set()
    for claim, context, claim_type in found:
        if not claim or claim in seen:  # exact duplicates are dropped, the first kept
            continue
        seen.add(claim)
        # A claim without a Context line is its own context.
        claims.append(ExtractedClaim(f"claim_{len(claims) + 1}", claim, context or claim, claim_type))
    return claims, bool(strict)


def says_no_claims(text: str, content: str = "") -> bool:
    """Whether an answer without claims is the well-formed empty extraction (the edge case "No
    verifiable claims found"): its summary says "Total claims: 0", or a line says there are no claims.

    Such lines count only as protocol lines (not quoted, not copied from `content`), so content that
    says "There are no verifiable claims here", echoed back, is still an unreadable answer.
    """
    text = text.replace("\r", "\n")
    copied: set[str] | None = None
    for match in _NO_CLAIMS.finditer(text):
        end = text.find("\n", match.start())
        line = text[match.start() : end if end >= 0 else len(text)]
        if is_quoted_or_code(line):
            continue
        if copied is None:
            copied = {words_of(line) for line in lines_of(content)} if content else set()
        if words_of(line) not in copied:
            return True
    return False


class ClaimStream:
    """The claims of an extraction answer that arrives in pieces, each given once it is final.

    There is one parser: each time a Type line is complete, `parse_claims`' own rules run on
    the answer's complete lines so far. In the claim format a claim is final once its Type
    line ends: a CLAIM/Context/Type triplet found in the answer so far is found again, with
    the same id, in any longer answer (the strict scan only moves forward, the summary is
    cut forward, duplicates keep the first), and once one triplet is found the lenient
    fallback can no longer apply. Claims of an answer in a looser format (no triplet at all)
    depend on the whole answer, so they come out only at `finish`.

    `feed` and `finish` return the claims that became final, located in `content` exactly as
    `locate_claims(parse_claims(answer, content), content)` would place them.
    """

    def __init__(self, content: str) -> None:
        self._content = content
        self._reader = _Reader(content)
        self._complete: list[str] = []  # the answer up to its last line break
        self._pending = ""  # the line being written
        self.claims: list[ExtractedClaim] = []  # given out so far, in order

    @property
    def text(self) -> str:
        return "".join(self._complete) + self._pending

    def feed(self, piece: str) -> list[ExtractedClaim]:
        """Add a piece of the answer; the claims that it completed."""
        self._pending += piece
        cut = self._pending.rfind("\n") + 1
        if not cut:
            return []
        lines, self._pending = self._pending[:cut], self._pending[cut:]
        self._complete.append(lines)
        # Only a complete Type line can complete a triplet.
        if not any(self._reader.label(_STRICT_TYPE, line) for line in lines_of(lines)):
            return []
        found, strict = _parse("".join(self._complete), self._reader)
        return self._give(found) if strict else []

    def finish(self) -> list[ExtractedClaim]:
        """The answer is complete: the claims not given yet (all of parse_claims' claims are given then)."""
        return self._give(parse_claims(self.text, self._content))

    def _give(self, found: list[ExtractedClaim]) -> list[ExtractedClaim]:
        given = len(self.claims)
        if [replace(c, start=None, end=None) for c in self.claims] != found[:given]:
            raise RuntimeError("streamed claims are not a prefix of the parsed answer")  # a bug: see the docstring
        new = locate_claims(found[given:], self._content)
        self.claims += new
        return new


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
    """Content longer than max_length: the first max_length characters; returns (text, truncated).

    The text is what the extractor model is shown, so it has no note: a note inside the
    prompt would be read as claims. `with_truncation_note` adds the truncation note for the
    reader, the checkers and the report.
    """
    if len(content) <= max_length:
        return content, False
    return content[: max(max_length, 0)], True


def with_truncation_note(text: str, max_length: int) -> str:
    """Truncated text followed by the truncation note (claim offsets into `text` stay valid)."""
    return f"{text}\n\n{TRUNCATION_NOTE.format(max_length=max_length)}"


# --- parsing -------------------------------------------------------------------------------------


class _Reader:
    """Matches protocol lines only (rule 1: not quoted or code; rule 2: not a copy of the content)."""

    def __init__(self, content: str) -> None:
        self._copies = {
            (_number_key(match.group(1)), words_of(match.group(2))) for match in _ECHO_CLAIM.finditer(content)
        }
        self._content_has_summary = _ECHO_SUMMARY.search(content) is not None

    def marker(self, pattern: re.Pattern[str], line: str) -> re.Match[str] | None:
        """A CLAIM marker line of `pattern` (group 1: number or None, group 2: the claim text)."""
        match = pattern.match(line)
        if match is None or is_quoted_or_code(line):
            return None
        if self._copies and (_number_key(match.group(1)), words_of(match.group(2))) in self._copies:
            return None
        return match

    def summary(self, line: str) -> bool:
        return not self._content_has_summary and _SUMMARY.match(line) is not None and not is_quoted_or_code(line)

    @staticmethod
    def label(pattern: re.Pattern[str], line: str) -> re.Match[str] | None:
        match = pattern.match(line)
        return None if match is None or is_quoted_or_code(line) else match


def _number_key(digits: str | None) -> str:
    return (digits.lstrip("0") or "0") if digits else ""


def _without_summary(lines: list[str], reader: _Reader) -> list[str]:
    """Blank out the EXTRACTION SUMMARY section so it is never read as claims.

    The section ends only at a numbered "CLAIM n:" line (a model may put the summary
    first), so an unnumbered "Claim: ..." line inside it stays part of the summary.
    """
    kept = []
    in_summary = False
    for line in lines:
        if reader.summary(line):
            in_summary = True
        elif in_summary and reader.marker(_STRICT_MARKER, line):
            in_summary = False
        kept.append("" if in_summary else line)
    return kept


def _parse_strict(lines: list[str], reader: _Reader) -> list[tuple[str, str, str]]:
    """The claim format: a CLAIM line, then Context, then a known Type (blank lines between are tolerated)."""
    found = []
    i = 0
    while i < len(lines):
        marker = reader.marker(_STRICT_MARKER, lines[i])
        if marker:
            j = _next_non_blank(lines, i + 1)
            context = reader.label(_CONTEXT, lines[j]) if j < len(lines) else None
            k = _next_non_blank(lines, j + 1) if context else len(lines)
            claim_type = reader.label(_STRICT_TYPE, lines[k]) if k < len(lines) else None
            claim = _clean(marker.group(2))
            context_text = _clean(context.group(1)) if context else ""
            if claim_type and claim and context_text:
                found.append((claim, context_text, claim_type.group(1).upper()))
                i = k + 1
                continue
        i += 1
    return found


def _parse_lenient(lines: list[str], reader: _Reader) -> list[tuple[str, str, str]]:
    """The fallback: split at CLAIM markers; Context and Type are optional in each block."""
    blocks: list[list[str]] = []
    for line in lines:
        marker = reader.marker(_LENIENT_MARKER, line)
        if marker:
            blocks.append([marker.group(2)])
        elif blocks:
            blocks[-1].append(line)
    return [_parse_block(block, reader) for block in blocks]


def _parse_block(block: list[str], reader: _Reader) -> tuple[str, str, str]:
    """Claim text from the marker line (or the first plain line after it); first Context and Type win."""
    claim = _clean(block[0])
    context: str | None = None
    claim_type: str | None = None
    for line in block[1:]:
        if label := reader.label(_CONTEXT, line):
            context = _clean(label.group(1)) if context is None else context
        elif label := reader.label(_TYPE_LABEL, line):
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
