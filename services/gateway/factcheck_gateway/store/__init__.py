"""The gateway's database: messages and their deliberation_stages rows (one per completed stage)."""

from factcheck_gateway.store.migrate import upgrade_database
from factcheck_gateway.store.models import (
    ROLE_CHECKER,
    ROLE_EXTRACTOR,
    ROLE_GENERATOR,
    ROLE_REPORTER,
    ROLE_RETRIEVER,
    STAGE_EXTRACT,
    STAGE_GENERATE,
    STAGE_REPORT,
    STAGE_RETRIEVE,
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_PARTIAL,
    STATUS_RUNNING,
    STATUSES,
    VERIFY_PREFIX,
    verify_stage,
)
from factcheck_gateway.store.records import MessageRecord, StageRecord
from factcheck_gateway.store.stage_store import ANY_TENANT, StageStore

__all__ = [
    "ANY_TENANT",
    "ROLE_CHECKER",
    "ROLE_EXTRACTOR",
    "ROLE_GENERATOR",
    "ROLE_REPORTER",
    "ROLE_RETRIEVER",
    "STAGE_EXTRACT",
    "STAGE_GENERATE",
    "STAGE_REPORT",
    "STAGE_RETRIEVE",
    "STATUSES",
    "STATUS_CANCELLED",
    "STATUS_COMPLETE",
    "STATUS_FAILED",
    "STATUS_PARTIAL",
    "STATUS_RUNNING",
    "VERIFY_PREFIX",
    "MessageRecord",
    "StageRecord",
    "StageStore",
    "upgrade_database",
    "verify_stage",
]
