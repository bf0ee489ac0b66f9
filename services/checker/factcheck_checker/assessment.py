"""Evidence assessment (the verification loop): the prompt that asks one model to judge search
results for one claim, and the parser of its answer (format: factcheck/core/evidence_assessment.py).

Protocol lines are read as every parser reads them (factcheck/text/protocol_lines.py): a quoted or
indented line is never one, and an ASSESSMENT line that says what the claim or a result says
in protocol form is a copy of untrusted text, not the model's judgement. A result the model
did not judge (or judged only in a copy) is IRRELEVANT: no evidence is the conservative side.
An answer that judges none of the results is not an assessment at all: the checker service
fails the call (MODEL_ANSWER_UNREADABLE), so the investigation never reads "no relevant
evidence" into a model it could not understand.
"""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.core.evidence_assessment import (
    ANSWER_MARKER,
    ASSESS_OPENING,
    ASSESSMENT_LINE,
    CLAIM_MARKER,
    IRRELEVANT,
    REASON_LINE,
    RESULTS_MARKER,
    TEMPORAL_LINE,
)
from factcheck.models.inputs import AssessInputs, passages_of
from factcheck.text.evidence_text import PASSAGE_INJECTION_NOTE, quote_lines
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of, words_of
from factcheck.text.text_safety import clean_text, excerpt
from factcheck.v1 import common_pb2

MAX_REASON_CHARS = 300
UNREADABLE_ASSESSMENT = "the assessment could not be read: no ASSESSMENT line judges any of the results"


@dataclass(frozen=True)
class Assessment:
    result_id: str
    stance: str  # SUPPORTS / REFUTES / IRRELEVANT
    temporal: bool
    reason: str
    read: bool = True  # False: the answer had no readable ASSESSMENT line for it (IRRELEVANT by default)


def build_assessment_prompt(claim: str, results: list[common_pb2.Passage]) -> str:
    sections = [
        ASSESS_OPENING,
        "Decide for each search result whether it SUPPORTS the claim, REFUTES it, or is IRRELEVANT to it "
        "(it does not address the claim, or only repeats it without evidence).",
        PASSAGE_INJECTION_NOTE,
        "",
        CLAIM_MARKER,
        quote_lines(claim),
        "",
        RESULTS_MARKER,
    ]
    for result in results:
        heading = f"[{result.id}] {_heading_text(result.source_title or result.source_id)}"
        if result.source_url:
            heading += f" ({_heading_text(result.source_url).replace(' ', '%20')})"
        if result.HasField("published_at") and result.published_at:
            heading += " {published " + _heading_text(result.published_at).replace(" ", "T") + "}"
        sections += [heading, quote_lines(result.text), ""]
    sections += [
        ANSWER_MARKER,
        "ASSESSMENT <result id>: SUPPORTS or REFUTES or IRRELEVANT",
        "Temporal: YES or NO (YES only for REFUTES when the result reports the state at another time, "
        "so that the claim and the result may each have been true at their own dates)",
        "Reason: one line naming what in the result decides it",
    ]
    return "\n".join(sections) + "\n"


def assessment_inputs(claim: str, results: list[common_pb2.Passage]) -> AssessInputs:
    """What `build_assessment_prompt` builds the prompt from, for a `local/` engine."""
    return AssessInputs(claim, passages_of(results))


def _heading_text(text: str) -> str:
    return " ".join(text.split())[:200]


def parse_assessments(text: str, result_ids: list[str], untrusted: str) -> list[Assessment]:
    """One Assessment per requested id, in request order."""
    copies = {words_of(line) for line in lines_of(untrusted) if ASSESSMENT_LINE.match(_unquoted(line))}
    wanted = set(result_ids)
    found: dict[str, Assessment] = {}
    current: dict | None = None

    def close() -> None:
        if current is not None and current["id"] not in found:
            found[current["id"]] = Assessment(current["id"], current["stance"], current["temporal"], current["reason"])

    for line in lines_of(text):
        if is_quoted_or_code(line):
            continue
        header = ASSESSMENT_LINE.match(line)
        if header:
            close()
            current = None
            result_id = header.group(1).upper()
            if result_id in wanted and words_of(line) not in copies:
                current = {"id": result_id, "stance": header.group(2).upper(), "temporal": False, "reason": ""}
            continue
        if current is None:
            continue
        if (match := TEMPORAL_LINE.match(line)) is not None:
            current["temporal"] = match.group(1).upper() == "YES"
        elif (match := REASON_LINE.match(line)) is not None and not current["reason"]:
            current["reason"] = excerpt(clean_text(match.group(1).strip()), MAX_REASON_CHARS)
    close()
    return [
        _only_refutations_are_temporal(found.get(result_id) or Assessment(result_id, IRRELEVANT, False, "", read=False))
        for result_id in result_ids
    ]


def _only_refutations_are_temporal(assessment: Assessment) -> Assessment:
    if assessment.temporal and assessment.stance != "REFUTES":
        return Assessment(assessment.result_id, assessment.stance, False, assessment.reason, assessment.read)
    return assessment


def _unquoted(line: str) -> str:
    return line.lstrip(" >\t*-_#`")
