"""Search returns what an exact BM25 over the tenant's whole store returns, whatever the statistics say.

The bounds (knowledge/top_k.py) against a brute force over random stores; the store's exact term statistics
against a recount after every kind of change; the store on SQLite and PostgreSQL against an exact BM25 on
the benchmark's hard questions (entity words in many passages, together only in the answer; half names,
synonyms, stray words), and the same answers before and after ANALYZE, VACUUM and FTS5's merge.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from bench.retrieval_questions import exact_bm25_top, hard_corpus
from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.bulk import bulk_load
from factcheck_gateway.knowledge.passage_store import KnowledgeStore, SourceDocument
from factcheck_gateway.knowledge.ranking import BM25, K1, B, idf, passage_scores
from factcheck_gateway.knowledge.term_statistics import TermStatistic, Totals
from factcheck_gateway.knowledge.tokens import search_terms
from factcheck_gateway.knowledge.top_k import term_weights, top_k
from factcheck_gateway.store import StageStore

TENANT = DEFAULT_TENANT

# --- the bounds, against a brute force ---------------------------------------------------------------------


def _brute_force(passages: list[list[str]], terms: list[str]) -> list[tuple[int, float]]:
    n = len(passages)
    average = sum(len(p) for p in passages) / n
    scores = []
    for i, words in enumerate(passages):
        score = 0.0
        for term in terms:
            tf = words.count(term)
            if tf:
                df = sum(1 for p in passages if term in p)
                score += idf(df, n) * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(words) / average))
        if score > 0:
            scores.append((i, score))
    return sorted(scores, key=lambda r: (-r[1], r[0]))


def _in_memory_top_k(passages: list[list[str]], terms: list[str], k: int) -> tuple[list[tuple[int, float]], int]:
    """top_k over an in-memory index; returns the ranking and how many passages it scored."""
    texts = [" ".join(words) for words in passages]
    counts = term_statistics.counts_of(texts)
    statistics = {t: TermStatistic(*counts.terms[t]) for t in terms if t in counts.terms}
    totals = Totals(counts.passages, counts.length)
    weights = term_weights(statistics, totals)
    salient = [set(term_statistics.passage_fields(text)[0].split()) for text in texts]
    scored: list[int] = []

    def holds(i: int, posting) -> bool:
        return posting.term in (salient[i] if posting.salient else passages[i])

    def matching(groups):
        return [i for i in range(len(passages)) if any(all(holds(i, p) for p in group) for group in groups)]

    def scoring(ids, threshold):
        scored.extend(ids)
        held = {t: weights[t].idf for t in terms if t in weights}
        return dict(zip(ids, passage_scores([texts[i] for i in ids], held, totals.average_length)))

    ranked = top_k(weights, k, totals.passages, matching, scoring)
    return [(i, s) for i, s in ranked if s > 0], len(scored)


def _same_ranking(found: list[tuple[int, float]], expected: list[tuple[int, float]], k: int) -> None:
    """The same scores, and the same passages wherever the score is not tied with another."""
    assert [round(s, 9) for _, s in found] == [round(s, 9) for _, s in expected[:k]]
    tied = {round(s, 9) for _, s in expected if sum(1 for _, t in expected if math.isclose(s, t)) > 1}
    for (i, s), (j, _) in zip(found, expected):
        if round(s, 9) not in tied:
            assert i == j


WORDS = [f"w{i}" for i in range(12)]


@settings(max_examples=300, deadline=None)
@given(
    passages=st.lists(
        st.lists(st.sampled_from(WORDS) | st.sampled_from(["x", "y", "z"]), min_size=1, max_size=12),
        min_size=1,
        max_size=60,
    ),
    terms=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6, unique=True),
    k=st.integers(1, 5),
)
def test_the_bounded_top_k_is_the_exact_top_k(passages, terms, k):
    found, _ = _in_memory_top_k(passages, terms, k)
    _same_ranking(found, _brute_force(passages, terms), k)


def test_rare_words_that_meet_only_in_the_answer_are_found_without_reading_the_common_words():
    """Two name words in many passages each, together in one; a common word everywhere: the common word's
    list is never read in full, and the answer is first."""
    rng = random.Random(3)
    passages = [[f"f{rng.randrange(400)}" for _ in range(8)] + ["common"] for _ in range(3_000)]
    for i in range(0, 600, 5):
        passages[i].append("alpha" if i % 2 else "beta")
    passages[1_234] += ["alpha", "beta"]
    found, scored = _in_memory_top_k(passages, ["alpha", "beta", "common"], 3)
    assert found[0][0] == 1_234
    _same_ranking(found, _brute_force(passages, ["alpha", "beta", "common"]), 3)
    assert scored < 400  # not the 3,000 passages holding "common"


# --- the statistics are exact ------------------------------------------------------------------------------


def _recount(engine, tenant: str) -> tuple[dict[str, int], Totals]:
    with engine.connect() as connection:
        passages = connection.execute(
            text("SELECT text FROM kb_passages WHERE tenant_id = :t"), {"t": tenant}
        ).scalars()
        counts = term_statistics.counts_of(passages)
    return {term: value[0] for term, value in counts.terms.items()}, Totals(counts.passages, counts.length)


def _stored(engine, tenant: str) -> tuple[dict[str, int], Totals]:
    with engine.connect() as connection:
        terms = dict(
            connection.execute(text("SELECT term, passages FROM kb_terms WHERE tenant_id = :t"), {"t": tenant}).all()
        )
        _, totals = term_statistics.read(connection, tenant, [])
    return terms, totals


def test_term_statistics_follow_every_add_replace_delete_and_bulk_load(database_url):
    store = StageStore(database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        documents = [
            SourceDocument("a", "", "", "The mill was restored in 1718 after a storm.\n\nIt was restored again."),
            SourceDocument("b", "", "", "A bridge near Belkik was surveyed in 1682."),
        ]
        knowledge.add_documents(documents, tenant_id=TENANT)
        knowledge.add_documents([documents[0]], tenant_id="other")
        assert _stored(store.engine, TENANT) == _recount(store.engine, TENANT)
        knowledge.add_documents(
            [SourceDocument("a", "", "", "The mill burned down in 1801.")], tenant_id=TENANT, replace=True
        )
        assert _stored(store.engine, TENANT) == _recount(store.engine, TENANT)
        bulk_load(
            store.engine,
            [SourceDocument(f"bulk-{i}", "", "", f"Mill {i} near the bridge.") for i in range(20)],
            tenant_id=TENANT,
        )
        assert _stored(store.engine, TENANT) == _recount(store.engine, TENANT)
        knowledge.delete_document("b", tenant_id=TENANT)
        terms, totals = _stored(store.engine, TENANT)
        assert (terms, totals) == _recount(store.engine, TENANT)
        assert "belkik" not in terms  # a term no passage holds any more is gone
        assert _stored(store.engine, "other") == _recount(store.engine, "other")  # the other tenant's untouched
        # The hits' statistics are the tenant's own.
        found = knowledge.search("mill bridge", 3, tenant_id=TENANT)
        assert found.corpus_idf == {t: idf(terms[t], totals.passages) for t in ("mill", "bridge")}
        assert found.average_length == totals.terms / totals.passages
    finally:
        store.close()


def test_the_migration_counts_the_passages_stored_before_it(empty_database_url):
    from alembic import command

    from factcheck_gateway.store.engine import create_db_engine
    from factcheck_gateway.store.migrate import alembic_config

    engine = create_db_engine(empty_database_url)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0015")
            connection.execute(
                text(
                    "INSERT INTO kb_documents (tenant_id, id, title, url, text, content_sha256, char_count, "
                    "passage_count, created_at) VALUES ('t', 'd', '', '', 'x', 'h', 1, 2, CURRENT_TIMESTAMP)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO kb_passages (tenant_id, document_id, chunk_index, text, start_offset, end_offset) "
                    "VALUES ('t', 'd', 0, 'Salim bridge', 0, 12), ('t', 'd', 1, 'The bridge, the bridge.', 13, 30)"
                )
            )
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        assert _stored(engine, "t") == ({"salim": 1, "bridge": 2}, Totals(2, 4))
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0015")
            assert not connection.dialect.has_table(connection, "kb_terms")
    finally:
        engine.dispose()


# --- the store against an exact BM25 on hard questions, before and after maintenance --------------------------


def _maintain(engine) -> None:
    """What an operator or autovacuum does: refresh statistics, merge the index, reclaim space."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM ANALYZE kb_passages, kb_documents")
    else:
        with engine.begin() as connection:
            connection.exec_driver_sql("ANALYZE")
            connection.exec_driver_sql("INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('optimize')")
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.exec_driver_sql("VACUUM")


def test_the_store_answers_hard_questions_as_an_exact_bm25_does_before_and_after_maintenance(database_url):
    corpus = hard_corpus(10_000, facts=60, seed=5)
    rng = random.Random(5)
    # The benchmark's questions, and random ones made of words of the answers' passages and stray words.
    vocabulary = sorted({t for p in rng.sample(corpus.passages, 300) for t in search_terms(p)})
    questions = [*corpus.questions]
    for answer in rng.sample(corpus.answers, 30):
        words = search_terms(corpus.passages[answer])
        questions.append(" ".join(rng.sample(words, min(len(words), rng.randint(1, 4))) + rng.sample(vocabulary, 2)))
    expected = exact_bm25_top(corpus.passages, questions, k=3)
    store = StageStore(database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        bulk_load(store.engine, [SourceDocument(i, i, "", body) for i, body in corpus.documents], tenant_id=TENANT)
        position = {passage: i for i, passage in enumerate(corpus.passages)}

        def answers() -> list[list[tuple[int, float]]]:
            return [
                [(position[h.text], h.score) for h in knowledge.search(q, 3, tenant_id=TENANT).hits] for q in questions
            ]

        before = answers()
        exact = _exact_scores(corpus.passages)
        for question, found, top in zip(questions, before, expected):
            _same_ranking(found, exact(question, top), 3)
        assert sum(corpus.answers[q] in [i for i, _ in before[q]] for q in range(len(corpus.questions))) >= 0.9 * len(
            corpus.questions
        )
        _maintain(store.engine)
        assert answers() == before
    finally:
        store.close()


def _exact_scores(passages: list[str]):
    """The exact BM25 scores of chosen passages over the whole store, to compare a top 3 with ties aside."""
    counts = term_statistics.counts_of(passages)
    totals = Totals(counts.passages, counts.length)
    weights = {term: idf(value[0], totals.passages) for term, value in counts.terms.items()}

    def ranked(question: str, top: list[int]) -> list[tuple[int, float]]:
        scores = BM25([passages[i] for i in top], weights, totals.average_length).scores(question)
        return sorted(zip(top, scores), key=lambda r: (-r[1], r[0]))

    return ranked


def test_words_the_databases_own_parsers_would_split_or_drop_are_searched(database_url):
    """PostgreSQL's parser makes one token of "loamy/sandy", none of "²", and its english configuration drops
    "after": the index holds the store's own terms instead, so each is found like any other word."""
    store = StageStore(database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        knowledge.add_documents(
            [
                SourceDocument("squared", "", "", "The plot covers 5 ² units of loamy/sandy soil after the flood."),
                SourceDocument("other", "", "", "The plot covers 5 units of clay after the flood."),
            ],
            tenant_id=TENANT,
        )
        for query in ("²", "² units", "sandy", "loamy soil"):
            assert [h.document.id for h in knowledge.search(query, 3, tenant_id=TENANT).hits][0] == "squared", query
        assert {h.document.id for h in knowledge.search("after", 3, tenant_id=TENANT).hits} == {"squared", "other"}
    finally:
        store.close()


@settings(max_examples=300, deadline=None)
@given(
    passage=st.text(alphabet=st.sampled_from(list("ab_,.' 1É²\n")) | st.characters(), max_size=80),
    terms=st.lists(st.sampled_from(["ab", "a_b", "1,000", "1000", "é", "b.a", "x"]), max_size=4, unique=True),
)
def test_term_frequencies_count_what_term_counts_counts(passage, terms):
    from factcheck_gateway.knowledge.tokens import term_counts, term_frequencies

    counts = term_counts(passage)
    assert term_frequencies(passage, terms) == ([counts.get(t, 0) for t in terms], sum(counts.values()))
    # A number's thousands separators: "1,000" in a passage is the query's "1000".
    assert term_counts("It cost 1,000 dollars")["1000"] == 1 and search_terms("1,000 dollars") == ["1000", "dollars"]


@pytest.mark.parametrize("row_cost", [0, 10**9])
def test_the_index_reads_every_passage_of_a_group_through_its_lead_or_its_and(database_url, row_cost):
    """A group read as the index's AND of its lists, or through its shortest list filtered by the texts' words
    (ROW_COST decides which: only speed depends on it), holds every passage in each of its lists."""
    from factcheck_gateway.knowledge.postgresql_index import PostgresIndex
    from factcheck_gateway.knowledge.sqlite_index import SqliteIndex
    from factcheck_gateway.knowledge.top_k import PostingList

    rng = random.Random(row_cost)
    words = ["ant", "bee", "cow", "doe", "eel", "1000"]
    texts = []
    for i in range(120):
        chosen = rng.sample(words, rng.randint(1, 4)) + [rng.choice(words)] * rng.randint(0, 1)
        body = " ".join(w if w != "1000" else "1,000" for w in chosen)
        texts.append(f"{body} filler words make this passage long enough {i}" if i % 3 else body)
    store = StageStore(database_url)
    try:
        bulk_load(store.engine, [SourceDocument(f"d{i}", "", "", t) for i, t in enumerate(texts)], tenant_id=TENANT)
        salient = [set(term_statistics.passage_fields(t)[0].split()) for t in texts]
        held = [set(search_terms(t)) for t in texts]
        with store.engine.connect() as connection:
            ids = {body: i for body, i in connection.execute(text("SELECT text, id FROM kb_passages"))}
            for _ in range(20):
                groups = []
                for _ in range(rng.randint(1, 4)):
                    terms = rng.sample(words, rng.randint(1, 3))
                    groups.append(tuple(PostingList(t, rng.random() < 0.5, 1.0, rng.randint(1, 200)) for t in terms))
                index: SqliteIndex | PostgresIndex
                if connection.dialect.name == "sqlite":
                    index = SqliteIndex(connection, TENANT, small_tenant=True)
                else:
                    index = PostgresIndex(connection, TENANT, True)
                index.ROW_COST = row_cost
                found = set(index.matching(groups))
                expected = {
                    ids[t]
                    for i, t in enumerate(texts)
                    if any(all(p.term in (salient[i] if p.salient else held[i]) for p in g) for g in groups)
                }
                assert expected <= found
    finally:
        store.close()


def test_a_number_written_with_thousands_separators_is_found_by_its_term(database_url):
    """The index tokenizes "1,000" apart ("1", "000"); the passage gives it the term "1000" too."""
    store = StageStore(database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        knowledge.add_documents(
            [
                SourceDocument(
                    "cost", "", "", "The bridge cost 1,000 crowns when it was finished in the spring of 1802."
                ),
                SourceDocument(
                    "other", "", "", "The bridge cost 900 crowns when it was finished in the spring of 1801."
                ),
            ],
            tenant_id=TENANT,
        )
        for query in ("1,000 crowns", "1000"):
            assert [h.document.id for h in knowledge.search(query, 3, tenant_id=TENANT).hits][0] == "cost"
    finally:
        store.close()


@settings(max_examples=300, deadline=None)
@given(
    passage=st.text(alphabet=st.sampled_from(list("ab_,.' 1É²\n")) | st.characters(), max_size=80),
    terms=st.lists(st.sampled_from(["ab", "a_b", "1000", "é", "b.a", "ba", "x"]), min_size=1, max_size=4, unique=True),
    stored_length=st.sampled_from([None, 0]),
)
def test_a_passage_score_bound_is_never_under_its_score(passage, terms, stored_length):
    """Search skips tokenizing a passage whose bound is under the threshold: the bound must hold, with the
    passage's stored length or with a length of 0 (not known)."""
    from factcheck_gateway.knowledge.ranking import passage_score_bounds
    from factcheck_gateway.knowledge.term_statistics import passage_fields

    weights = {term: 1.0 + i for i, term in enumerate(terms)}
    length = passage_fields(passage)[1] if stored_length is None else stored_length
    [bound] = passage_score_bounds([passage], [length], weights, 7.5)
    [score] = passage_scores([passage], weights, 7.5)
    assert bound >= score - 1e-12


def test_passages_without_a_term_are_stored_searched_and_deleted(database_url):
    """A passage of punctuation alone (":") has no term: it counts in the totals, and nothing fails."""
    store = StageStore(database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        knowledge.add_documents([SourceDocument("colon", "", "", ":")], tenant_id=TENANT)
        assert knowledge.search(":", 3, tenant_id=TENANT).hits == []
        assert _stored(store.engine, TENANT) == _recount(store.engine, TENANT) == ({}, Totals(1, 0))
        assert knowledge.delete_document("colon", tenant_id=TENANT) == 1
        assert _stored(store.engine, TENANT) == ({}, Totals(0, 0))
    finally:
        store.close()
