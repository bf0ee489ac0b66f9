"""The offline provider: the tenant's knowledge store and the request's sources (the Retriever's BM25)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from factcheck.text.sentences import tokenize
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.search.provider import KNOWLEDGE, SearchPage, SearchResult


class KnowledgeSearch:
    name = KNOWLEDGE

    def __init__(
        self, retriever: Retriever, sources: Sequence[SourceDocument], *, use_store: bool, tenant_id: str
    ) -> None:
        self._retriever = retriever
        self._sources = sources
        self._use_store = use_store
        self._tenant_id = tenant_id

    async def search(self, query: str, limit: int) -> SearchPage:
        terms = " ".join(tokenize(query.replace('"', " ")))  # full-text search has no phrase syntax
        if not terms:
            return SearchPage(())
        evidence = await asyncio.to_thread(
            self._retriever.retrieve,
            {"query": terms},
            self._sources,
            use_store=self._use_store,
            top_k=limit,
            tenant_id=self._tenant_id,
        )
        by_id = {p.id: p for p in evidence.passages}
        results = []
        for passage_id in evidence.claim_passages.get("query", []):
            p = by_id[passage_id]
            results.append(
                SearchResult(
                    key=f"{KNOWLEDGE}:{p.origin}:{p.source_id}:{p.start_offset}",
                    title=p.source_title or p.source_id,
                    url=p.source_url,
                    text=p.text,
                    provider=KNOWLEDGE,
                    source_id=p.source_id,
                    published_at=p.published_at if p.HasField("published_at") else None,
                    authority=p.authority if p.HasField("authority") else None,
                )
            )
        return SearchPage(tuple(results))
