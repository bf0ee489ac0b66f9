"""Knowledge-store speed: passages indexed per second and milliseconds per query, on SQLite and PostgreSQL.

Corpus: every evidence text of Factcheck-Bench (subtask 3 and the response benchmark's
automatic evidence), about 3,300 passages, plus synthetic documents made by shuffling
those same sentences (fixed seed) until the store holds at least --passages passages.
Queries: the distinct claims of subtask 3, run through the gateway's Retriever (store
full-text candidates, then BM25 over the pool), as a run does for each claim.

    python -m bench.retrieval [--passages 12000] [--queries 300] [--backend sqlite|postgresql|both]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
import uuid

from bench.data import read_jsonl
from factcheck.security.tenants import DEFAULT_TENANT
from services.gateway.knowledge.retrieval import Retriever
from services.gateway.knowledge.store import KnowledgeStore, SourceDocument
from services.gateway.store import StageStore, upgrade_database

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def corpus_texts() -> list[str]:
    texts = {row["evidence"] for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl")}
    for row in read_jsonl("factcheck-bench/factcheck-GPT-benchmark.jsonl"):
        for sentence in row["sentences"].values():
            for evidence in sentence.get("auto_evidence") or []:
                texts.update(evidence if isinstance(evidence, list) else [evidence])
    return sorted(t for t in texts if t.strip())


def synthetic_documents(texts: list[str], count: int, seed: int = 7) -> list[str]:
    """Documents of 8 real sentences each, drawn at random from the corpus."""
    sentences = [s for text in texts for s in _SENTENCE.split(text) if len(s) > 40]
    rng = random.Random(seed)
    return [" ".join(rng.sample(sentences, 8)) for _ in range(count)]


def queries(limit: int) -> list[str]:
    claims = sorted({row["claim"] for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl")})
    return random.Random(11).sample(claims, min(limit, len(claims)))


def _postgres_url() -> tuple[str, callable]:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = "postgresql://postgres@127.0.0.1:5432/test"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')

    return f"{POSTGRES_URL}?options=-csearch_path%3D{schema}", drop


def measure(backend: str, documents: list[SourceDocument], query_texts: list[str]) -> dict:
    if backend == "sqlite":
        url, cleanup = f"sqlite:///{tempfile.mkdtemp()}/bench.db", (lambda: None)
    else:
        url, cleanup = _postgres_url()
    try:
        upgrade_database(url)
        store = StageStore(url)
        knowledge = KnowledgeStore(store.engine)
        started = time.perf_counter()
        added = knowledge.add_documents(documents, tenant_id=DEFAULT_TENANT)
        index_s = time.perf_counter() - started
        passages = sum(a.passage_count for a in added)

        retriever = Retriever(knowledge)
        latencies = []
        for text in query_texts:
            started = time.perf_counter()
            retriever.retrieve({"q": text}, (), use_store=True, top_k=3, tenant_id=DEFAULT_TENANT)
            latencies.append((time.perf_counter() - started) * 1000)
        store.close()
    finally:
        cleanup()
    latencies.sort()
    return {
        "backend": backend,
        "documents": len(documents),
        "passages": passages,
        "index_seconds": round(index_s, 2),
        "passages_per_second": round(passages / index_s),
        "queries": len(latencies),
        "query_ms_p50": round(statistics.median(latencies), 2),
        "query_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
    }


def run(
    passages: int = 12_000, query_count: int = 300, backends: tuple[str, ...] = ("sqlite", "postgresql")
) -> list[dict]:
    texts = corpus_texts()
    real = len(texts)
    # About 2.7 passages per synthetic document at the default chunk size.
    synthetic = synthetic_documents(texts, max(0, int((passages - 3_300) / 2.5)))
    documents = [SourceDocument(f"doc-{i}", f"Document {i}", "", text) for i, text in enumerate(texts + synthetic)]
    query_texts = queries(query_count)
    results = [measure(backend, documents, query_texts) for backend in backends]
    for result in results:
        result["real_documents"] = real
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=12_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    print(
        f"{'backend':<11} {'docs':>6} {'passages':>9} {'index s':>8} {'passages/s':>11} {'queries':>8} {'p50 ms':>7} {'p95 ms':>7}"
    )
    for r in run(args.passages, args.queries, backends):
        print(
            f"{r['backend']:<11} {r['documents']:>6} {r['passages']:>9} {r['index_seconds']:>8} "
            f"{r['passages_per_second']:>11} {r['queries']:>8} {r['query_ms_p50']:>7} {r['query_ms_p95']:>7}"
        )
    print(f"(corpus: {r['real_documents']} real evidence documents, the rest synthetic from their sentences)")


if __name__ == "__main__":
    main()
