"""UsageService: what the caller's tenant spent (GetUsage), and purging its verification cache."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import grpc

from factcheck.kit.errors import InvalidArgument, check_argument
from factcheck.kit.security.tenants import caller_tenant
from factcheck.kit.settings import Settings
from factcheck.v1 import usage_pb2, usage_pb2_grpc
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.runs.database_calls import call_store
from factcheck_gateway.verification_cache.entries import CacheEntries

DEFAULT_RANGE = timedelta(days=30)
MAX_RANGE = timedelta(days=366)
USAGE_UNAVAILABLE = "The usage database is unavailable. Try again shortly."
GROUP_KEYS = {
    usage_pb2.USAGE_GROUP_BY_MODEL: "model",
    usage_pb2.USAGE_GROUP_BY_STAGE: "stage",
    usage_pb2.USAGE_GROUP_BY_MODE: "mode",
    usage_pb2.USAGE_GROUP_BY_DAY: "day",
}


def _moment(request: usage_pb2.GetUsageRequest, field: str) -> datetime:
    try:
        return getattr(request, field).ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} is not a valid timestamp (years 1 to 9999)", field=field) from None


def usage_range(request: usage_pb2.GetUsageRequest, now: datetime) -> tuple[datetime, datetime]:
    end = _moment(request, "end_time") if request.HasField("end_time") else now
    try:
        start = _moment(request, "start_time") if request.HasField("start_time") else end - DEFAULT_RANGE
    except OverflowError:  # end_time near year 1
        raise InvalidArgument("end_time is too early", field="end_time") from None
    check_argument(start < end, "start_time", "start_time must be before end_time")
    check_argument(end - start <= MAX_RANGE, "start_time", f"the time range may span at most {MAX_RANGE.days} days")
    return start, end


def group_keys(request: usage_pb2.GetUsageRequest) -> tuple[str, ...]:
    keys = []
    for index, value in enumerate(request.group_by):
        check_argument(value in GROUP_KEYS, f"group_by[{index}]", "group_by must be MODEL, STAGE, MODE or DAY")
        check_argument(GROUP_KEYS[value] not in keys, f"group_by[{index}]", "group_by lists a key twice")
        keys.append(GROUP_KEYS[value])
    return tuple(keys)


class UsageService(usage_pb2_grpc.UsageServiceServicer):
    def __init__(self, ledger: LedgerStore, settings: Settings) -> None:
        self._ledger = ledger
        self._settings = settings

    async def GetUsage(
        self, request: usage_pb2.GetUsageRequest, context: grpc.aio.ServicerContext
    ) -> usage_pb2.GetUsageResponse:
        start, end = usage_range(request, datetime.now(UTC))
        keys = group_keys(request)
        groups, total = await call_store(USAGE_UNAVAILABLE, self._ledger.usage, caller_tenant(), start, end, keys)
        return usage_pb2.GetUsageResponse(
            rows=[usage_pb2.UsageRow(**group.keys, usage=group.totals.to_proto(), runs=group.runs) for group in groups],
            total=total.to_proto(),
        )

    async def PurgeCache(
        self, request: usage_pb2.PurgeCacheRequest, context: grpc.aio.ServicerContext
    ) -> usage_pb2.PurgeCacheResponse:
        older_than = None
        if request.expired_only:
            older_than = datetime.now(UTC) - timedelta(seconds=self._settings.cache_ttl_s)
        tenant = caller_tenant()
        purged = await call_store(
            USAGE_UNAVAILABLE, lambda: CacheEntries(self._ledger.engine).purge(tenant, older_than=older_than)
        )
        return usage_pb2.PurgeCacheResponse(purged=purged)
