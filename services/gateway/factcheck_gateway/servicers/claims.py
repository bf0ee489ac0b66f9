"""ClaimsService: the stored claims of runs with citations, across runs, for the caller's tenant.

Its own service (citations.proto) rather than more RPCs on FactCheckService: it reads other
tables, pages other rows and evolves with the citations option, and it keeps the gateway's
run service untouched. Another tenant's claim is NOT_FOUND exactly as an unknown one.
"""

from __future__ import annotations

from datetime import UTC, datetime

import grpc

from factcheck.core.domain import is_known_enum
from factcheck.kit.errors import InvalidArgument, NotFound, check_argument
from factcheck.kit.security.tenants import caller_tenant
from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2
from factcheck_gateway.claims.claim_store import ClaimFilter, ClaimsStore
from factcheck_gateway.runs.database_calls import call_store, page_size, resource_id

CLAIMS_UNAVAILABLE = "The claims store is unavailable. Try again shortly."
TIER_NAMES = {
    citations_pb2.SUPPORT_TIER_SUPPORTED: "supported",
    citations_pb2.SUPPORT_TIER_PARTIAL: "partial",
    citations_pb2.SUPPORT_TIER_UNSUPPORTED: "unsupported",
    citations_pb2.SUPPORT_TIER_CONTRADICTED: "contradicted",
}

LEVEL_NAMES = {
    citations_pb2.CONFIDENCE_LEVEL_HIGH: "high",
    citations_pb2.CONFIDENCE_LEVEL_MEDIUM: "medium",
    citations_pb2.CONFIDENCE_LEVEL_LOW: "low",
}


class ClaimsService(citations_pb2_grpc.ClaimsServiceServicer):
    def __init__(self, store: ClaimsStore) -> None:
        self._store = store

    async def ListClaims(
        self, request: citations_pb2.ListClaimsRequest, context: grpc.aio.ServicerContext
    ) -> citations_pb2.ListClaimsResponse:
        claim_filter = claim_filter_of(request)
        records, token = await call_store(
            CLAIMS_UNAVAILABLE,
            self._store.list_claims,
            caller_tenant(),
            claim_filter,
            page_size(request.page_size),
            request.page_token or None,
        )
        return citations_pb2.ListClaimsResponse(claims=records, next_page_token=token or "")

    async def GetClaim(
        self, request: citations_pb2.GetClaimRequest, context: grpc.aio.ServicerContext
    ) -> citations_pb2.GetClaimResponse:
        claim_id = resource_id("claim_id", request.claim_id)
        record = await call_store(CLAIMS_UNAVAILABLE, self._store.get_claim, caller_tenant(), claim_id)
        if record is None:
            raise NotFound(f"No claim with id {claim_id!r}.", resource_type="claim", resource_name=claim_id)
        return citations_pb2.GetClaimResponse(claim=record)


def claim_filter_of(request: citations_pb2.ListClaimsRequest) -> ClaimFilter:
    """The request's filters, checked (unknown enum numbers and inverted time ranges are INVALID_ARGUMENT)."""
    support = None
    if request.support:
        check_argument(request.support in TIER_NAMES, "support", "support must be a SupportTier value")
        support = TIER_NAMES[request.support]
    spec_verdict = None
    if request.spec_verdict:
        check_argument(
            is_known_enum(common_pb2.Verdict, request.spec_verdict),
            "spec_verdict",
            "spec_verdict must be a Verdict value",
        )
        spec_verdict = common_pb2.Verdict.Name(request.spec_verdict).removeprefix("VERDICT_")
    claim_type = None
    if request.claim_type:
        names = {
            citations_pb2.CITATION_CLAIM_TYPE_GENERAL: "general",
            citations_pb2.CITATION_CLAIM_TYPE_NUMERIC: "numeric",
        }
        check_argument(request.claim_type in names, "claim_type", "claim_type must be GENERAL or NUMERIC")
        claim_type = names[request.claim_type]
    confidence_level = None
    if request.confidence_level:
        check_argument(
            request.confidence_level in LEVEL_NAMES,
            "confidence_level",
            "confidence_level must be CONFIDENCE_LEVEL_HIGH, CONFIDENCE_LEVEL_MEDIUM or CONFIDENCE_LEVEL_LOW "
            "(or unset for any level)",
        )
        confidence_level = LEVEL_NAMES[request.confidence_level]
    after = _moment(request, "created_after")
    before = _moment(request, "created_before")
    if after is not None and before is not None:
        check_argument(after < before, "created_before", "created_before must be later than created_after")
    return ClaimFilter(
        message_id=resource_id("message_id", request.message_id) if request.HasField("message_id") else None,
        support=support,
        spec_verdict=spec_verdict,
        claim_type=claim_type,
        confidence_level=confidence_level,
        numeric=request.numeric if request.HasField("numeric") else None,
        warning=request.warning if request.HasField("warning") else None,
        source_id=resource_id("source_id", request.source_id) if request.HasField("source_id") else None,
        created_after=after,
        created_before=before,
    )


def _moment(request: citations_pb2.ListClaimsRequest, field: str) -> datetime | None:
    """A timestamp filter as an aware datetime; INVALID_ARGUMENT outside the Timestamp range (years 1-9999)."""
    if not request.HasField(field):
        return None
    try:
        return getattr(request, field).ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        raise InvalidArgument(f"{field} must be a valid timestamp between years 1 and 9999", field=field) from None
