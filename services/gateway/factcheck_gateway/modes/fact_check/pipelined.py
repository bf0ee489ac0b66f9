"""Pipelined verification (FactCheckConfig.pipelined): checkers verify claims while they are extracted.

The extractor streams claims as its model writes them (ExtractorService.ExtractStream).
Each group of claims that arrives is stored as a `claims_extracted` event, gets its
evidence (when retrieval runs; labels go on across groups, so the evidence equals one
retrieval for all claims), and is queued for every checker. A checker verifies its
queue in micro-batches of at most `pipelined_batch_claims` claims with at most
`pipelined_batches_in_flight` calls at once, so claims that arrive while its calls run
are batched together; each verified batch is stored as a `checker_batch_complete`
event.

Everything else is the sequential pipeline's own steps (steps.py, verification.py),
fed from here: `extract` stores the extract row and extract_complete from the stream's
final result (the same as Extract's); `store_evidence` the retrieve row; `verify` emits
verify_start and, as each checker's last batch is done, stores its verify_i row and
checker_complete holding all its verdicts (its batches merged in claim order: raw texts
joined by a blank line, response times and dropped citations added up), then the
consensus. So the events keep a sequential run's order (docs/api.md#events), stored rows have its shape, and
consensus, report and result are those of a sequential run with the same verdicts.

Deadlines: the stream has the per-stage timeout; so does each batch call, and once the
extraction has ended every checker must be done within one more per-stage timeout.
A batch that fails fails its checker (its other calls are cancelled), as a failed Verify
does. Cancelling the run cancels the stream and every batch call in flight.

A run resumed after its gateway died continues sequentially from its stored stages
(`applies`): once a pipelined extraction has started, the batches an earlier attempt
sent cannot be told apart from ones it did not, so the resumed run calls Extract and
Verify for whatever is not stored yet. The events it already stored stay, and seq goes on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import grpc

from factcheck.core.domain import ExtractedClaim
from factcheck.v1 import checker_pb2, common_pb2, extractor_pb2, factcheck_pb2
from factcheck_gateway.knowledge.retrieval import Evidence
from factcheck_gateway.modes.fact_check import steps as sequential
from factcheck_gateway.modes.fact_check import thresholds
from factcheck_gateway.modes.fact_check.audit import audit_response
from factcheck_gateway.modes.fact_check.stages import STAGE_EXTRACT, verify_stage
from factcheck_gateway.modes.fact_check.state import CheckerOutcome, FactCheckRun
from factcheck_gateway.modes.fact_check.steps import EXTRACTION_FAILED
from factcheck_gateway.modes.fact_check.verification import verify
from factcheck_gateway.runs.run import RunFailed, rpc_error_text, rpc_failure, stage_failure

log = logging.getLogger("factcheck.gateway.pipelined")

BROKEN_STREAM = "the extractor's stream {problem}"


def applies(run: FactCheckRun) -> bool:
    """Whether this run extracts and verifies pipelined: asked for, and no extraction begun by an earlier attempt."""
    return run.plan.pipelined and STAGE_EXTRACT[0] not in run.stored and not run.events.emitted("extract_start")


async def extract_and_verify(run: FactCheckRun) -> None:
    """Extraction, retrieval and verification, overlapped; what the sequential steps store, stored."""
    await thresholds.for_run(run)  # before any batch is sent: each takes its checker's from the run
    pipeline = _Pipeline(run, await sequential.has_evidence_to_search(run))
    try:
        await sequential.extract(run, call=pipeline.extraction)
        if not run.claims:
            return
        if pipeline.evidence is not None:
            await sequential.store_evidence(run, pipeline.evidence, pipeline.retrieval_ms)
        await verify(run, call=pipeline.checker_outcome)
    finally:
        await pipeline.stop()


@dataclass
class _Checker:
    """One checker's share of a pipelined run."""

    index: int
    model: str
    queued: list[common_pb2.Claim] = field(default_factory=list)
    sent: int = 0  # batches sent so far (the next one is sent + 1)
    in_flight: set[asyncio.Task] = field(default_factory=set)
    answers: dict[int, checker_pb2.VerifyResponse] = field(default_factory=dict)  # by batch number
    failure: dict[str, str] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class _Pipeline:
    def __init__(self, run: FactCheckRun, with_evidence: bool) -> None:
        self._run = run
        self._checkers = [_Checker(index, model) for index, model in enumerate(run.plan.checker_models)]
        # (with_evidence: there is a retriever, and something for it to search)
        retriever = run.retriever if with_evidence else None
        self.evidence: Evidence | None = Evidence(method=retriever.method) if retriever is not None else None
        self.retrieval_ms = 0
        self._claims: list[common_pb2.Claim] = []  # streamed so far, in order
        self._groups = 0  # claims_extracted events so far
        self._content: str | None = None  # the analysed content, from the stream's first message
        self._extraction_over = False
        self._verify_deadline: float | None = None  # set when the extraction ends
        self._reader: asyncio.Task | None = None
        self._messages: asyncio.Queue = asyncio.Queue()  # the stream's messages, then None or its error

    # --- extraction ---------------------------------------------------------------------------------

    async def extraction(self, run: FactCheckRun) -> extractor_pb2.ExtractResponse:
        """`extract`'s call: the streamed extraction, its claims sent on as they arrive; its final result.

        gRPC errors of the stream propagate (extract makes them the extraction's failure, which is fatal).
        """
        plan = run.plan
        call = run.downstream.extractor.ExtractStream(
            extractor_pb2.ExtractStreamRequest(
                model=plan.extractor_model, content=run.content, max_content_length=plan.max_content_length
            ),
            timeout=run.stage_timeout_s,
        )
        messages = self._messages
        self._reader = asyncio.create_task(_read(call, messages))
        result: extractor_pb2.ExtractResponse | None = None
        while result is None:
            arrived = [await messages.get()]
            while not messages.empty():  # what arrived while the last group was stored goes in one group
                arrived.append(messages.get_nowait())
            claims = []
            for message in arrived:
                if isinstance(message, BaseException):
                    raise message
                if message is None:
                    self._broken(run, "ended without its result")
                if self._content is None:
                    self._content = message.content
                claims += message.claims
                if message.HasField("result"):
                    result = message.result
                    break
            if claims:
                await self._extracted(claims)
        if list(result.claims) != self._claims:
            self._broken(run, "sent claims that its result does not hold")
        self._extraction_over = True
        self._verify_deadline = time.monotonic() + run.stage_timeout_s
        for checker in self._checkers:
            self._send(checker)
        return result

    def _broken(self, run: FactCheckRun, problem: str) -> None:
        message = BROKEN_STREAM.format(problem=problem)
        log.error("%s: %s", run.message_id, message)
        run.failures.append(stage_failure(STAGE_EXTRACT[0], run.plan.extractor_model, "INTERNAL", message))
        raise RunFailed(EXTRACTION_FAILED)

    async def _extracted(self, claims: list[common_pb2.Claim]) -> None:
        """New claims: stored as one claims_extracted event, given their evidence, queued for every checker."""
        run = self._run
        self._claims += claims
        self._groups += 1
        await run.emit(
            "claims_extracted",
            factcheck_pb2.ClaimsExtractedPayload(claims=claims, batch=self._groups, total_claims=len(self._claims)),
        )
        if self.evidence is not None:
            assert run.retriever is not None  # evidence is wanted only with one
            plan = run.plan
            started = time.monotonic()
            await asyncio.to_thread(
                run.retriever.for_claims,
                [ExtractedClaim.from_proto(claim) for claim in claims],
                plan.sources,
                use_store=plan.use_knowledge_store,
                top_k=plan.evidence_top_k,
                tenant_id=run.tenant_id,
                into=self.evidence,
            )
            self.retrieval_ms += int((time.monotonic() - started) * 1000)
        for checker in self._checkers:
            checker.queued += claims
            self._send(checker)

    # --- verification -------------------------------------------------------------------------------

    def _send(self, checker: _Checker) -> None:
        """Start batches from the checker's queue while it has calls to spare; note when it is done."""
        plan = self._run.plan
        while checker.failure is None and checker.queued and len(checker.in_flight) < plan.pipelined_batches_in_flight:
            batch, checker.queued = (
                checker.queued[: plan.pipelined_batch_claims],
                checker.queued[plan.pipelined_batch_claims :],
            )
            checker.sent += 1
            task = asyncio.create_task(self._verify_batch(checker, checker.sent, batch))
            checker.in_flight.add(task)
            task.add_done_callback(checker.in_flight.discard)
        if checker.failure is not None or (self._extraction_over and not checker.queued and not checker.in_flight):
            checker.done.set()

    def _batch_timeout_s(self) -> float:
        timeout = self._run.stage_timeout_s
        if self._verify_deadline is not None:
            timeout = min(timeout, max(self._verify_deadline - time.monotonic(), 0.001))
        return timeout

    async def _verify_batch(self, checker: _Checker, number: int, claims: list[common_pb2.Claim]) -> None:
        run = self._run
        request = checker_pb2.VerifyRequest(
            model=checker.model,
            content=self._content or run.content,
            claims=claims,
            strategy=run.plan.checker_strategy_proto,
        )
        if self.evidence is not None:
            evidence = [
                common_pb2.ClaimEvidence(claim_id=claim.id, passage_ids=self.evidence.claim_passages.get(claim.id, []))
                for claim in claims
            ]
            cited = {passage_id for item in evidence for passage_id in item.passage_ids}
            request.passages.extend(p for p in self.evidence.passages if p.id in cited)
            request.evidence.extend(evidence)
        try:
            await thresholds.apply(run, request)
            response = await run.downstream.checker.Verify(request, timeout=self._batch_timeout_s())
        except grpc.aio.AioRpcError as error:
            log.warning(
                "%s: checker %d (%s) failed on batch %d: %s",
                run.message_id,
                checker.index,
                checker.model,
                number,
                rpc_error_text(error),
            )
            self._fail(checker, rpc_failure(verify_stage(checker.index)[0], checker.model, error))
            return
        audit_response(request, response, run.plan.audit)
        checker.answers[number] = response
        payload = factcheck_pb2.CheckerBatchCompletePayload(
            model=checker.model,
            checker_index=checker.index,
            batch=number,
            verifications=response.verifications,
            summary=response.summary,
            response_time_ms=response.response_time_ms,
            dropped_citations=response.dropped_citations,
        )
        # Queued for storing in the run's order at once (FactCheckRun.emit does not wait for the database; a
        # commit that fails surfaces when the run flushes, before `complete`).
        await run.emit("checker_batch_complete", payload)
        checker.in_flight.discard(asyncio.current_task())
        self._send(checker)

    def _fail(self, checker: _Checker, failure: dict[str, str]) -> None:
        checker.failure = failure
        checker.queued = []
        for task in checker.in_flight:
            if task is not asyncio.current_task():
                task.cancel()
        checker.done.set()

    async def checker_outcome(
        self, run: FactCheckRun, index: int, model: str, claims: list[common_pb2.Claim]
    ) -> CheckerOutcome:
        """`verify`'s call for one checker: once all its batches are verified, their answers as one."""
        checker = self._checkers[index]
        await checker.done.wait()
        if checker.failure is not None:
            return CheckerOutcome(index, model, failure=checker.failure)
        answers = [checker.answers[number] for number in sorted(checker.answers)]
        verifications = [v for answer in answers for v in answer.verifications]
        if [v.claim_id for v in verifications] != [claim.id for claim in claims]:  # a bug: say so, as a failure
            failure = stage_failure(verify_stage(index)[0], model, "INTERNAL", "batches do not cover the claims")
            return CheckerOutcome(index, model, failure=failure)
        summary = common_pb2.VerdictSummary(
            verified=sum(answer.summary.verified for answer in answers),
            disputed=sum(answer.summary.disputed for answer in answers),
            unverifiable=sum(answer.summary.unverifiable for answer in answers),
        )
        merged = checker_pb2.VerifyResponse(
            model=model,
            raw_text="\n\n".join(answer.raw_text for answer in answers),
            verifications=verifications,
            summary=summary,
            response_time_ms=sum(answer.response_time_ms for answer in answers),
            dropped_citations=sum(answer.dropped_citations for answer in answers),
            entailment=[item for answer in answers for item in answer.entailment],
        )
        return CheckerOutcome(index, model, response=merged)

    # --- the end --------------------------------------------------------------------------------------

    async def stop(self) -> None:
        """Cancel the stream and every batch call still running."""
        tasks = [task for checker in self._checkers for task in checker.in_flight]
        if self._reader is not None:
            tasks.append(self._reader)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _read(call, messages: asyncio.Queue) -> None:
    """The stream's messages into the queue, then None; or the error that ended it (raised by the reader of
    the queue: a gRPC error is the extraction's failure, anything else a bug)."""
    try:
        async for message in call:
            messages.put_nowait(message)
        messages.put_nowait(None)
    except Exception as error:  # handed to the run's task, never lost
        messages.put_nowait(error)
