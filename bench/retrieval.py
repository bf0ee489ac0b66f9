"""Knowledge-store retrieval as users get it: loaded through the API, asked from a client, at once.

At 10k and 100k (with --million also 1M) passages, on SQLite and PostgreSQL, each on a fresh
database served by a gateway process (`python -m factcheck_gateway.main`):

Corpus: documents of real sentences (every evidence text of Factcheck-Bench, shuffled with a
fixed seed) in paragraphs of three, each document up to AddDocuments' 200,000 characters (about
450 passages). Written into them: 300 planted facts about invented names (bridges, composers,
glaciers, ...), each in one paragraph, and for every fact three decoy sentences elsewhere that
use one or two of its names in other contexts, so the names are not unique to the fact's passage.
Loading: AddDocuments calls of at most 2 MB (as `factcheck kb add` does), then nothing else: the
figures are the store as loaded, with no ANALYZE, VACUUM or other maintenance by hand (this
machine's PostgreSQL runs with autovacuum off).
Queries: each fact asked as a paraphrased question (other verbs and word order, the names kept),
and 200 queries of four to six of the corpus's commonest words. Timed from a gRPC client calling
KnowledgeService.Search (top 3: the store's candidates, then the gateway's re-ranking, as a run
retrieves evidence), in --passes passes over the same store (spread: the passes' lowest to highest).
hit@3: share of the fact questions with the fact's passage among the 3 passages returned.
Reference: exact BM25 (the gateway's terms, k1 and b) over every passage of the corpus, computed
here; its hit@3 is what a store that ranked the whole corpus exactly would score.

    python -m bench.retrieval [--sizes 10000,100000] [--million] [--backend sqlite|postgresql|both]
                              [--facts 300] [--common 200] [--passes 3] [--database-url URL]

--database-url: measure one size on one backend in that database instead of a fresh one, and keep
it: the documents are loaded only when its store is empty (so a store is built once, then asked again
while the search code changes; the load time reported is then 0).
"""

from __future__ import annotations

import argparse
import heapq
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from bench.data import read_jsonl
from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.v1 import common_pb2, knowledge_pb2, knowledge_pb2_grpc
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.ranking import K1, B, idf
from factcheck_gateway.knowledge.tokens import search_terms, term_counts
from factcheck_gateway.request_validation import MAX_SOURCE_CHARS, MAX_SOURCES_TOTAL_BYTES
from factcheck_gateway.servicers.knowledge import MAX_DOCUMENTS_PER_CALL
from tests.conftest import fresh_database
from tests.processes import start_service

DEFAULT_SIZES = (10_000, 100_000)
MILLION = 1_000_000
SENTENCES_PER_PARAGRAPH = 3
DOCUMENT_CHARS = MAX_SOURCE_CHARS - 5_000  # room for the planted sentences
_SENTENCE = re.compile(r"(?<=[.!?])\s+")

# (fact, paraphrased question, decoys); {a} {b} {c}: invented names, {n}: a number, {y}: a year.
TEMPLATES = [
    (
        "The {a} Bridge over the {b} River was opened to traffic in {y} after nine years of construction.",
        "In what year did the bridge called {a} across the {b} river first carry traffic?",
        ["A ferry named {a} once crossed the harbour twice a day.", "Fishing on the {b} River is allowed in summer."],
    ),
    (
        "The composer {a} {b} wrote the opera {c} while living in Vienna.",
        "Which opera did {b}, the composer, write during the years spent in Vienna?",
        ["{a} {b} was also a keen gardener, friends recalled.", "A cafe called {c} opened near the station."],
    ),
    (
        "The {a} Glacier lost {n} metres of ice thickness between 1990 and 2020, according to the {b} survey.",
        "How much thickness has the {a} Glacier lost over thirty years, as measured by the {b} survey?",
        ["The {b} survey also counted birds along the coast.", "Hikers reach the {a} hut in a day."],
    ),
    (
        "The town of {a} has a population of {n} and lies on the shore of Lake {b}.",
        "How many people live in {a}, the town by Lake {b}?",
        ["Boats on Lake {b} are rented by the hour.", "The {a} market sells cheese every Friday."],
    ),
    (
        "The chemist {a} {b} first isolated the compound {c} in {y}.",
        "When was {c} isolated for the first time, and by which chemist?",
        ["{c} is also sold as a cleaning agent.", "A street is named after {a} {b} in the old town."],
    ),
    (
        "The {a} Company was founded in {y} by the brothers {b} and {c}.",
        "Who were the founders of the {a} Company, and in which year did they start it?",
        ["{b} and {c} later quarrelled over money.", "The {a} Company logo shows a blue heron."],
    ),
    (
        "Mount {a} rises {n} metres above the {b} valley.",
        "What is the height of Mount {a} over the valley of {b}?",
        ["Farmers in the {b} valley grow apples and pears.", "Mount {a} is often covered in cloud."],
    ),
    (
        "The treaty of {a} ended the war between {b} and {c} in {y}.",
        "Which year saw the war of {b} against {c} brought to an end by a treaty signed at {a}?",
        ["Trade between {b} and {c} grew after the railway came.", "Tourists visit {a} for its castle."],
    ),
    (
        "The {a} telescope at the {b} observatory has a mirror {n} centimetres wide.",
        "How wide is the mirror of the {a} telescope in the {b} observatory?",
        ["The {b} observatory offers tours on clear nights.", "A brand of binoculars is called {a}."],
    ),
    (
        "The footballer {a} {b} scored {n} goals for {c} United.",
        "How many goals did {a} {b} score while playing for {c} United?",
        ["{c} United plays in red shirts.", "{a} {b} now coaches a youth team."],
    ),
]
_SYLLABLES = "ka lo mi ne ru sa te vo zi ba de fu go hi ja ke lu ma no pe ri su ta vi wo ya ze".split()


@dataclass(frozen=True)
class Fact:
    sentence: str
    question: str
    decoys: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    documents: list[tuple[str, str]]  # (id, text)
    passages: list[str]
    facts: list[Fact]
    fact_passage: list[int]  # per fact, the index in `passages` of the passage holding it
    common_queries: list[str]


def filler_sentences() -> list[str]:
    texts = {row["evidence"] for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl")}
    for row in read_jsonl("factcheck-bench/factcheck-GPT-benchmark.jsonl"):
        for sentence in row["sentences"].values():
            for evidence in sentence.get("auto_evidence") or []:
                texts.update(evidence if isinstance(evidence, list) else [evidence])
    sentences = {s.strip() for text in texts for s in _SENTENCE.split(text)}
    return sorted(s for s in sentences if 40 < len(s) < 400 and s[0].isupper() and s[-1] in ".!?")


def planted_facts(count: int, rng: random.Random) -> list[Fact]:
    names: set[str] = set()

    def name() -> str:
        while True:
            word = "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
            if word not in names:
                names.add(word)
                return word

    facts = []
    for i in range(count):
        fact, question, decoys = TEMPLATES[i % len(TEMPLATES)]
        values = {
            "a": name(),
            "b": name(),
            "c": name(),
            "n": str(rng.randint(120, 9_800)),
            "y": str(rng.randint(1700, 2015)),
        }
        facts.append(Fact(fact.format(**values), question.format(**values), tuple(d.format(**values) for d in decoys)))
    return facts


def build_corpus(passages: int, fact_count: int, common_count: int, seed: int = 7) -> Corpus:
    """Documents holding about `passages` passages, the facts planted in them, and the queries."""
    rng = random.Random(seed)
    filler = filler_sentences()
    facts = planted_facts(fact_count, rng)
    # A document's paragraphs; every planted or decoy sentence starts a paragraph of its own.
    planted = [(f, s) for f, fact in enumerate(facts) for s in (fact.sentence, *fact.decoys)]
    # A paragraph is one passage, or two when its sentences are long: measured on a sample.
    sample = [" ".join(rng.sample(filler, SENTENCES_PER_PARAGRAPH)) for _ in range(1_000)]
    paragraphs_wanted = round(passages * len(sample) / sum(len(chunk_text(p)) for p in sample))
    slots = sorted(rng.sample(range(paragraphs_wanted), len(planted)))
    inserts = dict(zip(slots, rng.sample(planted, len(planted))))
    documents: list[tuple[str, str]] = []
    current: list[str] = []
    size = 0
    for p in range(paragraphs_wanted):
        sentences = rng.sample(filler, SENTENCES_PER_PARAGRAPH)
        if p in inserts:
            sentences[0] = inserts[p][1]
        paragraph = " ".join(sentences)
        if size + len(paragraph) + 2 > DOCUMENT_CHARS and current:
            documents.append((f"doc-{len(documents)}", "\n\n".join(current)))
            current, size = [], 0
        current.append(paragraph)
        size += len(paragraph) + 2
    if current:
        documents.append((f"doc-{len(documents)}", "\n\n".join(current)))
    texts = [chunk.text for _, text in documents for chunk in chunk_text(text)]
    by_sentence = {fact.sentence: f for f, fact in enumerate(facts)}
    found: dict[int, int] = {}
    for i, text in enumerate(texts):
        first = _SENTENCE.split(text, maxsplit=1)[0]
        if first in by_sentence:
            found[by_sentence[first]] = i
    fact_passage = [found[f] for f in range(len(facts))]
    return Corpus(documents, texts, facts, fact_passage, common_queries(texts, common_count, rng))


def common_queries(texts: list[str], count: int, rng: random.Random) -> list[str]:
    """Queries of four to six of the corpus's 300 commonest search terms (words, not numbers)."""
    counts: Counter[str] = Counter()
    for text in texts[:20_000]:
        counts.update(t for t in search_terms(text) if t.isalpha() and len(t) > 2)
    common = [term for term, _ in counts.most_common(300)]
    return [" ".join(rng.sample(common, rng.randint(4, 6))) for _ in range(count)]


def reference_top3(corpus: Corpus) -> list[list[int]]:
    """Per fact question: the top 3 passages of an exact BM25 over the whole corpus (ties: corpus order)."""
    questions = [search_terms(fact.question) for fact in corpus.facts]
    wanted = {term for terms in questions for term in terms}
    postings: dict[str, list[tuple[int, int]]] = {term: [] for term in wanted}
    lengths = []
    for i, text in enumerate(corpus.passages):
        counts = term_counts(text)
        lengths.append(sum(counts.values()))
        for term in wanted.intersection(counts):
            postings[term].append((i, counts[term]))
    n, average = len(lengths), sum(lengths) / len(lengths)
    tops = []
    for terms in questions:
        scores: dict[int, float] = {}
        for term in terms:
            weight = idf(len(postings[term]), n)
            for i, tf in postings[term]:
                norm = K1 * (1 - B + B * lengths[i] / average)
                scores[i] = scores.get(i, 0.0) + weight * tf * (K1 + 1) / (tf + norm)
        tops.append([i for _, i in heapq.nsmallest(3, ((-s, i) for i, s in scores.items()))])
    return tops


def load(stub: knowledge_pb2_grpc.KnowledgeServiceStub, documents: list[tuple[str, str]]) -> float:
    """AddDocuments in calls of at most MAX_DOCUMENTS_PER_CALL documents and the byte limit; seconds taken."""
    started = time.perf_counter()
    batch: list[common_pb2.Source] = []
    size = 0
    for document_id, text in documents:
        length = len(text.encode("utf-8"))
        if batch and (size + length > MAX_SOURCES_TOTAL_BYTES or len(batch) == MAX_DOCUMENTS_PER_CALL):
            stub.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=batch), timeout=600)
            batch, size = [], 0
        batch.append(common_pb2.Source(id=document_id, title=document_id, text=text))
        size += length
    if batch:
        stub.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=batch), timeout=600)
    return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


@contextmanager
def _database(backend: str, url: str | None) -> Iterator[str]:
    """The given database (kept), or a fresh one of the backend (removed afterwards)."""
    if url is not None:
        yield url
        return
    scratch = os.environ.get("FACTCHECK_BENCH_TMP")
    with (
        tempfile.TemporaryDirectory(prefix="factcheck-bench-", dir=scratch) as folder,
        fresh_database(backend, Path(folder)) as fresh,
    ):
        yield fresh


def measure(
    backend: str, corpus: Corpus, reference: list[list[int]], passes: int, database_url: str | None = None
) -> dict:
    with _database(backend, database_url) as url:
        gateway = start_service("gateway", {"FACTCHECK_DATABASE_URL": url})
        try:
            with grpc.insecure_channel(gateway.target, options=CHANNEL_OPTIONS) as channel:
                stub = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
                empty = not stub.ListDocuments(knowledge_pb2.ListDocumentsRequest(page_size=1), timeout=60).documents
                load_seconds = load(stub, corpus.documents) if empty else 0.0
                questions = [fact.question for fact in corpus.facts]
                p50s, p95s, fact_p95s, common_p95s = [], [], [], []
                hits = 0
                for number in range(passes):
                    timed: dict[str, list[float]] = {"fact": [], "common": []}
                    for kind, query in [("fact", q) for q in questions] + [
                        ("common", q) for q in corpus.common_queries
                    ]:
                        started = time.perf_counter()
                        answer = stub.Search(knowledge_pb2.SearchRequest(query=query, top_k=3), timeout=60)
                        timed[kind].append((time.perf_counter() - started) * 1000)
                        if number == 0 and kind == "fact":
                            fact = corpus.facts[len(timed["fact"]) - 1]
                            hits += any(fact.sentence in passage.text for passage in answer.passages)
                    every = timed["fact"] + timed["common"]
                    p50s.append(statistics.median(every))
                    p95s.append(_percentile(every, 0.95))
                    fact_p95s.append(_percentile(timed["fact"], 0.95))
                    common_p95s.append(_percentile(timed["common"], 0.95))
        finally:
            gateway.stop()
    reference_hits = sum(corpus.fact_passage[f] in top for f, top in enumerate(reference))
    return {
        "backend": backend,
        "passages": len(corpus.passages),
        "documents": len(corpus.documents),
        "load_seconds": round(load_seconds, 1),
        "passages_per_second": round(len(corpus.passages) / load_seconds) if load_seconds else 0,
        "queries": len(corpus.facts) + len(corpus.common_queries),
        "passes": passes,
        # Median pass first, then the spread over the passes.
        "query_ms_p50": round(statistics.median(p50s), 1),
        "query_ms_p95": round(statistics.median(p95s), 1),
        "query_ms_p50_range": (round(min(p50s), 1), round(max(p50s), 1)),
        "query_ms_p95_range": (round(min(p95s), 1), round(max(p95s), 1)),
        "fact_ms_p95": round(statistics.median(fact_p95s), 1),
        "common_ms_p95": round(statistics.median(common_p95s), 1),
        "hit_at_3": round(hits / len(corpus.facts), 3),
        "reference_hit_at_3": round(reference_hits / len(corpus.facts), 3),
    }


def run(
    sizes: tuple[int, ...] = DEFAULT_SIZES,
    backends: tuple[str, ...] = ("sqlite", "postgresql"),
    facts: int = 300,
    common: int = 200,
    passes: int = 3,
    report=None,
    database_url: str | None = None,
) -> list[dict]:
    """Measure every size on every backend, each on a fresh database (deleted after its size)."""
    results = []
    for size in sizes:
        corpus = build_corpus(size, facts, common)
        reference = reference_top3(corpus)
        for backend in backends:
            result = measure(backend, corpus, reference, passes, database_url)
            results.append(result)
            if report is not None:
                report(result)
    return results


HEADER = (
    f"{'backend':<11} {'passages':>9} {'docs':>5} {'load s':>7} {'passages/s':>10} {'query p50 ms':>16} "
    f"{'query p95 ms':>16} {'facts p95':>9} {'common p95':>10} {'hit@3':>6} {'exact BM25 hit@3':>16}"
)


def line(r: dict) -> str:
    p50 = f"{r['query_ms_p50']} ({r['query_ms_p50_range'][0]}-{r['query_ms_p50_range'][1]})"
    p95 = f"{r['query_ms_p95']} ({r['query_ms_p95_range'][0]}-{r['query_ms_p95_range'][1]})"
    return (
        f"{r['backend']:<11} {r['passages']:>9} {r['documents']:>5} {r['load_seconds']:>7} "
        f"{r['passages_per_second']:>10} {p50:>16} {p95:>16} {r['fact_ms_p95']:>9} {r['common_ms_p95']:>10} "
        f"{r['hit_at_3']:>6} {r['reference_hit_at_3']:>16}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="passages, comma-separated")
    parser.add_argument("--million", action="store_true", help=f"add {MILLION:,} passages (a long load)")
    parser.add_argument("--facts", type=int, default=300)
    parser.add_argument("--common", type=int, default=200)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--database-url", help="a database to use and keep (one size, one backend)")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) + ((MILLION,) if args.million else ())
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    if args.database_url and (len(sizes) != 1 or len(backends) != 1):
        parser.error("--database-url takes one size (--sizes N, or --sizes '' --million) and one --backend")
    print(HEADER, flush=True)
    run(
        sizes,
        backends,
        args.facts,
        args.common,
        args.passes,
        report=lambda r: print(line(r), flush=True),
        database_url=args.database_url,
    )
    print("(Search over gRPC, top 3, as loaded; ms: median pass and the passes' spread; facts and common: p95)")


if __name__ == "__main__":
    main()
