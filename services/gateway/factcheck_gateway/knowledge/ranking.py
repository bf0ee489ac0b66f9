"""Okapi BM25 over a small in-memory pool of passages.

The Retriever ranks the pool of request-source passages and store candidates on one scale,
so passages from both places compete fairly for a claim's top-k. The knowledge store ranks
its own candidates with it too, giving the corpus-wide IDF it estimated from its index.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from factcheck_gateway.knowledge.tokens import search_terms, term_counts, term_frequencies

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
        self._corpus_idf = corpus_idf
        # Each term's IDF, worked out the first time a query asks for it (a query has a few terms, the
        # texts hundreds): 0 for a term in none of the texts.
        self._idf: dict[str, float] = {}

    def _term_idf(self, term: str) -> float:
        value = self._idf.get(term)
        if value is None:
            frequency = sum(1 for doc in self._docs if term in doc)
            if not frequency:
                value = 0.0
            elif self._corpus_idf is not None and term in self._corpus_idf:
                value = self._corpus_idf[term]
            else:
                value = idf(frequency, len(self._docs))
            self._idf[term] = value
        return value

    def scores(self, query: str) -> list[float]:
        terms = search_terms(query)
        return [self._score(terms, i) for i in range(len(self._docs))]

    def coverage(self, query: str, index: int) -> float:
        """Share of the query's IDF weight that the passage contains (0-1): how much of the claim it touches."""
        terms = search_terms(query)
        total = sum(self._term_idf(t) for t in terms)
        if total == 0:
            return 0.0
        return sum(self._term_idf(t) for t in terms if t in self._docs[index]) / total

    def _score(self, terms: list[str], index: int) -> float:
        doc, length = self._docs[index], self._lengths[index]
        norm = K1 * (1 - B + B * length / self._average_length) if self._average_length else K1
        score = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                score += self._term_idf(term) * tf * (K1 + 1) / (tf + norm)
        return score


def passage_scores(texts: Sequence[str], weights: Mapping[str, float], average_length: float) -> list[float]:
    """Each text's BM25 for the terms of `weights` (term -> IDF), with the corpus's average length: the store's
    exact top k scores every passage it reads with it (thousands in a search of common words)."""
    terms = list(weights)
    idfs = [weights[term] for term in terms]
    scores = []
    for passage in texts:
        frequencies, length = term_frequencies(passage, terms)
        norm = K1 * (1 - B + B * length / average_length) if average_length else K1
        scores.append(sum(w * tf * (K1 + 1) / (tf + norm) for w, tf in zip(idfs, frequencies) if tf))
    return scores


def passage_score_bounds(
    texts: Sequence[str], lengths: Sequence[int], weights: Mapping[str, float], average_length: float
) -> list[float]:
    """An upper bound on each text's BM25 (`passage_scores`) that costs no tokenizing: a term counted as a
    substring of the lower-cased text (never fewer than its occurrences as a word) in a passage of its stored
    length (a length too low only loosens the bound); a number as held without limit (a text may write it with
    separators, "1,000")."""
    items = list(weights.items())
    bounds = []
    for passage, length in zip(texts, lengths):
        lowered = passage.lower()
        norm = K1 * (1 - B + B * length / average_length) if average_length else K1
        total = 0.0
        for term, weight in items:
            if term.isdigit():
                total += weight * (K1 + 1)
            elif tf := lowered.count(term):
                total += weight * tf * (K1 + 1) / (tf + norm)
        bounds.append(total)
    return bounds


def idf(document_frequency: float, documents: float) -> float:
    """BM25's IDF of a term found in `document_frequency` of `documents` texts."""
    return math.log(1 + (documents - document_frequency + 0.5) / (document_frequency + 0.5))
