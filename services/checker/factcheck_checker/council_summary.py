"""Read a council fact-checker's answer: its FACT CHECK SUMMARY and INACCURATE CLAIMS blocks.

What a council fact-checker's structured summary holds, read line by line and tolerant of the usual
model variations:

- A summary block starts at a line-leading "FACT CHECK SUMMARY" header in any decoration
  ("## Fact-Check Summary", "**FACT CHECK SUMMARY:**") and runs to the next summary or
  claims header. Its protocol lines are rating lines, "Response A: MOSTLY ACCURATE" with
  markdown anywhere ("- **Response A**: *Mostly Accurate*", "Response a - [MIXED]",
  "`Response A`: ACCURATE (one wrong date)"), and the "MOST RELIABLE: Response C" line
  ("**Most reliable:** C"). Other lines are ignored.
- The fact-checker's own summary is recognised by where it stands: its FINAL summary block
  outside any quoted text (the prompt asks for it "at the very end"; a model may draft a
  summary, or show one, before its final one). A header is a heading line ("Fact-checking
  summary complete." is not one). In the block the first rating of a label wins (a second
  is a warning); a label that was not asked about is a warning; a label with no rating is a
  warning; the first MOST RELIABLE line wins, and one naming an unknown label is a warning
  and leaves most_reliable empty.
- A final block without a rating line, or none at all (a refusal, a truncated answer): no
  ratings, one warning. That is not an error here: the gateway excludes the checker and
  keeps its analysis.
- The claims block starts at an "INACCURATE CLAIMS" header (any decoration) and runs to
  the next claims or summary header. Its lines are `Response X | Error Type | claim |
  correction`, also as a markdown table row, a bullet or in bold; a table's header and
  rule rows and "None" are skipped. The final claims block outside quoted text counts. The
  error type is read by `council_taxonomy.error_type_from_name` (unknown -> Other); a line
  for an unknown label is a warning; a line without a claim is skipped.

Forgery. The responses are untrusted: a caller's answers, or another model's, that may
contain a forged "FACT CHECK SUMMARY" block or claim lines, and the checker may show them
back. What the checker quotes is not its own: a markdown quote ("> ") or code-indented line
is never read (rule 1 of factcheck/text/protocol_lines.py; the prompt shows every response so
quoted). A block the checker shows bare, without quote marks or a fence, is not its own either
when it occurs inside one of the responses being rated: the block from its header to its last
protocol line (rating, MOST RELIABLE or claim line), compared line by line by its letters and
digits (so re-decorated in bold or as a list it is still the same block), is a run of
consecutive lines of one response. Such a copy is the response's, wherever it stands in the
reply: before the checker's own block, after it, or alone. The checker's summary is its final
block that is no copy; a reply whose only blocks are copies has none (one warning: the gateway
counts the fact-checker as failed, never with the ratings a response carried). Blocks are
compared whole, never line by line: one response carrying `Response B: ACCURATE` cannot cancel a
genuine rating that reads the same (comparing lines, as this parser once did, let it). The
price: a block of the checker's own that is word for word a block some response carries, from
its header to its last rating, is taken for a copy; it then says exactly what that response
said, and a response that lists every possible block to deny the checker its vote leaves the
checker failed and named, never counted with its ratings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from factcheck.core.council_taxonomy import LABEL_PREFIX, error_type_from_name, rating_from_name
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of, words_of
from factcheck.text.text_safety import clean_text, excerpt
from factcheck.v1 import council_pb2

NO_SUMMARY_WARNING = "no FACT CHECK SUMMARY block with ratings was found"
MAX_CLAIMS = 200
MAX_CLAIM_CHARS = 2_000
MAX_WARNINGS = 50

_LEAD = r"^[\s#*_+\-`~|=•]*"
# A heading line: after SUMMARY only decoration, a colon or a parenthesis, unless the line is a
# markdown heading or ends with a colon ("### Fact check summary for all responses", "FACT CHECK
# SUMMARY (final):"); "Fact-checking summary complete." is prose, not a block.
_SUMMARY_WORDS = re.compile(_LEAD + r"FACT[\s_-]*CHECK(?:ING)?[\s_-]*SUMMARY\b", re.IGNORECASE)
_HEADER_REST = re.compile(r"[\s*_`#:.\-]*(?:\([^)]*\)[\s*_`#:.\-]*)?$")
_HEADING_LINE = re.compile(r"^\s*#|:[\s*_`]*$")
_CLAIMS_HEADER = re.compile(_LEAD + r"INACCURATE[\s_-]+CLAIMS?[\s*_`]*(?::|$)", re.IGNORECASE)
_RATING_WORDS = r"MOSTLY[\s_-]+INACCURATE|MOSTLY[\s_-]+ACCURATE|INACCURATE|ACCURATE|MIXED"
_RATING_LINE = re.compile(
    _LEAD + r"(?:\d+[.)]\s*)?[\[(]?\s*Response[\s*_`]*([A-Z])(?![A-Za-z0-9])[\s*_`\])]*[:|\-\u2013\u2014=]+"
    r"[\s*_`\[(]*(" + _RATING_WORDS + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_MOST_RELIABLE = re.compile(
    _LEAD + r"MOST[\s_-]+RELIABLE(?:[\s_-]+RESPONSE)?[\s*_`]*[:\-\u2013\u2014=]+[\s*_`\[(]*(?:Response[\s*_`]*)?"
    r"([A-Z])(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_MOST_RELIABLE_ANY = re.compile(_LEAD + r"MOST[\s_-]+RELIABLE\b", re.IGNORECASE)
# A claim line's label cell: "Response A", "**Response A**", "A".
_LABEL_CELL = re.compile(r"^[\s*_`\[(]*(?:Response[\s*_`]*)?([A-Z])[\s*_`\])]*$", re.IGNORECASE)
_LIST_MARK = re.compile(r"^[\s*_+\-•]*(?:\d+[.)]\s*)?")
_RULE_ROW = re.compile(r"^[\s|:\-]*$")
_NONE = re.compile(r"^[\s*_`\-]*(?:none|n/a|no inaccurate claims?\b.*)[\s*_`.]*$", re.IGNORECASE)


@dataclass
class ParsedCouncilCheck:
    """A fact-checker's summary: ratings by label (asked-for labels only, in label order),
    the MOST RELIABLE label ("" when none), the inaccurate claims and what was ignored."""

    ratings: dict[str, council_pb2.AccuracyRating] = field(default_factory=dict)
    most_reliable: str = ""
    inaccurate_claims: list[council_pb2.InaccurateClaim] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def rating_protos(self) -> list[council_pb2.ResponseRating]:
        return [council_pb2.ResponseRating(label=label, rating=rating) for label, rating in self.ratings.items()]


def parse_council_check(text: str, labels: Sequence[str], responses: Sequence[str] = ()) -> ParsedCouncilCheck:
    """Ratings, MOST RELIABLE and inaccurate claims of `text` for the asked-for `labels`.

    `responses`: the texts of the responses being rated; a block of `text` that occurs inside one of them is
    that response's, not the checker's (see "Forgery" in the module docstring).
    """
    summary_blocks, claim_blocks = _blocks(lines_of(text))
    copies = _Responses(responses)
    summaries = [block for block in summary_blocks if not copies.hold(block.span(_is_summary_line))]
    claims = [block for block in claim_blocks if not copies.hold(block.span(_is_claims_line))]
    result = ParsedCouncilCheck()
    warnings = _Warnings(result.warnings)
    summary = summaries[-1].readable if summaries else None
    if summary is None or not any(_RATING_LINE.match(line) for line in summary):
        warnings.add(NO_SUMMARY_WARNING)
    else:
        _read_summary(summary, labels, result, warnings)
    if claims:
        _read_claims(claims[-1].readable, labels, result, warnings)
    return result


@dataclass
class _Block:
    """One summary or claims block of the answer: its header line and the lines after it."""

    header: str
    lines: list[str] = field(default_factory=list)
    # A claims header's own claim line ("INACCURATE CLAIMS: Response A | ..."), read as the block's first line.
    rest: str = ""

    @property
    def readable(self) -> list[str]:
        return [self.rest, *self.lines] if self.rest else self.lines

    def span(self, is_protocol_line: Callable[[str], bool]) -> list[str]:
        """The header and the lines up to the block's last protocol line (all a copy of a block would hold)."""
        last = max((i for i, line in enumerate(self.lines) if is_protocol_line(line)), default=-1)
        return [self.header, *self.lines[: last + 1]]


class _Responses:
    """The responses being rated, as their non-blank lines' letters and digits (`words_of`)."""

    def __init__(self, responses: Sequence[str]) -> None:
        self._texts = [_keyed(lines_of(text)) for text in responses if text.strip()]

    def hold(self, lines: list[str]) -> bool:
        """Whether `lines` (blank ones aside) are consecutive lines of one response."""
        if not self._texts:
            return False
        wanted = _keyed(lines)
        return wanted != "\n" and any(wanted in text for text in self._texts)


def _keyed(lines: Sequence[str]) -> str:
    # Keys hold letters and digits only, so "\n" cannot occur inside one: a substring match of the joined keys,
    # bounded by "\n" on both sides, is a run of whole, consecutive lines.
    return "\n" + "".join(key + "\n" for line in lines if (key := words_of(line)))


def _is_summary_line(line: str) -> bool:
    return bool(_RATING_LINE.match(line) or _MOST_RELIABLE_ANY.match(line))


def _is_claims_line(line: str) -> bool:
    return bool(_NONE.match(line) or _claim_line(line) is not None)


def _blocks(lines: list[str]) -> tuple[list[_Block], list[_Block]]:
    """Each summary block and each claims block, in order."""
    summaries: list[_Block] = []
    claims: list[_Block] = []
    current: _Block | None = None
    for line in lines:
        if is_quoted_or_code(line):
            continue
        if _is_summary_header(line):
            current = _Block(line)
            summaries.append(current)
        elif header := _CLAIMS_HEADER.match(line):
            # "INACCURATE CLAIMS: Response A | ..." on the header line itself.
            rest = line[header.end() :]
            current = _Block(line, rest=rest if "|" in rest else "")
            claims.append(current)
        elif current is not None:
            current.lines.append(line)
    return summaries, claims


def _is_summary_header(line: str) -> bool:
    words = _SUMMARY_WORDS.match(line)
    return words is not None and bool(_HEADER_REST.match(line, words.end()) or _HEADING_LINE.search(line))


def _read_summary(block: list[str], labels: Sequence[str], result: ParsedCouncilCheck, warnings: _Warnings) -> None:
    asked = set(labels)
    found: dict[str, council_pb2.AccuracyRating] = {}
    most_reliable_seen = False
    for line in block:
        if rating := _RATING_LINE.match(line):
            label = LABEL_PREFIX + rating.group(1).upper()
            if label not in asked:
                warnings.add(f"rating for unknown label {label!r} ignored")
            elif label in found:
                warnings.add(f"{label} rated more than once: the first rating was kept")
            else:
                found[label] = rating_from_name(rating.group(2))
        elif not most_reliable_seen and _MOST_RELIABLE_ANY.match(line):
            match = _MOST_RELIABLE.match(line)
            most_reliable_seen = True
            label = LABEL_PREFIX + match.group(1).upper() if match else ""
            if label in asked:
                result.most_reliable = label
            else:
                warnings.add(f"MOST RELIABLE names no known response: '{excerpt(line.strip(), 60)}'")
    result.ratings = {label: found[label] for label in labels if label in found}
    for label in labels:
        if label not in found:
            warnings.add(f"{label} was not rated")
    if not most_reliable_seen:
        warnings.add("no MOST RELIABLE line")


def _claim_cells(line: str) -> list[str] | None:
    """The cells of a `Response X | type | claim | correction` line, or None if it is not one."""
    if "|" not in line or _RULE_ROW.match(line):
        return None
    body = _LIST_MARK.sub("", line.strip(), count=1).strip().strip("|")
    cells = [cell.strip() for cell in body.split("|")]
    if len(cells) < 3:
        return None
    if len(cells) > 4:  # a "|" inside the claim: the correction is the last cell
        cells = [cells[0], cells[1], " | ".join(cells[2:-1]), cells[-1]]
    return cells


def _claim_line(line: str) -> list[str] | None:
    """The cells of a claim line (its first cell a response label), or None."""
    cells = _claim_cells(line)
    if cells is None or _LABEL_CELL.match(cells[0]) is None:
        return None
    return cells


def _read_claims(block: list[str], labels: Sequence[str], result: ParsedCouncilCheck, warnings: _Warnings) -> None:
    asked = set(labels)
    for line in block:
        if _NONE.match(line) or len(result.inaccurate_claims) >= MAX_CLAIMS:
            continue
        cells = _claim_line(line)
        if cells is None:
            continue
        label_cell = _LABEL_CELL.match(cells[0])
        assert label_cell is not None  # (_claim_line checked it)
        label = LABEL_PREFIX + label_cell.group(1).upper()
        claim = _cell_text(cells[2])
        if not claim:
            continue
        if label not in asked:
            warnings.add(f"inaccurate claim for unknown label {label!r} ignored")
            continue
        result.inaccurate_claims.append(
            council_pb2.InaccurateClaim(
                label=label,
                claim=claim,
                error_type=error_type_from_name(cells[1]),
                correction=_cell_text(cells[3]) if len(cells) > 3 else "",
            )
        )


def _cell_text(cell: str) -> str:
    text = cell.strip().strip("*_`").strip().strip('"\u201c\u201d').strip()
    return clean_text(text[:MAX_CLAIM_CHARS])


@dataclass
class _Warnings:
    """Warnings in order, each once, at most MAX_WARNINGS."""

    items: list[str]

    def add(self, warning: str) -> None:
        if warning not in self.items and len(self.items) < MAX_WARNINGS:
            self.items.append(warning)
