"""Council mode: respond → anonymise → (retrieve) → fact-check → aggregate → synthesise → title
(in that order: flow.py; the fact-check: checks.py; what the run carries: state.py).

Every council model answers in parallel (or the caller's answers are taken as they are);
each answer is stored and streamed by its label as it arrives. Labels ("Response A", ...)
are drawn per run from the message id, so the answers are anonymous from the first event
on; the label → model mapping is stored with the anonymise row and revealed only in the
aggregate. Every fact-checker then rates every answer (CheckerService.CouncilCheck), and
the gateway ranks the answers from the parsed ratings (no model involved). With a chairman,
the reporter service writes a final answer from the top-ranked one.

A resumed run takes every stage already stored from its row.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from factcheck.text.sentences import split_sentences
from factcheck.v1 import council_pb2, extractor_pb2, factcheck_pb2
from factcheck_gateway.modes.council.aggregate import AggregateResponse, compute_aggregate
from factcheck_gateway.modes.council.stages import (
    ROLE_AGGREGATOR,
    ROLE_ANONYMISER,
    ROLE_CHAIRMAN,
    ROLE_RESPONDENT,
    STAGE_ANONYMISE,
    STAGE_COUNCIL_AGGREGATE,
    STAGE_COUNCIL_RETRIEVE,
    STAGE_SYNTHESIS,
    respond_stage,
    response_labels,
)
from factcheck_gateway.modes.council.state import Answer, CouncilRun
from factcheck_gateway.runs import title as shared_title
from factcheck_gateway.runs.evidence_stage import save_evidence, stored_evidence
from factcheck_gateway.runs.run import RunFailed, rpc_error_text, rpc_failure, stage_failure, stored_data

log = logging.getLogger("factcheck.gateway.council")

ALL_RESPONSES_FAILED = "No council model answered the question."
# Evidence for the fact-checkers: each answer's sentences are searched, at most this many per answer.
MAX_QUERIES_PER_RESPONSE = 12
EVIDENCE_PER_SENTENCE = 2


async def start(run: CouncilRun) -> None:
    plan = run.council_plan
    labels = response_labels(run.message_id, len(plan.authors))
    run.answers = [Answer(i, labels[i], author) for i, author in enumerate(plan.authors)]
    await run.emit(
        "factcheck_start",
        factcheck_pb2.FactCheckStartPayload(
            conversation_id=run.conversation_id,
            message_id=run.message_id,
            mode=factcheck_pb2.MODE_COUNCIL,
            council=plan.run_config(),
        ),
    )


# --- respond ------------------------------------------------------------------------------------------


async def respond(run: CouncilRun) -> None:
    """Every council model answers at once; each answer is stored and streamed as it arrives."""
    plan = run.council_plan
    await run.emit("respond_start", council_pb2.RespondStartPayload(response_count=len(run.answers)))
    pending = []
    for answer in run.answers:
        if (stored := run.stored.get(respond_stage(answer.index)[0])) is not None:
            _take_stored_answer(answer, stored)
        elif plan.responses_supplied:
            answer.text, answer.supplied = plan.responses[answer.index].text, True
            await _save_answer(run, answer)
        else:
            pending.append(asyncio.create_task(_ask(run, answer)))
    try:
        for next_done in asyncio.as_completed(pending):
            await _save_answer(run, await next_done)
    finally:
        for task in pending:
            task.cancel()
    if not any(answer.answered for answer in run.answers):
        raise RunFailed(ALL_RESPONSES_FAILED)


async def _ask(run: CouncilRun, answer: Answer) -> Answer:
    started = time.monotonic()
    try:
        response = await run.downstream.extractor.Generate(
            extractor_pb2.GenerateRequest(model=answer.author, question=run.plan.question),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: council model %s failed: %s", run.message_id, answer.author, rpc_error_text(error))
        failure = rpc_failure(respond_stage(answer.index)[0], answer.author, error)
        run.failures.append(failure)
        answer.error = f"{failure['code']}: {failure['message']}"
        answer.response_time_ms = int((time.monotonic() - started) * 1000)
        return answer
    if not response.content.strip():
        failure = stage_failure(respond_stage(answer.index)[0], answer.author, "EMPTY", "the model's answer was empty")
        run.failures.append(failure)
        answer.error = f"{failure['code']}: {failure['message']}"
    answer.text, answer.response_time_ms = response.content, response.response_time_ms
    return answer


async def _save_answer(run: CouncilRun, answer: Answer) -> None:
    data: dict[str, Any] = {"label": answer.label, "supplied": answer.supplied}
    event: tuple[str, Any]
    if answer.error is not None:
        data["error"] = answer.error
        event = ("response_failed", council_pb2.ResponseFailedPayload(label=answer.label, message=answer.error))
    else:
        event = (
            "response_complete",
            council_pb2.ResponseCompletePayload(
                label=answer.label, text=answer.text, response_time_ms=answer.response_time_ms
            ),
        )
    await run.save_stage(
        respond_stage(answer.index),
        ROLE_RESPONDENT,
        answer.author,
        answer.text if answer.answered else "",
        data,
        answer.response_time_ms,
        event=event,
    )


def _take_stored_answer(answer: Answer, stored) -> None:
    data = stored_data(stored)
    answer.text = stored.content or ""
    answer.response_time_ms = stored.response_time_ms or 0
    answer.supplied = bool(data.get("supplied"))
    answer.error = data.get("error")


# --- anonymise ----------------------------------------------------------------------------------------


async def anonymise(run: CouncilRun) -> None:
    """Store the label → author mapping (server-side) and tell which labels the fact-checkers will see."""
    if STAGE_ANONYMISE[0] in run.stored:
        return
    labels = [answer.label for answer in run.answered()]
    await run.save_stage(
        STAGE_ANONYMISE,
        ROLE_ANONYMISER,
        None,
        None,
        {"labels": labels, "labelToModel": {a.label: a.author for a in run.answers}},
        0,
        event=("responses_anonymised", council_pb2.ResponsesAnonymisedPayload(labels=labels)),
    )


# --- evidence -----------------------------------------------------------------------------------------


async def retrieve(run: CouncilRun) -> None:
    """Passages for the fact-checkers: each answer's sentences searched in the sources and knowledge store."""
    if (stored := run.stored.get(STAGE_COUNCIL_RETRIEVE[0])) is not None:
        run.evidence = stored_evidence(stored)
        return
    assert run.retriever is not None  # the step runs only when has_evidence
    plan = run.council_plan
    queries = {
        f"{answer.label} #{number}": sentence
        for answer in run.answered()
        for number, sentence in enumerate(split_sentences(answer.text)[:MAX_QUERIES_PER_RESPONSE], start=1)
    }
    started = time.monotonic()
    evidence = await asyncio.to_thread(
        run.retriever.retrieve,
        queries,
        plan.sources,
        use_store=plan.use_knowledge_store,
        top_k=min(EVIDENCE_PER_SENTENCE, plan.evidence_top_k),
        tenant_id=run.tenant_id,
    )
    run.evidence = evidence
    elapsed_ms = int((time.monotonic() - started) * 1000)
    summary = f"{len(evidence.passages)} passages for {len(queries)} sentences"
    await save_evidence(run, STAGE_COUNCIL_RETRIEVE, evidence, elapsed_ms, summary)


# --- aggregate, synthesis, title ----------------------------------------------------------------------


def aggregate_of(run: CouncilRun) -> council_pb2.CouncilAggregate:
    return compute_aggregate(
        [AggregateResponse(answer.label, answer.author) for answer in run.answered()],
        sorted(run.checks, key=lambda c: c.checker_index),
        sorted(run.excluded, key=lambda e: e.checker_index),
        exclude_self_ratings=run.council_plan.exclude_self_ratings,
    )


async def aggregate(run: CouncilRun) -> None:
    """Rank the answers from the ratings (server-side, no model); reveals the label → model mapping."""
    run.aggregate = aggregate_of(run)
    shared_title.start_title(run, _best_answer(run).text)  # overlaps the synthesis
    if STAGE_COUNCIL_AGGREGATE[0] in run.stored:
        return
    await run.save_stage(
        STAGE_COUNCIL_AGGREGATE,
        ROLE_AGGREGATOR,
        None,
        None,
        MessageToDict(run.aggregate),
        0,
        event=("council_aggregate_complete", council_pb2.CouncilAggregateCompletePayload(aggregate=run.aggregate)),
    )


def _best_answer(run: CouncilRun) -> Answer:
    assert run.aggregate is not None  # called from the aggregate step on
    top = run.aggregate.ranking[0].label if run.aggregate.ranking else run.answered()[0].label
    return next(answer for answer in run.answers if answer.label == top)


async def synthesise(run: CouncilRun) -> None:
    """The chairman's final answer from the top-ranked response; a failure is noted, not fatal."""
    plan = run.council_plan
    if (stored := run.stored.get(STAGE_SYNTHESIS[0])) is not None:
        run.synthesis = stored.content or ""
        return
    await run.emit("synthesis_start", council_pb2.SynthesisStartPayload())
    best = _best_answer(run)
    try:
        response = await run.downstream.reporter.Synthesize(
            council_pb2.SynthesizeRequest(
                model=plan.chairman_model,
                question=plan.question,
                best_response=council_pb2.LabelledResponse(label=best.label, text=best.text),
                inaccurate_claims=[claim for check in run.checks for claim in check.inaccurate_claims],
                aggregate=run.aggregate,
            ),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: the chairman failed (%s); no synthesis", run.message_id, rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_SYNTHESIS[0], plan.chairman_model, error))
        return
    run.synthesis = response.text
    await run.save_stage(
        STAGE_SYNTHESIS,
        ROLE_CHAIRMAN,
        plan.chairman_model,
        response.text,
        {"basedOnLabel": best.label},
        response.response_time_ms,
        event=(
            "synthesis_complete",
            council_pb2.SynthesisCompletePayload(
                model=plan.chairman_model,
                text=response.text,
                based_on_label=best.label,
                response_time_ms=response.response_time_ms,
            ),
        ),
    )


async def title(run: CouncilRun) -> None:
    await shared_title.title(run, run.synthesis or _best_answer(run).text)
