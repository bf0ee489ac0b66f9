"""The gateway's database: the run's tables (messages, its events and its deliberation_stages rows, one per
completed stage), the stage store that writes and reads them, paging, the engine and the migrations' runner.

Features keep their own tables in their packages (factcheck_gateway/schema.py gathers them) and modes name
their own stage rows; the store imports neither.
"""

from factcheck_gateway.store.migrate import upgrade_database
from factcheck_gateway.store.models import (
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_PARTIAL,
    STATUS_RUNNING,
    STATUSES,
)
from factcheck_gateway.store.records import MessageRecord, StageRecord
from factcheck_gateway.store.stage_store import ANY_TENANT, StageStore

__all__ = [
    "ANY_TENANT",
    "STATUSES",
    "STATUS_CANCELLED",
    "STATUS_COMPLETE",
    "STATUS_FAILED",
    "STATUS_PARTIAL",
    "STATUS_RUNNING",
    "MessageRecord",
    "StageRecord",
    "StageStore",
    "upgrade_database",
]
