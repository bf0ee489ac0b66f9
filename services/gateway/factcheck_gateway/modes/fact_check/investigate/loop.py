"""The loop itself: each queued claim's query variants run in order against the search providers,
the new results are judged by the investigator model (CheckerService.AssessEvidence), and the
rules (decide.py) say after each variant whether the evidence suffices.

Claims run in batches of `batch_size`, in priority order, all of a batch at once; searches and
model calls share one limit each across the loop (the providers' and the model's rate limits).
A claim whose investigation fails (a provider or the model unreachable) is retried once, in a
later batch; a second failure makes it UNVERIFIABLE with the cause. Cancelling the run cancels
every claim under way.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from factcheck.text.text_safety import excerpt
from factcheck.v1 import common_pb2, investigation_pb2
from factcheck_gateway.modes.fact_check.investigate.authority import authority_of, domain_of, owner_of
from factcheck_gateway.modes.fact_check.investigate.decide import (
    UNVERIFIABLE,
    Assessed,
    Decision,
    base_confidence,
    decide,
)
from factcheck_gateway.modes.fact_check.investigate.flags import Candidate
from factcheck_gateway.modes.fact_check.investigate.queries import query_variants
from factcheck_gateway.search.cache import SearchCache
from factcheck_gateway.search.provider import SearchFailed, SearchProvider, SearchResult

STANCE_NAMES = {
    investigation_pb2.EVIDENCE_STANCE_SUPPORTS: "SUPPORTS",
    investigation_pb2.EVIDENCE_STANCE_REFUTES: "REFUTES",
    investigation_pb2.EVIDENCE_STANCE_IRRELEVANT: "IRRELEVANT",
}
MAX_RESULT_CHARS = 4_000
FAILED = "investigation failed"


class InvestigationFailed(Exception):
    """A provider or the investigator model could not answer; the claim is retried once."""


@dataclass
class Found:
    """One search result of a claim, with its assessment once judged."""

    id: str  # E1, E2, ... within the claim
    result: SearchResult
    authority: float
    domain: str
    owner: str
    stance: str = "IRRELEVANT"
    temporal: bool = False
    reason: str = ""

    def assessed(self) -> Assessed:
        return Assessed(
            self.id,
            self.stance,
            self.temporal,
            self.authority,
            self.owner,
            self.result.text,
            self.result.title,
            self.result.published_at,
            self.domain,
        )

    def to_json(self, counted: set[str]) -> dict[str, Any]:
        r = self.result
        return {
            "id": self.id,
            "title": r.title,
            "url": r.url,
            "text": r.text,
            "sourceId": r.source_id,
            "publishedAt": r.published_at,
            "provider": r.provider,
            "authority": self.authority,
            "domain": self.domain,
            "owner": self.owner,
            "stance": self.stance,
            "temporal": self.temporal,
            "reason": self.reason,
            "independent": self.id in counted,
        }


@dataclass
class ClaimInvestigation:
    """Everything the loop did for one claim: its evidence chain."""

    candidate: Candidate
    queries: list[dict[str, Any]] = field(default_factory=list)
    found: list[Found] = field(default_factory=list)
    decision: Decision | None = None
    succeeded_variant: str = ""
    searches: int = 0
    model_calls: int = 0
    elapsed_ms: int = 0
    batch: int = 0
    attempts: int = 0
    failure: str | None = None
    dropped_results: int = 0  # malformed search result items, never evidence


@dataclass
class LoopSettings:
    batch_size: int
    results_per_query: int
    investigator_model: str
    authority: Mapping[str, float]
    owners: Mapping[str, str]
    model_limit: asyncio.Semaphore
    timeout_s: float


Assess = Callable[[investigation_pb2.AssessEvidenceRequest, float], Awaitable[investigation_pb2.AssessEvidenceResponse]]


class Investigator:
    def __init__(
        self, providers: Sequence[SearchProvider], cache: SearchCache, assess: Assess, settings: LoopSettings
    ) -> None:
        self._providers = providers
        self._cache = cache
        self._assess = assess
        self._settings = settings

    async def investigate(self, candidate: Candidate, batch: int, attempts: int) -> ClaimInvestigation:
        started = time.monotonic()
        work = ClaimInvestigation(candidate, batch=batch, attempts=attempts)
        base = base_confidence(candidate.first_pass_confidence)
        variants = query_variants(candidate.claim.claim, candidate.flags)
        seen: dict[str, Found] = {}
        for number, variant in enumerate(variants, start=1):
            new: list[Found] = []
            ids: list[str] = []
            dropped = 0
            for provider in self._providers:
                work.searches += 1
                try:
                    page = await self._cache.search(provider, variant.query, self._settings.results_per_query)
                except SearchFailed as error:
                    raise InvestigationFailed(f"{provider.name}: {error}") from error
                dropped += page.dropped
                for result in page.results:
                    if result.key not in seen:
                        found = self._found(f"E{len(seen) + 1}", result)
                        seen[result.key] = found
                        new.append(found)
                    ids.append(seen[result.key].id)
            if new:
                await self._judge(work, new)
                work.found.extend(new)
            work.queries.append(
                {"variant": variant.variant, "query": variant.query, "resultIds": ids, "droppedResults": dropped}
            )
            work.dropped_results += dropped
            decision = decide([f.assessed() for f in work.found], base, exhausted=number == len(variants))
            if decision is not None:
                work.decision = decision
                if decision.status != UNVERIFIABLE or decision.rule != "verification exhausted":
                    work.succeeded_variant = variant.variant
                break
        work.elapsed_ms = int((time.monotonic() - started) * 1000)
        return work

    def _found(self, label: str, result: SearchResult) -> Found:
        domain = domain_of(result.url)
        return Found(
            id=label,
            result=result,
            authority=authority_of(result.url, result.authority, self._settings.authority),
            domain=domain,
            owner=owner_of(domain, result.source_id or result.key, self._settings.owners),
        )

    async def _judge(self, work: ClaimInvestigation, new: list[Found]) -> None:
        claim = work.candidate.claim
        request = investigation_pb2.AssessEvidenceRequest(
            model=self._settings.investigator_model,
            claim=claim.to_proto(),
            results=[_passage(f) for f in new],
        )
        work.model_calls += 1
        try:
            async with self._settings.model_limit:
                response = await self._assess(request, self._settings.timeout_s)
        except grpc.aio.AioRpcError as error:
            raise InvestigationFailed(f"{error.code().name}: {excerpt(error.details() or '', 200)}") from error
        by_id = {a.result_id: a for a in response.assessments}
        for found in new:
            assessment = by_id.get(found.id)
            if assessment is None:
                continue
            found.stance = STANCE_NAMES.get(assessment.stance, "IRRELEVANT")
            found.temporal = assessment.temporal and found.stance == "REFUTES"
            found.reason = assessment.reason


def _passage(found: Found) -> common_pb2.Passage:
    r = found.result
    passage = common_pb2.Passage(
        id=found.id, source_id=r.source_id, source_title=r.title, source_url=r.url, text=r.text[:MAX_RESULT_CHARS]
    )
    if r.published_at:
        passage.published_at = r.published_at
    passage.authority = found.authority
    return passage


OnResolved = Callable[[ClaimInvestigation], Awaitable[None]]


async def run_batches(
    investigator: Investigator, queue: Sequence[Candidate], batch_size: int, on_resolved: OnResolved
) -> tuple[list[ClaimInvestigation], int]:
    """Every queued claim, batch by batch in priority order; returns the investigations and the batch count.

    `on_resolved` is awaited as each claim is resolved (its event), in completion order.
    """
    pending: deque[tuple[Candidate, int]] = deque((c, 1) for c in queue)
    done: list[ClaimInvestigation] = []
    batch = 0
    while pending:
        batch += 1
        members = [pending.popleft() for _ in range(min(batch_size, len(pending)))]
        tasks = {
            asyncio.create_task(investigator.investigate(candidate, batch, attempt)): (candidate, attempt)
            for candidate, attempt in members
        }
        try:
            for next_done in asyncio.as_completed(tasks):
                try:
                    work = await next_done
                except InvestigationFailed as error:
                    # as_completed hides which task it was: find the failed one that is not handled yet.
                    candidate, attempt = _failed_member(tasks, error)
                    if attempt < 2:
                        pending.append((candidate, attempt + 1))  # once more, in a later batch
                        continue
                    work = _failed(candidate, batch, attempt, str(error))
                done.append(work)
                await on_resolved(work)
        finally:
            for task in tasks:
                task.cancel()
    return done, batch


def _failed_member(tasks: dict[asyncio.Task, tuple[Candidate, int]], error: BaseException) -> tuple[Candidate, int]:
    for task, member in tasks.items():
        if task.done() and not task.cancelled() and task.exception() is error:
            return member
    raise error


def _failed(candidate: Candidate, batch: int, attempts: int, cause: str) -> ClaimInvestigation:
    base = base_confidence(candidate.first_pass_confidence)
    decision = Decision(UNVERIFIABLE, FAILED, f"Investigation failed twice: {excerpt(cause, 200)}", base, base)
    return ClaimInvestigation(candidate, decision=decision, batch=batch, attempts=attempts, failure=cause)
