"""Each entailment agent's answer read strictly and its server-side rules applied.

A rule the model can fix is an `AnswerInvalid` (the caller asks once for a repair, quoting it): not a
standalone JSON object, the wrong schema, statement ids other than 1, 2, 3, ..., judge reasoning that
cites a statement id that does not exist (or none at all when there are statements).

A rule the server enforces itself, recording what it did:
- extractor: a statement that does not occur verbatim in the excerpt (a paraphrase) is dropped and
  counted (`dropped_paraphrases`); the kept ones are renumbered 1..n. Verbatim means a substring of
  the excerpt, with runs of whitespace compared as one space (a JSON string cannot hold the excerpt's
  raw line breaks unescaped, and models re-wrap them).
- judge: with no statements (the empty-source rule) the verdict is NOT ENOUGH INFO and the
  confidence at most 20 whatever the judge said, and the rule comes before any validation: an
  answer that cites statements that do not exist, or that cannot be read at all, is not repaired
  and does not fail the item (there is nothing it could change); `enforced` says what was overruled.
- auditor: an output breaking its rules (`factcheck.core.entailment_rules.audit_rejection`) is kept, marked
  `rejected` with the reason, and never applied.
"""

from __future__ import annotations

import re
from typing import cast

from pydantic import BaseModel, ValidationError

from factcheck.core.entailment_rules import (
    EMPTY_SOURCE_CONFIDENCE,
    NOT_ENOUGH_INFO,
    audit_rejection,
    auditor_verdict_proto,
    rating_proto,
    verdict_name,
    verdict_proto,
)
from factcheck.text.text_safety import excerpt
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.entailment.schemas import ANSWERS, AuditorAnswer, ExtractorAnswer, JudgeAnswer, ReliabilityAnswer

_MAX_ERRORS_QUOTED = 5
_WHITESPACE = re.compile(r"\s+")
# "Statement 2", "statements 1 and 3", "Statement #4", "IDs 1, 2": every number of the list counts.
_REFERENCE = re.compile(r"\b(?:statements?|ids?)\s*#?\s*(\d+(?:\s*(?:,|and|&|or|-|–|to)\s*#?\s*\d+)*)", re.I)


class AnswerInvalid(Exception):
    """The answer breaks the schema or a rule the model must fix; `message` says what, for the repair prompt."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_answer(agent: pb.EntailmentAgent, text: str) -> BaseModel:
    """The answer as its agent's schema: one standalone JSON object, exact fields, exact enums."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        raise AnswerInvalid(
            "the answer must be one standalone JSON object, with no markdown, code fence or text around it"
        )
    try:
        return ANSWERS[agent].model_validate_json(stripped)
    except ValidationError as error:
        raise AnswerInvalid(_describe(error)) from None


def _describe(error: ValidationError) -> str:
    """The schema errors as "field: problem" (the model's own values are not quoted back)."""
    problems = []
    for item in error.errors(include_input=False, include_url=False)[:_MAX_ERRORS_QUOTED]:
        where = ".".join(str(part) for part in item["loc"]) or "(the object)"
        problems.append(f"{where}: {item['msg']}")
    more = error.error_count() - len(problems)
    return excerpt("; ".join(problems) + (f"; and {more} more" if more > 0 else ""), 500)


def occurs_verbatim(statement: str, source_excerpt: str) -> bool:
    if not statement.strip():
        return False
    return statement in source_excerpt or _squeeze(statement) in _squeeze(source_excerpt)


def _squeeze(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def extractor_output(answer: ExtractorAnswer, given: pb.ExtractorInput) -> pb.ExtractorOutput:
    ids = [statement.id for statement in answer.statements]
    if ids != list(range(1, len(ids) + 1)):
        shown = ", ".join(str(i) for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
        raise AnswerInvalid(f"statement ids must be 1, 2, 3, ... in order, starting at 1 (got {shown})")
    kept = [s.text for s in answer.statements if occurs_verbatim(s.text, given.source_excerpt)]
    return pb.ExtractorOutput(
        statements=[pb.ExtractedStatement(id=n, text=text) for n, text in enumerate(kept, 1)],
        dropped_paraphrases=len(ids) - len(kept),
    )


def referenced_ids(reasoning: list[str]) -> set[int]:
    found: set[int] = set()
    for line in reasoning:
        for match in _REFERENCE.finditer(line):
            found.update(int(number) for number in re.findall(r"\d+", match.group(1)))
    return found


def empty_source_judge_output(text: str) -> pb.JudgeOutput:
    """The judge's output when there are no statements: NOT ENOUGH INFO, confidence at most 20,
    whatever the answer says or whether it can be read (the empty-source rule)."""
    try:
        answer = cast(JudgeAnswer, parse_answer(pb.ENTAILMENT_AGENT_JUDGE, text))
    except AnswerInvalid as invalid:
        return pb.JudgeOutput(
            verdict=verdict_proto(NOT_ENOUGH_INFO),
            confidence=0,
            enforced=[
                f"Empty source: no extractable statements, so {NOT_ENOUGH_INFO}; the judge's answer could not be "
                f"read ({invalid.message}), so confidence 0."
            ],
        )
    enforced = []
    if answer.verdict != NOT_ENOUGH_INFO or answer.confidence > EMPTY_SOURCE_CONFIDENCE:
        enforced.append(
            f"Empty source: no extractable statements, so {NOT_ENOUGH_INFO} with confidence at most "
            f"{EMPTY_SOURCE_CONFIDENCE} (the judge answered {answer.verdict}, {answer.confidence})."
        )
    if cited := sorted(referenced_ids(answer.reasoning)):
        listed = ", ".join(str(n) for n in cited[:10])
        enforced.append(f"The judge's reasoning cites statements that do not exist ({listed}): there are none.")
    return pb.JudgeOutput(
        verdict=verdict_proto(NOT_ENOUGH_INFO),
        confidence=min(answer.confidence, EMPTY_SOURCE_CONFIDENCE),
        reasoning=answer.reasoning,
        enforced=enforced,
    )


def judge_output(answer: JudgeAnswer, given: pb.JudgeInput) -> pb.JudgeOutput:
    """The judge's output on one or more statements (`empty_source_judge_output` when there are none)."""
    count = len(given.statements)
    references = referenced_ids(answer.reasoning)
    unknown = sorted(number for number in references if not 1 <= number <= count)
    if unknown:
        known = f"the statements are 1..{count}" if count else "there are no statements"
        listed = ", ".join(str(n) for n in unknown[:10])
        raise AnswerInvalid(f"reasoning references statement ids that do not exist ({listed}); {known}")
    if count and not references:
        raise AnswerInvalid('reasoning must reference the statement ids it relies on ("Statement 1 ...")')
    return pb.JudgeOutput(
        verdict=verdict_proto(answer.verdict), confidence=answer.confidence, reasoning=answer.reasoning
    )


def reliability_output(answer: ReliabilityAnswer, given: pb.ReliabilityInput) -> pb.ReliabilityOutput:
    return pb.ReliabilityOutput(
        source_type=answer.source_type, reliability=rating_proto(answer.reliability), confidence=answer.confidence
    )


def auditor_output(answer: AuditorAnswer, given: pb.AuditorInput) -> pb.AuditorOutput:
    rejection = audit_rejection(
        verdict_name(given.judge_verdict), answer.final_verdict, answer.confidence_adjustment, answer.auditor_reasoning
    )
    return pb.AuditorOutput(
        final_verdict=auditor_verdict_proto(answer.final_verdict),
        confidence_adjustment=answer.confidence_adjustment,
        auditor_reasoning=answer.auditor_reasoning,
        rejected=rejection is not None,
        rejection=rejection or "",
    )


def agent_output(agent: pb.EntailmentAgent, text: str, given) -> pb.EntailmentAgentOutput:
    """The validated output of `agent` for its input `given`, rules applied; AnswerInvalid if the model must fix it."""
    if agent == pb.ENTAILMENT_AGENT_JUDGE and not given.statements:
        return pb.EntailmentAgentOutput(judge=empty_source_judge_output(text))
    answer = parse_answer(agent, text)  # (the casts: an instance of the agent's model, ANSWERS[agent])
    if agent == pb.ENTAILMENT_AGENT_EXTRACTOR:
        return pb.EntailmentAgentOutput(extractor=extractor_output(cast(ExtractorAnswer, answer), given))
    if agent == pb.ENTAILMENT_AGENT_RELIABILITY:
        return pb.EntailmentAgentOutput(reliability=reliability_output(cast(ReliabilityAnswer, answer), given))
    if agent == pb.ENTAILMENT_AGENT_JUDGE:
        return pb.EntailmentAgentOutput(judge=judge_output(cast(JudgeAnswer, answer), given))
    return pb.EntailmentAgentOutput(auditor=auditor_output(cast(AuditorAnswer, answer), given))
