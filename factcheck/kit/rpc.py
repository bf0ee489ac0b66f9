"""Helpers the stateless services share: the time a model call may take, and model-id checks.

Failures are raised, never aborted here: a `ModelError` from the model client and the
`factcheck.kit.errors` classes become statuses in the one error interceptor.
"""

from __future__ import annotations

import grpc

from factcheck.kit.errors import InvalidArgument
from factcheck.text.text_safety import excerpt

# The model call's deadline fires this long before the RPC's, so that the caller receives our
# error (the model client's message, naming the model and its deadline) before its own deadline
# answers a bare "Deadline Exceeded": a twentieth of what is left, at least a quarter of a
# second (a busy event loop, a model server holding the CPU), at most two seconds, and never more
# than half of what is left.
DEADLINE_MARGIN_MIN_S = 0.25
DEADLINE_MARGIN_MAX_S = 2.0
DEADLINE_MARGIN_SHARE = 0.05
MAX_MODEL_ID_CHARS = 200


def deadline_margin_s(remaining_s: float) -> float:
    """How long before the RPC's deadline its model call must end (see DEADLINE_MARGIN_MIN_S)."""
    margin = min(max(remaining_s * DEADLINE_MARGIN_SHARE, DEADLINE_MARGIN_MIN_S), DEADLINE_MARGIN_MAX_S)
    return min(margin, remaining_s / 2)


def call_timeout_s(context: grpc.aio.ServicerContext, default_timeout_s: float) -> float:
    """The model call may take what is left of the RPC's deadline, less a margin: the caller's
    per-stage timeout decides. Only a call without a deadline gets this service's own default."""
    remaining = context.time_remaining()
    if remaining is None:
        return default_timeout_s
    return max(remaining - deadline_margin_s(remaining), 0.001)


def is_model_id(model: str) -> bool:
    """Model ids are "provider/name" (the provider picks the client, the name is its model): printable,
    no whitespace or control characters, at most 200 characters (they appear in logs, metrics and
    stored rows)."""
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
