"""Fact-check mode: generate → extract → retrieve → verify in parallel → consensus → report → title
(in that order: flow.py; the verification: verification.py; what the run carries: state.py).

Each step emits its events (docs/api.md#events) and stores its stage row the moment it has a result
(services/gateway/factcheck_gateway/runs/run.py); pipelined runs (pipelined.py) feed the same steps from a
streamed extraction. A resumed run takes each stage's result from its stored row.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from factcheck.core.domain import ExtractedClaim, VerdictSummary
from factcheck.core.fallback_report import (
    NO_CLAIMS_NOTE,
    NO_CLAIMS_REPORT,
    average_agreement_rate,
    build_fallback_report,
)
from factcheck.core.weighting_text import describe_weighting
from factcheck.v1 import extractor_pb2, factcheck_pb2, reporter_pb2
from factcheck_gateway.consensus import weights
from factcheck_gateway.knowledge.retrieval import Evidence
from factcheck_gateway.modes.fact_check import citations
from factcheck_gateway.modes.fact_check.investigate import records
from factcheck_gateway.modes.fact_check.stages import (
    ROLE_EXTRACTOR,
    ROLE_GENERATOR,
    ROLE_REPORTER,
    STAGE_EXTRACT,
    STAGE_GENERATE,
    STAGE_REPORT,
    STAGE_RETRIEVE,
)
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.runs import title as shared_title
from factcheck_gateway.runs.evidence_stage import has_evidence, save_evidence, stored_evidence
from factcheck_gateway.runs.run import RunFailed, rpc_error_text, rpc_failure, stage_failure, stored_data
from factcheck_gateway.verification_cache import cached

log = logging.getLogger("factcheck.gateway.fact_check")

EXTRACTION_FAILED = "Claim extraction failed. Cannot proceed with verification."


async def start(run: FactCheckRun) -> None:
    plan = run.plan
    config = factcheck_pb2.RunConfig(
        content_source=(
            factcheck_pb2.CONTENT_SOURCE_GENERATED if plan.generates else factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED
        ),
        extractor_model=plan.extractor_model,
        checker_models=plan.checker_models,
        reporter_model=plan.reporter_model,
        max_content_length=plan.max_content_length,
        timeout_ms=plan.timeout_ms,
    )
    if plan.generator_model:
        config.generator_model = plan.generator_model
    if plan.bias_warning:
        config.bias_warning = plan.bias_warning
    if plan.pipelined:
        config.pipelined = True
    # The consensus asked for, with its default applied like the models above (unset: the majority).
    config.consensus = weights.consensus_proto(plan.consensus)
    if plan.consensus_evaluation_id:
        config.consensus_evaluation_id = plan.consensus_evaluation_id
    if plan.threshold_evaluation_id:
        config.threshold_evaluation_id = plan.threshold_evaluation_id
    await run.emit(
        "factcheck_start",
        factcheck_pb2.FactCheckStartPayload(
            conversation_id=run.conversation_id, message_id=run.message_id, config=config
        ),
    )
    run.content = plan.content_to_check or ""
    if not plan.generates:
        shared_title.start_title(run, run.content)


async def generate(run: FactCheckRun) -> None:
    """Phase 0. On failure or timeout the user's question becomes the content."""
    plan = run.plan
    if (stored := run.stored.get(STAGE_GENERATE[0])) is not None:
        run.content = stored.content or ""
        return
    await run.emit("generate_start", factcheck_pb2.GenerateStartPayload())
    started = time.monotonic()
    passages = await _question_passages(run)
    try:
        response = await run.downstream.extractor.Generate(
            extractor_pb2.GenerateRequest(model=plan.generator_model, question=plan.question, passages=passages),
            timeout=run.stage_timeout_s,
        )
        content, response_time_ms, fallback = response.content, response.response_time_ms, False
    except grpc.aio.AioRpcError as error:
        log.warning("%s: generation failed (%s); using the question as content", run.message_id, rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_GENERATE[0], plan.generator_model, error))
        content, fallback = plan.question, True
        response_time_ms = int((time.monotonic() - started) * 1000)

    run.content = content
    shared_title.start_title(run, run.content)
    await run.save_stage(
        STAGE_GENERATE,
        ROLE_GENERATOR,
        plan.generator_model,
        content,
        {
            "contentSource": "generated",
            "inputQuestion": plan.question,
            "contentLength": len(content),
            "wordCount": len(content.split()),
            "fallbackToQuestion": fallback,
            "sourcePassages": [_passage_json(p) for p in passages],
        },
        response_time_ms,
        event=(
            "generate_complete",
            factcheck_pb2.GenerateCompletePayload(
                model=plan.generator_model,
                content=content,
                response_time_ms=response_time_ms,
                fallback_to_question=fallback,
            ),
        ),
    )


async def _extract_call(run: FactCheckRun) -> extractor_pb2.ExtractResponse:
    plan = run.plan
    request = citations.extract_request(
        run,
        extractor_pb2.ExtractRequest(
            model=plan.extractor_model, content=run.content, max_content_length=plan.max_content_length
        ),
    )
    return await cached.extract(run, request)  # the plan turns the cache off for runs with citations


async def extract(run: FactCheckRun, call=_extract_call) -> None:
    """Phase 1. Extraction failure is fatal (the run ends with an `error` event). `call` gets the extraction
    (pipelined mode: its own)."""
    plan = run.plan
    if (stored := run.stored.get(STAGE_EXTRACT[0])) is not None:
        data = stored_data(stored)
        run.content = data.get("analyzedContent", run.content)
        run.claims = [ExtractedClaim.from_json(claim) for claim in data.get("claims", [])]
        citations.extract_resumed(run, data)
        return
    await run.emit("extract_start", factcheck_pb2.ExtractStartPayload())
    try:
        response = await call(run)
    except grpc.aio.AioRpcError as error:
        log.warning("%s: extraction failed: %s", run.message_id, rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_EXTRACT[0], plan.extractor_model, error))
        raise RunFailed(EXTRACTION_FAILED) from error

    run.content = response.content
    run.claims = [ExtractedClaim.from_proto(claim) for claim in response.claims]
    type_breakdown = dict(response.type_breakdown)
    parsed = {
        "claims": [claim.to_json() for claim in run.claims],
        "totalClaims": len(run.claims),
        "typeBreakdown": type_breakdown,
        "contentTruncated": response.content_truncated,
        "analyzedContent": response.content,
    }
    citations.extracted(run, response, parsed)
    await run.save_stage(
        STAGE_EXTRACT,
        ROLE_EXTRACTOR,
        plan.extractor_model,
        response.raw_text,
        parsed,
        response.response_time_ms,
        event=(
            "extract_complete",
            factcheck_pb2.ExtractCompletePayload(
                model=plan.extractor_model,
                claims=response.claims,
                total_claims=len(run.claims),
                type_breakdown=type_breakdown,
                response_time_ms=response.response_time_ms,
                content_truncated=response.content_truncated,
            ),
        ),
    )


def _passage_json(passage) -> dict[str, Any]:
    return MessageToDict(passage)


async def _question_passages(run: FactCheckRun) -> list:
    """Passages for the generator to answer from, when there are sources or stored documents."""
    plan = run.plan
    if not await has_evidence_to_search(run):
        return []
    assert run.retriever is not None  # has_evidence_to_search says so
    evidence = await asyncio.to_thread(
        run.retriever.retrieve,
        {"question": plan.question},
        plan.sources,
        use_store=plan.use_knowledge_store,
        top_k=plan.evidence_top_k,
        tenant_id=run.tenant_id,
    )
    return evidence.passages


async def has_evidence_to_search(run: FactCheckRun) -> bool:
    return await has_evidence(run, run.plan.sources, run.plan.use_knowledge_store)


async def retrieve(run: FactCheckRun) -> None:
    """Evidence for every claim, retrieved once so that all checkers judge the same passages.

    Runs only when there is evidence to search (`has_evidence_to_search`); otherwise no event is
    sent and the verification prompt is the one without an EVIDENCE section.
    """
    plan = run.plan
    if (stored := run.stored.get(STAGE_RETRIEVE[0])) is not None:
        run.evidence = stored_evidence(stored)
        return
    assert run.retriever is not None  # the step runs only when has_evidence_to_search
    started = time.monotonic()
    evidence = await asyncio.to_thread(
        run.retriever.for_claims,
        run.claims,
        plan.sources,
        use_store=plan.use_knowledge_store,
        top_k=plan.evidence_top_k,
        tenant_id=run.tenant_id,
    )
    await store_evidence(run, evidence, int((time.monotonic() - started) * 1000))


async def store_evidence(run: FactCheckRun, evidence: Evidence, elapsed_ms: int) -> None:
    """The retrieve row and evidence_retrieved."""
    run.evidence = evidence
    summary = f"{len(evidence.passages)} passages for {len(run.claims)} claims"
    await save_evidence(run, STAGE_RETRIEVE, evidence, elapsed_ms, summary)


def _succeeded_checker_models(run: FactCheckRun) -> list[str]:
    return [o.model for o in sorted(run.checkers, key=lambda o: o.index) if o.response is not None]


async def _request_report(run: FactCheckRun) -> reporter_pb2.ReportResponse:
    """The reporter's answer; when the reporter itself is unreachable, the fallback table (the consensus as a
    markdown table, fallback = true)."""
    plan = run.plan
    checker_models = _succeeded_checker_models(run)
    try:
        return await run.downstream.reporter.Report(
            reporter_pb2.ReportRequest(
                model=plan.reporter_model,
                content=run.content,
                consensus=run.consensus_protos,
                total_claims=len(run.claims),
                checker_count=len(checker_models),
                extractor_model=plan.extractor_model,
                checker_models=checker_models,
            ),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: reporter failed (%s); writing the fallback table", run.message_id, rpc_error_text(error))
        failure = rpc_failure(STAGE_REPORT[0], plan.reporter_model, error)
        run.failures.append(failure)
        summary = VerdictSummary.count(item.consensus_verdict for item in run.consensus)
        if not run.consensus:
            return reporter_pb2.ReportResponse(
                model=plan.reporter_model, report_text=NO_CLAIMS_REPORT, note=NO_CLAIMS_NOTE
            )
        return reporter_pb2.ReportResponse(
            model=plan.reporter_model,
            report_text=build_fallback_report(run.consensus),
            summary=summary.to_proto(),
            fallback=True,
            fallback_reason=f"the reporter failed: {failure['code']}: {failure['message']}",
            average_agreement_rate=average_agreement_rate(run.consensus),
        )


async def report(run: FactCheckRun) -> None:
    """Phase 3 (also the no-claims report, which needs no model call)."""
    plan = run.plan
    if STAGE_REPORT[0] in run.stored:
        return
    await run.emit("report_start", factcheck_pb2.ReportStartPayload())
    response = await _request_report(run)
    if response.fallback and response.fallback_reason and not any(f["stage"] == STAGE_REPORT[0] for f in run.failures):
        # The reporter answered, but with the fallback (its model failed, or its answer was not a report).
        run.failures.append(stage_failure(STAGE_REPORT[0], plan.reporter_model, "FALLBACK", response.fallback_reason))
    report_text = response.report_text
    if run.investigation is not None:
        report_text += records.report_section(run.investigation)
    if plan.consensus == weights.WEIGHTED and run.consensus_weighting is not None:
        # The reporter's prompt is the same with weights; the weights it combined are named after its text.
        report_text += f"\n\nConsensus: {describe_weighting(run.consensus_weighting)}"
    score = response.reliability_score if response.HasField("reliability_score") else None
    note = response.note if response.HasField("note") else None
    parsed: dict[str, Any] = {
        "reliabilityScore": score,
        "verified": response.summary.verified,
        "disputed": response.summary.disputed,
        "unverifiable": response.summary.unverifiable,
        "totalClaims": len(run.claims),
        "checkerCount": len(_succeeded_checker_models(run)),
        "averageAgreementRate": response.average_agreement_rate,
        "fallback": response.fallback,
    }
    if response.fallback_reason:
        parsed["fallbackReason"] = response.fallback_reason
    if note is not None:
        parsed["note"] = note
    citations.report_data(run, parsed)
    failed = [o.model for o in run.checkers if o.response is None]
    if failed:
        # Failed checkers are named in the report row's metadata, with the count requested.
        parsed["failedCheckers"] = failed
        parsed["requestedCheckerCount"] = len(plan.checker_models)
    payload = factcheck_pb2.ReportCompletePayload(
        model=plan.reporter_model,
        summary=factcheck_pb2.ReportSummary(
            verified=response.summary.verified,
            disputed=response.summary.disputed,
            unverifiable=response.summary.unverifiable,
            note=note,
        ),
        response_time_ms=response.response_time_ms,
        report_text=report_text,
        fallback=response.fallback,
        fallback_reason=response.fallback_reason,
    )
    if score is not None:
        payload.reliability_score = score
    await run.save_stage(
        STAGE_REPORT,
        ROLE_REPORTER,
        plan.reporter_model,
        report_text,
        parsed,
        response.response_time_ms,
        event=("report_complete", payload),
    )


async def title(run: FactCheckRun) -> None:
    await shared_title.title(run, run.content)
