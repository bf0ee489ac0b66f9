"""Whether a model's answer merely repeats the prompt it was given (the one check every role uses).

Small models sometimes answer with their prompt: the instructions, the format placeholders,
sometimes the content after them. Such an answer can still look like one ("CLAIM 1: [exact
claim as stated in the content]" parses as a claim; a repeated council prompt is a long text),
so each role asks this before accepting an answer, and treats an echo as an answer it could
not read.

A role names its *instruction lines*: the fixed sentences of its prompt template that a real
answer has no reason to contain (never the content, the question or the answer format a
proper answer reproduces, such as a report's section headings). An answer repeats the
prompt when it contains at least two of them (one, when the template has only one), compared
by their letters and digits only (`_key`), so decoration and line breaks do not matter.
Instruction lines that the untrusted text (the content the model was shown) also contains
are left out: quoting that text is not an echo.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

from factcheck.text.protocol_lines import lines_of

# Shorter lines ("QUESTION:", "## Evidence Table") are headings a real answer may well repeat.
MIN_INSTRUCTION_CHARS = 20
ECHO_HITS = 2
# What a role says when it rejects an echo (events, stored failures).
REPEATS_PROMPT = "the answer repeats the prompt instead of answering it"

_FORMAT_FIELD = re.compile(r"\{[^{}\n]*\}")
# ASCII punctuation and whitespace, deleted by one str.translate: linear and fast on a huge answer.
_DROPPED = str.maketrans("", "", string.punctuation + string.whitespace)


def _key(text: str) -> str:
    """`text` case-folded without ASCII punctuation or whitespace: what an instruction line and an
    answer are compared by."""
    return text.casefold().translate(_DROPPED)


def instruction_lines(*templates: str) -> tuple[str, ...]:
    """The fixed lines of `str.format` templates, as comparison keys: each line without its {fields},
    kept when what stays is long enough to be an instruction rather than a heading."""
    keys = []
    for template in templates:
        for line in lines_of(template):
            key = _key(_FORMAT_FIELD.sub("", line))
            if len(key) >= MIN_INSTRUCTION_CHARS and key not in keys:
                keys.append(key)
    return tuple(keys)


def repeats_prompt(answer: str, instructions: Iterable[str], untrusted: str = "") -> bool:
    """Whether `answer` repeats at least two of the prompt's instruction lines (see the module doc).

    `instructions`: `instruction_lines`' keys; `untrusted`: the text the prompt carried for the
    model to work on (content, question, claims), which the answer may quote.
    """
    quoted = _key(untrusted) if untrusted else ""
    keys = [key for key in instructions if key not in quoted]
    if not keys:
        return False
    said = _key(answer)
    hits = sum(1 for key in keys if key in said)
    return hits >= min(ECHO_HITS, len(keys))
