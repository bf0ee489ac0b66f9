"""The title: every mode's last step (a mode with a title asks for it once its content is known)."""

from __future__ import annotations

import asyncio
import logging

import grpc

from factcheck.core.title_subject import title_question
from factcheck.v1 import factcheck_pb2, reporter_pb2
from factcheck_gateway.runs.run import Run, rpc_error_text, rpc_failure

log = logging.getLogger("factcheck.gateway.run")


def start_title(run: Run, content: str) -> None:
    """Ask for the title as soon as the content is known: it needs only the question and the
    content, so it overlaps the rest of the run (its event still follows the mode's last stage)."""
    if run.stored_title is None and run.title_call is None:
        run.title_call = asyncio.ensure_future(_call_title(run, content))


async def _call_title(run: Run, content: str) -> str:
    plan = run.plan
    try:
        response = await run.downstream.reporter.Title(
            reporter_pb2.TitleRequest(model=plan.reporter_model, question=plan.question, content=content),
            timeout=run.stage_timeout_s,
        )
        return response.title
    except grpc.aio.AioRpcError as error:
        log.warning("%s: title failed (%s); using the question", run.message_id, rpc_error_text(error))
        run.failures.append(rpc_failure("title", plan.reporter_model, error))
        return " ".join((title_question(plan.question) or content).split())[:80]


async def title(run: Run, content: str) -> None:
    if run.stored_title is not None:
        return
    start_title(run, content)
    assert run.title_call is not None  # (start_title started it)
    text = await run.title_call
    await run.emit("title_complete", factcheck_pb2.TitleCompletePayload(title=text), title=text)
