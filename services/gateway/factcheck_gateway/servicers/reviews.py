"""ReviewService: list and decide the verification loop's pending reviews, within the caller's tenant.

Another tenant's reviews are NOT_FOUND exactly as unknown ones. A decision needs a reason;
MODIFY also needs the status to put in force. A run still running cannot be decided yet (its
report is being written): FAILED_PRECONDITION, try again once it has finished.
"""

from __future__ import annotations

import grpc

from factcheck.kit.errors import FailedPrecondition, NotFound, Reason, check_argument
from factcheck.kit.security.tenants import caller_tenant
from factcheck.text.text_safety import excerpt
from factcheck.v1 import factcheck_pb2, investigation_pb2, investigation_pb2_grpc
from factcheck_gateway.reviews.review_store import (
    AlreadyDecided,
    ReviewNotFound,
    ReviewRecord,
    ReviewStore,
    RunStillRunning,
)
from factcheck_gateway.reviews.states import STATUS_NAMES, flag_value, review_state_value, status_value
from factcheck_gateway.runs.database_calls import call_store, page_size, resource_id
from factcheck_gateway.stored_results import timestamp

STORE_UNAVAILABLE = "The review store is unavailable. Try again shortly."
MAX_REASON_CHARS = 2_000
DECISION_STATES = {
    investigation_pb2.REVIEW_DECISION_APPROVE: "APPROVED",
    investigation_pb2.REVIEW_DECISION_REJECT: "REJECTED",
    investigation_pb2.REVIEW_DECISION_MODIFY: "MODIFIED",
}


class ReviewService(investigation_pb2_grpc.ReviewServiceServicer):
    def __init__(self, store: ReviewStore, notify=None) -> None:
        self._store = store
        self._notify = notify  # wakes this gateway's watchers of the run (EventHub.notify)

    async def ListReviews(
        self, request: investigation_pb2.ListReviewsRequest, context: grpc.aio.ServicerContext
    ) -> investigation_pb2.ListReviewsResponse:
        message_id = resource_id("message_id", request.message_id) if request.message_id else None
        reviews, token = await call_store(
            STORE_UNAVAILABLE,
            self._store.list_reviews,
            caller_tenant(),
            message_id=message_id,
            include_decided=request.include_decided,
            page_size=page_size(request.page_size),
            page_token=request.page_token or None,
        )
        return investigation_pb2.ListReviewsResponse(
            reviews=[review_proto(r) for r in reviews], next_page_token=token or ""
        )

    async def DecideReview(
        self, request: investigation_pb2.DecideReviewRequest, context: grpc.aio.ServicerContext
    ) -> investigation_pb2.DecideReviewResponse:
        message_id = resource_id("message_id", request.message_id)
        claim_id = resource_id("claim_id", request.claim_id)
        state = DECISION_STATES.get(request.decision)
        check_argument(state is not None, "decision", "decision must be APPROVE, REJECT or MODIFY")
        reason = request.reason.strip()
        check_argument(reason, "reason", "reason is required")
        check_argument(
            len(reason) <= MAX_REASON_CHARS, "reason", f"reason must be at most {MAX_REASON_CHARS} characters"
        )
        check_argument("\x00" not in reason, "reason", "reason must not contain NUL characters")
        status = None
        if state == "MODIFIED":
            status = STATUS_NAMES.get(request.status)
            check_argument(
                status is not None, "status", "status must be CONFIRMED, REFUTED, SUPERSEDED or UNVERIFIABLE"
            )
        else:
            check_argument(
                request.status == investigation_pb2.INVESTIGATION_STATUS_UNSPECIFIED,
                "status",
                "status is only for MODIFY",
            )
        try:
            decided = await call_store(
                STORE_UNAVAILABLE,
                self._store.decide,
                caller_tenant(),
                message_id,
                claim_id,
                state=state,
                status=status,
                reason=reason,
                build_event=_event_bytes,
            )
        except ReviewNotFound:
            raise NotFound(
                f"No pending review for claim '{excerpt(claim_id)}' of run '{excerpt(message_id)}'",
                reason=Reason.REVIEW_NOT_FOUND,
                resource_type="factcheck.v1.Review",
                resource_name=f"{message_id}/{claim_id}",
            ) from None
        except AlreadyDecided as error:
            raise FailedPrecondition(
                f"The review was already decided ({error.record.state})", reason=Reason.REVIEW_ALREADY_DECIDED
            ) from None
        except RunStillRunning:
            raise FailedPrecondition(
                "The run is still running; decide its reviews once it has finished", reason=Reason.RUN_STILL_RUNNING
            ) from None
        if self._notify is not None:
            self._notify(message_id)
        return investigation_pb2.DecideReviewResponse(review=review_proto(decided))


def _event_bytes(seq: int, decided: ReviewRecord) -> bytes:
    event = factcheck_pb2.FactCheckEvent(message_id=decided.message_id, seq=seq)
    assert decided.decided_at is not None  # (a decided review's)
    event.timestamp.FromDatetime(decided.decided_at)
    event.review_decided.CopyFrom(
        investigation_pb2.ReviewDecidedPayload(
            claim_id=decided.claim_id,
            state=review_state_value(decided.state),
            status=status_value(_in_force(decided)),
            reason=decided.reason or "",
        )
    )
    return event.SerializeToString()


def _in_force(record: ReviewRecord) -> str | None:
    if record.state == "APPROVED":
        return record.proposed_status
    if record.state == "MODIFIED":
        return record.status
    return None


def review_proto(record: ReviewRecord) -> investigation_pb2.Review:
    review = investigation_pb2.Review(
        message_id=record.message_id,
        claim_id=record.claim_id,
        claim=record.claim,
        origin_flags=[flag_value(f) for f in record.origin_flags],
        proposed_status=status_value(record.proposed_status),
        confidence=record.confidence,
        reasoning=record.reasoning,
        state=review_state_value(record.state),
        status=status_value(_in_force(record)),
        created_at=timestamp(record.created_at),
    )
    if record.reason:
        review.reason = record.reason
    if record.decided_at is not None:
        review.decided_at.CopyFrom(timestamp(record.decided_at))
    return review
