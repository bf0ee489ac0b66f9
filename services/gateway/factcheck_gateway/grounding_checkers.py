"""Grounding checkers confirmed with the checker service before a run or an evaluation starts.

An `onnx/` model's folder is on the checker's disk, and the checker's settings say which dialect a model
speaks: the gateway's own validation (request_validation.check_model) knows the names, not whether the
model behind one can be used. So for every grounding model among a request's checkers the gateway asks the
checker for its engine revision (CheckerService.GetEngineRevision, no model call), which loads and checks
the model there: a folder without the model's files, a card that cannot be read or does not match the
model's outputs, or a dialect the checker does not speak is the request's INVALID_ARGUMENT, naming the field
and, in the checker's words, the setting to fix, before any event is sent. A checker that cannot be reached
now refuses nothing here: the run's verify step reports it as it reports any checker failure.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc

from factcheck.kit.settings import Settings
from factcheck.models.availability import grounding_kind
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2, checker_pb2_grpc
from factcheck_gateway.request_validation import ValidationError

log = logging.getLogger("factcheck.gateway")

# What the checker answers about a model that cannot be used (FAILED_PRECONDITION: model not configured).
_REFUSALS = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION)


async def confirm_grounding_checkers(
    fields: Sequence[tuple[str, str]], checker: checker_pb2_grpc.CheckerServiceStub, settings: Settings
) -> None:
    """ValidationError for the first grounding model (field, model) the checker cannot use."""
    timeout_s = settings.stage_timeout_ms / 1000
    for field, model in fields:
        if grounding_kind(model, settings) is None:
            continue
        try:
            await checker.GetEngineRevision(checker_pb2.GetEngineRevisionRequest(model=model), timeout=timeout_s)
        except grpc.aio.AioRpcError as error:
            if error.code() in _REFUSALS:
                raise ValidationError(f"{field}: {excerpt(error.details() or '', 600)}", field=field) from None
            log.warning("could not confirm %s with the checker before the run: %s", model, error.code().name)
