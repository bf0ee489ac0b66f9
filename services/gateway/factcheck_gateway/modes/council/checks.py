"""The council's fact-check step: every fact-checker rates every anonymised answer
(CheckerService.CouncilCheck), in parallel; each result is stored as it arrives."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict, ParseDict

from factcheck.v1 import council_pb2
from factcheck_gateway.modes.council.stages import ROLE_FACT_CHECKER, council_check_stage
from factcheck_gateway.modes.council.state import CouncilRun
from factcheck_gateway.runs.run import RunFailed, rpc_error_text, rpc_failure, stage_failure, stored_data

log = logging.getLogger("factcheck.gateway.council")

ALL_FACT_CHECKERS_FAILED = "All fact-checkers failed; the answers are stored."
NO_SUMMARY = "no parseable FACT CHECK SUMMARY in the fact-checker's answer"


async def fact_check(run: CouncilRun) -> None:
    """Every fact-checker rates every anonymised answer, in parallel; each result is stored as it arrives."""
    plan = run.council_plan
    answered = run.answered()
    await run.emit(
        "council_check_start",
        council_pb2.CouncilCheckStartPayload(
            fact_checker_count=len(plan.fact_checker_models), response_count=len(answered)
        ),
    )
    request = council_pb2.CouncilCheckRequest(
        question=plan.question,
        responses=[council_pb2.LabelledResponse(label=a.label, text=a.text) for a in answered],
        passages=run.evidence.passages if run.evidence is not None else [],
    )
    pending = []
    for index, model in enumerate(plan.fact_checker_models):
        if (stored := run.stored.get(council_check_stage(index)[0])) is not None:
            _take_stored_check(run, stored)
        else:
            pending.append(asyncio.create_task(_check_one(run, request, index, model)))
    try:
        for next_done in asyncio.as_completed(pending):
            await _save_check(run, *await next_done)
    finally:
        for task in pending:
            task.cancel()
    if not run.checks:
        raise RunFailed(ALL_FACT_CHECKERS_FAILED)


async def _check_one(run: CouncilRun, template: council_pb2.CouncilCheckRequest, index: int, model: str):
    request = council_pb2.CouncilCheckRequest()
    request.CopyFrom(template)
    request.model = model
    try:
        response = await run.downstream.checker.CouncilCheck(request, timeout=run.stage_timeout_s)
    except grpc.aio.AioRpcError as error:
        log.warning("%s: fact-checker %d (%s) failed: %s", run.message_id, index, model, rpc_error_text(error))
        return index, model, None, rpc_failure(council_check_stage(index)[0], model, error)
    return index, model, response, None


async def _save_check(run: CouncilRun, index: int, model: str, response, failure) -> None:
    if response is None:
        run.failures.append(failure)
        excluded = council_pb2.CouncilCheckFailedPayload(
            model=model, checker_index=index, message=f"{failure['code']}: {failure['message']}"
        )
        run.excluded.append(excluded)
        await run.emit("council_check_failed", excluded)
        return
    check = council_pb2.CouncilCheck(
        model=model,
        checker_index=index,
        ratings=response.ratings,
        most_reliable=response.most_reliable,
        inaccurate_claims=response.inaccurate_claims,
        response_time_ms=response.response_time_ms,
        warnings=response.warnings,
    )
    data = MessageToDict(check)
    event: tuple[str, Any]
    if not check.ratings:  # kept with its analysis, left out of the aggregate
        excluded = council_pb2.CouncilCheckFailedPayload(model=model, checker_index=index, message=NO_SUMMARY)
        run.excluded.append(excluded)
        run.failures.append(stage_failure(council_check_stage(index)[0], model, "NO_SUMMARY", NO_SUMMARY))
        data["excluded"] = NO_SUMMARY
        event = ("council_check_failed", excluded)
    else:
        run.checks.append(check)
        event = (
            "council_check_complete",
            council_pb2.CouncilCheckCompletePayload(
                model=model,
                checker_index=index,
                ratings=check.ratings,
                most_reliable=check.most_reliable,
                inaccurate_claims=check.inaccurate_claims,
                response_time_ms=check.response_time_ms,
                warnings=check.warnings,
            ),
        )
    await run.save_stage(
        council_check_stage(index),
        ROLE_FACT_CHECKER,
        model,
        response.raw_text,
        data,
        response.response_time_ms,
        event=event,
    )


def stored_check(stored) -> tuple[council_pb2.CouncilCheck, str | None]:
    """A fact-checker's stored row as a CouncilCheck, and why it was excluded (None if counted)."""
    data = dict(stored_data(stored))
    excluded = data.pop("excluded", None)
    check = ParseDict(data, council_pb2.CouncilCheck(), ignore_unknown_fields=True)
    check.analysis = stored.content or ""
    return check, excluded


def _take_stored_check(run: CouncilRun, stored) -> None:
    check, excluded = stored_check(stored)
    if excluded is None:
        run.checks.append(check)
    else:
        run.excluded.append(
            council_pb2.CouncilCheckFailedPayload(
                model=check.model, checker_index=check.checker_index, message=excluded
            )
        )
