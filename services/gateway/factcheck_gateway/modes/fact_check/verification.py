"""The fact-check's verification step: every checker at once, each result stored as it arrives, then the
consensus. Pipelined runs (pipelined.py) feed it their batches instead of one Verify call per checker.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc

from factcheck.core.domain import NOT_IN_FORMAT, ClaimVerification, VerdictSummary, not_addressed_evidence
from factcheck.core.entailment_rules import claim_entailment_from_json, claim_entailment_json
from factcheck.kit.observability import metrics
from factcheck.v1 import checker_pb2, common_pb2, factcheck_pb2
from factcheck_gateway.consensus import calculate_consensus, weights
from factcheck_gateway.modes.fact_check import citations, thresholds
from factcheck_gateway.modes.fact_check.audit import audit_response
from factcheck_gateway.modes.fact_check.stages import ROLE_CHECKER, verify_stage
from factcheck_gateway.modes.fact_check.state import CheckerOutcome, FactCheckRun
from factcheck_gateway.runs.run import RunFailed, rpc_error_text, rpc_failure, stage_failure, stored_data
from factcheck_gateway.store.records import StageRecord
from factcheck_gateway.verification_cache import cached

log = logging.getLogger("factcheck.gateway.fact_check")

ALL_CHECKERS_FAILED = "All verification checkers failed."
UNREADABLE_VERIFICATION = not_addressed_evidence(NOT_IN_FORMAT)


async def _verify_one(run: FactCheckRun, index: int, model: str, claims: list) -> CheckerOutcome:
    if (stored := run.stored.get(verify_stage(index)[0])) is not None:
        return CheckerOutcome(index, model, response=_stored_verify_response(stored), stored=True)
    request = checker_pb2.VerifyRequest(
        model=model, content=run.content, claims=claims, strategy=run.plan.checker_strategy_proto
    )
    if run.evidence is not None:
        request.passages.extend(run.evidence.passages)
        request.evidence.extend(
            common_pb2.ClaimEvidence(claim_id=claim_id, passage_ids=ids)
            for claim_id, ids in run.evidence.claim_passages.items()
        )
    citations.verify_request(run, request)
    await thresholds.apply(run, request)
    try:
        response = await cached.verify(run, request)
    except grpc.aio.AioRpcError as error:
        log.warning("%s: checker %d (%s) failed: %s", run.message_id, index, model, rpc_error_text(error))
        return CheckerOutcome(index, model, failure=rpc_failure(verify_stage(index)[0], model, error))
    audit_response(request, response, run.plan.audit)  # cached answers too: the same passages, the same audit
    return CheckerOutcome(index, model, response=response)


def _stored_verify_response(stage: StageRecord) -> checker_pb2.VerifyResponse:
    """A checker's answer as an earlier attempt of the run stored it."""
    data = stored_data(stage)
    verifications = [ClaimVerification.from_json(v, checker_model=stage.model) for v in data.get("verifications", [])]
    response = checker_pb2.VerifyResponse(
        model=stage.model or "",
        raw_text=stage.content or "",
        verifications=[v.to_proto() for v in verifications],
        summary=VerdictSummary.from_json(data.get("summary")).to_proto(),
        response_time_ms=stage.response_time_ms or 0,
        dropped_citations=int(data.get("droppedCitations", 0)),
        entailment=[claim_entailment_from_json(item) for item in data.get("entailment", [])],
    )
    citations.stored_supports(data, response)
    return response


async def verify(run: FactCheckRun, call=_verify_one) -> None:
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
            if unread := sum(1 for v in verifications if v.evidence == UNREADABLE_VERIFICATION):
                # Counted as UNVERIFIABLE (as a claim the checker did not address), and named as the checker's
                # failure to answer in the format.
                cause = f"{NOT_IN_FORMAT} for {unread} of {len(verifications)} claims"
                run.failures.append(stage_failure(verify_stage(outcome.index)[0], outcome.model, "UNREADABLE", cause))
            summary = VerdictSummary.from_proto(response.summary)
            data = _verification_data(run, verifications, summary, response.dropped_citations, response.entailment)
            used = thresholds.stage_json(outcome.model, verifications, await thresholds.for_run(run))
            if used is not None:  # a binary checker: the threshold its verdicts were read against
                data[thresholds.STAGE_KEY] = used
            citations.verify_data(run, data, response)
            await run.save_stage(
                verify_stage(outcome.index),
                ROLE_CHECKER,
                outcome.model,
                response.raw_text,
                data,
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
    weighting = await weights.for_run(run, plan.checker_models)
    models = [o.model for o in succeeded] if weighting.weights is not None else []
    run.consensus = calculate_consensus(run.claims, [o.verifications() for o in succeeded], weighting.weights, models)
    run.consensus_protos = [item.to_proto() for item in run.consensus]  # once, for the event and the report
    metrics.record_verdicts(item.consensus_verdict for item in run.consensus)
    failed_checkers = []
    for o in sorted((o for o in run.checkers if o.response is None), key=lambda o: o.index):
        assert o.failure is not None  # a checker without a response has its failure
        failed_checkers.append(
            factcheck_pb2.CheckerFailure(
                model=o.model, checker_index=o.index, message=f"{o.failure['code']}: {o.failure['message']}"
            )
        )
    payload = factcheck_pb2.AllCheckersCompletePayload(
        consensus=run.consensus_protos, checker_count=len(succeeded), failed_checkers=failed_checkers
    )
    if plan.consensus == weights.DEFAULT:
        await run.emit("all_checkers_complete", payload)  # the majority's: no consensus_weighting
    else:
        run.consensus_weighting = weighting.to_proto(plan.checker_models)
        payload.consensus_weighting.CopyFrom(run.consensus_weighting)
        # The weights are stored with the event that reports them: a resumed run and GetResult use these.
        await run.emit("all_checkers_complete", payload, stage=weighting.stage_row())
    await citations.after_verify(run)


def _verification_data(
    run: FactCheckRun, verifications, summary: VerdictSummary, dropped_citations: int, entailment=()
) -> dict[str, Any]:
    """The verify row's parsed_data: the verifications and their summary, plus the dropped-citation count when
    evidence was sent, plus every entailment agent's output per claim and passage under "entailment" (entailment
    strategy)."""
    data: dict[str, Any] = {"verifications": [v.to_json() for v in verifications], "summary": summary.to_json()}
    if run.evidence is not None:
        data["droppedCitations"] = dropped_citations
    if entailment:
        data["entailment"] = [claim_entailment_json(item) for item in entailment]
    return data
