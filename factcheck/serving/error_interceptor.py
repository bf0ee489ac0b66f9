"""The one server interceptor that ends every failed call with a structured status (AIP-193).

Installed innermost on every factcheck server (`factcheck.serving.server.new_server`). For each call:

1. the guards run, in the call's own task (bearer-token authentication on the gateway, which
   also sets the caller's tenant for the call): a refused caller gets its status,
   UNAUTHENTICATED, before a byte of its request is looked at;
2. the request is decoded here, not by grpc (the handler's deserializer is replaced by the
   identity): bytes that are not a valid message (bad wire format, invalid UTF-8 in a string
   field) get INVALID_ARGUMENT "The request could not be decoded as <type>", no traceback;
3. the behaviour runs; what it raises becomes the call's status:
   - a `ServiceError` (factcheck.kit.errors): its code, sanitised message and details;
   - a `ModelError` (factcheck.models.errors): mapped by `errors.from_model_error`;
   - `NotImplementedError` (what a generated servicer's method raises when a server does not
     implement it): UNIMPLEMENTED, logged quietly, as grpc answers a method it does not know;
   - anything else is a bug: INTERNAL with a short error id, logged once with its
     traceback under that id. Never UNKNOWN, never UNAVAILABLE.

Every message sent is sanitised and bounded, so a status can always be encoded and sent: the
behaviour's own `context.abort` and `context.set_details` too (`SanitisingContext`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import grpc

from factcheck.kit.errors import (
    MAX_MESSAGE_CHARS,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    Reason,
    ResourceExhausted,
    ServiceError,
    Unavailable,
    Unimplemented,
)
from factcheck.kit.grpc_handlers import map_requests, wrap_handler
from factcheck.models import calls as model_calls
from factcheck.models.errors import (
    ModelError,
    ModelMalformedResponseError,
    ModelNotConfiguredError,
    ModelPromptTooLongError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.text.text_safety import excerpt

log = logging.getLogger("factcheck.kit.errors")


# How long a caller should wait before trying again after a provider failure.
MODEL_RETRY_AFTER_S = 1.0


def from_model_error(error: ModelError) -> ServiceError:
    """The status of a failed model call (the one mapping from model errors to statuses)."""
    message = f"model {excerpt(error.model, 100)}: {excerpt(error.message, 400)}"
    metadata = {"model": error.model}
    if isinstance(error, ModelTimeoutError):
        return DeadlineExceeded(message, reason=Reason.MODEL_TIMEOUT, metadata=metadata)
    if isinstance(error, ModelRateLimitedError):
        retry = error.retry_after_s if error.retry_after_s is not None else MODEL_RETRY_AFTER_S
        return ResourceExhausted(message, reason=Reason.MODEL_RATE_LIMITED, metadata=metadata, retry_after_s=retry)
    if isinstance(error, ModelNotConfiguredError):
        return FailedPrecondition(message, reason=Reason.MODEL_NOT_CONFIGURED, metadata=metadata)
    if isinstance(error, ModelPromptTooLongError):
        return FailedPrecondition(message, reason=Reason.MODEL_PROMPT_TOO_LONG, metadata=metadata)
    if isinstance(error, ModelMalformedResponseError):
        return Unavailable(
            message, reason=Reason.MODEL_BAD_RESPONSE, metadata=metadata, retry_after_s=MODEL_RETRY_AFTER_S
        )
    if isinstance(error, ModelProviderError) and error.status_code is not None:
        metadata["http_status"] = str(error.status_code)
    return Unavailable(message, reason=Reason.MODEL_UNAVAILABLE, metadata=metadata, retry_after_s=MODEL_RETRY_AFTER_S)


# A guard looks at a call's method and metadata and raises a ServiceError to refuse it. It runs
# in the call's task, so context variables it sets (the caller's tenant) hold for the call.
Guard = Callable[[grpc.HandlerCallDetails], None]

# Statuses that say the caller's request was at fault: logged quietly.
_CALLER_FAULTS = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.UNIMPLEMENTED,
}


def request_type_name(deserializer: Callable[[bytes], Any] | None, method: str) -> str:
    """The full protobuf name a deserializer decodes (e.g. "factcheck.v1.GetResultRequest")."""
    message_class = getattr(deserializer, "__self__", None)
    descriptor = getattr(message_class, "DESCRIPTOR", None)
    name = getattr(descriptor, "full_name", None)
    return name if isinstance(name, str) else f"the request of {method}"


def new_error_id() -> str:
    return secrets.token_hex(4)


def as_service_error(error: Exception, method: str = "") -> ServiceError | None:
    """The ServiceError an exception stands for, or None for a bug."""
    if isinstance(error, ServiceError):
        return error
    if isinstance(error, ModelError):
        return from_model_error(error)
    if isinstance(error, NotImplementedError):
        return Unimplemented(f"{method or 'This method'} is not implemented by this server.")
    return None


# gRPC's retry policy (factcheck/kit/channels.py) retries UNAVAILABLE to reach another replica when one is
# gone. An UNAVAILABLE the service itself answered (a model provider that stayed down through the
# model client's own retries) must not be retried again: a negative pushback tells the client so.
NO_RETRY = (("grpc-retry-pushback-ms", "-1"),)


async def abort_with(context: grpc.aio.ServicerContext, error: ServiceError) -> None:
    """End the call with `error`'s status (raises grpc.aio.AbortError, as context.abort does)."""
    status = error.to_status()
    # The model calls the RPC made before it failed go with the status: the gateway ledgers them too.
    await context.abort(status.code, status.details, (*status.trailing_metadata, *NO_RETRY, *model_calls.trailer()))


class SanitisingContext:
    """The servicer context a behaviour sees: `abort` and `set_details` send sanitised, bounded
    messages. (grpc marks a call aborted before it encodes the message, so a message that
    cannot be encoded, e.g. with a lone surrogate, would leave the call without a status.)"""

    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata=()) -> None:
        trailing_metadata = (*trailing_metadata, *model_calls.trailer())
        await self._context.abort(code, excerpt(details or "", MAX_MESSAGE_CHARS), trailing_metadata)

    def set_details(self, details: str) -> None:
        self._context.set_details(excerpt(details or "", MAX_MESSAGE_CHARS))


def _log_status(method: str, error: ServiceError) -> None:
    level = logging.INFO if error.code in _CALLER_FAULTS else logging.WARNING
    log.log(level, "%s: %s %s: %s", method, error.code.name, error.reason, error.safe_message())


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Guards, decoding and the error-to-status mapping of every call (see the module docstring)."""

    def __init__(self, guards: Sequence[Guard] = ()) -> None:
        self._guards = list(guards)

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None  # an unknown method: grpc answers UNIMPLEMENTED
        method = handler_call_details.method
        guards = self._guards
        deserializer = handler.request_deserializer
        undecodable = f"The request could not be decoded as {request_type_name(deserializer, method)}"

        def decode(raw: Any) -> Any:
            if deserializer is None or not isinstance(raw, bytes):
                return raw
            try:
                return deserializer(raw)
            except Exception:  # DecodeError, invalid UTF-8, nesting too deep: all the caller's bytes
                raise InvalidArgument(undecodable, reason=Reason.REQUEST_UNDECODABLE) from None

        @asynccontextmanager
        async def guarded(request, context):
            try:
                for guard in guards:
                    guard(handler_call_details)
                if handler.request_streaming:
                    yield map_requests(request, decode)
                else:
                    yield decode(request)
            except grpc.aio.AbortError:
                raise  # the behaviour ended the call itself
            except Exception as exc:
                error = as_service_error(exc, method)
                if error is None:
                    error_id = new_error_id()
                    log.error("%s: internal error %s: %s", method, error_id, excerpt(repr(exc), 300), exc_info=exc)
                    error = Internal(
                        f"Internal error {error_id}: the service failed unexpectedly. "
                        "The service log has the details under this id.",
                        error_id=error_id,
                    )
                else:
                    _log_status(method, error)
                await abort_with(context, error)
                raise  # unreachable: abort raises AbortError

        return wrap_handler(handler, guarded, request_deserializer=None, wrap_context=SanitisingContext)
