"""Telling a model's own protocol lines from copies of the text it was shown.

The parsers read model answers line by line for *protocol lines*: the checker's
"VERIFICATION claim_3: DISPUTED" headers and "Verdict:" / "Confidence:" labels, the
extractor's "CLAIM 2:" markers, the reporter's "Overall Reliability Score". The prompt
also carries untrusted text (the checked content, claims, evidence passages, checker
evidence), and models quote it back: verbatim, as a "> " quote, in **bold**, in a list,
indented. So that this text cannot forge a verdict, a claim or a score, a line counts as
a protocol line only when both rules hold:

1. It is not quoted and not code. A line whose leading decoration contains ">" (a
   markdown quote, nested or inside a list item) or that is indented by four or more
   columns or starts with a tab (a markdown code block) is the model showing something,
   never its own structure. Such lines are ordinary text, in any format.
2. It is not a copy. Each parser reads what a line *says* (claim number and verdict;
   claim number and claim text; score value), and the same reader, more tolerant still,
   finds what the untrusted text says in protocol form anywhere, in any decoration. A
   line that says what the untrusted text says is taken as a copy of it. Comparing
   meanings rather than characters catches every decoration (emphasis, backticks, list
   marks, headings, a partial quote of a longer line) with a set lookup, so parsing
   stays linear.

The price of rule 2: a model line that says exactly what a protocol-like line of the
untrusted text says is read as a copy too (a verdict then counts as not addressed, a
score as missing). That is the conservative side, and only untrusted text that itself
contains protocol lines can cause it. Rule 1 means that a model which indents or quotes
its whole answer is not understood; the answer formats the prompts ask for do neither
(docs/modes.md#fact-check-mode).

This module holds what the parsers share; each parser documents its own protocol lines.
"""

from __future__ import annotations

import re

__all__ = ["is_quoted_or_code", "lines_of", "words_of"]

# The decoration a line may start with before its first word.
_LEADING_DECORATION = re.compile(r"[\s>#*_+\-`~|=]*")
_NOT_WORD = re.compile(r"[\W_]+")
CODE_INDENT = 4


def lines_of(text: str) -> list[str]:
    """The lines of `text`, split at \\n, \\r\\n and \\r only (as every parser splits them)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def is_quoted_or_code(line: str) -> bool:
    """Rule 1: a markdown quote ("> ..." in any decoration) or code block (indent >= 4, or a tab)."""
    indent = len(line) - len(line.lstrip())
    if indent and ("\t" in line[:indent] or indent >= CODE_INDENT):
        return True
    lead = _LEADING_DECORATION.match(line)
    return lead is not None and ">" in lead.group(0)


def words_of(text: str) -> str:
    """The letters and digits of `text`, case-folded: what stays of a line once all decoration is gone."""
    return _NOT_WORD.sub("", text).casefold()
