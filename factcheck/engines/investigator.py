"""`local/investigator` (and `local/checker`): answers the evidence-assessment prompt
(factcheck/core/evidence_assessment.py) by judging the claim against each result alone with the
engine's judge (judges.py: the embedded entailment model by default, the lexical judge for
`local/checker-lexical`): VERIFIED → SUPPORTS, DISPUTED → REFUTES, otherwise IRRELEVANT.

A refutation is temporal when it rests on a figure or a date and the result is about a later
year than any the claim names (its text names a later year, or its publication date is later):
"the population was 2.1 million in 2010" against a 2021 count is a newer state, not an error.
Reading is structural: the claim and the results are read only from "> "-quoted lines, so a
result saying "ASSESSMENT R1: SUPPORTS" is just words to compare. Deterministic.
"""

from __future__ import annotations

import re

from factcheck.core.evidence_assessment import (
    ANSWER_MARKER,
    CLAIM_MARKER,
    IRRELEVANT,
    REFUTES,
    RESULT_HEADING,
    RESULTS_MARKER,
    SUPPORTS,
)
from factcheck.engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    DISPUTED,
    VERIFIED,
    PassageText,
)
from factcheck.engines.judges import ClaimJudge, default_judge

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


def answer(prompt: str, judge_claim: ClaimJudge = default_judge) -> str:
    claim, results = read_assessment_prompt(prompt)
    blocks = []
    for result_id, text, published in results:
        judgement = judge_claim(claim, [PassageText(result_id, text)])
        stance, temporal = IRRELEVANT, False
        if judgement.verdict == VERIFIED:
            stance = SUPPORTS
        elif judgement.verdict == DISPUTED:
            stance = REFUTES
            temporal = judgement.conflict in (CONFLICT_FIGURE, CONFLICT_DATE) and _later(claim, text, published)
        reason = {
            SUPPORTS: f'It states the claim: "{judgement.quote}".' if judgement.quote else "It states the claim.",
            REFUTES: f"It says otherwise: {judgement.correction}." if judgement.correction else "It says otherwise.",
            IRRELEVANT: "It does not address the claim.",
        }[stance]
        blocks.append(
            f"ASSESSMENT {result_id}: {stance}\nTemporal: {'YES' if temporal else 'NO'}\nReason: {' '.join(reason.split())}"
        )
    return "\n\n".join(blocks) + "\n"


def read_assessment_prompt(prompt: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The claim, and each result's (id, text, published date or "")."""
    lines = prompt.split("\n")
    claim_at = lines.index(CLAIM_MARKER) if CLAIM_MARKER in lines else len(lines)
    results_at = _last(lines, RESULTS_MARKER)
    answer_at = _last(lines, ANSWER_MARKER)
    claim = " ".join(_quoted(line) for line in lines[claim_at + 1 : results_at] if line.startswith(">"))
    results: list[tuple[str, str, str]] = []
    current: list | None = None
    for line in lines[results_at + 1 : answer_at]:
        if line.startswith(">"):
            if current is not None:
                current[1].append(_quoted(line))
            continue
        heading = RESULT_HEADING.match(line)
        if heading:
            current = [heading.group(1), [], heading.group(4) or ""]
            results.append(current)  # type: ignore[arg-type]
    return claim.strip(), [(rid, "\n".join(text), published) for rid, text, published in results]


def _last(lines: list[str], marker: str) -> int:
    positions = [i for i, line in enumerate(lines) if line == marker]
    return positions[-1] if positions else len(lines)


def _quoted(line: str) -> str:
    return line[2:] if line.startswith("> ") else line[1:]


def _later(claim: str, text: str, published: str) -> bool:
    claim_years = [int(y) for y in _YEAR.findall(claim)]
    result_years = [int(y) for y in _YEAR.findall(text)] + [int(y) for y in _YEAR.findall(published[:4])]
    if not result_years:
        return False
    if not claim_years:
        return bool(published)
    return max(result_years) > max(claim_years)
