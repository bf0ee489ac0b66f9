"""The PostgreSQL knowledge index: each passage's tsvector (search_vector, with its tenant's lexeme) and a GIN
index over it (migrations 0002, 0005 and 0016). See passage_index.py for what search asks of it."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, TextClause, text

from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.passage_index import PassageIndex
from factcheck_gateway.knowledge.top_k import PostingList


class PostgresIndex(PassageIndex):
    """kb_passages' tsvector column and its GIN index over one tenant's passages (migrations 0002, 0005 and 0016)."""

    ROW_COST = 1000  # (a GIN index skips along the other lists of an AND; FTS5 walks them)

    def __init__(self, connection: Connection, tenant_id: str, small_tenant: bool) -> None:
        super().__init__()
        self._connection = connection
        self._tenant_id = tenant_id
        self._small_tenant = small_tenant
        # Each passage's tsvector holds the lexeme 'tenant <tenant_id>' (migration 0005).
        self._tenant_lexeme = _tsquery_lexeme("tenant " + tenant_id)
        # No sequential scans (the planner may take one for a tsquery it expects to match much), no JIT
        # compilation (it costs more than these queries), and the generic plan of a statement the driver has
        # prepared instead of planning it again for its values: whatever the tsquery, the plan is the GIN
        # index's bitmap. (Only speed depends on these: every statement returns all its matches.)
        connection.exec_driver_sql(
            "SET LOCAL enable_seqscan = off; SET LOCAL jit = off; SET LOCAL plan_cache_mode = force_generic_plan"
        )

    def _operand(self, posting: PostingList) -> str | None:
        """The tsquery of one posting list: the term's own lexeme (kb_passages.terms), marked "*" for a salient list
        (migration 0016); None for a term too long to be a lexeme."""
        if not term_statistics.indexable(posting.term):
            return None
        return _tsquery_lexeme(("*" if posting.salient else "") + posting.term)

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        indexed: list[str] = []
        unindexed: list[list[str]] = []
        for lead, rests in self._by_lead(groups):
            head = self._operand(lead)
            if head is None:  # a term with no lexeme leads only groups of such terms (it is read by the text)
                unindexed.extend([lead.term, *(p.term for p in rest)] for rest in rests or [()])
                continue
            # A group's terms that have no lexeme are left out of its AND: it then matches more passages, never fewer.
            alternatives = [" & ".join(o for p in rest if (o := self._operand(p)) is not None) for rest in rests]
            if not rests or not all(alternatives):
                indexed.append(head)
            else:
                indexed.append(f"{head} & ({' | '.join(f'({a})' for a in alternatives)})")
        found: dict[int, tuple[str, int]] = {}
        if indexed:
            if self._small_tenant:
                indexed = [f"{self._tenant_lexeme} & {query}" for query in indexed]
            rows = self._connection.execute(
                _postgres_matching(len(indexed)),
                {"tenant_id": self._tenant_id, **{f"q{i}": query for i, query in enumerate(indexed)}},
            )
            found.update((identifier, (passage, length)) for identifier, passage, length in rows)
        for words in unindexed:  # no lexeme at all: the passages whose text holds the words
            # (A number may be written with separators, "1,000": not asked of the text.)
            patterns = {f"p{i}": "%" + _like_escaped(word) + "%" for i, word in enumerate(words) if not word.isdigit()}
            holding = "".join(f" AND lower(text) LIKE :{name} ESCAPE '\\'" for name in patterns)
            rows = self._connection.execute(
                text(f"SELECT id, text, length FROM kb_passages WHERE tenant_id = :tenant_id{holding}"),
                {"tenant_id": self._tenant_id, **patterns},
            )
            found.update((identifier, (passage, length)) for identifier, passage, length in rows)
        return found

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


def _like_escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@functools.lru_cache(maxsize=64)
def _postgres_matching(queries: int) -> TextClause:
    """The passages matching any of `queries` tsqueries (:q0, :q1, ...): one bitmap index scan each, ORed."""
    matching = " OR ".join(f"search_vector @@ CAST(:q{i} AS tsquery)" for i in range(queries))
    return text(f"SELECT id, text, length FROM kb_passages WHERE ({matching}) AND tenant_id = :tenant_id")


_POSTGRES_PASSAGE_ROWS = text(
    "SELECT id, text, start_offset, end_offset, section, document_id FROM kb_passages "
    "WHERE id = ANY(:ids) AND tenant_id = :tenant_id"
)
_POSTGRES_DOCUMENTS = text(
    "SELECT id AS document_id, title, url, published_at, authority FROM kb_documents "
    "WHERE tenant_id = :tenant_id AND id = ANY(:documents)"
)
