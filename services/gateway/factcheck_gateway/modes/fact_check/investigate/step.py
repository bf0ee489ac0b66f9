"""The `investigate` stage of a fact-check run: between all_checkers_complete and the report.

Events: investigation_start (the queue), claim_investigated (one per claim, as it is resolved),
investigation_complete (the summary) with the stage row ("investigate", order 95) holding every
claim's evidence chain. CRITICAL claims' outcomes are then stored as pending reviews (when human
review is on). The report gets the consensus with every outcome in force applied, and an
"Investigation" section that marks pending claims; a resumed run takes all of it from the row.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from factcheck.core.domain import ClaimConsensus
from factcheck.v1 import investigation_pb2
from factcheck_gateway.modes.fact_check.investigate import contradictions, impact, records
from factcheck_gateway.modes.fact_check.investigate.decide import CONFIRMED, REFUTED, SUPERSEDED, UNVERIFIABLE
from factcheck_gateway.modes.fact_check.investigate.flags import select_candidates
from factcheck_gateway.modes.fact_check.investigate.loop import Investigator, LoopSettings, run_batches
from factcheck_gateway.modes.fact_check.stages import ROLE_INVESTIGATOR, STAGE_INVESTIGATE
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.reviews.review_store import PendingReview, ReviewStore
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.search.cache import SearchCache
from factcheck_gateway.search.knowledge import KnowledgeSearch
from factcheck_gateway.search.provider import KNOWLEDGE, SEARXNG, SearchProvider
from factcheck_gateway.search.searxng import SearxngSearch

# What a status in force does to the claim's consensus in the report.
REPORT_VERDICT = {CONFIRMED: "VERIFIED", REFUTED: "DISPUTED", SUPERSEDED: "DISPUTED", UNVERIFIABLE: "UNVERIFIABLE"}


def applies(run: FactCheckRun) -> bool:
    return run.plan.investigation is not None


async def investigate(run: FactCheckRun) -> None:
    options = run.plan.investigation
    assert options is not None  # the steps run this stage only when it applies
    if (stored := run.stored.get(STAGE_INVESTIGATE[0])) is not None:
        data = stored_data(stored)
        await _store_reviews(run, data)
        _use_outcomes(run, data)
        return
    started = time.monotonic()
    queue = select_candidates(run.claims, run.consensus, _claim_passages(run), run.plan.question)[: options.max_claims]
    queued = [records.queue_json(c) for c in queue]
    await run.emit(
        "investigation_start",
        investigation_pb2.InvestigationStartPayload(
            queue=[records.queued_proto(q) for q in queued],
            batch_size=options.batch_size,
            providers=list(options.providers),
            investigator_model=options.investigator_model,
        ),
    )
    claims: dict[str, dict[str, Any]] = {}

    async def resolved(work) -> None:
        decision = work.decision
        confirming = [f.result.text for f in work.found if decision is not None and f.id in decision.supporting]
        reassessed = impact.reassess(
            work.candidate.claim.claim,
            work.candidate.impact_tier,
            decision.status if decision is not None else "",
            confirming,
            run.plan.question,
        )
        claim = records.claim_json(work, options.human_review, reassessed)
        claims[claim["claimId"]] = claim
        await run.emit("claim_investigated", records.event_proto(claim))

    cache = SearchCache(asyncio.Semaphore(options.search_concurrency))
    async with httpx.AsyncClient(follow_redirects=False) as client:
        investigator = Investigator(
            _providers(run, client),
            cache,
            lambda request, timeout: run.downstream.checker.AssessEvidence(request, timeout=timeout),
            LoopSettings(
                batch_size=options.batch_size,
                results_per_query=options.results_per_query,
                investigator_model=options.investigator_model,
                authority=dict(options.authority),
                owners=dict(options.owners),
                model_limit=asyncio.Semaphore(options.model_concurrency),
                timeout_s=run.stage_timeout_s,
            ),
        )
        _, batches = await run_batches(investigator, queue, options.batch_size, resolved)
    ordered = [claims[q["claimId"]] for q in queued if q["claimId"] in claims]
    # Contradictions between the claims are resolved once both sides are known; a loser's status changes,
    # so its outcome is reported again (the last claim_investigated of a claim is the one in force).
    for claim_id in contradictions.resolve(ordered):
        await run.emit("claim_investigated", records.event_proto(claims[claim_id]))
    summary = records.summary_json(ordered, batches, cache.calls)
    elapsed_ms = int((time.monotonic() - started) * 1000)
    data = {
        "investigatorModel": options.investigator_model,
        "providers": list(options.providers),
        "batchSize": options.batch_size,
        "humanReview": options.human_review,
        "queue": queued,
        "claims": ordered,
        "summary": summary,
        "cacheHits": cache.hits,
    }
    await run.save_stage(
        STAGE_INVESTIGATE,
        ROLE_INVESTIGATOR,
        options.investigator_model,
        _row_text(summary),
        data,
        elapsed_ms,
        event=(
            "investigation_complete",
            investigation_pb2.InvestigationCompletePayload(
                summary=records.summary_proto(summary), response_time_ms=elapsed_ms
            ),
        ),
    )
    await run.flush()  # the row first: a pending review always has its evidence chain stored
    await _store_reviews(run, data)
    _use_outcomes(run, data)


def _row_text(summary: Mapping[str, Any]) -> str:
    return (
        f"{summary['investigated']} claims investigated: {summary['confirmed']} confirmed, "
        f"{summary['refuted']} refuted, {summary['superseded']} superseded, {summary['unverifiable']} unverifiable; "
        f"{summary['pendingReview']} pending review"
    )


def _claim_passages(run: FactCheckRun) -> dict[str, list[str]]:
    if run.evidence is None:
        return {}
    texts = {p.id: p.text for p in run.evidence.passages}
    return {cid: [texts[p] for p in ids if p in texts] for cid, ids in run.evidence.claim_passages.items()}


def _providers(run: FactCheckRun, client: httpx.AsyncClient) -> list[SearchProvider]:
    options = run.plan.investigation
    assert options is not None  # called by investigate
    providers: list[SearchProvider] = []
    for name in options.providers:
        if name == KNOWLEDGE and run.retriever is not None:
            providers.append(
                KnowledgeSearch(
                    run.retriever, run.plan.sources, use_store=run.plan.use_knowledge_store, tenant_id=run.tenant_id
                )
            )
        elif name == SEARXNG and options.searxng_url:
            providers.append(
                SearxngSearch(
                    options.searxng_url, client, timeout_s=options.searxng_timeout_s, language=options.searxng_language
                )
            )
    return providers


async def _store_reviews(run: FactCheckRun, data: Mapping[str, Any]) -> None:
    pending = [
        PendingReview(
            claim_id=c["claimId"],
            claim=c["claim"],
            origin_flags=tuple(c["flags"]),
            proposed_status=c["decision"]["status"],
            confidence=c["decision"]["confidence"],
            reasoning=c["decision"]["reasoning"],
        )
        for c in data.get("claims", [])
        if c["reviewRequired"]
    ]
    if pending:
        await asyncio.to_thread(ReviewStore(run.store.engine).add_pending, run.message_id, run.tenant_id, pending)


def _use_outcomes(run: FactCheckRun, data: Mapping[str, Any]) -> None:
    """The report's consensus: each claim's status in force (none while pending) replaces its verdict."""
    run.investigation = dict(data)
    run.consensus = adjusted_consensus(run.consensus, data.get("claims", []))
    run.consensus_protos = [item.to_proto() for item in run.consensus]


def adjusted_consensus(consensus: Sequence[ClaimConsensus], claims: Sequence[Mapping[str, Any]]) -> list:
    outcomes = {c["claimId"]: c for c in claims}
    adjusted = []
    for item in consensus:
        claim = outcomes.get(item.claim_id)
        status = records.status_in_force(claim, None) if claim else None
        if status is None:
            adjusted.append(item)
            continue
        assert claim is not None  # a status comes only with its claim
        verdict = REPORT_VERDICT[status]
        confidence = claim["decision"]["confidence"]
        adjusted.append(
            dataclasses.replace(
                item,
                consensus_verdict=verdict,
                consensus_confidence="HIGH" if confidence >= 0.8 else "MEDIUM" if confidence >= 0.5 else "LOW",
                correction=claim["decision"]["reasoning"] if verdict == "DISPUTED" else None,
            )
        )
    return adjusted
