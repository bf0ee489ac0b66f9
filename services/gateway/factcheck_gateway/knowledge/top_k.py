"""The exact BM25 top k of a tenant's passages, reading only the postings that can still change it.

Ranking every passage that shares a word with a question does not scale (at a million passages a
question's common words are in hundreds of thousands), and a shortcut that ranks fewer must not lose the
passage an exact BM25 puts first: a shortcut that ranked the passages holding the most of a question's rare
words, with caps applied in table order, lost half of the planted facts of a hard benchmark. So search is
exact, and fast because of bounds (MaxScore with intersections):

- Every term has an upper bound on what it can add to a passage's score, from the tenant's exact
  statistics (term_statistics.py): its IDF, the most times a passage holds it and the shortest passage
  holding it.
- A passage that holds none of the terms whose postings were read in full, and whose other terms' bounds
  add up to no more than the k-th best score found so far (the threshold), cannot enter the top k.
- So search reads, cheapest first: a few intersections of the rarest terms (they find passages that hold
  several of the question's words, and raise the threshold), then either the whole posting list of the
  rarest term left, or, once the threshold allows, only the passages holding every term of a group whose
  bounds together pass it (intersections, which the index answers from its shortest list). Each passage
  read is scored exactly (BM25 over its own terms), and the search stops when the terms not read in full
  cannot pass the threshold together.

What the database's statistics say (ANALYZE, VACUUM, FTS5 merges) changes none of this: the counts are the
store's own, the index is used only to list passages holding words, and nothing is ever cut at a limit.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from factcheck_gateway.knowledge.ranking import K1, B, idf
from factcheck_gateway.knowledge.term_statistics import TermStatistic, Totals

# Intersections of the rarest terms read first, to find good passages (and a threshold) cheaply: the rarest
# SEED_TERMS terms together, then one fewer, down to two.
SEED_TERMS = 3
# At most this many groups are read in one round (beyond it, reading the rarest term's list is cheaper).
MAX_GROUPS = 64


@dataclass(frozen=True)
class TermWeight:
    term: str
    idf: float
    bound: float  # the most the term can add to any passage's score
    passages: int  # passages holding it (the cost of reading its posting list)


def term_weights(statistics: Mapping[str, TermStatistic], totals: Totals) -> dict[str, TermWeight]:
    """Each term's BM25 IDF over the tenant's store and its bound (tf at most `most`, length at least `shortest`)."""
    average = totals.average_length
    weights = {}
    for term, statistic in statistics.items():
        weight = idf(statistic.passages, totals.passages)
        tf = statistic.most
        norm = K1 * (1 - B + B * statistic.shortest / average) if average else K1
        weights[term] = TermWeight(term, weight, weight * tf * (K1 + 1) / (tf + norm), statistic.passages)
    return weights


# The index, as search uses it: the ids of the passages holding every term of at least one group (a superset
# is fine: each is scored exactly), and the exact scores of passages.
Matching = Callable[[list[tuple[str, ...]]], Collection[int]]
Scoring = Callable[[list[int]], Mapping[int, float]]


def top_k(
    weights: Mapping[str, TermWeight], k: int, passages: int, matching: Matching, scoring: Scoring
) -> list[tuple[int, float]]:
    """The k best (id, score) of the tenant's `passages` passages for these terms, best first (ties: lower id
    first)."""
    return _Search(weights, k, passages, matching, scoring).run()


class _Search:
    def __init__(
        self, weights: Mapping[str, TermWeight], k: int, passages: int, matching: Matching, scoring: Scoring
    ) -> None:
        self._k = k
        self._matching = matching
        self._scoring = scoring
        self._scores: dict[int, float] = {}
        self._best: list[float] = []  # a min-heap of the k best scores
        # Terms whose postings were not read in full, the most weighty first.
        self._left = sorted(weights.values(), key=lambda w: (-w.bound, w.passages, w.term))
        self._passages = passages

    def run(self) -> list[tuple[int, float]]:
        if not self._left:
            return []
        self._seed()
        while self._left:
            threshold = self._threshold()
            if sum(w.bound for w in self._left) <= threshold:
                break  # what the unread postings hold cannot pass the k-th best score
            groups = _groups(self._left, threshold)
            rarest = min(self._left, key=lambda w: (w.passages, -w.bound))
            if groups is not None and self._cost(groups) <= rarest.passages:
                self._read([tuple(w.term for w in group) for group in groups])
                break  # every passage that could pass the threshold was in a group
            self._read([(rarest.term,)])
            self._left.remove(rarest)
        ranked = heapq.nsmallest(self._k, ((-score, i) for i, score in self._scores.items()))
        return [(i, -negative) for negative, i in ranked]

    def _seed(self) -> None:
        """Intersections of the rarest terms: the passages holding several of them, and so a threshold."""
        rarest = sorted(self._left, key=lambda w: (w.passages, -w.bound))[:SEED_TERMS]
        for size in range(len(rarest), 1, -1):
            if len(self._best) >= self._k:
                return
            self._read([tuple(w.term for w in rarest[:size])])

    def _threshold(self) -> float:
        return self._best[0] if len(self._best) >= self._k else 0.0

    def _cost(self, groups: list[list[TermWeight]]) -> float:
        """The passages the groups are expected to match (as if words were independent: only speed depends on it)."""
        n = max(self._passages, 1)
        total = 0.0
        for group in groups:
            total += n * math.prod(min(1.0, w.passages / n) for w in group)
        return total

    def _read(self, groups: list[tuple[str, ...]]) -> None:
        new = [i for i in self._matching(groups) if i not in self._scores]
        if not new:
            return
        for i, score in self._scoring(new).items():
            self._scores[i] = score
            if len(self._best) < self._k:
                heapq.heappush(self._best, score)
            elif score > self._best[0]:
                heapq.heapreplace(self._best, score)
        for i in new:  # passages the index proposed that hold none of the terms (its stems): score 0
            self._scores.setdefault(i, 0.0)


def _groups(left: list[TermWeight], threshold: float) -> list[list[TermWeight]] | None:
    """The smallest groups of `left` (sorted by bound, highest first) whose bounds add up to more than the
    threshold: a passage holding only terms of `left` can pass it only if it holds every term of one of
    them. None when there are more than MAX_GROUPS."""
    groups: list[list[TermWeight]] = []
    suffix = [0.0] * (len(left) + 1)
    for i in range(len(left) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + left[i].bound

    def extend(start: int, chosen: list[TermWeight], total: float) -> bool:
        for i in range(start, len(left)):
            if total + suffix[i] <= threshold:
                return True  # the rest cannot make up the difference
            with_term = total + left[i].bound
            if with_term > threshold:
                # Adding terms in order of bound, the last added is the lightest: without it the group would not
                # pass, so it is a smallest group.
                groups.append([*chosen, left[i]])
                if len(groups) > MAX_GROUPS:
                    return False
            elif not extend(i + 1, [*chosen, left[i]], with_term):
                return False
        return True

    return groups if extend(0, [], 0.0) else None
