"""`local/reporter` as council chairman: answers the synthesis prompt by correcting the best response.

The prompt (services/reporter/factcheck_reporter/report_prompts.py, `build_synthesis_prompt`) is read from its fixed lines
(factcheck/core/council_taxonomy.py), the last of each, since only the question before them is
unquoted caller text: the response is the "> "-quoted lines after "MOST RELIABLE RESPONSE:";
the corrections are the `[C1] Response A | Error Type` blocks after "CORRECTIONS TO APPLY:",
each with a quoted "> Claim:" and "> Correction:" line. The other responses' claims and the
ranking are context and not used.

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

from factcheck.core.council_taxonomy import (
    SYNTHESIS_CONTEXT_MARKER,
    SYNTHESIS_CORRECTIONS_MARKER,
    SYNTHESIS_RESPONSE_MARKER,
    SYNTHESIS_TASK_MARKER,
)

NO_CORRECTION = "not given"
_BLOCK_HEADING = re.compile(r"^\[C\d+\] (Response [A-Z]) \| (.+)$")
_SENTENCE_END = ".!?"


@dataclass(frozen=True)
class Correction:
    error_type: str
    claim: str
    correction: str  # "" when none was given


def is_synthesis_prompt(prompt: str) -> bool:
    return _last_index(_lines(prompt), SYNTHESIS_RESPONSE_MARKER) is not None


def answer(prompt: str) -> str:
    response, corrections = read_synthesis_prompt(prompt)
    text, notes = apply_corrections(response, corrections)
    listing = "\n".join(notes) if notes else "- none: the fact-checkers listed no inaccurate claim in this response."
    return f"{text.strip()}\n\nCorrections:\n{listing}\n"


def read_synthesis_prompt(prompt: str) -> tuple[str, list[Correction]]:
    """The best response's text and the corrections listed for it (see the module docstring)."""
    lines = _lines(prompt)
    start = _last_index(lines, SYNTHESIS_RESPONSE_MARKER)
    if start is None:
        return "", []
    corrections_at = _last_index(lines, SYNTHESIS_CORRECTIONS_MARKER, start + 1)
    end = corrections_at if corrections_at is not None else len(lines)
    response = "\n".join(_unquoted(line) for line in lines[start + 1 : end] if line.startswith(">"))
    if corrections_at is None:
        return response, []
    corrections: list[Correction] = []
    current: dict[str, str] | None = None
    for line in lines[corrections_at + 1 :]:
        if line.startswith((SYNTHESIS_CONTEXT_MARKER, SYNTHESIS_TASK_MARKER, "RANKING")):
            break
        if heading := _BLOCK_HEADING.match(line):
            current = {"type": heading.group(2).strip()}
            corrections.append(Correction(current["type"], "", ""))
        elif current is not None and line.startswith("> "):
            name, _, value = _unquoted(line).partition(": ")
            if name in ("Claim", "Correction"):
                current[name] = value.strip()
                corrections[-1] = Correction(
                    current["type"],
                    current.get("Claim", ""),
                    "" if current.get("Correction", "") == NO_CORRECTION else current.get("Correction", ""),
                )
    return response, [c for c in corrections if c.claim]


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


def _lines(prompt: str) -> list[str]:
    return prompt.replace("\r\n", "\n").split("\n")


def _last_index(lines: list[str], marker: str, start: int = 0) -> int | None:
    return next((i for i in range(len(lines) - 1, start - 1, -1) if lines[i] == marker), None)


def _unquoted(line: str) -> str:
    return line[2:] if line.startswith("> ") else line[1:]
