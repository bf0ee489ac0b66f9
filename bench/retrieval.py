"""Knowledge-store speed at 10k, 100k and (with --million) 1M passages, on SQLite and PostgreSQL.

Corpus: every evidence text of Factcheck-Bench (subtask 3 and the response benchmark's
automatic evidence), about 3,300 passages, plus synthetic documents made by shuffling
those same sentences (fixed seed) until the store holds the wanted number of passages.
Only about 9,400 distinct sentences exist, so at 1M passages each one is in ~360 passages
and every query term matches thousands of them: a harsher case for an index than natural
text of the same size.
Loading: `bulk_load` (one transaction, index built once; see services/gateway/factcheck_gateway/knowledge/bulk.py).
Queries: the distinct claims of subtask 3, run through the gateway's Retriever (store
candidates, then BM25 over the pool, top 3), as a run does for each claim; timed in
--passes passes over the same store (spread = lowest to highest p50 and p95 of the passes).
Evidence hit@3: share of the claims with relevant evidence (stance not "irrelevant") for which
a retrieved passage holds a sentence of that evidence sharing at least two terms with the claim.

    python -m bench.retrieval [--sizes 10000,100000] [--million] [--backend sqlite|postgresql|both]
                              [--queries 300] [--passes 3]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator

from bench.data import read_jsonl
from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck_gateway.knowledge.bulk import bulk_load
from factcheck_gateway.knowledge.passage_store import KnowledgeStore, SourceDocument
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.knowledge.tokens import search_terms
from factcheck_gateway.store import StageStore, upgrade_database

POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
DEFAULT_SIZES = (10_000, 100_000)
MILLION = 1_000_000
PASSAGES_PER_SYNTHETIC_DOCUMENT = 2.33  # 8 sentences at the default chunk size
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def corpus_texts() -> list[str]:
    texts = {row["evidence"] for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl")}
    for row in read_jsonl("factcheck-bench/factcheck-GPT-benchmark.jsonl"):
        for sentence in row["sentences"].values():
            for evidence in sentence.get("auto_evidence") or []:
                texts.update(evidence if isinstance(evidence, list) else [evidence])
    return sorted(t for t in texts if t.strip())


def synthetic_documents(texts: list[str], count: int, seed: int = 7) -> Iterator[str]:
    """Documents of 8 real sentences each, drawn at random from the corpus."""
    sentences = [s for text in texts for s in _SENTENCE.split(text) if len(s) > 40]
    rng = random.Random(seed)
    for _ in range(count):
        yield " ".join(rng.sample(sentences, 8))


def documents(texts: list[str], passages: int) -> Iterator[SourceDocument]:
    real_passages = 3_324  # the real texts' passages at the default chunk size
    synthetic = synthetic_documents(texts, max(0, round((passages - real_passages) / PASSAGES_PER_SYNTHETIC_DOCUMENT)))
    for i, text in enumerate([*texts, *synthetic]):
        yield SourceDocument(f"doc-{i}", f"Document {i}", "", text)


def queries(limit: int) -> list[str]:
    claims = sorted({row["claim"] for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl")})
    return random.Random(11).sample(claims, min(limit, len(claims)))


def relevant_sentences() -> dict[str, list[str]]:
    """Per claim: the sentences of its relevant evidence that share at least two terms with it."""
    relevant: dict[str, set[str]] = defaultdict(set)
    for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl"):
        if row["stance"] != "irrelevant":
            claim_terms = set(search_terms(row["claim"]))
            relevant[row["claim"]].update(
                s
                for s in _SENTENCE.split(row["evidence"])
                if len(s) > 40 and len(claim_terms & set(search_terms(s))) >= 2
            )
    return {claim: sorted(sentences) for claim, sentences in relevant.items() if sentences}


def _postgres_url() -> tuple[str, Callable[[], None]]:
    import psycopg

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    admin = "postgresql://postgres@127.0.0.1:5432/test"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')

    def drop() -> None:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')

    return f"{POSTGRES_URL}?options=-csearch_path%3D{schema}", drop


def _sqlite_url() -> tuple[str, Callable[[], None]]:
    directory = tempfile.mkdtemp(prefix="factcheck-bench-", dir=os.environ.get("FACTCHECK_BENCH_TMP"))
    return f"sqlite:///{directory}/bench.db", lambda: shutil.rmtree(directory, ignore_errors=True)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


def measure(backend: str, texts: list[str], passages: int, query_texts: list[str], passes: int) -> dict:
    url, cleanup = _sqlite_url() if backend == "sqlite" else _postgres_url()
    relevant = relevant_sentences()
    try:
        upgrade_database(url)
        store = StageStore(url)
        loaded = bulk_load(store.engine, documents(texts, passages), tenant_id=DEFAULT_TENANT)
        knowledge = KnowledgeStore(store.engine)
        retriever = Retriever(knowledge)
        p50s, p95s, search_p50s, search_p95s = [], [], [], []
        hits = judged = 0
        for number in range(passes):
            latencies, search_latencies = [], []
            for text in query_texts:
                started = time.perf_counter()
                evidence = retriever.retrieve({"q": text}, (), use_store=True, top_k=3, tenant_id=DEFAULT_TENANT)
                latencies.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                knowledge.search(text, 9, tenant_id=DEFAULT_TENANT)
                search_latencies.append((time.perf_counter() - started) * 1000)
                if number == 0 and text in relevant:
                    judged += 1
                    hits += any(any(s in p.text for s in relevant[text]) for p in evidence.passages)
            p50s.append(statistics.median(latencies))
            p95s.append(_percentile(latencies, 0.95))
            search_p50s.append(statistics.median(search_latencies))
            search_p95s.append(_percentile(search_latencies, 0.95))
        store.close()
    finally:
        cleanup()
    return {
        "backend": backend,
        "passages": loaded.passages,
        "documents": loaded.documents,
        "load_seconds": round(loaded.seconds, 1),
        "passages_per_second": round(loaded.passages / loaded.seconds),
        "queries": len(query_texts),
        "passes": passes,
        # Median pass first, then the spread over the passes.
        "query_ms_p50": round(statistics.median(p50s), 1),
        "query_ms_p95": round(statistics.median(p95s), 1),
        "query_ms_p50_range": (round(min(p50s), 1), round(max(p50s), 1)),
        "query_ms_p95_range": (round(min(p95s), 1), round(max(p95s), 1)),
        "search_ms_p50": round(statistics.median(search_p50s), 1),
        "search_ms_p95": round(statistics.median(search_p95s), 1),
        "evidence_hit_at_3": round(hits / judged, 3) if judged else None,
    }


def run(
    sizes: tuple[int, ...] = DEFAULT_SIZES,
    query_count: int = 300,
    backends: tuple[str, ...] = ("sqlite", "postgresql"),
    passes: int = 3,
    report=None,
) -> list[dict]:
    """Measure every size on every backend, one store at a time (each is deleted after its size)."""
    texts = corpus_texts()
    query_texts = queries(query_count)
    results = []
    for backend in backends:
        for size in sizes:
            result = measure(backend, texts, size, query_texts, passes)
            results.append(result)
            if report is not None:
                report(result)
    return results


def growth(results: list[dict]) -> list[str]:
    """Per backend and step in size: how load time and query p95 grew against the passages."""
    lines = []
    for backend in dict.fromkeys(r["backend"] for r in results):
        rows = [r for r in results if r["backend"] == backend]
        for small, large in zip(rows, rows[1:]):
            size = large["passages"] / small["passages"]
            load = large["load_seconds"] / small["load_seconds"]
            p95 = large["query_ms_p95"] / small["query_ms_p95"]
            worse = [name for name, ratio in (("load time", load), ("query p95", p95)) if ratio > size * 1.1]
            verdict = " and ".join(worse) + " worse than linear" if worse else "both linear or better"
            lines.append(
                f"{backend} {small['passages']:,} -> {large['passages']:,} passages (x{size:.1f}): "
                f"load time x{load:.1f}, query p95 x{p95:.2f}: {verdict}"
            )
    return lines


HEADER = (
    f"{'backend':<11} {'passages':>9} {'load s':>7} {'passages/s':>10} {'query p50 ms':>16} {'query p95 ms':>16} "
    f"{'search p50':>10} {'search p95':>10} {'hit@3':>6}"
)


def line(r: dict) -> str:
    p50 = f"{r['query_ms_p50']} ({r['query_ms_p50_range'][0]}-{r['query_ms_p50_range'][1]})"
    p95 = f"{r['query_ms_p95']} ({r['query_ms_p95_range'][0]}-{r['query_ms_p95_range'][1]})"
    return (
        f"{r['backend']:<11} {r['passages']:>9} {r['load_seconds']:>7} {r['passages_per_second']:>10} {p50:>16} "
        f"{p95:>16} {r['search_ms_p50']:>10} {r['search_ms_p95']:>10} {r['evidence_hit_at_3']:>6}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="passages, comma-separated")
    parser.add_argument("--million", action="store_true", help=f"add {MILLION:,} passages (minutes of loading)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) + ((MILLION,) if args.million else ())
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    print(HEADER, flush=True)
    results = run(sizes, args.queries, backends, args.passes, report=lambda r: print(line(r), flush=True))
    print("(query: Retriever.retrieve, top 3; search: KnowledgeStore.search, 9 candidates; ms, median pass and spread)")
    for growth_line in growth(results):
        print(growth_line)


if __name__ == "__main__":
    main()
