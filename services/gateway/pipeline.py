"""One fact-check run as a small set of async steps (spec sections B, C, F).

Each step emits its events, calls one downstream service within the per-stage
deadline and stores its stage row the moment it has a result, so a later failure
loses nothing already done. `run_pipeline` chains the steps; pipelined runs
(services/gateway/pipelined.py) feed the same steps from a streamed extraction.

Runs are durable: every event is stored with the stage row it reports (one fenced
commit, `StageStore.commit_run`), and a run resumed on another gateway starts with
`Run.stored` holding the stages already done: each step then takes its result from
the stored row instead of calling its model again, and the events it already sent are
not sent twice (`RunEvents`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict, ParseDict
from sqlalchemy.exc import InterfaceError, OperationalError

from factcheck.domain import ClaimConsensus, ClaimVerification, ExtractedClaim, VerdictSummary
from factcheck.fallback_report import NO_CLAIMS_NOTE, NO_CLAIMS_REPORT, average_agreement_rate, build_fallback_report
from factcheck.observability import metrics
from factcheck.text_safety import excerpt, first_line
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
from services.gateway.events import RunEvents
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
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_PARTIAL,
    StageStore,
    verify_stage,
)
from services.gateway.store.store import FinalState, LeaseLost, RunCommit, StageRecord, StageRow, StoredEvent
from services.gateway.store.writer import StoreWriter
from services.gateway.validation import RunPlan

log = logging.getLogger("factcheck.gateway.pipeline")

EXTRACTION_FAILED = "Claim extraction failed. Cannot proceed with verification."
ALL_CHECKERS_FAILED = "All verification checkers failed."
INTERNAL_ERROR = "The fact-check failed unexpectedly; the stages completed so far are stored."
STORE_FAILED = "The results database stayed unavailable, so the run was stopped; stages stored before are kept."
CANCELLED_BY_CALLER = "Cancelled by the caller."
# How long a write may keep failing (database restarting, SQLite lock held) before the run gives up
# (FACTCHECK_STORE_RETRY_BUDGET_S).
STORE_RETRY_BUDGET_S = 20.0
STORE_RETRY_FIRST_DELAY_S, STORE_RETRY_MAX_DELAY_S = 0.1, 2.0
# A run's last word (FAILED after a database outage) is retried until the database is back.
FINAL_WRITE_MAX_DELAY_S = 5.0
# Causes quoted in failures stay short: they travel in events, statuses and table cells.
MAX_CAUSE_CHARS = 300


class RunFailed(Exception):
    """A failure the spec treats as fatal: the message goes to the caller as an `error` event."""


def stage_failure(stage: str, model: str | None, code: str, message: str) -> dict[str, str]:
    """One failed stage's cause, as stored in messages.failures and sent in StageFailure."""
    return {
        "stage": stage,
        "model": excerpt(model or "", 200),
        "code": code,
        "message": excerpt(message, MAX_CAUSE_CHARS),
    }


def rpc_failure(stage: str, model: str | None, error: grpc.aio.AioRpcError) -> dict[str, str]:
    return stage_failure(stage, model, error.code().name, error.details() or "")


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
    failure: dict[str, str] | None = None
    stored: bool = False  # taken from an earlier attempt's stage row
    _verifications: list[ClaimVerification] | None = field(default=None, repr=False)

    def verifications(self) -> list[ClaimVerification]:
        """The response's verdicts as domain objects, converted once."""
        if self._verifications is None:
            self._verifications = [ClaimVerification.from_proto(v) for v in self.response.verifications]
        return self._verifications


@dataclass
class Run:
    """Everything one run knows; the steps fill it in as they go."""

    plan: RunPlan
    message_id: str
    conversation_id: str
    store: StageStore
    downstream: Downstream
    events: RunEvents
    deadline: float  # time.monotonic() at which the global budget ends
    owner: str  # the gateway holding the run's lease; every write is fenced by it
    lease_s: float
    writer: StoreWriter  # group-commits the run's events and rows with other runs'
    retriever: Retriever | None = None
    # A resumed run: the stages an earlier attempt stored (by stage_type), and its title.
    stored: dict[str, StageRecord] = field(default_factory=dict)
    stored_title: str | None = None
    content: str = ""
    claims: list[ExtractedClaim] = field(default_factory=list)
    evidence: Evidence | None = None
    checkers: list[CheckerOutcome] = field(default_factory=list)
    consensus: list[ClaimConsensus] = field(default_factory=list)
    consensus_protos: list = field(default_factory=list)
    # Every failed stage's cause (a degraded run has some too); stored with the final status.
    failures: list[dict[str, str]] = field(default_factory=list)
    store_retry_budget_s: float = STORE_RETRY_BUDGET_S
    # Set by Cancel before the run's task is cancelled; None means the task was stopped for
    # another reason (lease lost, shutdown) and another gateway will finish the run.
    cancel_reason: str | None = None
    # The run's newest queued commit; each waits for the one before (see `emit`).
    _last_commit: asyncio.Future | None = field(default=None, repr=False)
    # The title call, started as soon as the content is known (its event still follows the report).
    title_call: asyncio.Task | None = field(default=None, repr=False)

    @property
    def tenant_id(self) -> str:
        """The run's tenant, from its plan (never from the calling RPC's context: a run outlives it)."""
        return self.plan.tenant_id

    @property
    def stage_timeout_s(self) -> float:
        return self.plan.timeout_ms / 1000

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    async def emit(self, field_name: str, payload, **commit) -> None:
        """Store the event (with `stage`, `title` or `final`, in one commit); it is seen once stored.

        Returns at once: the commit is queued behind the run's earlier ones (group-committed
        with other runs' by the StoreWriter), so the next model call never waits for the
        database. `flush` waits for the commits and raises what stopped them.
        """
        event = self.events.build(field_name, payload)
        if event is None:  # an earlier attempt of this run stored it
            return
        self.events.reserve(event)
        stored = (StoredEvent(event.seq, field_name, event.SerializeToString()),)
        commit = RunCommit(self.message_id, self.owner, self.lease_s, stored, **commit)
        previous = self._last_commit
        # Queued at once, not after the previous commit lands: consecutive commits of the run then
        # share a batch and one UPDATE. It stores nothing unless it continues what is stored.
        first_attempt = self.writer.submit(commit)
        self._last_commit = asyncio.ensure_future(self._store_after(previous, commit, event, first_attempt))

    async def _store_after(
        self, previous: asyncio.Future | None, commit: RunCommit, event, first_attempt: asyncio.Future
    ) -> None:
        if previous is not None:
            await previous  # the run's commits land in order; an earlier failure stops the later ones
        if await first_attempt is not None:
            await self.write(commit)  # retried (or its LeaseLost raised) now that the previous one landed
        self.events.confirm(event)

    def store_after(self, first: asyncio.Future) -> None:
        """Store nothing of the run before `first` (the write of its messages row) has landed."""
        self._last_commit = first

    async def flush(self) -> None:
        """Wait until everything emitted is stored; raises RunFailed or LeaseLost if it cannot be."""
        if self._last_commit is not None:
            await asyncio.shield(self._last_commit)

    async def settle(self) -> None:
        """Wait for the commits under way, whatever their outcome; forget the events they did not store."""
        if self._last_commit is not None:
            await asyncio.gather(asyncio.shield(self._last_commit), return_exceptions=True)
            self._last_commit = None
        self.events.rewind()

    async def save_stage(
        self,
        stage: tuple[str, int],
        role: str,
        model: str,
        content: str,
        parsed_data: dict[str, Any],
        response_time_ms: int,
        event: tuple[str, Any],
    ) -> None:
        """Store one stage row with the event that reports it, the moment its result is known."""
        stage_type, stage_order = stage
        row = StageRow(stage_type, stage_order, model, role, content, parsed_data, response_time_ms)
        await self.emit(*event, stage=row)

    async def write(self, commit: RunCommit, *, until_stored: bool = False) -> None:
        """One commit, retried while the database is unreachable or locked, for the run's
        store_retry_budget_s (`until_stored`: until it lands, however long the database is away).

        Every commit is idempotent (`commit_runs` recognises a commit that already landed),
        so a retry after a commit that did land never duplicates anything.
        """
        deadline = None if until_stored else time.monotonic() + self.store_retry_budget_s
        delay = STORE_RETRY_FIRST_DELAY_S
        max_delay = FINAL_WRITE_MAX_DELAY_S if until_stored else STORE_RETRY_MAX_DELAY_S
        while True:
            try:
                await self.writer.commit(commit)
                return
            except (OperationalError, InterfaceError) as error:
                if deadline is not None and time.monotonic() + delay > deadline:
                    self.failures.append(stage_failure("store", None, "UNAVAILABLE", first_line(error)))
                    raise RunFailed(STORE_FAILED) from error
                log.warning("%s: database write failed, retrying in %.1fs: %s", self.message_id, delay, error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, max_delay)


def _rpc_error_text(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {error.details()}"


def _stored_data(stage: StageRecord) -> dict[str, Any]:
    return stage.parsed_data or {}


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
    if plan.pipelined:
        config.pipelined = True
    await run.emit(
        "factcheck_start",
        factcheck_pb2.FactCheckStartPayload(
            conversation_id=run.conversation_id, message_id=run.message_id, config=config
        ),
    )
    run.content = plan.content_to_check or ""
    if not plan.generates:
        start_title(run)


async def generate(run: Run) -> None:
    """Phase 0. Spec: on failure or timeout the user's question becomes the content."""
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
        log.warning("%s: generation failed (%s); using the question as content", run.message_id, _rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_GENERATE[0], plan.generator_model, error))
        content, fallback = plan.question, True
        response_time_ms = int((time.monotonic() - started) * 1000)

    run.content = content
    start_title(run)
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


async def _extract_call(run: Run) -> extractor_pb2.ExtractResponse:
    plan = run.plan
    return await run.downstream.extractor.Extract(
        extractor_pb2.ExtractRequest(
            model=plan.extractor_model, content=run.content, max_content_length=plan.max_content_length
        ),
        timeout=run.stage_timeout_s,
    )


async def extract(run: Run, call=_extract_call) -> None:
    """Phase 1. Spec: extraction failure is fatal. `call` gets the extraction (pipelined mode: its own)."""
    plan = run.plan
    if (stored := run.stored.get(STAGE_EXTRACT[0])) is not None:
        data = _stored_data(stored)
        run.content = data.get("analyzedContent", run.content)
        run.claims = [ExtractedClaim.from_json(claim) for claim in data.get("claims", [])]
        return
    await run.emit("extract_start", factcheck_pb2.ExtractStartPayload())
    try:
        response = await call(run)
    except grpc.aio.AioRpcError as error:
        log.warning("%s: extraction failed: %s", run.message_id, _rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_EXTRACT[0], plan.extractor_model, error))
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
    if run.retriever is None:
        return False
    if plan.sources:
        return True
    if not plan.use_knowledge_store:
        return False
    known = run.retriever.known_to_have_documents(run.tenant_id)  # most runs: no database query
    if known is not None:
        return known
    return await asyncio.to_thread(run.retriever.should_run, plan.sources, True, tenant_id=run.tenant_id)


async def retrieve(run: Run) -> None:
    """Evidence for every claim, retrieved once so that all checkers judge the same passages.

    Runs only when there is evidence to search (`_has_evidence`); otherwise no event is
    sent and the verification prompt is exactly the spec's.
    """
    plan = run.plan
    if (stored := run.stored.get(STAGE_RETRIEVE[0])) is not None:
        data = _stored_data(stored)
        run.evidence = Evidence(
            passages=[ParseDict(p, common_pb2.Passage()) for p in data.get("passages", [])],
            claim_passages={c["claimId"]: list(c.get("passageIds", [])) for c in data.get("claims", [])},
            method=data.get("method", ""),
        )
        return
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


async def store_evidence(run: Run, evidence: Evidence, elapsed_ms: int) -> None:
    """The retrieve row and evidence_retrieved."""
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
        event=(
            "evidence_retrieved",
            factcheck_pb2.EvidenceRetrievedPayload(
                claims=claim_evidence, passages=evidence.passages, method=evidence.method, response_time_ms=elapsed_ms
            ),
        ),
    )


async def _verify_one(run: Run, index: int, model: str, claims: list) -> CheckerOutcome:
    if (stored := run.stored.get(verify_stage(index)[0])) is not None:
        return CheckerOutcome(index, model, response=_stored_verify_response(stored), stored=True)
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
        return CheckerOutcome(index, model, failure=rpc_failure(verify_stage(index)[0], model, error))
    return CheckerOutcome(index, model, response=response)


def _stored_verify_response(stage: StageRecord) -> checker_pb2.VerifyResponse:
    """A checker's answer as an earlier attempt of the run stored it."""
    data = _stored_data(stage)
    verifications = [ClaimVerification.from_json(v, checker_model=stage.model) for v in data.get("verifications", [])]
    return checker_pb2.VerifyResponse(
        model=stage.model or "",
        raw_text=stage.content or "",
        verifications=[v.to_proto() for v in verifications],
        summary=VerdictSummary.from_json(data.get("summary")).to_proto(),
        response_time_ms=stage.response_time_ms or 0,
        dropped_citations=int(data.get("droppedCitations", 0)),
    )


async def verify(run: Run, call=_verify_one) -> None:
    """Phase 2: every checker at once; each result is stored and streamed as it arrives.
    `call` gets one checker's outcome (pipelined mode: its batches, merged)."""
    plan = run.plan
    await run.emit(
        "verify_start",
        factcheck_pb2.VerifyStartPayload(checker_count=len(plan.checker_models), claim_count=len(run.claims)),
    )
    claim_protos = [claim.to_proto() for claim in run.claims]
    # Tasks of our own, so that a cancelled run cancels its checker calls too (as_completed would not).
    calls = [
        asyncio.create_task(call(run, index, model, claim_protos)) for index, model in enumerate(plan.checker_models)
    ]
    try:
        for next_done in asyncio.as_completed(calls):
            outcome = await next_done
            run.checkers.append(outcome)
            if outcome.response is None:
                run.failures.append(outcome.failure)
                continue
            if outcome.stored:
                continue
            response = outcome.response
            verifications = outcome.verifications()
            summary = VerdictSummary.from_proto(response.summary)
            await run.save_stage(
                verify_stage(outcome.index),
                ROLE_CHECKER,
                outcome.model,
                response.raw_text,
                _verification_data(run, verifications, summary, response.dropped_citations),
                response.response_time_ms,
                event=(
                    "checker_complete",
                    factcheck_pb2.CheckerCompletePayload(
                        model=outcome.model,
                        verifications=response.verifications,
                        summary=response.summary,
                        response_time_ms=response.response_time_ms,
                        checker_index=outcome.index,
                        dropped_citations=response.dropped_citations,
                    ),
                ),
            )
    finally:
        for call in calls:
            call.cancel()

    succeeded = sorted((o for o in run.checkers if o.response is not None), key=lambda o: o.index)
    if not succeeded:
        raise RunFailed(ALL_CHECKERS_FAILED)
    run.consensus = calculate_consensus(run.claims, [o.verifications() for o in succeeded])
    run.consensus_protos = [item.to_proto() for item in run.consensus]  # once, for the event and the report
    metrics.record_verdicts(item.consensus_verdict for item in run.consensus)
    failed = sorted((o for o in run.checkers if o.response is None), key=lambda o: o.index)
    await run.emit(
        "all_checkers_complete",
        factcheck_pb2.AllCheckersCompletePayload(
            consensus=run.consensus_protos,
            checker_count=len(succeeded),
            failed_checkers=[
                factcheck_pb2.CheckerFailure(
                    model=o.model, checker_index=o.index, message=f"{o.failure['code']}: {o.failure['message']}"
                )
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
                consensus=run.consensus_protos,
                total_claims=len(run.claims),
                checker_count=len(checker_models),
                extractor_model=plan.extractor_model,
                checker_models=checker_models,
            ),
            timeout=run.stage_timeout_s,
        )
    except grpc.aio.AioRpcError as error:
        log.warning("%s: reporter failed (%s); writing the fallback table", run.message_id, _rpc_error_text(error))
        run.failures.append(rpc_failure(STAGE_REPORT[0], plan.reporter_model, error))
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
    if STAGE_REPORT[0] in run.stored:
        return
    await run.emit("report_start", factcheck_pb2.ReportStartPayload())
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
    await run.save_stage(
        STAGE_REPORT,
        ROLE_REPORTER,
        plan.reporter_model,
        response.report_text,
        parsed,
        response.response_time_ms,
        event=("report_complete", payload),
    )


def start_title(run: Run) -> None:
    """Ask for the title as soon as the content is known: it needs only the question and the
    content, so it overlaps the rest of the run (its event still follows the report)."""
    if run.stored_title is None and run.title_call is None:
        run.title_call = asyncio.ensure_future(_call_title(run, run.content))


async def _call_title(run: Run, content: str) -> str:
    plan = run.plan
    try:
        response = await run.downstream.reporter.Title(
            reporter_pb2.TitleRequest(model=plan.reporter_model, question=plan.question, content=content),
            timeout=run.stage_timeout_s,
        )
        return response.title
    except grpc.aio.AioRpcError as error:
        log.warning("%s: title failed (%s); using the question", run.message_id, _rpc_error_text(error))
        run.failures.append(rpc_failure("title", plan.reporter_model, error))
        return " ".join(plan.question.split())[:80]


async def title(run: Run) -> None:
    if run.stored_title is not None:
        return
    start_title(run)
    text = await run.title_call
    await run.emit("title_complete", factcheck_pb2.TitleCompletePayload(title=text), title=text)


def _failures_proto(failures: list[dict[str, str]]) -> list[factcheck_pb2.StageFailure]:
    return [factcheck_pb2.StageFailure(**failure) for failure in failures]


async def finish(run: Run, status: str) -> None:
    await run.emit(
        "complete",
        factcheck_pb2.CompletePayload(status=factcheck_pb2.MessageStatus.Value(f"MESSAGE_STATUS_{status}")),
        final=FinalState(status, failures=tuple(run.failures)),
    )
    await run.flush()  # `complete` only once every row is stored
    metrics.record_run(status)


async def fail(run: Run, message: str) -> None:
    """End the run with the spec's error event, carrying every failed stage's cause.

    FAILED is never lost: when the database is what failed, the caller is told at once and
    the same event (same seq) is stored as soon as the database answers again. Until then
    the run stays this gateway's (its task, and so its lease, lives on).
    """
    await run.settle()  # the commits under way land or fail; the error event follows the last stored one
    final = FinalState(STATUS_FAILED, error_message=message, failures=tuple(run.failures))
    event = run.events.build(
        "error", factcheck_pb2.ErrorPayload(message=message, failures=_failures_proto(run.failures))
    )
    metrics.record_run(STATUS_FAILED)
    if event is None:
        return
    stored = (StoredEvent(event.seq, "error", event.SerializeToString()),)
    commit = RunCommit(run.message_id, run.owner, run.lease_s, stored, final=final)
    try:
        await run.write(commit)
    except RunFailed:
        log.error(
            "%s: could not store FAILED yet; told the caller, storing it once the database answers", run.message_id
        )
        run.events.confirm(event)
        await run.write(commit, until_stored=True)
        log.info("%s: stored FAILED after the database came back", run.message_id)
        return
    run.events.confirm(event)


async def cancelled(run: Run) -> None:
    reason = run.cancel_reason or CANCELLED_BY_CALLER
    await run.emit(
        "cancelled",
        factcheck_pb2.CancelledPayload(reason=reason),
        final=FinalState(STATUS_CANCELLED, error_message=reason, failures=tuple(run.failures)),
    )
    await run.flush()
    metrics.record_run(STATUS_CANCELLED)


async def _stages(run: Run):
    """The steps after `start`, decided as the run goes (no claims → no verification).

    A resumed run whose report is stored goes straight to the title: its verification is done.
    """
    from services.gateway import pipelined  # builds on this module

    if run.plan.generates:
        yield generate
    if pipelined.applies(run):
        yield pipelined.extract_and_verify
    else:
        yield extract
        if run.claims and STAGE_REPORT[0] not in run.stored:
            if STAGE_RETRIEVE[0] in run.stored or await _has_evidence(run):
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
                await finish(run, STATUS_PARTIAL)
                return
            step_started = time.monotonic()
            await step(run)
            metrics.record_stage(step.__name__, time.monotonic() - step_started)
        await finish(run, STATUS_COMPLETE)
    except asyncio.CancelledError:
        if run.cancel_reason is None:
            raise  # lease lost or shutting down: the run is another gateway's (or a later start's) to finish
        await _end_quietly(run, cancelled(run))
    except LeaseLost:
        log.warning("%s: another gateway took the run over; this one stops", run.message_id)
    except RunFailed as failure:
        await _end_quietly(run, fail(run, str(failure)))
    except Exception:
        log.exception("%s: run failed unexpectedly", run.message_id)
        await _end_quietly(run, fail(run, INTERNAL_ERROR))
    finally:
        if run.title_call is not None and not run.title_call.done():
            run.title_call.cancel()  # the run ended before its title was needed
        metrics.record_stage("run", time.monotonic() - started)
        run.events.close()


async def _end_quietly(run: Run, ending) -> None:
    """A run's last write; if even that cannot land, recovery (this gateway's or another's) ends the run later."""
    try:
        await ending
    except LeaseLost:
        log.warning("%s: another gateway took the run over; this one stops", run.message_id)
    except RunFailed:
        log.error("%s: could not store the run's end; its lease will lapse and recovery will end it", run.message_id)
