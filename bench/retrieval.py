"""Knowledge-store retrieval as users get it: loaded through the API, asked from a client, before and after maintenance.

At 10k and 100k (with --million also 1M) passages, on SQLite and PostgreSQL, two corpora, each in a
fresh database of its own served by a gateway process (`python -m factcheck_gateway.main`); a
corpus of its own, so that each is the size named and its figures stand alone (the easy corpus's
are comparable with those published before the hard one came):

- easy: documents of real sentences (every evidence text of Factcheck-Bench, shuffled with a
  fixed seed) in paragraphs of three, each document up to AddDocuments' 200,000 characters (about
  450 passages). Written into them: 300 planted facts about invented names (bridges, composers,
  glaciers, ...), each in one paragraph, and for every fact three decoy sentences elsewhere that
  use one or two of its names in other contexts, so the names are not unique to the fact's passage.
  Asked: each fact as a paraphrased question (other verbs and word order, the names kept), and 200
  queries of four to six of the corpus's commonest words.
- hard (bench/retrieval_questions.py): a Zipfian vocabulary of invented words with common
  English ones, 300 facts about entities whose two name words are each in hundreds of other passages
  at 1M (the same share of a smaller corpus) and together only in the fact's; each asked once, by its
  full name or half of it, with synonyms for the kind of thing and the verb, sometimes the place or a
  stray word.

Loading: AddDocuments calls of at most 2 MB (as `factcheck kb add` does). Then every query is asked
as loaded, with no maintenance by hand (this machine's PostgreSQL runs with autovacuum off); then the
database is maintained as an operator or autovacuum would, straight through SQLAlchemy while the
gateway keeps serving (SQLite: ANALYZE, FTS5's optimize, VACUUM; PostgreSQL: VACUUM ANALYZE of
kb_passages and kb_documents), and every query is asked again. Queries are timed from a gRPC client
calling KnowledgeService.Search (top 3: the store's candidates, then the gateway's re-ranking, as a
run retrieves evidence), in --passes passes per phase over the same store (spread: the passes' lowest
to highest; p50 and p95 over all of a corpus's queries).
hit@3: share of the questions with the fact's passage among the 3 passages returned (first pass).
Reference: exact BM25 (the gateway's terms, k1, b and IDF) over every passage of the corpus
(bench.retrieval_questions.ExactBM25); its hit@3 is what a store that ranked the whole corpus exactly
would score. =exact: share of the questions whose passages are those the gateway would return from a
store that ranked every passage exactly (ExactBM25.gateway_top: its 9 best, less those covering under
30% of the question's weight), ties aside (as many passages, with the same exact scores; order not
compared). changed: queries (questions and common ones) whose top 3, passages and order, differ
between the first pass as loaded and the first after maintenance.

    python -m bench.retrieval [--sizes 10000,100000] [--million] [--backend sqlite|postgresql|both]
                              [--corpus easy|hard|both] [--facts 300] [--common 200] [--passes 3]
                              [--no-maintenance] [--database-url URL]

--database-url: measure one size of one corpus on one backend in that database instead of a fresh
one, and keep it: the documents are loaded only when its store is empty (so a store is built once,
then asked again while the search code changes; the load time reported is then 0; after the first
run "as loaded" is what the maintenance left, unless it ran with --no-maintenance).
"""

from __future__ import annotations

import argparse
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
from sqlalchemy import create_engine

from bench.data import read_jsonl
from bench.retrieval_questions import ExactBM25, hard_corpus, pack_documents, same_top
from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.v1 import common_pb2, knowledge_pb2, knowledge_pb2_grpc
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.tokens import search_terms
from factcheck_gateway.knowledge.upkeep import FTS_TABLE
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
    paragraphs = []
    for p in range(paragraphs_wanted):
        sentences = rng.sample(filler, SENTENCES_PER_PARAGRAPH)
        if p in inserts:
            sentences[0] = inserts[p][1]
        paragraphs.append(" ".join(sentences))
    documents = pack_documents(paragraphs, "doc", DOCUMENT_CHARS)
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


@dataclass(frozen=True)
class Workload:
    """One store's documents and what it is asked: questions with a known answer, then other queries."""

    corpus: str  # "easy" (build_corpus) or "hard" (bench.retrieval_questions.hard_corpus)
    documents: list[tuple[str, str]]
    passages: list[str]
    questions: list[str]
    answers: list[int]  # per question, the index in `passages` of its answer
    other_queries: list[str]  # timed, and compared before and after maintenance; no answer known


def easy_workload(size: int, facts: int, common: int) -> Workload:
    corpus = build_corpus(size, facts, common)
    questions = [fact.question for fact in corpus.facts]
    return Workload("easy", corpus.documents, corpus.passages, questions, corpus.fact_passage, corpus.common_queries)


def hard_workload(size: int, facts: int) -> Workload:
    corpus = hard_corpus(size, facts)
    return Workload("hard", corpus.documents, corpus.passages, corpus.questions, corpus.answers, [])


def passage_keys(documents: list[tuple[str, str]]) -> dict[tuple[str, int], int]:
    """(document id, start offset) of every passage, as Search returns them, to its index in load order."""
    keys = ((document_id, chunk.start) for document_id, text in documents for chunk in chunk_text(text))
    return {key: index for index, key in enumerate(keys)}


@dataclass
class Asked:
    """One phase's answers: every pass's query times (questions first), the first pass's top 3 of each query."""

    question_ms: list[list[float]]
    other_ms: list[list[float]]
    found: list[list[int]]  # per query (questions, then other queries): indices of the passages returned, in order


def ask(stub: knowledge_pb2_grpc.KnowledgeServiceStub, workload: Workload, keys: dict, passes: int) -> Asked:
    asked = Asked([], [], [])
    queries = [(True, q) for q in workload.questions] + [(False, q) for q in workload.other_queries]
    for number in range(passes):
        timed: dict[bool, list[float]] = {True: [], False: []}
        for is_question, query in queries:
            started = time.perf_counter()
            answer = stub.Search(knowledge_pb2.SearchRequest(query=query, top_k=3), timeout=60)
            timed[is_question].append((time.perf_counter() - started) * 1000)
            if number == 0:
                asked.found.append([keys[(p.source_id, p.start_offset)] for p in answer.passages])
        asked.question_ms.append(timed[True])
        asked.other_ms.append(timed[False])
    return asked


def maintain(url: str) -> float:
    """What an operator (or autovacuum) does to a loaded store, straight on the database while the gateway
    keeps serving; seconds taken. SQLite: ANALYZE, FTS5's optimize (one segment), VACUUM; PostgreSQL: VACUUM
    ANALYZE of the store's tables. Autocommit: VACUUM runs outside a transaction."""
    started = time.perf_counter()
    sqlite = url.startswith("sqlite")
    engine = create_engine(url, isolation_level="AUTOCOMMIT", connect_args={"timeout": 120} if sqlite else {})
    try:
        with engine.connect() as connection:
            if sqlite:
                connection.exec_driver_sql("ANALYZE")
                connection.exec_driver_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")
                connection.exec_driver_sql("VACUUM")
            else:
                connection.exec_driver_sql("VACUUM ANALYZE kb_passages, kb_documents")
    finally:
        engine.dispose()
    return time.perf_counter() - started


def _phase_figures(asked: Asked, workload: Workload, reference: ExactBM25, exact: list[list[int]]) -> dict:
    """Speed (median pass, and the passes' spread) and quality (first pass) of one phase; `exact`: per question,
    what an exact store would return through the gateway (ExactBM25.gateway_top)."""
    every = [q + o for q, o in zip(asked.question_ms, asked.other_ms)]
    p50s = [statistics.median(times) for times in every]
    p95s = [_percentile(times, 0.95) for times in every]
    answered = asked.found[: len(workload.questions)]
    hits = sum(answer in found for answer, found in zip(workload.answers, answered))
    same = sum(same_top(reference, q, found, exact[q]) for q, found in enumerate(answered))
    return {
        "query_ms_p50": round(statistics.median(p50s), 1),
        "query_ms_p95": round(statistics.median(p95s), 1),
        "query_ms_p50_range": (round(min(p50s), 1), round(max(p50s), 1)),
        "query_ms_p95_range": (round(min(p95s), 1), round(max(p95s), 1)),
        "fact_ms_p95": round(statistics.median(_percentile(times, 0.95) for times in asked.question_ms), 1),
        "common_ms_p95": (
            round(statistics.median(_percentile(times, 0.95) for times in asked.other_ms), 1)
            if workload.other_queries
            else None
        ),
        "hit_at_3": round(hits / len(workload.questions), 3),
        "same_as_reference": round(same / len(workload.questions), 3),
    }


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
    backend: str,
    workload: Workload,
    reference: ExactBM25,
    passes: int,
    database_url: str | None = None,
    maintenance: bool = True,
) -> dict:
    """Load the workload's documents into a gateway's store, ask everything as loaded, maintain the database
    (unless not `maintenance`), ask everything again; the figures of both phases."""
    keys = passage_keys(workload.documents)
    best = [reference.top(q) for q in range(len(workload.questions))]
    through_gateway = [reference.gateway_top(q) for q in range(len(workload.questions))]
    with _database(backend, database_url) as url:
        gateway = start_service("gateway", {"FACTCHECK_DATABASE_URL": url})
        try:
            with grpc.insecure_channel(gateway.target, options=CHANNEL_OPTIONS) as channel:
                stub = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
                empty = not stub.ListDocuments(knowledge_pb2.ListDocumentsRequest(page_size=1), timeout=60).documents
                load_seconds = load(stub, workload.documents) if empty else 0.0
                loaded = ask(stub, workload, keys, passes)
                maintenance_seconds = maintain(url) if maintenance else None
                maintained = ask(stub, workload, keys, passes) if maintenance else None
        finally:
            gateway.stop()
    reference_hits = sum(answer in top for answer, top in zip(workload.answers, best))
    result = {
        "backend": backend,
        "corpus": workload.corpus,
        "passages": len(workload.passages),
        "documents": len(workload.documents),
        "load_seconds": round(load_seconds, 1),
        "passages_per_second": round(len(workload.passages) / load_seconds) if load_seconds else 0,
        "queries": len(workload.questions) + len(workload.other_queries),
        "passes": passes,
        **_phase_figures(loaded, workload, reference, through_gateway),
        "reference_hit_at_3": round(reference_hits / len(workload.questions), 3),
        "maintenance_seconds": None if maintenance_seconds is None else round(maintenance_seconds, 1),
    }
    if maintained is not None:
        result["maintained"] = _phase_figures(maintained, workload, reference, through_gateway)
        # Queries (questions and the others) whose top 3 changed, in passages or in order.
        result["top3_changed"] = sum(before != after for before, after in zip(loaded.found, maintained.found))
    return result


def run(
    sizes: tuple[int, ...] = DEFAULT_SIZES,
    backends: tuple[str, ...] = ("sqlite", "postgresql"),
    facts: int = 300,
    common: int = 200,
    passes: int = 3,
    report=None,
    database_url: str | None = None,
    corpora: tuple[str, ...] = ("easy", "hard"),
    maintenance: bool = True,
    say=None,
) -> list[dict]:
    """Measure every size on every backend, each corpus in a fresh database (deleted after it is measured).

    `say`: called with a line on each corpus's making (seconds to generate it and its exact BM25)."""
    results = []
    for size in sizes:
        workloads = []
        for name in corpora:
            started = time.perf_counter()
            workload = easy_workload(size, facts, common) if name == "easy" else hard_workload(size, facts)
            made = time.perf_counter()
            reference = ExactBM25(workload.passages, workload.questions)
            if say is not None:
                say(
                    f"{name} corpus, {len(workload.passages):,} passages: made in {made - started:.1f} s, "
                    f"exact BM25 postings in {time.perf_counter() - made:.1f} s"
                )
            workloads.append((workload, reference))
        for backend in backends:
            for workload, reference in workloads:
                result = measure(backend, workload, reference, passes, database_url, maintenance)
                results.append(result)
                if report is not None:
                    report(result)
    return results


HEADER = (
    f"{'backend':<10} {'corpus':<6} {'passages':>9} {'docs':>5} {'load s':>7} {'p50 ms':>6} "
    f"{'p95 ms (passes)':>17} {'ask/common p95':>14} {'hit@3':>5} {'exact':>5} {'=exact':>6} | "
    f"{'maint s':>7} {'p50 ms':>6} {'p95 ms (passes)':>17} {'hit@3':>5} {'=exact':>6} {'changed':>7}"
)


def _p95(figures: dict) -> str:
    low, high = figures["query_ms_p95_range"]
    return f"{figures['query_ms_p95']} ({low}-{high})"


def _ask_common(figures: dict) -> str:
    common = "-" if figures["common_ms_p95"] is None else figures["common_ms_p95"]
    return f"{figures['fact_ms_p95']}/{common}"


def line(r: dict) -> str:
    loaded = (
        f"{r['backend']:<10} {r['corpus']:<6} {r['passages']:>9} {r['documents']:>5} {r['load_seconds']:>7} "
        f"{r['query_ms_p50']:>6} {_p95(r):>17} {_ask_common(r):>14} {r['hit_at_3']:>5} "
        f"{r['reference_hit_at_3']:>5} {r['same_as_reference']:>6}"
    )
    if "maintained" not in r:
        return loaded + " | (no maintenance)"
    after = r["maintained"]
    return (
        f"{loaded} | {r['maintenance_seconds']:>7} {after['query_ms_p50']:>6} {_p95(after):>17} "
        f"{after['hit_at_3']:>5} {after['same_as_reference']:>6} {r['top3_changed']:>7}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="passages, comma-separated")
    parser.add_argument("--million", action="store_true", help=f"add {MILLION:,} passages (a long load)")
    parser.add_argument("--facts", type=int, default=300, help="facts planted in each corpus")
    parser.add_argument("--common", type=int, default=200)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--corpus", choices=["easy", "hard", "both"], default="both")
    parser.add_argument("--no-maintenance", action="store_true", help="ask as loaded only")
    parser.add_argument("--database-url", help="a database to use and keep (one size, one backend, one corpus)")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(",") if s) + ((MILLION,) if args.million else ())
    backends = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    corpora = ("easy", "hard") if args.corpus == "both" else (args.corpus,)
    if args.database_url and (len(sizes) != 1 or len(backends) != 1 or len(corpora) != 1):
        parser.error(
            "--database-url takes one size (--sizes N, or --sizes '' --million), one --backend and one --corpus"
        )
    print(HEADER, flush=True)
    run(
        sizes,
        backends,
        args.facts,
        args.common,
        args.passes,
        report=lambda r: print(line(r), flush=True),
        database_url=args.database_url,
        corpora=corpora,
        maintenance=not args.no_maintenance,
        say=lambda text: print(f"({text})", flush=True),
    )
    print(
        "(Search over gRPC, top 3. Left of |: as loaded; right: after maintenance (maint s). ms: median pass and "
        "the passes' spread; ask/common: p95 of the questions and of the common-word queries. hit@3: the store; "
        "exact: exact BM25 over every passage; =exact: share of questions answered with the passages an exact "
        "store would give through the gateway, ties aside; changed: queries whose top 3 differs after maintenance.)"
    )


if __name__ == "__main__":
    main()
