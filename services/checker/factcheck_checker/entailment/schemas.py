"""The four agents' answers exactly as the entailment workflow defines them: pydantic models with its
fields and enums, nothing more (extra keys, missing keys, wrong types and out-of-range confidences are
invalid), and the JSON schema of each for structured outputs (`response_format`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factcheck.v1 import entailment_pb2 as pb


class _Strict(BaseModel):
    # strict: 90.0 is not a confidence and "1" is not an id; forbid: no field the schema does not have.
    model_config = ConfigDict(extra="forbid", strict=True)


class Statement(_Strict):
    id: int
    text: str


class ExtractorAnswer(_Strict):
    agent: Literal["EXTRACTOR"]
    statements: list[Statement]


class ReliabilityAnswer(_Strict):
    agent: Literal["RELIABILITY"]
    source_type: str
    reliability: Literal["HIGH", "MEDIUM", "LOW"]
    confidence: int = Field(ge=0, le=100)


class JudgeAnswer(_Strict):
    agent: Literal["ENTAILMENT_JUDGE"]
    verdict: Literal["SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO"]
    confidence: int = Field(ge=0, le=100)
    reasoning: list[str]


class AuditorAnswer(_Strict):
    agent: Literal["ADVERSARIAL_AUDITOR"]
    final_verdict: Literal["SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO", "UNCHANGED"]
    # The -20..0 range is a rule, not a schema constraint: an auditor outside it is rejected and
    # noted (never repaired into compliance), so the record shows what it tried.
    confidence_adjustment: int
    auditor_reasoning: list[str]


ANSWERS: dict[int, type[_Strict]] = {
    pb.ENTAILMENT_AGENT_EXTRACTOR: ExtractorAnswer,
    pb.ENTAILMENT_AGENT_RELIABILITY: ReliabilityAnswer,
    pb.ENTAILMENT_AGENT_JUDGE: JudgeAnswer,
    pb.ENTAILMENT_AGENT_AUDITOR: AuditorAnswer,
}
_SCHEMA_NAMES = {
    pb.ENTAILMENT_AGENT_EXTRACTOR: "entailment_extractor",
    pb.ENTAILMENT_AGENT_RELIABILITY: "entailment_reliability",
    pb.ENTAILMENT_AGENT_JUDGE: "entailment_judge",
    pb.ENTAILMENT_AGENT_AUDITOR: "entailment_auditor",
}


def response_format(agent: pb.EntailmentAgent) -> dict[str, Any]:
    """The OpenAI structured-outputs `response_format` asking for the agent's schema."""
    schema = ANSWERS[agent].model_json_schema()
    return {"type": "json_schema", "json_schema": {"name": _SCHEMA_NAMES[agent], "strict": True, "schema": schema}}
