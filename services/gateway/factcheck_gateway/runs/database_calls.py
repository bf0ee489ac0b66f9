"""Database work behind the gateway's unary RPCs: paging rules, id checks, and which store
failures are outages.

A page token that was not made for the listing it is used with (forged, altered, expired, another
tenant's, RPC's or filters': store/paging.py) is the caller's INVALID_ARGUMENT (AIP-158), for every
listing the same way.

Only a real outage (the database unreachable, a connection lost, the pool exhausted, SQLite
locked) is UNAVAILABLE. A conflict with a concurrent call (a PostgreSQL deadlock or
serialization failure, a unique key another call inserted first) is retried a few times,
then ABORTED. A value the database cannot store is the caller's INVALID_ARGUMENT; anything
else is a bug and reaches the error interceptor as INTERNAL.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.exc import DataError, DisconnectionError, IntegrityError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from factcheck.kit.errors import Aborted, InvalidArgument, Reason, Unavailable, check_argument
from factcheck.text.text_safety import excerpt, has_unsafe_characters
from factcheck_gateway.store.paging import InvalidPageToken

log = logging.getLogger("factcheck.gateway")

DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 20, 100
MAX_ID_CHARS = 255
# How long a caller should wait after an outage before trying again.
DATABASE_RETRY_AFTER_S = 1.0
OUTAGES = (OperationalError, InterfaceError, DisconnectionError, PoolTimeoutError, ConnectionError)
# A store call that lost a race with another is run again (each is one transaction, rolled back).
CONFLICT_RETRIES, CONFLICT_DELAY_S = 3, 0.02
CONFLICT_MESSAGE = "A concurrent request changed the same data; try again."


def page_size(requested: int) -> int:
    """The page size to use: 0 means the default, larger than the maximum is capped, negative is refused."""
    check_argument(requested >= 0, "page_size", f"page_size must not be negative (got {requested})")
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def resource_id(field: str, value: str) -> str:
    """A required id from a request: present, at most 255 characters, one printable line."""
    check_argument(value.strip(), field, f"{field} is required")
    check_argument(len(value) <= MAX_ID_CHARS, field, f"{field} must be at most {MAX_ID_CHARS} characters")
    check_argument(
        not has_unsafe_characters(value), field, f"{field} must not contain control characters or line breaks"
    )
    return value


def _is_conflict(error: Exception) -> bool:
    """A PostgreSQL transaction rollback (SQLSTATE class 40: deadlock, serialization failure)."""
    return str(getattr(getattr(error, "orig", None), "sqlstate", "") or "").startswith("40")


async def call_store(unavailable: str, function, *args, **kwargs):
    """Run a store call in a worker thread. An outage → UNAVAILABLE with `unavailable` (the cause
    is logged, not shown); a lost race → retried, then ABORTED; a value the database refuses →
    INVALID_ARGUMENT; the rest propagates. `function` must be safe to run again after its
    transaction was rolled back (every store call is)."""
    name = getattr(function, "__name__", "store call")
    for attempt in range(CONFLICT_RETRIES + 1):
        try:
            return await asyncio.to_thread(function, *args, **kwargs)
        except (IntegrityError, *OUTAGES) as error:
            conflict = isinstance(error, IntegrityError) or _is_conflict(error)
            if conflict and attempt < CONFLICT_RETRIES:
                log.info("%s lost a race with a concurrent call, retrying: %s", name, excerpt(str(error), 200))
                await asyncio.sleep(CONFLICT_DELAY_S * (attempt + 1))
                continue
            if isinstance(error, IntegrityError):
                raise  # the same constraint again and again: not a race but a bug
            if conflict:
                raise Aborted(CONFLICT_MESSAGE, retry_after_s=CONFLICT_DELAY_S) from error
            log.warning("%s failed, the database is unavailable: %s", name, excerpt(str(error), 300))
            raise Unavailable(
                unavailable, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=DATABASE_RETRY_AFTER_S
            ) from error
        except InvalidPageToken as error:
            raise InvalidArgument(error.message, field="page_token", reason=Reason.INVALID_PAGE_TOKEN) from None
        except DataError as error:
            log.info("%s refused a value: %s", name, excerpt(str(error.orig), 200))
            raise InvalidArgument(
                "The request holds a value the database cannot store (e.g. a NUL character)"
            ) from error
    raise AssertionError("unreachable")
