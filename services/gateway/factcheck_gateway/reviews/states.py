"""The states of a pending review, and the investigation statuses and flags a review shows, as stored and as
the API spells them (investigation.proto).

A review is PENDING until a person decides it once: APPROVED, REJECTED or MODIFIED (with the status put in
force). A decision is also a stage row of its run ("review:<claim id>", order REVIEW_ORDER, role
ROLE_REVIEWER), written after the run ended, so that GetResult rebuilds it from the stage rows.
The verification loop (the fact-check mode's investigate step) stores the same names.
"""

from __future__ import annotations

from typing import cast

from factcheck.v1 import investigation_pb2

REVIEW_PENDING = "PENDING"

# A decision's stage row: after the verification loop's ("investigate", 95), before the report's (99).
REVIEW_PREFIX = "review:"
REVIEW_ORDER = 96
ROLE_REVIEWER = "reviewer"

# What an investigation found of a claim; the status a person may put in force.
CONFIRMED, REFUTED, SUPERSEDED, UNVERIFIABLE = ("CONFIRMED", "REFUTED", "SUPERSEDED", "UNVERIFIABLE")

STATUS: dict[str, investigation_pb2.InvestigationStatus] = {
    CONFIRMED: investigation_pb2.INVESTIGATION_STATUS_CONFIRMED,
    REFUTED: investigation_pb2.INVESTIGATION_STATUS_REFUTED,
    SUPERSEDED: investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED,
    UNVERIFIABLE: investigation_pb2.INVESTIGATION_STATUS_UNVERIFIABLE,
}
STATUS_NAMES = {value: name for name, value in STATUS.items()}
REVIEW_STATES = {
    "NOT_REQUIRED": investigation_pb2.REVIEW_STATE_NOT_REQUIRED,
    REVIEW_PENDING: investigation_pb2.REVIEW_STATE_PENDING,
    "APPROVED": investigation_pb2.REVIEW_STATE_APPROVED,
    "REJECTED": investigation_pb2.REVIEW_STATE_REJECTED,
    "MODIFIED": investigation_pb2.REVIEW_STATE_MODIFIED,
}


# The casts: protoc's .pyi make each enum's Value() return a plain int, where fields take the enum's type.
def flag_value(name: str) -> investigation_pb2.DubiousFlag:
    return cast(investigation_pb2.DubiousFlag, investigation_pb2.DubiousFlag.Value(f"DUBIOUS_FLAG_{name}"))


def review_state_value(name: str) -> investigation_pb2.ReviewState:
    return cast(investigation_pb2.ReviewState, investigation_pb2.ReviewState.Value(f"REVIEW_STATE_{name}"))


def status_value(name: str | None) -> investigation_pb2.InvestigationStatus:
    return STATUS.get(name or "", investigation_pb2.INVESTIGATION_STATUS_UNSPECIFIED)
