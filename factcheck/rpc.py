"""Helpers the stateless services share: the time a model call may take, and model-id checks.

Failures are raised, never aborted here: a `ModelError` from the model client and the
`factcheck.errors` classes become statuses in the one error interceptor.
"""

from __future__ import annotations

import grpc

from factcheck.errors import InvalidArgument
from factcheck.text_safety import excerpt

# Leave the caller a little of its deadline to receive our answer (or our error).
DEADLINE_MARGIN_S = 0.05
MAX_MODEL_ID_CHARS = 200


def call_timeout_s(context: grpc.aio.ServicerContext, default_timeout_s: float) -> float:
    """The model call may take what is left of the RPC's deadline: the caller's per-stage timeout
    decides. Only a call without a deadline gets this service's own default."""
    remaining = context.time_remaining()
    if remaining is None:
        return default_timeout_s
    return max(remaining - DEADLINE_MARGIN_S, 0.001)


def is_model_id(model: str) -> bool:
    """Model ids are "provider/name" (DESIGN.md): printable, no whitespace or control characters,
    at most 200 characters (they appear in logs, metrics and stored rows)."""
    if not 0 < len(model) <= MAX_MODEL_ID_CHARS or not model.isprintable() or any(c.isspace() for c in model):
        return False
    provider, sep, name = model.partition("/")
    return bool(sep and provider and name)


def check_model_id(field: str, model: str) -> None:
    """InvalidArgument on `field` unless `model` is a model id; the message quotes a bounded excerpt."""
    if not is_model_id(model):
        raise InvalidArgument(
            f"{field} must be a model id like \"provider/name\" (got '{excerpt(model)}')", field=field
        )
