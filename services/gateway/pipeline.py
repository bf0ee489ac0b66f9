"""One fact-check run as a small set of async steps (spec sections B, C, F).

Each step emits its events, calls one downstream service within the per-stage
deadline and stores its stage row the moment it has a result, so a later failure
loses nothing already done. `run_pipeline` chains the steps; a future pipelined
mode can reuse them in another order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from sqlalchemy.exc import InterfaceError, OperationalError

from factcheck.domain import ClaimConsensus, ClaimVerification, ExtractedClaim, VerdictSummary
from factcheck.fallback_report import NO_CLAIMS_NOTE, NO_CLAIMS_REPORT, average_agreement_rate, build_fallback_report
from factcheck.observability import metrics
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    common_pb2,
    extractor_pb2,
    extractor_pb2_grpc,
    factcheck_pb2,
    reporter_pb2,
    reporter_pb2_grpc,
)
from services.gateway.consensus import calculate_consensus
from services.gateway.events import EventStream
from services.gateway.knowledge.retrieval import Evidence, Retriever
from services.gateway.store import (
    ROLE_CHECKER,
    ROLE_EXTRACTOR,
    ROLE_GENERATOR,
    ROLE_REPORTER,
    ROLE_RETRIEVER,
    STAGE_EXTRACT,
    STAGE_GENERATE,
    STAGE_REPORT,
    STAGE_RETRIEVE,
    StageStore,
    verify_stage,
)
from services.gateway.validation import RunPlan

log = logging.getLogger("factcheck.gateway.pipeline")

EXTRACTION_FAILED = "Claim extraction failed. Cannot proceed with verification."
ALL_CHECKERS_FAILED = "All verification checkers failed."
INTERNAL_ERROR = "The fact-check failed unexpectedly; the stages completed so far are stored."
STORE_FAILED = "The results database stayed unavailable, so the run was stopped; stages stored before are kept."
# How long a write may keep failing (database restarting, SQLite lock held) before the run gives up.
STORE_RETRY_BUDGET_S = 20.0
STORE_RETRY_FIRST_DELAY_S, STORE_RETRY_MAX_DELAY_S = 0.1, 2.0


class RunFailed(Exception):
    """A failure the spec treats as fatal: the message goes to the caller as an `error` event."""


@dataclass
class Downstream:
    """Stubs for the three stateless services."""

    extractor: extractor_pb2_grpc.ExtractorServiceStub
    checker: checker_pb2_grpc.CheckerServiceStub
    reporter: reporter_pb2_grpc.ReporterServiceStub


@dataclass
class CheckerOutcome:
    index: int
    model: str
    response: checker_pb2.VerifyResponse | None = None
    error: str | None = None


@dataclass
class Run:
    """Everything one run knows; the steps fill it in as they go."""

    plan: RunPlan
    message_id: str
    conversation_id: str
    store: StageStore
    downstream: Downstream
    events: EventStream
    deadline: float  # time.monotonic() at which the global budget ends
    retriever: Retriever | None = None
    content: str = ""
    claims: list[ExtractedClaim] = field(default_factory=list)
    evidence: Evidence | None = None
    checkers: list[CheckerOutcome] = field(default_factory=list)
    consensus: list[ClaimConsensus] = field(default_factory=list)

    @property
    def tenant_id(self) -> str:
        """The run's tenant, from its plan (never from the calling RPC's context: a run outlives it)."""
        return self.plan.tenant_id

    @property
    def stage_timeout_s(self) -> float:
        return self.plan.timeout_ms / 1000

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    async def save_stage(
        self,
        stage: tuple[str, int],
        role: str,
        model: str,
        content: str,
        parsed_data: dict[str, Any],
        response_time_ms: int,
    ) -> None:
        """Commit one stage row now, before anything else can fail."""
        stage_type, stage_order = stage
        await self.write(
            self.store.save_stage,
            message_id=self.message_id,
            stage_type=stage_type,
            stage_order=stage_order,
            model=model,
            role=role,
            content=content,
            parsed_data=parsed_data,
            response_time_ms=response_time_ms,
        )

    async def write(self, function, *args, **kwargs) -> None:
        """A store write, retried while the database is unreachable or locked.

        Every write is idempotent (a stage is unique per run, status and title are plain
        updates), so a retry after a write that did land never duplicates anything.
        """
        deadline = time.monotonic() + STORE_RETRY_BUDGET_S
        delay = STORE_RETRY_FIRST_DELAY_S
        while True:
            try:
                await asyncio.to_thread(function, *args, **kwargs)
                return
            except (OperationalError, InterfaceError) as error:
                if time.monotonic() + delay > deadline:
                    raise RunFailed(STORE_FAILED) from error
                log.warning("%s: database write failed, retrying in %.1fs: %s", self.message_id, delay, error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, STORE_RETRY_MAX_DELAY_S)


def _rpc_error_text(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {error.details()}"


async def start(run: Run) -> None:
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
    run.events.emit(
        "factcheck_start",
        factcheck_pb2.FactCheckStartPayload(
            conversation_id=run.conversation_id, message_id=run.message_id, config=config
        ),
    )
    run.content = plan.content_to_check or ""


async def generate(run: Run) -> None:
    """Phase 0. Spec: on failure or timeout the user's question becomes the content."""
    plan = run.plan
    run.events.emit("generate_start", factcheck_pb2.GenerateStartPayload())
    started = time.monotonic()
    passages = await _question_passages(run)
    try:
        response = await run.downstream.extractor.Generate(
            extractor_pb2.GenerateRequest(model=plan.generator_model, question=plan.question, passages=passages),
            timeout=run.stage_timeout_s,
        )
        content, response_time_ms, fallback = response.content, response.response_time_ms, False
    except grpc.aio.AioRpcError as error:
        log.warning("%s: generation failed (%s); using the question as content", run.message_id, _rpc_error_text(error))
        content, fallback = plan.question, True
        response_time_ms = int((time.monotonic() - started) * 1000)

    run.content = content
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
    )
    run.events.emit(
        "generate_complete",
        factcheck_pb2.GenerateCompletePayload(
            model=plan.generator_model,
            content=content,
            response_time_ms=response_time_ms,
            fallback_to_question=fallback,
        ),
    )


async def extract(run: Run) -> None:
    """Phase 1. Spec: extraction failure is fatal."""
    plan = run.plan
    run.events.emit("extract_start", factcheck_pb2.ExtractStartPayload())
    try:
        response = await run.downstream.extractor.Extract(
            extractor_pb2.ExtractRequest(
                model=plan.extractor_model, content=run.content, max_content_length=plan.max_content_length
            ),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: extraction failed: %s", run.message_id, _rpc_error_text(error))
        raise RunFailed(EXTRACTION_FAILED) from error

    run.content = response.content
    run.claims = [ExtractedClaim.from_proto(claim) for claim in response.claims]
    type_breakdown = dict(response.type_breakdown)
    await run.save_stage(
        STAGE_EXTRACT,
        ROLE_EXTRACTOR,
        plan.extractor_model,
        response.raw_text,
        {
            "claims": [claim.to_json() for claim in run.claims],
            "totalClaims": len(run.claims),
            "typeBreakdown": type_breakdown,
            "contentTruncated": response.content_truncated,
            "analyzedContent": response.content,
        },
        response.response_time_ms,
    )
    run.events.emit(
        "extract_complete",
        factcheck_pb2.ExtractCompletePayload(
            model=plan.extractor_model,
            claims=response.claims,
            total_claims=len(run.claims),
            type_breakdown=type_breakdown,
            response_time_ms=response.response_time_ms,
            content_truncated=response.content_truncated,
        ),
    )


def _passage_json(passage) -> dict[str, Any]:
    return MessageToDict(passage)


async def _question_passages(run: Run) -> list:
    """Passages for the generator to answer from, when there are sources or stored documents."""
    plan = run.plan
    if not await _has_evidence(run):
        return []
    evidence = await asyncio.to_thread(
        run.retriever.retrieve,
        {"question": plan.question},
        plan.sources,
        use_store=plan.use_knowledge_store,
        top_k=plan.evidence_top_k,
        tenant_id=run.tenant_id,
    )
    return evidence.passages


async def _has_evidence(run: Run) -> bool:
    """Whether to retrieve: the request has sources, or the knowledge store has documents it may use."""
    plan = run.plan
    return run.retriever is not None and await asyncio.to_thread(
        run.retriever.should_run, plan.sources, plan.use_knowledge_store, tenant_id=run.tenant_id
    )


async def retrieve(run: Run) -> None:
    """Evidence for every claim, retrieved once so that all checkers judge the same passages.

    Runs only when there is evidence to search (`_has_evidence`); otherwise no event is
    sent and the verification prompt is exactly the spec's.
    """
    plan = run.plan
    started = time.monotonic()
    evidence = await asyncio.to_thread(
        run.retriever.for_claims,
        run.claims,
        plan.sources,
        use_store=plan.use_knowledge_store,
        top_k=plan.evidence_top_k,
        tenant_id=run.tenant_id,
    )
    elapsed_ms = int((time.monotonic() - started) * 1000)
    run.evidence = evidence
    claim_evidence = [
        common_pb2.ClaimEvidence(claim_id=claim_id, passage_ids=ids)
        for claim_id, ids in evidence.claim_passages.items()
    ]
    await run.save_stage(
        STAGE_RETRIEVE,
        ROLE_RETRIEVER,
        evidence.method,
        f"{len(evidence.passages)} passages for {len(run.claims)} claims",
        {
            "claims": [{"claimId": c.claim_id, "passageIds": list(c.passage_ids)} for c in claim_evidence],
            "passages": [_passage_json(p) for p in evidence.passages],
            "method": evidence.method,
        },
        elapsed_ms,
    )
    run.events.emit(
        "evidence_retrieved",
        factcheck_pb2.EvidenceRetrievedPayload(
            claims=claim_evidence, passages=evidence.passages, method=evidence.method, response_time_ms=elapsed_ms
        ),
    )


async def _verify_one(run: Run, index: int, model: str, claims: list) -> CheckerOutcome:
    request = checker_pb2.VerifyRequest(model=model, content=run.content, claims=claims)
    if run.evidence is not None:
        request.passages.extend(run.evidence.passages)
        request.evidence.extend(
            common_pb2.ClaimEvidence(claim_id=claim_id, passage_ids=ids)
            for claim_id, ids in run.evidence.claim_passages.items()
        )
    try:
        response = await run.downstream.checker.Verify(request, timeout=run.stage_timeout_s)
    except grpc.aio.AioRpcError as error:
        log.warning("%s: checker %d (%s) failed: %s", run.message_id, index, model, _rpc_error_text(error))
        return CheckerOutcome(index, model, error=_rpc_error_text(error))
    return CheckerOutcome(index, model, response=response)


async def verify(run: Run) -> None:
    """Phase 2: every checker at once; each result is stored and streamed as it arrives."""
    plan = run.plan
    run.events.emit(
        "verify_start",
        factcheck_pb2.VerifyStartPayload(checker_count=len(plan.checker_models), claim_count=len(run.claims)),
    )
    claim_protos = [claim.to_proto() for claim in run.claims]
    calls = [_verify_one(run, index, model, claim_protos) for index, model in enumerate(plan.checker_models)]
    for next_done in asyncio.as_completed(calls):
        outcome = await next_done
        run.checkers.append(outcome)
        if outcome.response is None:
            continue
        response = outcome.response
        verifications = [ClaimVerification.from_proto(v) for v in response.verifications]
        summary = VerdictSummary.from_proto(response.summary)
        await run.save_stage(
            verify_stage(outcome.index),
            ROLE_CHECKER,
            outcome.model,
            response.raw_text,
            _verification_data(run, verifications, summary, response.dropped_citations),
            response.response_time_ms,
        )
        run.events.emit(
            "checker_complete",
            factcheck_pb2.CheckerCompletePayload(
                model=outcome.model,
                verifications=response.verifications,
                summary=response.summary,
                response_time_ms=response.response_time_ms,
                checker_index=outcome.index,
                dropped_citations=response.dropped_citations,
            ),
        )

    succeeded = sorted((o for o in run.checkers if o.response is not None), key=lambda o: o.index)
    if not succeeded:
        raise RunFailed(ALL_CHECKERS_FAILED)
    run.consensus = calculate_consensus(
        run.claims, [[ClaimVerification.from_proto(v) for v in o.response.verifications] for o in succeeded]
    )
    metrics.record_verdicts(item.consensus_verdict for item in run.consensus)
    failed = sorted((o for o in run.checkers if o.response is None), key=lambda o: o.index)
    run.events.emit(
        "all_checkers_complete",
        factcheck_pb2.AllCheckersCompletePayload(
            consensus=[item.to_proto() for item in run.consensus],
            checker_count=len(succeeded),
            failed_checkers=[
                factcheck_pb2.CheckerFailure(model=o.model, checker_index=o.index, message=o.error or "")
                for o in failed
            ],
        ),
    )


def _verification_data(run: Run, verifications, summary: VerdictSummary, dropped_citations: int) -> dict[str, Any]:
    """The verify row's parsed_data: the spec's shape, plus the dropped-citation count when evidence was sent."""
    data: dict[str, Any] = {"verifications": [v.to_json() for v in verifications], "summary": summary.to_json()}
    if run.evidence is not None:
        data["droppedCitations"] = dropped_citations
    return data


def _succeeded_checker_models(run: Run) -> list[str]:
    return [o.model for o in sorted(run.checkers, key=lambda o: o.index) if o.response is not None]


async def _request_report(run: Run) -> reporter_pb2.ReportResponse:
    """The reporter's answer; when the reporter itself is unreachable, the spec's fallback table."""
    plan = run.plan
    checker_models = _succeeded_checker_models(run)
    try:
        return await run.downstream.reporter.Report(
            reporter_pb2.ReportRequest(
                model=plan.reporter_model,
                content=run.content,
                consensus=[item.to_proto() for item in run.consensus],
                total_claims=len(run.claims),
                checker_count=len(checker_models),
                extractor_model=plan.extractor_model,
                checker_models=checker_models,
            ),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: reporter failed (%s); writing the fallback table", run.message_id, _rpc_error_text(error))
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
            average_agreement_rate=average_agreement_rate(run.consensus),
        )


async def report(run: Run) -> None:
    """Phase 3 (also the no-claims report, which needs no model call)."""
    plan = run.plan
    run.events.emit("report_start", factcheck_pb2.ReportStartPayload())
    response = await _request_report(run)
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
    if note is not None:
        parsed["note"] = note
    failed = [o.model for o in run.checkers if o.response is None]
    if failed:
        # Spec: "Note reduced checker count in report metadata."
        parsed["failedCheckers"] = failed
        parsed["requestedCheckerCount"] = len(plan.checker_models)
    await run.save_stage(
        STAGE_REPORT, ROLE_REPORTER, plan.reporter_model, response.report_text, parsed, response.response_time_ms
    )

    payload = factcheck_pb2.ReportCompletePayload(
        model=plan.reporter_model,
        summary=factcheck_pb2.ReportSummary(
            verified=response.summary.verified,
            disputed=response.summary.disputed,
            unverifiable=response.summary.unverifiable,
            note=note,
        ),
        response_time_ms=response.response_time_ms,
        report_text=response.report_text,
        fallback=response.fallback,
    )
    if score is not None:
        payload.reliability_score = score
    run.events.emit("report_complete", payload)


async def title(run: Run) -> None:
    plan = run.plan
    try:
        response = await run.downstream.reporter.Title(
            reporter_pb2.TitleRequest(model=plan.reporter_model, question=plan.question, content=run.content),
            timeout=run.stage_timeout_s,
        )
        text = response.title
    except grpc.aio.AioRpcError as error:
        log.warning("%s: title failed (%s); using the question", run.message_id, _rpc_error_text(error))
        text = " ".join(plan.question.split())[:80]
    await run.write(run.store.set_title, run.message_id, text)
    run.events.emit("title_complete", factcheck_pb2.TitleCompletePayload(title=text))


async def finish(run: Run, status: str) -> None:
    await run.write(run.store.set_status, run.message_id, status)
    metrics.record_run(status)
    run.events.emit(
        "complete", factcheck_pb2.CompletePayload(status=factcheck_pb2.MessageStatus.Value(f"MESSAGE_STATUS_{status}"))
    )


async def fail(run: Run, message: str) -> None:
    """End the run with the spec's error event; one attempt to record FAILED (the error may be the database)."""
    try:
        await asyncio.to_thread(run.store.set_status, run.message_id, "FAILED")
    except Exception:  # the error event must still reach the caller
        log.exception("%s: could not record FAILED status", run.message_id)
    metrics.record_run("FAILED")
    run.events.emit("error", factcheck_pb2.ErrorPayload(message=message))


async def _stages(run: Run):
    """The steps after `start`, decided as the run goes (no claims → no verification)."""
    if run.plan.generates:
        yield generate
    yield extract
    if run.claims:
        if await _has_evidence(run):
            yield retrieve
        yield verify
    yield report
    yield title


async def run_pipeline(run: Run) -> None:
    """The spec's sequence. Between stages, a spent global budget ends the run as PARTIAL."""
    started = time.monotonic()
    try:
        await start(run)
        async for step in _stages(run):
            if run.out_of_time():
                log.warning("%s: global budget spent before %s; ending as PARTIAL", run.message_id, step.__name__)
                await finish(run, "PARTIAL")
                return
            step_started = time.monotonic()
            await step(run)
            metrics.record_stage(step.__name__, time.monotonic() - step_started)
        await finish(run, "COMPLETE")
    except RunFailed as failure:
        await fail(run, str(failure))
    except Exception:
        log.exception("%s: run failed unexpectedly", run.message_id)
        await fail(run, INTERNAL_ERROR)
    finally:
        metrics.record_stage("run", time.monotonic() - started)
        run.events.close()
