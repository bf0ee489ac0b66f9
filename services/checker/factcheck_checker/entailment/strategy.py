"""The entailment checker strategy (VerifyRequest.strategy = CHECKER_STRATEGY_ENTAILMENT_AGENTS):
each claim against each of its evidence passages with the four agents, one item per (claim,
passage), the source type being the passage's source title, URL and authority.

Per claim, the passages' final outputs combine like the default judge's: a SUPPORTED passage wins
(the most confident), else a CONTRADICTED one, else NOT ENOUGH INFO. As fact-check verdicts:

    SUPPORTED -> VERIFIED, CONTRADICTED -> DISPUTED, NOT ENOUGH INFO -> UNVERIFIABLE
    final confidence 70-100 -> HIGH, 40-69 -> MEDIUM, 0-39 -> LOW   (the calibration anchors' bands)

A claim with no passage is UNVERIFIABLE, LOW, with no model call (the empty-source rule). A claim
all of whose items failed is UNVERIFIABLE, LOW, naming the failure; when every item of every claim
failed, the checker fails as a whole with the first failure, as the default strategy does when its
model fails. Every agent output travels back in VerifyResponse.entailment.
"""

from __future__ import annotations

import asyncio
import json

from factcheck.core.domain import Citation, ClaimVerification, VerdictSummary
from factcheck.core.entailment_agents import AgentFailed, AgentModels, ItemOutcome, judge_item
from factcheck.core.entailment_rules import final_json
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelError
from factcheck.text.evidence_text import passage_title
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2, common_pb2
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.citations import resolve_citations
from factcheck_checker.entailment.agents import run_agent

# Items judged at once within one Verify call (each item is up to four sequential model calls).
MAX_PARALLEL_ITEMS = 8
_SPEC_VERDICT = {
    pb.ENTAILMENT_VERDICT_SUPPORTED: "VERIFIED",
    pb.ENTAILMENT_VERDICT_CONTRADICTED: "DISPUTED",
    pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO: "UNVERIFIABLE",
}
_PREFERENCE = {pb.ENTAILMENT_VERDICT_SUPPORTED: 2, pb.ENTAILMENT_VERDICT_CONTRADICTED: 1}


def confidence_band(final_confidence: int) -> str:
    if final_confidence >= 70:
        return "HIGH"
    if final_confidence >= 40:
        return "MEDIUM"
    return "LOW"


def source_type(passage: common_pb2.Passage) -> str:
    """What the reliability agent is told of a passage's source: title, URL, the caller's authority."""
    parts = [passage_title(passage) or "untitled source"]
    if passage.source_url:
        parts.append(f"({passage.source_url})")
    text = " ".join(parts)
    if passage.HasField("authority"):
        text += f"; caller-assigned authority {passage.authority:.2f} on a 0-1 scale"
    return text


async def verify_with_agents(
    client: ModelClient, request: checker_pb2.VerifyRequest, claim_passages: dict[str, list[str]], timeout_s: float
) -> checker_pb2.VerifyResponse:
    loop = asyncio.get_running_loop()
    started = loop.time()
    passages = {p.id: p for p in request.passages}
    models = AgentModels(*(request.model,) * 4)
    call = _AgentCall(client, loop.time() + timeout_s)
    slots = asyncio.Semaphore(MAX_PARALLEL_ITEMS)

    async def one(claim: common_pb2.Claim, passage: common_pb2.Passage) -> pb.ClaimEntailment:
        item = pb.EntailmentItem(claim=claim.claim, source_excerpt=passage.text, source_type=source_type(passage))
        async with slots:
            outcome = await judge_item(item, models, call)
        return _claim_entailment(claim.id, passage.id, item.source_type, outcome)

    jobs = {
        claim.id: [asyncio.ensure_future(one(claim, passages[pid])) for pid in claim_passages.get(claim.id, [])]
        for claim in request.claims
    }
    try:
        results = {cid: [await job for job in claim_jobs] for cid, claim_jobs in jobs.items()}
    finally:
        for claim_jobs in jobs.values():
            for job in claim_jobs:
                job.cancel()
    items = [entry for claim in request.claims for entry in results[claim.id]]
    if items and all(entry.HasField("error") for entry in items):
        assert call.first_error is not None  # (every item's error came from a failed call)
        raise call.first_error
    verifications = [_verification(claim.id, results[claim.id], request.model) for claim in request.claims]
    verifications, dropped = resolve_citations(verifications, passages)
    return checker_pb2.VerifyResponse(
        model=request.model,
        raw_text="\n".join(_raw_line(entry) for entry in items),
        verifications=[v.to_proto() for v in verifications],
        summary=VerdictSummary.count(v.verdict for v in verifications).to_proto(),
        response_time_ms=int((loop.time() - started) * 1000),
        usage=call.usage,
        dropped_citations=dropped,
        entailment=items,
    )


class _AgentCall:
    """run_agent with a shared deadline, ModelErrors as AgentFailed, reliability asked once per source type."""

    def __init__(self, client: ModelClient, deadline: float) -> None:
        self._client, self._deadline = client, deadline
        self._reliability: dict[str, asyncio.Future] = {}
        self.usage = common_pb2.TokenUsage()
        self.first_error: ModelError | None = None

    async def __call__(self, request: pb.RunEntailmentAgentRequest) -> pb.RunEntailmentAgentResponse:
        if request.WhichOneof("input") != "reliability":
            return await self._run(request)
        key = request.reliability.source_type
        if key not in self._reliability:  # the same input always gets the same rating: ask once
            self._reliability[key] = asyncio.ensure_future(self._run(request))
        return await asyncio.shield(self._reliability[key])

    async def _run(self, request: pb.RunEntailmentAgentRequest) -> pb.RunEntailmentAgentResponse:
        remaining = max(self._deadline - asyncio.get_running_loop().time(), 0.001)
        try:
            response = await run_agent(self._client, request, remaining)
        except ModelError as error:
            self.first_error = self.first_error or error
            raise AgentFailed(excerpt(error.message, 300)) from None
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            setattr(self.usage, name, getattr(self.usage, name) + getattr(response.usage, name))
        return response


def _claim_entailment(claim_id: str, passage_id: str, source: str, outcome: ItemOutcome) -> pb.ClaimEntailment:
    entry = pb.ClaimEntailment(claim_id=claim_id, passage_id=passage_id, source_type=source, failures=outcome.failures)
    for name in ("extractor", "reliability", "judge", "auditor"):
        agent = getattr(pb, f"ENTAILMENT_AGENT_{name.upper()}")
        output = outcome.output(agent)
        if output is not None:
            getattr(entry, name).CopyFrom(output)
    if outcome.final is not None:
        entry.final.CopyFrom(outcome.final)
    if outcome.error is not None:
        entry.error = outcome.error
    return entry


def _verification(claim_id: str, entries: list[pb.ClaimEntailment], model: str) -> ClaimVerification:
    judged = [e for e in entries if e.HasField("final")]
    if not judged:
        why = entries[0].error if entries else "No evidence passage for this claim: not enough info."
        return ClaimVerification(claim_id, "UNVERIFIABLE", why, None, "LOW", model)
    best = max(judged, key=lambda e: (_PREFERENCE.get(e.final.final_verdict, 0), e.final.final_confidence))
    final = best.final
    verdict = _SPEC_VERDICT[final.final_verdict]
    statement = best.extractor.statements[0].text if best.extractor.statements else ""
    reasons = list(best.judge.reasoning)
    if best.auditor.auditor_reasoning and not best.auditor.rejected:
        reasons += [f"Auditor: {reason}" for reason in best.auditor.auditor_reasoning]
    evidence = f"Entailment agents on {best.passage_id}: {' '.join(reasons)}".strip()
    correction = f"The source states: {statement}" if verdict == "DISPUTED" and statement else None
    if verdict == "DISPUTED" and correction is None:
        correction = "The source contradicts the claim."
    citations = (
        (Citation(passage_id=best.passage_id, quote=statement),) if statement and verdict != "UNVERIFIABLE" else ()
    )
    return ClaimVerification(
        claim_id, verdict, evidence, correction, confidence_band(final.final_confidence), model, citations
    )


def _raw_line(entry: pb.ClaimEntailment) -> str:
    if entry.HasField("final"):
        return f"{entry.claim_id} {entry.passage_id}: {json.dumps(final_json(entry.final), ensure_ascii=False)}"
    return f"{entry.claim_id} {entry.passage_id}: failed: {entry.error}"
