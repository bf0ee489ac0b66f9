"""What a council run carries: its answers by label, and what its steps (steps.py, checks.py) fill in as they go."""

from __future__ import annotations

from dataclasses import dataclass, field

from factcheck.v1 import council_pb2
from factcheck_gateway.knowledge.retrieval import Evidence
from factcheck_gateway.modes.council.plan import CouncilPlan
from factcheck_gateway.runs.run import Run


@dataclass
class Answer:
    """One council answer (or supplied response), by its position in the request."""

    index: int
    label: str
    author: str
    text: str = ""
    response_time_ms: int = 0
    supplied: bool = False
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.error is None


@dataclass
class CouncilRun(Run[CouncilPlan]):
    """A council run: what its steps fill in as they go."""

    answers: list[Answer] = field(default_factory=list)
    evidence: Evidence | None = None
    checks: list[council_pb2.CouncilCheck] = field(default_factory=list)
    excluded: list[council_pb2.CouncilCheckFailedPayload] = field(default_factory=list)
    aggregate: council_pb2.CouncilAggregate | None = None
    synthesis: str | None = None

    @property
    def council_plan(self) -> CouncilPlan:
        return self.plan

    def answered(self) -> list[Answer]:
        """The answers the fact-checkers see, in label order."""
        return sorted((a for a in self.answers if a.answered), key=lambda a: a.label)
