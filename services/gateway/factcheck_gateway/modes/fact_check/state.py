"""What a fact-check run carries: what its steps (steps.py, verification.py) fill in as they go,
and each checker's outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck.v1 import checker_pb2
from factcheck_gateway.knowledge.retrieval import Evidence
from factcheck_gateway.modes.fact_check.plan import RunPlan
from factcheck_gateway.runs.run import Run


@dataclass
class CheckerOutcome:
    index: int
    model: str
    response: checker_pb2.VerifyResponse | None = None
    failure: dict[str, str] | None = None
    stored: bool = False  # taken from an earlier attempt's stage row
    _verifications: list[ClaimVerification] | None = field(default=None, repr=False)

    def verifications(self) -> list[ClaimVerification]:
        """The response's verdicts as domain objects, converted once."""
        if self._verifications is None:
            assert self.response is not None  # asked only of checkers that answered
            self._verifications = [ClaimVerification.from_proto(v) for v in self.response.verifications]
        return self._verifications


@dataclass
class FactCheckRun(Run[RunPlan]):
    """A fact-check run: what its steps fill in as they go."""

    content: str = ""
    claims: list[ExtractedClaim] = field(default_factory=list)
    evidence: Evidence | None = None
    checkers: list[CheckerOutcome] = field(default_factory=list)
    consensus: list[ClaimConsensus] = field(default_factory=list)
    consensus_protos: list = field(default_factory=list)
    # How the consensus was reached (FactCheckConfig.consensus set): the weights, or the majority and why.
    consensus_weighting: Any = None
    # FactCheckConfig.threshold_evaluation_id's thresholds by model (thresholds.py), once looked up.
    checker_thresholds: Any = None
    # The investigate stage's row data (modes/fact_check/investigate), when the run investigated.
    investigation: dict[str, Any] | None = None
    citation_state: Any = None  # claim-level citations (citations.py), when the run asked for them
