"""What the reporter service derives from, or writes instead of, the reporter model's text."""

from __future__ import annotations

import math
import re

from factcheck.fallback_report import (  # noqa: F401  (re-exported: the reporter's own vocabulary)
    NO_CLAIMS_NOTE,
    NO_CLAIMS_REPORT,
    agreement_percent,
    average_agreement_rate,
    build_fallback_report,
    cited_sources,
    markdown_cell,
)

# Spec, edge case "Very few claims (1-2)".
FEW_CLAIMS_NOTE = "Limited number of verifiable claims."

TITLE_MAX_CHARS = 80

# "Overall Reliability Score: 78", "## Overall Reliability Score: **78**/100", "Reliability Score (0-100): 78.5".
# The parenthetical is optional and followed by its own separators, so no two
# adjacent repeats overlap and a long run of spaces cannot make the search quadratic.
_SEPARATORS = r"[\s*_:=\u2013\u2014]*"
_SCORE = re.compile(
    r"(?:Overall\s+)?Reliability\s+Score" + _SEPARATORS + r"(?:\([^)\n]{0,20}\)" + _SEPARATORS + r")?(-?\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_TITLE_LABEL = re.compile(r"^title\s*[:\-\u2013\u2014]\s*", re.IGNORECASE)
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb"
_TRAILING_PUNCTUATION = ".,;:-\u2013\u2014\u2026"


def parse_reliability_score(text: str) -> int | None:
    """The report's "Overall Reliability Score" as an integer 0..100; None when the report has none."""
    match = _SCORE.search(text)
    if match is None:
        return None
    value = min(max(float(match.group(1)), 0.0), 100.0)  # clamp first: float() of a long digit run is inf
    return math.floor(value + 0.5)


def clean_title(text: str, fallback: str) -> str:
    """The first line of the model's answer as a plain title of at most 80 characters; fallback if none.

    Models wrap titles in markdown, quotes or a "Title:" label; none of that belongs in a
    conversation list. A trailing "?" or "!" is kept unless the title had to be cut.
    """
    for line in text.replace("\r", "\n").split("\n"):
        title = _plain_title(line)
        if len(title) > TITLE_MAX_CHARS:
            cut = title[: TITLE_MAX_CHARS + 1].rsplit(" ", 1)[0] if " " in title[: TITLE_MAX_CHARS + 1] else ""
            title = (cut or title[:TITLE_MAX_CHARS]).rstrip(_TRAILING_PUNCTUATION + "!? ")
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
