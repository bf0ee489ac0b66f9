"""How the engines read the caller's text of their inputs: as a model reads it in the prompt,
where quoted text (passages, responses, a claim) is shown one line at a time, every kind of line
break ending a line (`factcheck.text.evidence_text.quote_lines`)."""

from __future__ import annotations


def as_lines(text: str) -> str:
    """`text` with each line break (CR, CRLF, U+2028, ...) as one "\\n"."""
    return "\n".join(text.splitlines())


def one_line(text: str) -> str:
    """`text` on one line: every whitespace run as one space."""
    return " ".join(text.split())
