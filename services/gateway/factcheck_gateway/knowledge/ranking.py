"""Okapi BM25 over a small in-memory pool of passages.

The Retriever ranks the pool of request-source passages and store candidates on one scale,
so passages from both places compete fairly for a claim's top-k. The knowledge store ranks
its own candidates with it too, giving the corpus-wide IDF it estimated from its index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from factcheck_gateway.knowledge.tokens import search_terms, term_counts

K1, B = 1.2, 0.75


class BM25:
    def __init__(
        self,
        texts: Sequence[str],
        corpus_idf: Mapping[str, float] | None = None,
        average_length: float | None = None,
    ) -> None:
        """BM25 over `texts`; a term's IDF is `corpus_idf[term]` when given, and the average length
        `average_length` (the corpus's), else both are computed over the texts themselves."""
        self._docs = [term_counts(text) for text in texts]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        self._average_length = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        if average_length:
            self._average_length = average_length
        document_frequency: dict[str, int] = {}
        for doc in self._docs:
            for term in doc:
                document_frequency[term] = document_frequency.get(term, 0) + 1
        n = len(self._docs)
        self._idf = {t: idf(df, n) for t, df in document_frequency.items()}
        if corpus_idf is not None:
            self._idf.update((t, value) for t, value in corpus_idf.items() if t in self._idf)

    def scores(self, query: str) -> list[float]:
        terms = search_terms(query)
        return [self._score(terms, i) for i in range(len(self._docs))]

    def coverage(self, query: str, index: int) -> float:
        """Share of the query's IDF weight that the passage contains (0-1): how much of the claim it touches."""
        terms = search_terms(query)
        total = sum(self._idf.get(t, 0.0) for t in terms)
        if total == 0:
            return 0.0
        return sum(self._idf.get(t, 0.0) for t in terms if t in self._docs[index]) / total

    def _score(self, terms: list[str], index: int) -> float:
        doc, length = self._docs[index], self._lengths[index]
        norm = K1 * (1 - B + B * length / self._average_length) if self._average_length else K1
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                score += self._idf[term] * tf * (K1 + 1) / (tf + norm)
        return score


def idf(document_frequency: float, documents: float) -> float:
    """BM25's IDF of a term found in `document_frequency` of `documents` texts."""
    return math.log(1 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))
