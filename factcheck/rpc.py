"""Helpers the stateless services share: call a model within the RPC's deadline, reject bad input."""

from __future__ import annotations

import logging

import grpc

from factcheck.domain import Completion
from factcheck.models.client import ModelClient
from factcheck.models.errors import (
    ModelError,
    ModelNotConfiguredError,
    ModelRateLimitedError,
    ModelTimeoutError,
)

log = logging.getLogger("factcheck.rpc")

# Leave the caller a little of its deadline to receive our answer (or our error).
DEADLINE_MARGIN_S = 0.05


def status_for_model_error(error: ModelError) -> grpc.StatusCode:
    if isinstance(error, ModelTimeoutError):
        return grpc.StatusCode.DEADLINE_EXCEEDED
    if isinstance(error, ModelRateLimitedError):
        return grpc.StatusCode.RESOURCE_EXHAUSTED
    if isinstance(error, ModelNotConfiguredError):
        return grpc.StatusCode.FAILED_PRECONDITION
    return grpc.StatusCode.UNAVAILABLE


def call_timeout_s(context: grpc.aio.ServicerContext, default_timeout_s: float) -> float:
    """The model call may take what is left of the RPC's deadline: the caller's per-stage timeout
    decides. Only a call without a deadline gets this service's own default."""
    remaining = context.time_remaining()
    if remaining is None:
        return default_timeout_s
    return max(remaining - DEADLINE_MARGIN_S, 0.001)


async def complete_or_abort(
    client: ModelClient,
    context: grpc.aio.ServicerContext,
    model: str,
    prompt: str,
    *,
    default_timeout_s: float,
) -> Completion:
    """Call the model; on failure end the RPC with a status that says what went wrong."""
    try:
        return await client.complete(model, prompt, timeout_s=call_timeout_s(context, default_timeout_s))
    except ModelError as error:
        log.warning("model call failed: %s", error)
        await context.abort(status_for_model_error(error), str(error))
        raise  # unreachable: abort raises


async def require(context: grpc.aio.ServicerContext, condition: bool, message: str) -> None:
    """INVALID_ARGUMENT with a message a person understands, unless condition holds."""
    if not condition:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)


def is_model_id(model: str) -> bool:
    """Model ids are "provider/name" (DESIGN.md)."""
    provider, sep, name = model.partition("/")
    return bool(sep and provider.strip() and name.strip()) and model == model.strip() and len(model) <= 200
