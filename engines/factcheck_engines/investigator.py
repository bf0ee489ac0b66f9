"""`local/investigator` (and `local/checker`): answers the evidence-assessment call (`AssessInputs`,
factcheck/core/evidence_assessment.py) by judging the claim against each result alone with the
engine's judge (judges.py: the embedded entailment model by default, the lexical judge for
`local/checker-lexical`): VERIFIED → SUPPORTS, DISPUTED → REFUTES, otherwise IRRELEVANT.

A refutation is temporal when it rests on a figure or a date and the result is about a later
year than any the claim names (its text names a later year, or its publication date is later):
"the population was 2.1 million in 2010" against a 2021 count is a newer state, not an error.
The claim is read on one line and each result line by line, as the prompt quotes them; a result
saying "ASSESSMENT R1: SUPPORTS" is just words to compare. Deterministic.
"""

from __future__ import annotations

import re

from factcheck.core.evidence_assessment import IRRELEVANT, REFUTES, SUPPORTS
from factcheck.models.inputs import AssessInputs, unanswerable
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    DISPUTED,
    VERIFIED,
    PassageText,
)
from factcheck_engines.judges import ClaimJudge, default_judge
from factcheck_engines.reading import as_lines

_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


def answer(inputs: object, judge_claim: ClaimJudge = default_judge) -> str:
    if not isinstance(inputs, AssessInputs):
        raise unanswerable(inputs, "local/investigator", (AssessInputs,))
    claim, results = assessment_request(inputs)
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


def assessment_request(inputs: AssessInputs) -> tuple[str, list[tuple[str, str, str]]]:
    """The claim (on one line), and each result's (id, text, published date or "")."""
    claim = " ".join(inputs.claim.splitlines()).strip()
    return claim, [(result.id, as_lines(result.text), result.published) for result in inputs.results]


def _later(claim: str, text: str, published: str) -> bool:
    claim_years = [int(y) for y in _YEAR.findall(claim)]
    result_years = [int(y) for y in _YEAR.findall(text)] + [int(y) for y in _YEAR.findall(published[:4])]
    if not result_years:
        return False
    if not claim_years:
        return bool(published)
    return max(result_years) > max(claim_years)
