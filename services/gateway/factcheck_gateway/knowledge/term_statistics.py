"""Each tenant's exact term statistics: in how many passages each term is, and how long the passages are.

Search ranks with BM25, whose weights are these counts over the tenant's whole store (a term's passages,
the passage count, the average length), and bounds what a term can add to a score with them (see
top_k.py). They are the store's own, kept in the same transaction that adds or deletes passages, with
the same tokens as the ranking (tokens.term_counts): never an estimate a database refreshes on its own
(ANALYZE's lexeme frequencies, FTS5 counts in windows of rows), so a statistics refresh changes how fast
a search is, never which passages it returns.

A term is *salient* in a passage that holds it more than once, or in a short passage (under SHORT_PASSAGE
terms): the postings whose share of a BM25 score can exceed what one occurrence in a passage of ordinary
length adds. Each passage lists its salient terms (kb_passages.salient, indexed apart from its text), and
kb_terms counts them, so search can read a term's salient postings on their own and bound the rest
tightly (top_k.py). The same column gives the index the numbers the text writes with thousands separators,
as terms ("1,000": "1000"), which it could not find in the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, text

from factcheck_gateway.knowledge.tokens import separated_numbers, term_counts

# A passage shorter than this, in terms, has every term salient.
SHORT_PASSAGE = 8


@dataclass(frozen=True)
class TermStatistic:
    passages: int  # passages holding the term
    most: int  # the most times one passage holds it (at least; deletions leave it)
    shortest: int  # the shortest passage holding it, in terms (at most; deletions leave it)
    salient: int = 0  # passages in which it is salient


# PostgreSQL refuses a lexeme longer than this (2 KB less one); a longer term is left out of the indexed columns.
MAX_LEXEME_BYTES = 2047


def passage_fields(passage: str) -> tuple[str, int, str]:
    """kb_passages.salient (the passage's salient terms, then the numbers it writes with thousands separators as
    terms, which the index cannot find in the text: search reads them here too; they do not make a passage
    salient), kb_passages.length (the passage's length in terms) and kb_passages.terms (its distinct terms, space-separated: PostgreSQL indexes them, not its own parse of the
    text, which makes one token of "loamy/sandy" or "a@b.com")."""
    counts = term_counts(passage)
    length = sum(counts.values())
    salient = list(counts) if length < SHORT_PASSAGE else [term for term, times in counts.items() if times > 1]
    indexed = [term for term in dict.fromkeys(salient + separated_numbers(passage)) if indexable(term)]
    return " ".join(indexed), length, " ".join(term for term in counts if indexable(term))


def indexable(term: str) -> bool:
    """Whether the index holds the term as a lexeme of its own (PostgreSQL: also marked "*" when salient): not
    one longer than a lexeme may be (search finds such a term by the passages' text)."""
    return len(term.encode("utf-8")) < MAX_LEXEME_BYTES


@dataclass(frozen=True)
class Totals:
    passages: int
    terms: int  # the passages' lengths in terms, summed

    @property
    def average_length(self) -> float:
        return self.terms / self.passages if self.passages else 0.0


@dataclass
class _Counts:
    """What a set of passages adds to the statistics: term -> [passages, most, shortest, salient], and the totals."""

    terms: dict[str, list[int]]
    passages: int = 0
    length: int = 0

    def add(self, passage: str) -> None:
        counts = term_counts(passage)
        length = sum(counts.values())
        self.passages += 1
        self.length += length
        short = length < SHORT_PASSAGE
        for term, times in counts.items():
            salient = int(short or times > 1)
            known = self.terms.get(term)
            if known is None:
                self.terms[term] = [1, times, length, salient]
            else:
                known[0] += 1
                known[1] = max(known[1], times)
                known[2] = min(known[2], length)
                known[3] += salient


def counts_of(passages: Iterable[str]) -> _Counts:
    counts = _Counts({})
    for passage in passages:
        counts.add(passage)
    return counts


def count(connection: Connection, tenant_id: str, passages: Iterable[str]) -> None:
    """Add these new passages of the tenant to its statistics (in the connection's transaction)."""
    counts = counts_of(passages)
    if not counts.passages:
        return
    # Sorted: concurrent loads of one tenant lock the same rows in the same order (no deadlock on PostgreSQL).
    rows = sorted(counts.terms.items())
    if rows:  # (passages without a term, such as ":", change only the totals)
        _add_terms(connection, tenant_id, rows)
    connection.execute(_ADD_TOTALS, {"tenant_id": tenant_id, "passages": counts.passages, "terms": counts.length})


def _add_terms(connection: Connection, tenant_id: str, rows: list[tuple[str, list[int]]]) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(
            _POSTGRES_ADD_TERMS,
            {
                "tenant_id": tenant_id,
                "terms": [term for term, _ in rows],
                "passages": [value[0] for _, value in rows],
                "most": [value[1] for _, value in rows],
                "shortest": [value[2] for _, value in rows],
                "salient": [value[3] for _, value in rows],
            },
        )
    else:
        connection.execute(
            _SQLITE_ADD_TERM,
            [
                {"tenant_id": tenant_id, "term": term, "passages": p, "most": m, "shortest": s, "salient": a}
                for term, (p, m, s, a) in rows
            ],
        )


def uncount(connection: Connection, tenant_id: str, passages: Iterable[str]) -> None:
    """Take these passages of the tenant, about to be deleted, out of its statistics."""
    counts = counts_of(passages)
    if not counts.passages:
        return
    rows = sorted((term, value[0], value[3]) for term, value in counts.terms.items())
    if rows:
        _subtract_terms(connection, tenant_id, rows)
    connection.execute(_ADD_TOTALS, {"tenant_id": tenant_id, "passages": -counts.passages, "terms": -counts.length})


def _subtract_terms(connection: Connection, tenant_id: str, rows: list[tuple[str, int, int]]) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(
            _POSTGRES_SUBTRACT_TERMS,
            {
                "tenant_id": tenant_id,
                "terms": [t for t, _, _ in rows],
                "passages": [p for _, p, _ in rows],
                "salient": [a for _, _, a in rows],
            },
        )
    else:
        connection.execute(
            _SQLITE_SUBTRACT_TERM,
            [{"tenant_id": tenant_id, "term": term, "passages": p, "salient": a} for term, p, a in rows],
        )
    connection.execute(_DROP_UNUSED_TERM, [{"tenant_id": tenant_id, "term": term} for term, _, _ in rows])


def read(connection: Connection, tenant_id: str, terms: list[str]) -> tuple[dict[str, TermStatistic], Totals]:
    """The statistics of those of `terms` the tenant's passages hold, and the tenant's totals."""
    statistics = {}
    if terms:
        for row in connection.execute(_READ_TERMS, {"tenant_id": tenant_id, "terms": terms}):
            statistics[row.term] = TermStatistic(row.passages, row.most, row.shortest, row.salient)
    totals = connection.execute(_READ_TOTALS, {"tenant_id": tenant_id}).one_or_none()
    return statistics, Totals(totals.passages, totals.terms) if totals else Totals(0, 0)


def all_passages(connection: Connection) -> int:
    """Every tenant's passages together (how large one tenant is beside the rest)."""
    return int(connection.scalar(text("SELECT COALESCE(SUM(passages), 0) FROM kb_term_totals")) or 0)


_SQLITE_ADD_TERM = text(
    "INSERT INTO kb_terms (tenant_id, term, passages, most, shortest, salient) "
    "VALUES (:tenant_id, :term, :passages, :most, :shortest, :salient) "
    "ON CONFLICT (tenant_id, term) DO UPDATE SET passages = kb_terms.passages + excluded.passages, "
    "most = max(kb_terms.most, excluded.most), shortest = min(kb_terms.shortest, excluded.shortest), "
    "salient = kb_terms.salient + excluded.salient"
)
_POSTGRES_ADD_TERMS = text(
    "INSERT INTO kb_terms (tenant_id, term, passages, most, shortest, salient) "
    "SELECT :tenant_id, t.term, t.passages, t.most, t.shortest, t.salient FROM unnest(CAST(:terms AS text[]), "
    "CAST(:passages AS int[]), CAST(:most AS int[]), CAST(:shortest AS int[]), CAST(:salient AS int[])) "
    "AS t(term, passages, most, shortest, salient) "
    "ON CONFLICT (tenant_id, term) DO UPDATE SET passages = kb_terms.passages + excluded.passages, "
    "most = GREATEST(kb_terms.most, excluded.most), shortest = LEAST(kb_terms.shortest, excluded.shortest), "
    "salient = kb_terms.salient + excluded.salient"
)
_SQLITE_SUBTRACT_TERM = text(
    "UPDATE kb_terms SET passages = passages - :passages, salient = salient - :salient "
    "WHERE tenant_id = :tenant_id AND term = :term"
)
_POSTGRES_SUBTRACT_TERMS = text(
    "UPDATE kb_terms k SET passages = k.passages - t.passages, salient = k.salient - t.salient "
    "FROM unnest(CAST(:terms AS text[]), CAST(:passages AS int[]), CAST(:salient AS int[])) "
    "AS t(term, passages, salient) WHERE k.tenant_id = :tenant_id AND k.term = t.term"
)
_DROP_UNUSED_TERM = text("DELETE FROM kb_terms WHERE tenant_id = :tenant_id AND term = :term AND passages <= 0")
_ADD_TOTALS = text(
    "INSERT INTO kb_term_totals (tenant_id, passages, terms) VALUES (:tenant_id, :passages, :terms) "
    "ON CONFLICT (tenant_id) DO UPDATE SET passages = kb_term_totals.passages + excluded.passages, "
    "terms = kb_term_totals.terms + excluded.terms"
)
_READ_TERMS = text(
    "SELECT term, passages, most, shortest, salient FROM kb_terms WHERE tenant_id = :tenant_id AND term IN :terms"
).bindparams(bindparam("terms", expanding=True))
_READ_TOTALS = text("SELECT passages, terms FROM kb_term_totals WHERE tenant_id = :tenant_id")
