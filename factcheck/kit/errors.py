"""The errors a client of factcheck may see, in one place (AIP-193).

Services raise these; they never call `context.abort`. The one server interceptor
(`factcheck.serving.error_interceptor.ErrorInterceptor`, installed on every server) turns each into
a gRPC status whose `grpc-status-details-bin` trailer holds a `google.rpc.Status` with:

- `ErrorInfo`: a stable UPPER_SNAKE `reason` (see `Reason`), the domain "factcheck.v1" and
  string metadata;
- `BadRequest`: one field violation per bad field (INVALID_ARGUMENT);
- `RetryInfo`: how long to wait before trying again (overload, rate limits, outages);
- `ResourceInfo`: which resource was not found or already exists.

Clients read them with `grpc_status.rpc_status.from_call(error)`. Every message is
sanitised and bounded by the interceptor; messages that quote caller input quote an
`excerpt` of it.

    raise InvalidArgument("question is required", field="question")
    raise NotFound(f"No fact-check with message_id {excerpt(mid)}", reason=Reason.RESULT_NOT_FOUND,
                   resource_type="factcheck.v1.FactCheckResult", resource_name=mid)
    raise Unavailable(DATABASE_MESSAGE, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=1.0)

A `ModelError` from the model client needs no wrapping: the error interceptor
(`factcheck.serving.error_interceptor.from_model_error`) maps every model error class to its status.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, cast

import grpc
from google.protobuf import duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from factcheck.text.text_safety import excerpt

__all__ = [
    "DOMAIN",
    "MAX_MESSAGE_CHARS",
    "Aborted",
    "AlreadyExists",
    "DeadlineExceeded",
    "FailedPrecondition",
    "FieldViolation",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "Reason",
    "ResourceExhausted",
    "ServiceError",
    "Unauthenticated",
    "Unavailable",
    "check_argument",
    "error_info_of",
    "excerpt",
]

DOMAIN = "factcheck.v1"
# Status messages stay well under 1 KB, whatever they quote.
MAX_MESSAGE_CHARS = 600
MAX_VIOLATIONS = 20


class Reason:
    """Every ErrorInfo.reason a client may see (docs/api.md: "What happens when things fail")."""

    # INVALID_ARGUMENT
    REQUEST_UNDECODABLE = "REQUEST_UNDECODABLE"
    INVALID_REQUEST = "INVALID_REQUEST"
    INVALID_PAGE_TOKEN = "INVALID_PAGE_TOKEN"
    # UNAUTHENTICATED
    MISSING_OR_INVALID_TOKEN = "MISSING_OR_INVALID_TOKEN"
    # PERMISSION_DENIED
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # NOT_FOUND
    RESULT_NOT_FOUND = "RESULT_NOT_FOUND"
    DOCUMENT_NOT_FOUND = "DOCUMENT_NOT_FOUND"
    REVIEW_NOT_FOUND = "REVIEW_NOT_FOUND"
    EVALUATION_NOT_FOUND = "EVALUATION_NOT_FOUND"
    # ALREADY_EXISTS
    ALREADY_EXISTS = "ALREADY_EXISTS"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    DOCUMENT_ALREADY_EXISTS = "DOCUMENT_ALREADY_EXISTS"
    # ABORTED
    CONCURRENT_UPDATE = "CONCURRENT_UPDATE"
    # FAILED_PRECONDITION
    MODEL_NOT_CONFIGURED = "MODEL_NOT_CONFIGURED"
    MODEL_PROMPT_TOO_LONG = "MODEL_PROMPT_TOO_LONG"
    RUN_ALREADY_FINISHED = "RUN_ALREADY_FINISHED"
    REVIEW_ALREADY_DECIDED = "REVIEW_ALREADY_DECIDED"
    RUN_STILL_RUNNING = "RUN_STILL_RUNNING"
    EVALUATION_ALREADY_FINISHED = "EVALUATION_ALREADY_FINISHED"
    EVALUATION_STILL_RUNNING = "EVALUATION_STILL_RUNNING"
    NOTHING_TO_COMPARE = "NOTHING_TO_COMPARE"
    # RESOURCE_EXHAUSTED
    RUN_LIMIT_REACHED = "RUN_LIMIT_REACHED"
    TENANT_RUN_LIMIT_REACHED = "TENANT_RUN_LIMIT_REACHED"
    MODEL_RATE_LIMITED = "MODEL_RATE_LIMITED"
    # DEADLINE_EXCEEDED
    MODEL_TIMEOUT = "MODEL_TIMEOUT"
    # UNAVAILABLE
    DATABASE_UNAVAILABLE = "DATABASE_UNAVAILABLE"
    MODEL_UNAVAILABLE = "MODEL_UNAVAILABLE"
    MODEL_BAD_RESPONSE = "MODEL_BAD_RESPONSE"
    MODEL_EMPTY_RESPONSE = "MODEL_EMPTY_RESPONSE"
    MODEL_ANSWER_UNREADABLE = "MODEL_ANSWER_UNREADABLE"
    # UNIMPLEMENTED
    METHOD_NOT_IMPLEMENTED = "METHOD_NOT_IMPLEMENTED"
    # INTERNAL
    INTERNAL_ERROR = "INTERNAL_ERROR"


@dataclass(frozen=True)
class FieldViolation:
    """One bad field: its path (e.g. "mode_config.checker_models[2]") and what is wrong with it."""

    field: str
    description: str


def _duration(seconds: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(int(max(seconds, 0.0) * 1e9))
    return duration


class ServiceError(Exception):
    """A failure a client may see: a status code, a stable reason, a message for people.

    `message`: what went wrong and, where it helps, what to do (quote caller input only
    through `excerpt`). `reason`: one of `Reason` (each class has a default).
    `metadata`: string facts for ErrorInfo.metadata. `retry_after_s`: a RetryInfo delay.
    """

    code: ClassVar[grpc.StatusCode] = grpc.StatusCode.INTERNAL
    default_reason: ClassVar[str] = Reason.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        self.metadata = {str(key): str(value) for key, value in (metadata or {}).items()}
        self.retry_after_s = retry_after_s

    def extra_details(self) -> list[Message]:
        """Details beyond ErrorInfo and RetryInfo (subclasses add theirs)."""
        return []

    def details(self) -> list[Message]:
        info = error_details_pb2.ErrorInfo(
            reason=self.reason,
            domain=DOMAIN,
            metadata={excerpt(key, 64): excerpt(value, 200) for key, value in self.metadata.items()},
        )
        details: list[Message] = [info]
        if self.retry_after_s is not None:
            details.append(error_details_pb2.RetryInfo(retry_delay=_duration(self.retry_after_s)))
        return details + self.extra_details()

    def safe_message(self) -> str:
        return excerpt(self.message, MAX_MESSAGE_CHARS)

    def to_status_proto(self) -> status_pb2.Status:
        status = status_pb2.Status(code=self.code.value[0], message=self.safe_message())
        for detail in self.details():
            status.details.add().Pack(detail)
        return status

    def to_status(self) -> grpc.Status:
        """The grpc.Status to end a call with: code, sanitised message, the details trailer."""
        return rpc_status.to_status(self.to_status_proto())


class InvalidArgument(ServiceError):
    """The request is wrong whatever the server's state: fix it before sending it again.

    `field` (with the message as its description) or `violations` fill BadRequest.
    """

    code = grpc.StatusCode.INVALID_ARGUMENT
    default_reason = Reason.INVALID_REQUEST

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        violations: Iterable[FieldViolation] = (),
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message, reason=reason, metadata=metadata)
        self.violations: list[FieldViolation] = list(violations)
        if field is not None and not self.violations:
            self.violations = [FieldViolation(field, message)]

    @property
    def field(self) -> str | None:
        return self.violations[0].field if self.violations else None

    def extra_details(self) -> list[Message]:
        if not self.violations:
            return []
        return [
            error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(
                        field=excerpt(v.field, 200), description=excerpt(v.description, MAX_MESSAGE_CHARS)
                    )
                    for v in self.violations[:MAX_VIOLATIONS]
                ]
            )
        ]


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED
    default_reason = Reason.MISSING_OR_INVALID_TOKEN


class PermissionDenied(ServiceError):
    code = grpc.StatusCode.PERMISSION_DENIED
    default_reason = Reason.PERMISSION_DENIED


class _ResourceError(ServiceError):
    """A failure about one resource: ResourceInfo names it (the name as a bounded excerpt)."""

    def __init__(
        self,
        message: str,
        *,
        resource_type: str = "",
        resource_name: str = "",
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message, reason=reason, metadata=metadata)
        self.resource_type = resource_type
        self.resource_name = resource_name

    def extra_details(self) -> list[Message]:
        if not (self.resource_type or self.resource_name):
            return []
        return [
            error_details_pb2.ResourceInfo(
                resource_type=excerpt(self.resource_type, 100), resource_name=excerpt(self.resource_name, 100)
            )
        ]


class NotFound(_ResourceError):
    code = grpc.StatusCode.NOT_FOUND
    default_reason = Reason.RESULT_NOT_FOUND


class AlreadyExists(_ResourceError):
    code = grpc.StatusCode.ALREADY_EXISTS
    default_reason = Reason.ALREADY_EXISTS


class FailedPrecondition(ServiceError):
    """The system is not in a state to serve this request (e.g. a model without an endpoint):
    retrying will not help until an operator or the caller changes something."""

    code = grpc.StatusCode.FAILED_PRECONDITION
    default_reason = Reason.MODEL_NOT_CONFIGURED


class ResourceExhausted(ServiceError):
    """Overload or a rate limit; `retry_after_s` says when to try again."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    default_reason = Reason.RUN_LIMIT_REACHED


class Aborted(ServiceError):
    """A concurrent change got in the way (a deadlock, a serialization failure): retry the call."""

    code = grpc.StatusCode.ABORTED
    default_reason = Reason.CONCURRENT_UPDATE


class DeadlineExceeded(ServiceError):
    code = grpc.StatusCode.DEADLINE_EXCEEDED
    default_reason = Reason.MODEL_TIMEOUT


class Unavailable(ServiceError):
    """A dependency (the database, a model provider) is down for now: retry with backoff."""

    code = grpc.StatusCode.UNAVAILABLE
    default_reason = Reason.DATABASE_UNAVAILABLE


class Unimplemented(ServiceError):
    """A method the server registers but does not implement (a generated servicer's default)."""

    code = grpc.StatusCode.UNIMPLEMENTED
    default_reason = Reason.METHOD_NOT_IMPLEMENTED


class Internal(ServiceError):
    """A bug. The interceptor makes one of these (with a short error id) from any unexpected exception."""

    code = grpc.StatusCode.INTERNAL
    default_reason = Reason.INTERNAL_ERROR

    def __init__(self, message: str, *, error_id: str) -> None:
        super().__init__(message, metadata={"error_id": error_id})
        self.error_id = error_id

    def extra_details(self) -> list[Message]:
        return [error_details_pb2.RequestInfo(request_id=self.error_id)]


def check_argument(condition: object, field: str, message: str, *, reason: str | None = None) -> None:
    """InvalidArgument(message, field=field) unless `condition` holds."""
    if not condition:
        raise InvalidArgument(message, field=field, reason=reason)


# The longest question any service takes: the gateway's limit, and the checker's and reporter's.
MAX_QUESTION_CHARS = 20_000


def check_question(question: str) -> None:
    """`question` is given and at most MAX_QUESTION_CHARS long (the council check and synthesis requests)."""
    check_argument(question.strip(), "question", "question is required")
    check_argument(
        len(question) <= MAX_QUESTION_CHARS, "question", f"question must be at most {MAX_QUESTION_CHARS} characters"
    )


def check_ids(field: str, ids: list[str], noun: str) -> None:
    """Every item of `field` has an id, and no id repeats ("every passage needs an id", "passage ids must be unique")."""
    check_argument(all(ids), field, f"every {noun} needs an id")
    check_argument(len(set(ids)) == len(ids), field, f"{noun} ids must be unique")


def answer_unreadable(model: str, cause: str) -> ServiceError:
    """The status of a model answer that came back but cannot be read in the role's format (or repeats
    its prompt): the stage failed, which is not the same as a well-formed empty answer."""
    return Unavailable(
        f"model {excerpt(model, 100)}: {excerpt(cause, 400)}",
        reason=Reason.MODEL_ANSWER_UNREADABLE,
        metadata={"model": model},
    )


def error_info_of(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo a failed call carried (e.g. a downstream service's reason and model), if any."""
    try:
        status = rpc_status.from_call(cast(grpc.Call, error))  # (a failed call's RpcError is also the Call)
    except ValueError:  # trailers that contradict the status: not ours
        return None
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Is(info.DESCRIPTOR) and detail.Unpack(info):
            return info
    return None
