"""`local/reporter` as council chairman: answers the synthesis call (`SynthesisInputs`) by correcting the best response.

The inputs give the most reliable response (read line by line, as the prompt quotes it) and the
corrections listed for it (error type, claim and correction, each read on one line; the other
responses' claims and the ranking are context a model may read, and not used here).

The answer is the response with each listed claim replaced by its correction where the claim
occurs in it (words matched in order, ignoring case and spacing; the first occurrence), or
removed when no correction was given (an inaccurate claim with nothing to put instead is left
out rather than repeated), then a "Corrections:" list of what changed, naming the error type,
and of claims that were not found in the text. A claim listed twice (several fact-checkers
found it) is applied once. Deterministic; no knowledge of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from factcheck.models.inputs import SynthesisInputs
from factcheck_engines.reading import as_lines, one_line

_SENTENCE_END = ".!?"


@dataclass(frozen=True)
class Correction:
    error_type: str
    claim: str
    correction: str  # "" when none was given


def answer(inputs: SynthesisInputs) -> str:
    response, corrections = synthesis_request(inputs)
    text, notes = apply_corrections(response, corrections)
    listing = "\n".join(notes) if notes else "- none: the fact-checkers listed no inaccurate claim in this response."
    return f"{text.strip()}\n\nCorrections:\n{listing}\n"


def synthesis_request(inputs: SynthesisInputs) -> tuple[str, list[Correction]]:
    """The best response's text and the corrections listed for it (those that name a claim)."""
    corrections = [
        Correction(one_line(item.error_type), one_line(item.claim), one_line(item.correction))
        for item in inputs.corrections
    ]
    return as_lines(inputs.response), [c for c in corrections if c.claim]


def apply_corrections(text: str, corrections: list[Correction]) -> tuple[str, list[str]]:
    """`text` with each claim replaced by its correction (or removed), and one note per correction."""
    notes: list[str] = []
    seen: set[str] = set()
    for item in corrections:
        key = " ".join(item.claim.lower().split())
        if key in seen:
            continue
        seen.add(key)
        match = _find(text, item.claim)
        if match is None:
            fix = f'"{item.correction}"' if item.correction else "no correction was given"
            notes.append(f'- {item.error_type}: "{item.claim}" is not in the response as stated; correction: {fix}.')
            continue
        replacement = _as_replacement(match.group(0), item.correction)
        rest = text[match.end() :]
        text = text[: match.start()] + replacement + (rest if replacement else rest.lstrip(" \t"))
        if item.correction:
            notes.append(f'- {item.error_type}: "{item.claim}" \u2192 "{item.correction}"')
        else:
            notes.append(f'- {item.error_type}: removed "{item.claim}" (no correction was given).')
    return re.sub(r"[ \t]{2,}", " ", text), notes


def _find(text: str, claim: str) -> re.Match[str] | None:
    words = claim.split()
    if not words:
        return None
    return re.search(r"\s+".join(re.escape(word) for word in words), text, re.IGNORECASE)


def _as_replacement(found: str, correction: str) -> str:
    """The correction, ending as the replaced text did (a sentence keeps its full stop)."""
    if not correction:
        return ""
    ending = found[-1] if found[-1] in _SENTENCE_END else ""
    if ending and correction[-1] not in _SENTENCE_END:
        return correction + ending
    return correction
