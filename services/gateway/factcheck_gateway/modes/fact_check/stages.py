"""Fact-check mode's stage rows: their names, orders and roles (documented in docs/modes.md).

Orders: generate 0, extract 1, retrieve 5, verify_0.. 10-94, the consensus row 90 (consensus/weights.py:
STAGE_CONSENSUS), investigate 95, a person's review decisions 96 (reviews/states.py), report 99. Council
and entailment modes use 100 and above. The retrieval row's role is shared by every mode that retrieves
(runs/evidence_stage.py).
"""

from __future__ import annotations

from factcheck_gateway.runs.evidence_stage import ROLE_RETRIEVER

STAGE_GENERATE = ("generate", 0)
STAGE_EXTRACT = ("extract", 1)
# Evidence retrieval sits between extraction and verification.
STAGE_RETRIEVE = ("retrieve", 5)
# The verification loop: after the checkers, before the report.
STAGE_INVESTIGATE = ("investigate", 95)
STAGE_REPORT = ("report", 99)
VERIFY_PREFIX = "verify_"
VERIFY_BASE_ORDER = 10

ROLE_GENERATOR = "generator"
ROLE_EXTRACTOR = "extractor"
ROLE_CHECKER = "checker"
ROLE_REPORTER = "reporter"
ROLE_INVESTIGATOR = "investigator"

__all__ = [
    "ROLE_CHECKER",
    "ROLE_EXTRACTOR",
    "ROLE_GENERATOR",
    "ROLE_INVESTIGATOR",
    "ROLE_REPORTER",
    "ROLE_RETRIEVER",
    "STAGE_EXTRACT",
    "STAGE_GENERATE",
    "STAGE_INVESTIGATE",
    "STAGE_REPORT",
    "STAGE_RETRIEVE",
    "VERIFY_BASE_ORDER",
    "VERIFY_PREFIX",
    "verify_stage",
]


def verify_stage(checker_index: int) -> tuple[str, int]:
    """Stage type and order of checker `checker_index`: ("verify_0", 10), ("verify_1", 11), ..."""
    if not 0 <= checker_index < STAGE_REPORT[1] - VERIFY_BASE_ORDER:
        raise ValueError(f"checker index out of range: {checker_index}")
    return f"{VERIFY_PREFIX}{checker_index}", VERIFY_BASE_ORDER + checker_index
