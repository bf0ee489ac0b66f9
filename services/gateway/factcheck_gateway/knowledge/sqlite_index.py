"""The SQLite knowledge index: an FTS5 table over the passages (kb_passages_fts), whose tenant column
holds each passage's tenant as one token (migrations 0002 and 0005). See passage_index.py for what search
asks of it."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, RowMapping, bindparam, text

from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.passage_index import PassageIndex
from factcheck_gateway.knowledge.top_k import PostingList


class SqliteIndex(PassageIndex):
    """The FTS5 table kb_passages_fts over one tenant's passages (migrations 0002 and 0005)."""

    def __init__(self, connection: Connection, tenant_id: str, small_tenant: bool) -> None:
        super().__init__()
        self._connection = connection
        self._tenant_id = tenant_id
        self._small_tenant = small_tenant
        # The tenant column of the index holds the hex of tenant_id: one token (migration 0005).
        self._tenant = '"' + tenant_id.encode("utf-8").hex().upper() + '"'

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        # A term as a quoted FTS5 string: the index tokenizes it as it tokenized the passages (a phrase when it
        # makes several tokens, "3.5" -> 3 5), so every passage holding it matches. A salient list is the term
        # in the salient column; the rest is the term in any column (the text, or the salient column where the
        # text writes it otherwise: "1,000").
        def operand(posting: PostingList) -> str:
            # (A term too long for the salient column is asked of every column.)
            column = "salient : " if posting.salient and term_statistics.indexable(posting.term) else ""
            return column + '"' + posting.term.replace('"', '""') + '"'

        def all_of(postings: tuple[PostingList, ...]) -> str:
            return "(" + " AND ".join(operand(posting) for posting in postings) + ")"

        any_group = " OR ".join(
            f"({operand(lead)} AND ({' OR '.join(all_of(rest) for rest in rests)}))" if rests else operand(lead)
            for lead, rests in self._by_lead(groups)
        )
        if self._small_tenant:
            match, statement = f"tenant : {self._tenant} AND ({any_group})", _SQLITE_MATCH
        else:
            match, statement = any_group, _SQLITE_MATCH_CHECKING_TENANT
        rows = self._connection.execute(statement, {"match": match, "tenant_id": self._tenant_id})
        return {identifier: (passage, length) for identifier, passage, length in rows}

    def passages(self, ids: list[int]) -> Sequence[RowMapping]:
        # `+p.tenant_id`: look passages up by id; an index on tenant_id would scan the whole tenant.
        return self._connection.execute(_SQLITE_PASSAGES, {"ids": ids, "tenant_id": self._tenant_id}).mappings().all()


_SELECTED = """p.id, p.text, p.start_offset, p.end_offset, p.section,
    d.id AS document_id, d.title, d.url, d.published_at, d.authority"""
_FROM = "FROM kb_passages p JOIN kb_documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id"
_SQLITE_PASSAGES = text(f"SELECT {_SELECTED} {_FROM} WHERE p.id IN :ids AND +p.tenant_id = :tenant_id").bindparams(
    bindparam("ids", expanding=True)
)
_SQLITE_MATCH = text(
    "SELECT p.id, p.text, p.length FROM kb_passages_fts f JOIN kb_passages p ON p.id = f.rowid "
    "WHERE kb_passages_fts MATCH :match"
)
_SQLITE_MATCH_CHECKING_TENANT = text(
    "SELECT p.id, p.text, p.length FROM kb_passages_fts f JOIN kb_passages p ON p.id = f.rowid "
    "WHERE kb_passages_fts MATCH :match AND +p.tenant_id = :tenant_id"
)
