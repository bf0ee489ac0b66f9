"""What the reporter service derives from, or writes instead of, the reporter model's text."""

from __future__ import annotations

import math
import re

from factcheck.core.fallback_report import (  # noqa: F401  (re-exported: the reporter's own vocabulary)
    NO_CLAIMS_NOTE,
    NO_CLAIMS_REPORT,
    agreement_percent,
    average_agreement_rate,
    build_fallback_report,
    cited_sources,
    markdown_cell,
)
from factcheck.text.answer_echo import REPEATS_PROMPT, repeats_prompt
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of
from factcheck.text.shorten import shorten

# The edge case "Very few claims (1-2)": the note the report carries.
FEW_CLAIMS_NOTE = "Limited number of verifiable claims."

TITLE_MAX_CHARS = 80

# "Overall Reliability Score: 78", "## Overall Reliability Score: **78**/100", "Reliability Score (0-100): 78.5".
# The parenthetical is optional and followed by its own separators, so no two
# adjacent repeats overlap and a long run of spaces cannot make the search quadratic.
_SEPARATORS = r"[\s*_:=\u2013\u2014]*"
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_SCORE_LABEL = re.compile(r"[\s#*_+\-]*(?:Overall\s+)?Reliability\s+Score", re.IGNORECASE)
_SCORE_VALUE = re.compile(_SEPARATORS + r"(?:\([^)\n]{0,20}\)" + _SEPARATORS + r")?" + _NUMBER)
# A score section's body may give the score on a line of its own: "**78/100**", "Score: 78".
# Possessive quantifiers: a line of digits and spaces cannot make the match backtrack.
_BARE_SCORE = re.compile(r"[\s*_]*+(?:Score\s*+[:=]\s*+)?(-?\d++(?:\.\d++)?)(?:\s*+/\s*+100)?[\s*_.]*+$", re.IGNORECASE)
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)(.*)$")
# The report template's other sections: a score line inside one of them is quoted, not the score.
_OTHER_SECTIONS = re.compile(
    r"[\s*_]*+(?:Fact[\s-]*+Check\s++Report\s*+)?[:\-\u2013\u2014\s]*+"
    r"(?:Content\s+Summary|Evidence\s+Table|Detailed\s+Findings|(?:Verified|Disputed|Unverifiable)\s+Claims"
    r"|Annotated\s+Content|Methodology)\b",
    re.IGNORECASE,
)
# What the untrusted text says in score form, in any decoration.
_ECHO_SCORE = re.compile(
    r"Reliability[\W_]{0,5}Score[\W_]{0,20}?(?:\([^)\n]{0,20}\)[\W_]{0,20}?)?" + _NUMBER, re.IGNORECASE
)
_TITLE_LABEL = re.compile(r"^title\s*[:\-\u2013\u2014]\s*", re.IGNORECASE)
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
# Not "…": a title that ends with one was cut, and says so.
_TRAILING_PUNCTUATION = ".,;:-\u2013\u2014"


# A claim named by number: "CLAIM 3", "claim_3", "Claim #3" (the prompt names them "CLAIM claim_3").
_CLAIM_NUMBER = re.compile(r"(?<![a-z])claim[\s_#]*(\d{1,6})(?!\d)", re.IGNORECASE)
NO_SCORE = "the report has no Overall Reliability Score"
UNKNOWN_CLAIMS = "the report names claims that do not exist ({names})"


def report_problem(
    text: str, score: int | None, claim_ids: list[str], instructions: tuple[str, ...], untrusted: str = ""
) -> str | None:
    """Why the reporter's answer cannot be taken as the report (None: it can).

    Fact-check mode's report has an "Overall Reliability Score" and speaks of the run's claims only, so a
    report without a score (`score` is what `parse_reliability_score` read), one naming claim
    numbers the run does not have (a small model inventing claims), or one that repeats its
    prompt (`instructions`: factcheck/text/answer_echo.py) is replaced by the fallback table. Claim
    numbers the untrusted text (content, claims, evidence) itself names are not counted.
    """
    if repeats_prompt(text, instructions, untrusted):
        return REPEATS_PROMPT
    if score is None:
        return NO_SCORE
    known = {_claim_number(claim_id) for claim_id in claim_ids}
    known |= {_claim_number(match.group(1)) for match in _CLAIM_NUMBER.finditer(untrusted)}
    unknown: list[str] = []
    for line in lines_of(text):
        if is_quoted_or_code(line):
            continue
        for match in _CLAIM_NUMBER.finditer(line):
            number = _claim_number(match.group(1))
            if number not in known and number not in unknown:
                unknown.append(number)
    if unknown:
        names = ", ".join(f"claim_{number}" for number in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        return UNKNOWN_CLAIMS.format(names=names)
    return None


def _claim_number(text: str) -> str:
    digits = re.search(r"(\d+)$", text)
    return (digits.group(1).lstrip("0") or "0") if digits else text


def parse_reliability_score(text: str, untrusted: str = "") -> int | None:
    """The report's "Overall Reliability Score" as an integer 0..100; None when the report has none.

    The score comes from the report's own structure (rules: factcheck/text/protocol_lines.py):

    - A score heading ("## Overall Reliability Score: 78", the prompt's format) wins: its
      number, or when it has none ("## Overall Reliability Score" or the template's
      "[0-100]"), the first score line or bare number ("**78/100**") of its section.
    - Without one, the first line that starts with the score label, unless it stands in
      one of the report's other sections (Content Summary, Evidence Table, Detailed
      Findings, Annotated Content, Methodology): those quote the content.
    - Score text in the middle of a line, quoted ("> ") or code-indented lines, and lines
      whose score `untrusted` (the content, claims and checker evidence the reporter was
      shown) also states in score form are never the score.

    Linear in the text: one pass, one regex match per line.
    """
    copied = _stated_scores(untrusted)
    other_section_level: int | None = None  # the heading level of the non-score section we are in
    in_score_section = False  # under a score heading that gave no number
    first_line_score: int | None = None
    for line in lines_of(text):
        if is_quoted_or_code(line):
            continue
        if heading := _HEADING.match(line):
            level, title = len(heading.group(1)), heading.group(2)
            in_score_section = False
            if other_section_level is not None and level <= other_section_level:
                other_section_level = None
            if label := _SCORE_LABEL.match(title):
                value = _score_after(title, label.end())
                if value is None:
                    in_score_section = True
                elif value not in copied:
                    return value
            elif other_section_level is None and _OTHER_SECTIONS.match(title):
                other_section_level = level
            continue
        label = _SCORE_LABEL.match(line)
        value = _score_after(line, label.end()) if label else None
        if in_score_section:
            if value is None:
                value = _bare_score(line)
            if value is not None and value not in copied:
                return value
        elif value is not None and first_line_score is None and other_section_level is None and value not in copied:
            first_line_score = value
    return first_line_score


def _score_after(line: str, position: int) -> int | None:
    match = _SCORE_VALUE.match(line, position)
    return _clamped(match.group(1)) if match else None


def _clamped(number: str) -> int:
    value = min(max(float(number), 0.0), 100.0)  # clamp first: float() of a long digit run is inf
    return math.floor(value + 0.5)


def _stated_scores(untrusted: str) -> frozenset[int]:
    """Scores the untrusted text states: after a "Reliability Score" label, or as a line of its own."""
    if not untrusted:
        return frozenset()
    scores = {_clamped(match.group(1)) for match in _ECHO_SCORE.finditer(untrusted)}
    scores.update(score for line in lines_of(untrusted) if (score := _bare_score(line)) is not None)
    return frozenset(scores)


def _bare_score(line: str) -> int | None:
    """A line that is only a number from 0 to 100 ("78", "**78/100**", "Score: 78")."""
    bare = _BARE_SCORE.match(line)
    if bare is None or not 0.0 <= float(bare.group(1)) <= 100.0:
        return None
    return _clamped(bare.group(1))


def clean_title(text: str, fallback: str) -> str:
    """The first line of the model's answer as a plain title of at most 80 characters; fallback if none.

    Models wrap titles in markdown, quotes or a "Title:" label; none of that belongs in a
    conversation list. A title cut to fit ends at a word boundary with "…".
    """
    for line in text.replace("\r", "\n").split("\n"):
        title = _plain_title(line)
        title = shorten(title, TITLE_MAX_CHARS)
        if title:
            return title
    return fallback


def _plain_title(line: str) -> str:
    """One line without heading marks, emphasis, a "Title:" label or wrapping quotes; whitespace collapsed."""
    title = line
    while True:
        before = title
        title = title.strip().lstrip("#").strip()
        title = title.replace("**", "").replace("__", "").replace("`", "")
        title = _TITLE_LABEL.sub("", title)
        if len(title) >= 2 and title[0] == title[-1] and title[0] in "*_":
            title = title[1:-1]
        if len(title) >= 2 and title[0] in _QUOTES and title[-1] in _QUOTES:
            title = title[1:-1]
        if title == before:
            break
    return " ".join(title.split()).rstrip(_TRAILING_PUNCTUATION + " ")
