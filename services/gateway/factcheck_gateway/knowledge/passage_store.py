"""The knowledge store: documents split into passages, searched with the database's full-text index.

SQLite (the embedded default) uses an FTS5 table; PostgreSQL a tsvector column with a
GIN index (migrations 0002 and 0005). The store lives in the gateway's database, so it
grows with the database rather than with a file on one pod. Search uses the index as a
bounded boolean filter and ranks the candidates itself (see `_candidate_ids`); a large
import goes through `factcheck_gateway.knowledge.bulk.bulk_load`.

Every document belongs to a tenant (migration 0003), and every method works within the one
tenant it is given: ids and content hashes are unique per tenant, and search only finds the
tenant's own passages.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass
from datetime import datetime
from itertools import combinations

from sqlalchemy import Connection, Engine, Row, RowMapping, TextClause, bindparam, delete, exists, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.ranking import BM25, idf
from factcheck_gateway.knowledge.tokens import search_terms, term_counts
from factcheck_gateway.knowledge.upkeep import refresh_after_load
from factcheck_gateway.store.models import KnowledgeDocument, KnowledgePassage
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.store.records import storable

log = logging.getLogger("factcheck.gateway.knowledge")

# Full-text queries are ORs of a claim's terms; very long queries only slow the index down.
MAX_QUERY_TERMS = 32
# Search ranks at most this many candidates from the index (see `_candidate_ids`) ...
CANDIDATE_CAP = 64
# ... and looks for at least this many before it stops relaxing the quorum of rare terms.
MIN_CANDIDATES = 16
# Rare terms whose quorum picks the candidates when a query matches too many passages.
QUORUM_TERMS = 5
# Terms in at most this share of the passages are selective (the rarest, as long as together they
# match at most half of RANK_WINDOW): every passage holding one is a candidate (see `_candidate_ids`).
SELECTIVE_SHARE = 0.01
# When the cap would cut a candidate query's matches, PostgreSQL ranks at most this many of them by
# their terms' IDF (the rest are cut in table order: they hold only common terms).
RANK_WINDOW = 2_000
# Quorum levels are read together from one window (PostgreSQL) only down to a level expected to match fewer
# passages than this (a quarter of the window: words are not independent).
FOLD_BELOW_MATCHES = RANK_WINDOW / 4
# A tenant with less than this share of all passages is matched through its term in the index;
# a larger one by checking tenant_id on each match (cheaper: the tenant's own posting list is long).
TENANT_TERM_BELOW_SHARE = 0.2


@dataclass(frozen=True)
class SourceDocument:
    """A document as callers supply it (request sources and AddDocuments share this shape)."""

    id: str
    title: str
    url: str
    text: str
    published_at: str | None = None
    authority: float | None = None

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AddedDocument:
    document_id: str
    created: bool  # False: the tenant had the text already (document_id is the document holding it)
    passage_count: int
    replaced: bool = False  # it replaced the tenant's document of that id, which held other text


class DocumentsExist(Exception):
    """Documents whose ids the tenant already has, holding other text: (index in the request, id) of
    each. Nothing was stored; `replace` would have replaced them."""

    def __init__(self, conflicts: list[tuple[int, str]]) -> None:
        super().__init__(f"{len(conflicts)} document ids are stored with other text")
        self.conflicts = conflicts


@dataclass(frozen=True)
class DocumentSummary:
    id: str
    title: str
    url: str
    published_at: str | None
    authority: float | None
    passage_count: int
    char_count: int
    content_sha256: str
    created_at: datetime


@dataclass(frozen=True)
class PassageHit:
    """A passage found by search, with its document's metadata and the index's score (higher is better)."""

    document: SourceDocument
    text: str
    start: int
    end: int
    score: float
    section: str = ""  # the heading of the document section it is in ("" when none)


@dataclass(frozen=True)
class StoreSearch:
    """Search's hits, and the store-wide statistics it ranked them with: each query term's BM25 IDF
    (None without statistics) and the average passage length."""

    hits: list[PassageHit]
    corpus_idf: dict[str, float] | None = None
    average_length: float | None = None  # of the store's passages, in terms (BM25's length normalisation)


class KnowledgeStore:
    def __init__(self, engine: Engine, *, candidate_cap: int = CANDIDATE_CAP) -> None:
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._candidate_cap = candidate_cap
        self._statistics = _PostgresStatistics()
        self._lengths = _AverageLength()
        self._rarity = _SqliteRarity()

    def add_documents(
        self, documents: list[SourceDocument], *, tenant_id: str, replace: bool = False
    ) -> list[AddedDocument]:
        """Store the tenant's documents and their passages, all of them or none (one transaction).

        A text the tenant already stored is not stored again: the document holding it is returned. A
        document whose id the tenant has, holding other text, replaces that document only with `replace`
        (an edited file added again); without it, DocumentsExist names every such document and nothing
        is stored: nothing a caller added is overwritten unless the caller asked for it.
        """
        documents = [SourceDocument(*(storable(value) for value in astuple(d))) for d in documents]
        with self._sessions.begin() as session:
            conflicts = [] if replace else _conflicts(session, documents, tenant_id)
            if conflicts:
                raise DocumentsExist(conflicts)
            added = [_add(session, document, tenant_id) for document in documents]
        if any(a.created for a in added):
            self._refresh_after_load()
        return added

    def _refresh_after_load(self) -> None:
        """A store must be fast right after the load that filled it, whatever the server's autovacuum does."""
        self._rarity.forget()  # the terms' counts changed with any load
        try:
            with self._engine.begin() as connection:
                if refresh_after_load(connection):
                    self._statistics.forget()
                    self._lengths.forget()
        except SQLAlchemyError as error:  # the documents are stored; a later load tries again
            log.warning("knowledge store upkeep after a load failed: %s", error)

    def delete_document(self, document_id: str, *, tenant_id: str) -> int:
        """Remove the tenant's document and its passages; returns the passage count.

        LookupError if the tenant has no such document (another tenant's is not seen).
        """
        with self._sessions.begin() as session:
            document = session.scalar(
                select(KnowledgeDocument).where(
                    KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id == document_id
                )
            )
            if document is None:
                raise LookupError(f"no document with id {document_id!r}")
            count = document.passage_count
            _delete_passages(session, tenant_id, document_id)
            session.delete(document)
        self._rarity.forget()
        return count

    def list_documents(
        self, page_size: int, page_token: str | None, *, tenant_id: str
    ) -> tuple[list[DocumentSummary], str | None]:
        """The tenant's documents, newest first."""
        with self._sessions() as session:
            rows, next_token = newest_first_page(
                session,
                KnowledgeDocument,
                page_size,
                page_token,
                KnowledgeDocument.tenant_id == tenant_id,
                listing=Listing("ListDocuments", tenant_id),
            )
            return [_summary(row) for row in rows], next_token

    def has_documents(self, *, tenant_id: str) -> bool:
        with self._sessions() as session:
            return bool(session.scalar(select(exists().where(KnowledgeDocument.tenant_id == tenant_id))))

    def search(self, query: str, top_k: int, *, tenant_id: str) -> StoreSearch:
        """The top_k of the tenant's passages for the query's terms (any term matches), most relevant first.

        The index proposes at most `candidate_cap` candidates (see `_candidate_ids`). When they are
        all of the tenant's matches, the index ranks them as it always did (FTS5 bm25, PostgreSQL
        ts_rank_cd); otherwise they are ranked here by BM25 with the corpus-wide IDF the index estimated
        and the store's average passage length. Both come back with the hits, so that whoever ranks them
        again weighs words as the store does.
        """
        terms = search_terms(query)[:MAX_QUERY_TERMS]
        if not terms or top_k < 1:
            return StoreSearch([])
        with self._engine.connect() as connection:
            index: _Index
            if connection.dialect.name == "sqlite":
                index = _SqliteIndex(connection, tenant_id, self._rarity)
            else:
                index = _PostgresIndex(connection, tenant_id, self._statistics)
            keys = index.keys(terms)
            distinct_keys = list(dict.fromkeys(keys.values()))
            cap = max(self._candidate_cap, top_k)
            ids, complete = _candidate_ids(index, distinct_keys, cap, max(top_k, MIN_CANDIDATES))
            if not ids:
                return StoreSearch([])
            idfs = index.corpus_idf(terms, keys)
            average_length = self._lengths.get(connection)
            if complete:
                ranked = index.rank(ids, distinct_keys, top_k)
            else:
                texts = index.texts(ids)
                scores = BM25([passage_text for _, passage_text in texts], idfs, average_length).scores(query)
                ranked = sorted(zip((i for i, _ in texts), scores), key=lambda r: (-r[1], r[0]))[:top_k]
            rows = {row["id"]: row for row in index.passages([i for i, _ in ranked])}
        return StoreSearch([_hit(rows[i], score) for i, score in ranked if i in rows], idfs, average_length)


# --- candidates -------------------------------------------------------------------------------------------
#
# Ranking every passage that shares a word with a claim does not scale: at a million passages a
# claim's terms match 100,000-400,000 passages. FTS5's bm25() with ORDER BY rank LIMIT still scores
# every match (about 1.5 us a row, 200-1000 ms a query measured) and PostgreSQL's ts_rank_cd reads
# every matched row's tsvector from the heap (2.4 s p50). So the index is used as a boolean filter
# that returns at most `cap` passage ids (a LIMIT, which FTS5 and a bitmap heap scan stop at):
#
# 1. Every passage matching any term, when there are no more than the cap: the exact answer, ranked
#    by the index as before (always so in small stores). On SQLite this probe is cheap even when it
#    fails (it stops after cap + 1 rows); PostgreSQL skips it when its statistics say a term is in
#    more passages than the cap (a GIN bitmap scan reads every entry of every term: 20-30 ms for a
#    term in 13% of a million passages).
# 2. Otherwise, first the passages holding any selective term (one in at most 1% of the passages;
#    the rarest first, as long as together they match at most half of RANK_WINDOW: names, rare
#    words), ranked in the database by the IDF of those they hold. A quorum counts terms, not
#    their weight: without this step three common words would make a stricter level than the two
#    rarest, and a passage holding a name and one common word could be left out for dozens holding
#    three common words, which BM25 ranks far below it.
# 3. Then, if still short, the passages holding the most of the claim's QUORUM_TERMS rarest terms,
#    strictest first: all of them, then any QUORUM_TERMS - 1 of them, ..., then any one, until there
#    are `wanted` candidates (a stricter level's passages always come first). A quorum of rare terms
#    is what makes a passage score high in BM25, and AND is cheap in both indexes (they skip
#    through the longer posting list), so a very common term never costs a full scan. These
#    candidates are ranked in Python by BM25 with the corpus-wide IDF of each term. When a level has
#    more matches than the cap keeps, they are ranked by the IDF of the rare terms they hold before
#    the cap, never cut in table order: a looser level also matches passages holding only the
#    middling terms among the rare ones, hundreds of them, which could push out the passage with
#    the two rarest. SQLite runs the level's AND groups one by one, the heaviest first (FTS5's bm25
#    would count every row of every term in the expression first, 30 of them in a level: 100 ms at
#    1M passages); PostgreSQL ranks up to RANK_WINDOW matches of the level in one statement (its
#    groups asked as one tsquery per leading key: see `_PostgresIndex._by_leading_key`), and reads
#    the strictest levels of a common-word question from one window (`_lowest_level_read_with`).
# Rarity is estimated without reading whole posting lists: FTS5 counts each term in a few fixed
# windows of rowids (20,000 in all; each term once a minute, see `_SqliteRarity`); PostgreSQL
# reads ANALYZE's lexeme frequencies (pg_stats).
# The tenant: a small tenant's term in the index makes its matches cheap to find, but ANDing the
# term of a tenant that owns most passages costs a walk along its posting list (30 ms in GIN at
# 1M, up to 5 ms in FTS5), so such a tenant is checked row by row on the matches instead.


def _candidate_ids(index: _Index, keys: list, cap: int, wanted: int) -> tuple[list[int], bool]:
    """At most `cap` candidate ids, and whether they are all of the tenant's matches."""
    if not keys:
        return [], True
    loosest = None
    if index.may_match_few(keys, cap):
        loosest = index.match(index.any_of(keys), cap + 1)
        if len(loosest) <= cap:
            return loosest, True
    found: dict[int, None] = {}
    selective = _selective(index, keys)
    if selective:
        found.update(dict.fromkeys(_matches(index, [(key,) for key in selective], cap)))
        if len(found) >= wanted:
            return list(found)[:cap], False
    rare = sorted(keys, key=index.rarity)[:QUORUM_TERMS]
    read: dict[int, list[int]] = {}  # levels' matches read together with a stricter one's
    for quorum in range(len(rare), 0, -1):
        if quorum == len(rare):
            lowest = _lowest_level_read_with(index, rare, wanted - len(found))
            if lowest < quorum:
                read = index.best_levels(rare, lowest, cap + 1)
        ids = read.pop(quorum) if quorum in read else _matches(index, list(combinations(rare, quorum)), cap)
        found.update(dict.fromkeys(ids))
        if len(found) >= wanted:
            return list(found)[:cap], False
    if len(rare) < len(keys):  # still short: passages with only the commoner terms
        found.update(dict.fromkeys(loosest if loosest is not None else index.match(index.any_of(keys), cap + 1)))
    return list(found)[:cap], False


def _lowest_level_read_with(index: _Index, rare: list, wanted: int) -> int:
    """The loosest quorum level to read in one window with the strictest (all the rare keys), on an index that
    can (`_Index.best_levels`); the strictest itself when none.

    Only when even the rarest key is in a window's worth of passages or more (otherwise the levels, which all
    walk its posting list, are cheap), and down to the first level expected to make up the candidates still
    wanted, as long as each is expected to match few enough passages for the window to hold them all (else
    the levels above it are asked again one by one). Estimated as if the keys were independent; only the
    cost depends on the estimate, never the candidates.
    """
    strictest = len(rare)
    passages = index.passage_count()
    if not index.READS_LEVELS_TOGETHER or passages <= 0 or index.rarity(rare[0]) < RANK_WINDOW:
        return strictest  # (a rare key, a name, makes every level cheap on its own: its posting list is short)
    shares = [min(1.0, index.rarity(key) / passages) for key in rare]

    def expected(level: int) -> float:
        return passages * sum(math.prod(shares[i] for i in group) for group in combinations(range(strictest), level))

    lowest = strictest
    for level in range(strictest, 0, -1):
        matches = expected(level)
        if matches >= FOLD_BELOW_MATCHES:
            break
        lowest = level
        if matches >= wanted:
            break
    return lowest


def _matches(index: _Index, groups: list[tuple], cap: int) -> list[int]:
    """At most cap + 1 passages holding every key of one of the groups, the best by IDF (`_Index.best`).

    No probe first for whether the cap keeps them all: when it does, `best` finds the same passages
    (it stops only at cap + 1), and a probe of the groups' OR costs about as much in FTS5 as the groups
    one by one (and reads a GIN index's posting lists a second time), so it only doubled the work of
    every level the cap cuts.
    """
    return index.best(groups, cap + 1)


def _selective(index: _Index, keys: list) -> list:
    """The rarest keys, each in at most SELECTIVE_SHARE of the passages, together in about RANK_WINDOW / 2
    (half: the estimates are estimates, and the window must hold every passage they match to rank them)."""
    bound = SELECTIVE_SHARE * index.passage_count()
    if index.passage_count() <= 0:  # no statistics: every key looks alike
        return []
    selective, matches = [], 0.0
    for key in sorted(keys, key=index.rarity):
        matches += index.rarity(key)
        if index.rarity(key) > bound or matches > RANK_WINDOW / 2:
            break
        selective.append(key)
    return selective


class _Index:
    """A backend's full-text index as a boolean filter over one tenant's passages."""

    # Whether `best_levels` reads several quorum levels from one window (PostgreSQL).
    READS_LEVELS_TOGETHER = False

    def keys(self, terms: list[str]) -> Mapping[str, object]:
        """What the index matches for each term (terms it cannot match are left out)."""
        raise NotImplementedError

    def rarity(self, key) -> float:
        """Estimated number of passages holding the key (lower is rarer)."""
        raise NotImplementedError

    def corpus_idf(self, terms: list[str], keys: Mapping[str, object]) -> dict[str, float] | None:
        """Each term's IDF over the whole store (from `rarity`), or None without statistics.

        A term the index leaves out (a PostgreSQL stopword) weighs nothing, as in the index.
        """
        passages = self.passage_count()
        if passages <= 0:
            return None
        return {term: idf(self.rarity(keys[term]), passages) if term in keys else 0.0 for term in terms}

    def passage_count(self) -> float:
        raise NotImplementedError

    def may_match_few(self, keys: list, cap: int) -> bool:
        return True

    def any_of(self, expressions: list[str]) -> str:
        raise NotImplementedError

    def all_of(self, expressions: Sequence[str]) -> str:
        raise NotImplementedError

    def match(self, expression: str, limit: int) -> list[int]:
        """Ids of at most `limit` of the tenant's passages matching the expression."""
        raise NotImplementedError

    def best(self, groups: list[tuple], limit: int) -> list[int]:
        """Ids of at most `limit` of the tenant's passages holding every key of one of the groups, those
        whose keys weigh most (IDF) first: one cheap AND query per group, the heaviest group first."""
        passages = self.passage_count()

        def weight(group: tuple) -> float:
            return sum(idf(self.rarity(key), passages) if passages > 0 else 1.0 for key in group)

        found: dict[int, None] = {}
        for group in sorted(groups, key=weight, reverse=True):
            found.update(dict.fromkeys(self.match(self.all_of(group), limit)))
            if len(found) >= limit:
                break
        return list(found)[:limit]

    def best_levels(self, rare: list, lowest: int, limit: int) -> dict[int, list[int]]:
        """For each quorum level from all the rare keys down to `lowest` of them, what `best` of its groups
        (`combinations(rare, level)`) returns, read from one window of the loosest level's matches; only
        the loosest when that window was full (the stricter levels' matches may lie beyond it)."""
        raise NotImplementedError

    def rank(self, ids: list[int], keys: list, limit: int) -> list[tuple[int, float]]:
        """The best `limit` of these passages by the index's own ranking for any of the keys, with scores."""
        raise NotImplementedError

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        """(id, text) of the tenant's passages among `ids`."""
        raise NotImplementedError

    def passages(self, ids: list[int]) -> Sequence[Mapping]:
        """The tenant's passages among `ids`, with their documents' metadata."""
        raise NotImplementedError


class _SqliteIndex(_Index):
    def __init__(self, connection: Connection, tenant_id: str, rarity: _SqliteRarity) -> None:
        self._connection = connection
        self._tenant_id = tenant_id
        self._estimates = rarity
        # The tenant column of the index holds the hex of tenant_id: one token (migration 0005).
        self._tenant = '"' + tenant_id.encode("utf-8").hex().upper() + '"'
        self._rarity: dict[str, float] = {}

    def keys(self, terms: list[str]) -> dict[str, str]:
        keys = {term: '"' + term.replace('"', '""') + '"' for term in terms}
        self._rarity, self._span = self._estimates.get(self._connection, [*keys.values(), self._tenant], self._tenant)
        self._tenant_term = self._rarity.pop(self._tenant) < TENANT_TERM_BELOW_SHARE * self._span
        return keys

    def passage_count(self) -> float:
        return self._span

    def rarity(self, key: str) -> float:
        return self._rarity.get(key, 0.0)

    def any_of(self, expressions: list[str]) -> str:
        return expressions[0] if len(expressions) == 1 else "(" + " OR ".join(expressions) + ")"

    def all_of(self, expressions: Sequence[str]) -> str:
        return expressions[0] if len(expressions) == 1 else "(" + " AND ".join(expressions) + ")"

    def match(self, expression: str, limit: int) -> list[int]:
        if self._tenant_term:
            match, statement = f"tenant : {self._tenant} AND text : {expression}", _SQLITE_MATCH
        else:
            match, statement = f"text : {expression}", _SQLITE_MATCH_CHECKING_TENANT
        rows = self._connection.execute(statement, {"match": match, "tenant_id": self._tenant_id, "limit": limit})
        return list(rows.scalars())

    def rank(self, ids: list[int], keys: list, limit: int) -> list[tuple[int, float]]:
        # `+rowid`: filter the matches by id instead of running the query once per id (and the tenant
        # column gets weight 0, as its term is in no query).
        rows = self._connection.execute(
            _SQLITE_RANK, {"match": "text : " + self.any_of(keys), "ids": ids, "limit": limit}
        )
        return [(row.rowid, -row.bm25) for row in rows]

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        return [
            tuple(row) for row in self._connection.execute(_SQLITE_TEXTS, {"ids": ids, "tenant_id": self._tenant_id})
        ]

    def passages(self, ids: list[int]) -> Sequence[RowMapping]:
        # `+p.tenant_id`: look passages up by id; an index on tenant_id would scan the whole tenant.
        return self._connection.execute(_SQLITE_PASSAGES, {"ids": ids, "tenant_id": self._tenant_id}).mappings().all()


class _PostgresIndex(_Index):
    READS_LEVELS_TOGETHER = True

    def __init__(self, connection: Connection, tenant_id: str, statistics: _PostgresStatistics) -> None:
        self._connection = connection
        self._tenant_id = tenant_id
        self._statistics = statistics
        # Each passage's tsvector holds the lexeme 'tenant <tenant_id>' (migration 0005).
        self._tenant_lexeme = "tenant " + tenant_id
        # No sequential scans (a LIMIT tempts the planner into one that may read the whole table), no JIT
        # compilation (it costs more than these queries), and the generic plan of a statement the driver
        # has prepared (psycopg does after 5 runs on a connection) instead of planning it again for its
        # values: a search runs up to 8 statements, each planned in about 1 ms, and whatever the tsquery,
        # the plan is the GIN index's bitmap (2 ms of a 9 ms fact question at a million passages).
        connection.exec_driver_sql(
            "SET LOCAL enable_seqscan = off; SET LOCAL jit = off; SET LOCAL plan_cache_mode = force_generic_plan"
        )

    def keys(self, terms: list[str]) -> dict[str, tuple[str, ...]]:
        """Each term's lexemes, as PostgreSQL's english configuration makes them (none for its stopwords)."""
        rows = self._connection.execute(
            text("SELECT tsvector_to_array(to_tsvector('english', t)) FROM unnest(CAST(:terms AS text[])) AS t"),
            {"terms": terms},
        ).scalars()
        self._frequencies = frequencies = self._statistics.get(self._connection)
        tenant_share = frequencies.shares.get(self._tenant_lexeme, 0.0)
        self._tenant_term = tenant_share < TENANT_TERM_BELOW_SHARE
        return {term: tuple(lexemes) for term, lexemes in zip(terms, rows) if lexemes}

    def passage_count(self) -> float:
        # Without ANALYZE's lexeme statistics there is no corpus-wide IDF: the BM25 falls back to the pool's.
        return self._frequencies.passages if self._frequencies.shares else 0.0

    def rarity(self, key: tuple[str, ...]) -> float:
        return min(self._frequencies.estimate(lexeme) for lexeme in key)

    def may_match_few(self, keys: list, cap: int) -> bool:
        return all(self.rarity(key) <= cap for key in keys)

    def any_of(self, expressions: list) -> str:
        parts = [self._expression(e) for e in expressions]
        return parts[0] if len(parts) == 1 else "(" + " | ".join(parts) + ")"

    def all_of(self, expressions: Sequence) -> str:
        parts = [self._expression(e) for e in expressions]
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def _expression(self, expression) -> str:
        if isinstance(expression, str):
            return expression
        return self.all_of([_tsquery_lexeme(lexeme) for lexeme in expression])

    def match(self, expression, limit: int) -> list[int]:
        query = self._expression(expression)
        if self._tenant_term:
            query = f"{_tsquery_lexeme(self._tenant_lexeme)} & {query}"
        rows = self._connection.execute(_POSTGRES_MATCH, {"query": query, "tenant_id": self._tenant_id, "limit": limit})
        return list(rows.scalars())

    def best(self, groups: list[tuple], limit: int) -> list[int]:
        return [row.id for row in self._best_rows(groups, limit)[0]]

    def best_levels(self, rare: list, lowest: int, limit: int) -> dict[int, list[int]]:
        # The loosest level's window, each row with the keys it holds: a level's `best` is the rows holding
        # at least its number of keys, by weight then id (the weights added in the statement's order, so
        # the same floats), when the window holds all the loosest level's matches and so all the stricter
        # levels'. A common-word question is spared a statement per level (10-15 ms at a million passages).
        groups = list(combinations(rare, lowest))
        rows, weights = self._best_rows(groups, RANK_WINDOW, holding=True)
        held = [(row.id, [k for k in range(len(weights)) if row.held >> k & 1]) for row in rows]
        ranked = sorted(
            ((-sum(weights[k] for k in keys), identifier, len(keys)) for identifier, keys in held),
        )
        levels = [lowest] if rows and rows[0].window_rows >= RANK_WINDOW else range(len(rare), lowest - 1, -1)
        return {level: [i for _, i, count in ranked if count >= level][:limit] for level in levels}

    def _best_rows(self, groups: list[tuple], limit: int, holding: bool = False) -> tuple[Sequence[Row], list[float]]:
        # One statement: the groups' matches (a bitmap of their terms' posting lists), at most RANK_WINDOW
        # of them ranked by the IDF of the keys each holds (ts_rank knows no IDF). The groups are asked
        # as one tsquery per leading key (`_by_leading_key`), whose bitmaps PostgreSQL ORs.
        keys = list(dict.fromkeys(key for group in groups for key in group))
        queries = self._by_leading_key(groups)
        if self._tenant_term:
            queries = [f"{_tsquery_lexeme(self._tenant_lexeme)} & ({query})" for query in queries]
        passages = self.passage_count()
        weights = [idf(self.rarity(key), passages) if passages > 0 else 1.0 for key in keys]
        parameters = {
            **{f"q{i}": query for i, query in enumerate(queries)},
            "tenant_id": self._tenant_id,
            **{f"t{k}": self._expression(key) for k, key in enumerate(keys)},
            **{f"w{k}": weight for k, weight in enumerate(weights)},
            "window": RANK_WINDOW,
            "limit": limit,
        }
        statement = _postgres_holding if holding else _postgres_best
        return self._connection.execute(statement(len(queries), len(keys)), parameters).all(), weights

    def _by_leading_key(self, groups: list[tuple]) -> list[str]:
        """The OR of the groups (each an AND of keys) as tsqueries that together match the same passages:
        one per leading key, the rarest first, that key AND the rest of the groups holding it (factored the
        same way), each group asked under its rarest key.

        The GIN index runs a tsquery by walking the union of the posting lists of the terms it cannot do
        without and evaluating the whole query on each entry: an OR of all combinations of 3 of 5 common
        terms walks three lists against 30 operands (30 ms at a million passages); as 3 queries of one
        leading term each, 12 ms, for the same matches.
        """
        order = {key: i for i, key in enumerate(sorted(dict.fromkeys(k for g in groups for k in g), key=self.rarity))}

        def disjuncts(groups: list[list]) -> list[str]:
            parts = []
            while groups:
                lead = min((group[0] for group in groups), key=order.__getitem__)  # the rarest key left
                rests = [group[1:] for group in groups if group[0] == lead]
                groups = [group for group in groups if group[0] != lead]
                if any(not rest for rest in rests):  # a group of that key alone: no other key needed
                    parts.append(self._expression(lead))
                else:
                    inner = disjuncts(rests)
                    either = inner[0] if len(inner) == 1 else "(" + " | ".join(inner) + ")"
                    parts.append(f"{self._expression(lead)} & {either}")
            return parts

        return disjuncts([sorted(dict.fromkeys(group), key=order.__getitem__) for group in groups])

    def rank(self, ids: list[int], keys: list, limit: int) -> list[tuple[int, float]]:
        rows = self._connection.execute(
            _POSTGRES_RANK, {"query": self.any_of(keys), "ids": ids, "tenant_id": self._tenant_id, "limit": limit}
        )
        return [(row.id, float(row.score)) for row in rows]

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        return [
            tuple(row) for row in self._connection.execute(_POSTGRES_TEXTS, {"ids": ids, "tenant_id": self._tenant_id})
        ]

    def passages(self, ids: list[int]) -> Sequence[Mapping]:
        # The passages, then their documents: not one join, which a planner that takes kb_documents for
        # empty (never analyzed: autovacuum off, or a store loaded before loads analyzed it) runs as a walk
        # over every document, each against the ids (13 ms at 1,911 documents).
        parameters = {"ids": ids, "tenant_id": self._tenant_id}
        passages = self._connection.execute(_POSTGRES_PASSAGE_ROWS, parameters).mappings().all()
        parameters["documents"] = list({row["document_id"] for row in passages})
        documents = {
            row["document_id"]: row for row in self._connection.execute(_POSTGRES_DOCUMENTS, parameters).mappings()
        }
        return [{**row, **documents[row["document_id"]]} for row in passages if row["document_id"] in documents]


def _tsquery_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery operand, quoted so that no character in it is an operator."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


class _SqliteRarity:
    """FTS5 terms' estimated passage counts, and the span of passage ids they were scaled to.

    A term's count in RARITY_WINDOWS windows of RARITY_WINDOW_ROWS rowids spread over the table (FTS5
    seeks to a rowid range), scaled up; exact when the table is smaller than that. Each term is counted
    once and remembered for at most a minute (a load through this store forgets them at once; one
    through another replica is seen within that minute, as PostgreSQL's statistics are): the counts
    were two queries on every search (2 ms at a million passages), for the same few thousand words.
    """

    RARITY_WINDOWS, RARITY_WINDOW_ROWS = 2, 10_000
    MAX_AGE_S = 60.0
    MAX_TERMS = 100_000  # remembered at most (then forgotten all at once)

    def __init__(self) -> None:
        self._state = _SqliteRarityState((), 0, 1.0, {}, float("-inf"))

    def forget(self) -> None:
        self._state = _SqliteRarityState((), 0, 1.0, {}, float("-inf"))

    def get(self, connection: Connection, keys: list[str], tenant: str) -> tuple[dict[str, float], int]:
        """Each key's estimated passage count (`tenant`: the tenant column's term), and the span."""
        state = self._state
        if time.monotonic() - state.read_at > self.MAX_AGE_S or len(state.counts) > self.MAX_TERMS:
            state = self._state = self._windows(connection)
        missing = [key for key in dict.fromkeys(keys) if key not in state.counts] if state.windows else []
        if missing:
            counts = [
                " + ".join(
                    f"(SELECT COUNT(*) FROM kb_passages_fts WHERE kb_passages_fts MATCH :k{k} "
                    f"AND rowid BETWEEN {a} AND {b})"
                    for a, b in state.windows
                )
                for k in range(len(missing))
            ]
            parameters = {f"k{k}": ("tenant : " if key == tenant else "text : ") + key for k, key in enumerate(missing)}
            row = connection.execute(text("SELECT " + ", ".join(counts)), parameters).one()
            state.counts.update((key, count * state.scale) for key, count in zip(missing, row))
        return {key: state.counts.get(key, 0.0) for key in keys}, state.span

    def _windows(self, connection: Connection) -> _SqliteRarityState:
        # (Two subqueries for MIN and MAX: together in one SELECT, SQLite scans the table for them.)
        low, high = connection.execute(
            text("SELECT (SELECT MIN(id) FROM kb_passages), (SELECT MAX(id) FROM kb_passages)")
        ).one()
        if low is None:
            return _SqliteRarityState((), 0, 1.0, {}, time.monotonic())
        span = high - low + 1  # about the number of passages (deletions leave gaps)
        size = self.RARITY_WINDOW_ROWS
        windows: tuple[tuple[int, int], ...]
        if span <= self.RARITY_WINDOWS * size:
            windows = ((low, high),)
        else:
            step = (span - size) // (self.RARITY_WINDOWS - 1)
            windows = tuple((low + i * step, low + i * step + size - 1) for i in range(self.RARITY_WINDOWS))
        scale = span / sum(b - a + 1 for a, b in windows)
        return _SqliteRarityState(windows, span, scale, {}, time.monotonic())


@dataclass(frozen=True)
class _SqliteRarityState:
    windows: tuple[tuple[int, int], ...]  # the rowid ranges counted (none: an empty store)
    span: int
    scale: float
    counts: dict[str, float]
    read_at: float


@dataclass(frozen=True)
class _LexemeFrequencies:
    """ANALYZE's most common lexemes of search_vector: lexeme -> share of passages holding it."""

    shares: dict[str, float]
    floor: float  # every other lexeme is in fewer passages than this share
    passages: float

    def estimate(self, lexeme: str) -> float:
        """Estimated passages holding the lexeme; the unlisted ones count as half the floor."""
        return self.passages * self.shares.get(lexeme, self.floor / 2)


class _PostgresStatistics:
    """The planner's statistics of kb_passages.search_vector, read at most once a minute.

    They change only when ANALYZE runs (autovacuum, or after a load: see upkeep.py), so a copy
    costs little in accuracy and saves parsing 10,000 lexemes on every search; a load through
    this store drops it at once.
    """

    MAX_AGE_S = 60.0

    def __init__(self) -> None:
        self._frequencies = _LexemeFrequencies({}, 0.0, 0.0)
        self._read_at = float("-inf")

    def forget(self) -> None:
        """ANALYZE just ran: read them again on the next search."""
        self._read_at = float("-inf")

    def get(self, connection: Connection) -> _LexemeFrequencies:
        if time.monotonic() - self._read_at > self.MAX_AGE_S:
            self._frequencies = _read_lexeme_frequencies(connection)
            self._read_at = time.monotonic()
        return self._frequencies


class _AverageLength:
    """The store's average passage length in terms, from a sample of passages, taken at most once a minute.

    BM25 normalises a passage's term frequencies by it; over a few candidates, which are the passages
    that hold the most query terms, the average is not the store's, and ranks close calls differently.
    """

    MAX_AGE_S = 60.0
    SAMPLE = 400

    def __init__(self) -> None:
        self._average: float | None = None
        self._read_at = float("-inf")

    def forget(self) -> None:
        self._read_at = float("-inf")

    def get(self, connection: Connection) -> float | None:
        if time.monotonic() - self._read_at > self.MAX_AGE_S:
            self._average = self._sample(connection)
            self._read_at = time.monotonic()
        return self._average

    def _sample(self, connection: Connection) -> float | None:
        low, high = connection.execute(
            text("SELECT (SELECT MIN(id) FROM kb_passages), (SELECT MAX(id) FROM kb_passages)")
        ).one()
        if low is None:
            return None
        ids = random.sample(range(low, high + 1), min(self.SAMPLE, high - low + 1))
        texts = connection.execute(_SAMPLED_TEXTS, {"ids": ids}).scalars().all()
        lengths = [sum(term_counts(passage).values()) for passage in texts]
        return sum(lengths) / len(lengths) if lengths and sum(lengths) else None


def _read_lexeme_frequencies(connection: Connection) -> _LexemeFrequencies:
    row = connection.execute(
        text(
            "SELECT s.most_common_elems::text::text[] AS lexemes, s.most_common_elem_freqs AS shares, "
            "GREATEST(c.reltuples, 0) AS passages FROM pg_class c LEFT JOIN pg_stats s "
            "ON s.schemaname = current_schema() AND s.tablename = 'kb_passages' AND s.attname = 'search_vector' "
            "WHERE c.oid = 'kb_passages'::regclass"
        )
    ).one()
    if not row.lexemes:  # never analyzed (a new or small table): every lexeme counts as rare
        return _LexemeFrequencies({}, 0.0, float(row.passages))
    # most_common_elem_freqs: one share per lexeme, then the minimum, the maximum and the null share.
    return _LexemeFrequencies(dict(zip(row.lexemes, row.shares)), row.shares[len(row.lexemes)], float(row.passages))


def _conflicts(session: Session, documents: list[SourceDocument], tenant_id: str) -> list[tuple[int, str]]:
    """(index, id) of each document that would replace one of the tenant's with other text: its id is
    stored, its text is not (neither stored nor earlier in the request, where it would be kept as is)."""
    ids = [document.id for document in documents if document.id]
    rows = session.execute(
        select(KnowledgeDocument.id, KnowledgeDocument.content_sha256).where(
            KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id.in_(ids)
        )
    )
    stored = {document_id: digest for document_id, digest in rows}
    digests = {document.content_sha256 for document in documents}
    known = set(
        session.scalars(
            select(KnowledgeDocument.content_sha256).where(
                KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.content_sha256.in_(digests)
            )
        )
    )
    conflicts = []
    for index, document in enumerate(documents):
        digest = document.content_sha256
        if document.id in stored and stored[document.id] != digest and digest not in known:
            conflicts.append((index, document.id))
        known.add(digest)
    return conflicts


def _add(session: Session, document: SourceDocument, tenant_id: str) -> AddedDocument:
    """Store one document in the session's transaction (see `KnowledgeStore.add_documents`)."""
    digest = document.content_sha256
    existing = session.scalar(
        select(KnowledgeDocument).where(
            KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.content_sha256 == digest
        )
    )
    if existing is not None:
        return AddedDocument(existing.id, False, existing.passage_count)
    document_id = document.id or f"doc-{digest[:16]}"
    same_id = (KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id == document_id)
    replaced = bool(session.scalar(select(exists().where(*same_id))))
    _delete_passages(session, tenant_id, document_id)
    session.execute(delete(KnowledgeDocument).where(*same_id))
    chunks = chunk_text(document.text)
    session.add(
        KnowledgeDocument(
            tenant_id=tenant_id,
            id=document_id,
            title=document.title or document_id,
            url=document.url,
            published_at=document.published_at,
            authority=document.authority,
            text=document.text,
            content_sha256=digest,
            char_count=len(document.text),
            passage_count=len(chunks),
        )
    )
    session.flush()  # the document row first: passages reference it (and the next document sees it)
    session.add_all(
        KnowledgePassage(
            tenant_id=tenant_id,
            document_id=document_id,
            chunk_index=i,
            text=chunk.text,
            start_offset=chunk.start,
            end_offset=chunk.end,
            section=chunk.heading,
        )
        for i, chunk in enumerate(chunks)
    )
    session.flush()
    return AddedDocument(document_id, True, len(chunks), replaced=replaced)


def _delete_passages(session, tenant_id: str, document_id: str) -> None:
    """Explicitly, so the FTS5 triggers see each passage go even where cascades are off."""
    session.execute(
        delete(KnowledgePassage).where(
            KnowledgePassage.tenant_id == tenant_id, KnowledgePassage.document_id == document_id
        )
    )


_SELECTED = """p.id, p.text, p.start_offset, p.end_offset, p.section,
    d.id AS document_id, d.title, d.url, d.published_at, d.authority"""
_FROM = "FROM kb_passages p JOIN kb_documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id"
_SQLITE_PASSAGES = text(f"SELECT {_SELECTED} {_FROM} WHERE p.id IN :ids AND +p.tenant_id = :tenant_id").bindparams(
    bindparam("ids", expanding=True)
)
_SQLITE_MATCH = text("SELECT rowid FROM kb_passages_fts WHERE kb_passages_fts MATCH :match LIMIT :limit")
_SQLITE_MATCH_CHECKING_TENANT = text(
    "SELECT p.id FROM kb_passages_fts f JOIN kb_passages p ON p.id = f.rowid "
    "WHERE kb_passages_fts MATCH :match AND +p.tenant_id = :tenant_id LIMIT :limit"
)
_SAMPLED_TEXTS = text("SELECT text FROM kb_passages WHERE id IN :ids").bindparams(bindparam("ids", expanding=True))
_SQLITE_TEXTS = text("SELECT id, text FROM kb_passages WHERE id IN :ids AND +tenant_id = :tenant_id").bindparams(
    bindparam("ids", expanding=True)
)
_POSTGRES_MATCH = text(
    "SELECT id FROM kb_passages WHERE search_vector @@ CAST(:query AS tsquery) AND tenant_id = :tenant_id LIMIT :limit"
)


@functools.lru_cache(maxsize=256)
def _postgres_best(queries: int, keys: int) -> TextClause:
    """The ranked window of the passages matching any of `queries` tsqueries (:q0, :q1, ...), each ranked by the
    sum of the weights (:w0, ...) of the keys (:t0, ...) it holds: a sum written out, not an aggregate over
    arrays of them run on each row (1-2 ms less on a full window of 2,000 rows; the same sums)."""
    matching = " OR ".join(f"search_vector @@ CAST(:q{i} AS tsquery)" for i in range(queries))
    weight = " + ".join(
        f"CASE WHEN m.search_vector @@ CAST(:t{k} AS tsquery) THEN CAST(:w{k} AS float8) ELSE 0 END"
        for k in range(keys)
    )
    return text(
        f"SELECT id, {weight} AS weight, count(*) OVER () AS window_rows FROM (SELECT id, search_vector "
        f"FROM kb_passages WHERE ({matching}) AND tenant_id = :tenant_id LIMIT :window) AS m "
        "ORDER BY weight DESC, id LIMIT :limit"
    )


@functools.lru_cache(maxsize=256)
def _postgres_holding(queries: int, keys: int) -> TextClause:
    """The window `_postgres_best` ranks, every row of it with the keys it holds (bit k: key :t{k})."""
    matching = " OR ".join(f"search_vector @@ CAST(:q{i} AS tsquery)" for i in range(queries))
    holding = " + ".join(
        f"CASE WHEN m.search_vector @@ CAST(:t{k} AS tsquery) THEN {1 << k} ELSE 0 END" for k in range(keys)
    )
    return text(
        f"SELECT id, {holding} AS held, count(*) OVER () AS window_rows FROM (SELECT id, search_vector "
        f"FROM kb_passages WHERE ({matching}) AND tenant_id = :tenant_id LIMIT :window) AS m"
    )


_POSTGRES_TEXTS = text("SELECT id, text FROM kb_passages WHERE id = ANY(:ids) AND tenant_id = :tenant_id")
_SQLITE_RANK = text(
    "SELECT rowid, bm25(kb_passages_fts, 1.0, 0.0) AS bm25 FROM kb_passages_fts "
    "WHERE kb_passages_fts MATCH :match AND +rowid IN :ids ORDER BY bm25, rowid LIMIT :limit"
).bindparams(bindparam("ids", expanding=True))
_POSTGRES_RANK = text(
    "SELECT id, ts_rank_cd(search_vector, CAST(:query AS tsquery)) AS score FROM kb_passages "
    "WHERE id = ANY(:ids) AND tenant_id = :tenant_id ORDER BY score DESC, id LIMIT :limit"
)
_POSTGRES_PASSAGE_ROWS = text(
    "SELECT id, text, start_offset, end_offset, section, document_id FROM kb_passages "
    "WHERE id = ANY(:ids) AND tenant_id = :tenant_id"
)
_POSTGRES_DOCUMENTS = text(
    "SELECT id AS document_id, title, url, published_at, authority FROM kb_documents "
    "WHERE tenant_id = :tenant_id AND id = ANY(:documents)"
)


def _hit(row, score: float) -> PassageHit:
    document = SourceDocument(
        id=row["document_id"],
        title=row["title"],
        url=row["url"],
        text="",  # not needed for evidence; the passage carries its own text
        published_at=row["published_at"],
        authority=row["authority"],
    )
    return PassageHit(document, row["text"], row["start_offset"], row["end_offset"], score, row["section"] or "")


def _summary(row: KnowledgeDocument) -> DocumentSummary:
    return DocumentSummary(
        id=row.id,
        title=row.title,
        url=row.url,
        published_at=row.published_at,
        authority=row.authority,
        passage_count=row.passage_count,
        char_count=row.char_count,
        content_sha256=row.content_sha256,
        created_at=row.created_at,
    )
