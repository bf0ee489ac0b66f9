"""The exact BM25 top k of a tenant's passages, reading only the postings that can still change it.

Ranking every passage that shares a word with a question does not scale (at a million passages a
question's common words are in hundreds of thousands), and a shortcut that ranks fewer must not lose the
passage an exact BM25 puts first: a shortcut that ranked the passages holding the most of a question's rare
words, with caps applied in table order, lost half of the planted facts of a hard benchmark. So search is
exact, and fast because of bounds (MaxScore with intersections):

- Every term has two posting lists: the passages in which it is salient (held more than once, or in a
  short passage; indexed apart, term_statistics.py) and all the others, which hold it once in a passage of
  at least SHORT_PASSAGE terms. Each list has an upper bound on what the term can add to a passage's score,
  from the tenant's exact statistics: for the salient list, its IDF, the most times a passage holds it and
  the shortest passage holding it; for the rest, one occurrence in a passage of SHORT_PASSAGE terms (about
  its IDF: a passage of ordinary length adds little less). The salient lists are short, so they are read
  early, and the rest are bounded tightly.
- A passage that is in none of the lists read in full, and whose other lists' bounds add up to no more
  than the k-th best score found so far (the threshold), cannot enter the top k.
- So search reads, cheapest first: a few intersections of the rarest terms (they find passages that hold
  several of the question's words, and raise the threshold), then either the shortest posting list
  left, or, once the threshold allows, only the passages holding every term of a group whose
  bounds together pass it (intersections, which the index answers from its shortest list). Each passage
  read is scored exactly (BM25 over its own terms), and the search stops when the lists not read in full
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
from factcheck_gateway.knowledge.term_statistics import SHORT_PASSAGE, TermStatistic, Totals

# Intersections of the rarest terms read first, to find good passages (and a threshold) cheaply: the rarest
# SEED_TERMS terms together, then one fewer, down to two.
SEED_TERMS = 3
# At most this many groups are read in one round (beyond it, reading the shortest list is cheaper).
MAX_GROUPS = 64


@dataclass(frozen=True)
class PostingList:
    """One of a term's two posting lists, as search reads them."""

    term: str
    salient: bool  # the passages in which the term is salient; else every passage holding it (bounded as the rest)
    bound: float  # the most the term adds to the score of a passage in this list (and not in the salient one)
    passages: int  # the passages the index returns when the list is read (the rest: every passage holding the term)


@dataclass(frozen=True)
class TermWeight:
    term: str
    idf: float
    lists: tuple[PostingList, ...]  # the salient list and the rest, those that hold any passage


def term_weights(statistics: Mapping[str, TermStatistic], totals: Totals) -> dict[str, TermWeight]:
    """Each term's BM25 IDF over the tenant's store and its posting lists with their bounds."""
    average = totals.average_length

    def share(tf: int, length: int) -> float:
        """BM25's share of one term, held tf times in a passage of `length` terms (rising in tf, falling in length)."""
        norm = K1 * (1 - B + B * length / average) if average else K1
        return tf * (K1 + 1) / (tf + norm)

    weights = {}
    for term, statistic in statistics.items():
        weight = idf(statistic.passages, totals.passages)
        salient = PostingList(term, True, weight * share(statistic.most, statistic.shortest), statistic.salient)
        rest = PostingList(term, False, weight * share(1, SHORT_PASSAGE), statistic.passages)
        lists = ((salient,) if statistic.salient else ()) + ((rest,) if statistic.passages > statistic.salient else ())
        weights[term] = TermWeight(term, weight, lists)
    return weights


# The index, as search uses it: the ids of the passages in every list of at least one group (a superset is
# fine: each is scored exactly; a list that is not salient may be read as all of the term's passages), and
# the exact scores of passages, of those at least that may reach the threshold (the others cannot enter the
# top k, and may be left out).
Matching = Callable[[list[tuple[PostingList, ...]]], Collection[int]]
Scoring = Callable[[list[int], float], Mapping[int, float]]


def top_k(
    weights: Mapping[str, TermWeight], k: int, passages: int, matching: Matching, scoring: Scoring
) -> list[tuple[int, float]]:
    """The k best (id, score) of the tenant's `passages` passages for these terms, best first (ties: lower id
    first)."""
    return _Search(weights, k, passages, matching, scoring).run()


def _rarest_first(posting: PostingList) -> tuple:
    return posting.passages, -posting.bound, posting.term, posting.salient


class _Search:
    def __init__(
        self, weights: Mapping[str, TermWeight], k: int, passages: int, matching: Matching, scoring: Scoring
    ) -> None:
        self._k = k
        self._matching = matching
        self._scoring = scoring
        self._scores: dict[int, float] = {}
        self._best: list[float] = []  # a min-heap of the k best scores
        # Lists not read in full, the most weighty first.
        lists = [posting for weight in weights.values() for posting in weight.lists]
        self._left = sorted(lists, key=lambda p: (-p.bound, *_rarest_first(p)))
        self._weights = weights
        self._passages = passages

    def run(self) -> list[tuple[int, float]]:
        if not self._left:
            return []
        self._seed()
        while self._left:
            threshold = self._threshold()
            if sum(p.bound for p in self._left) <= threshold:
                break  # what the unread lists hold cannot pass the k-th best score
            groups = _groups(self._left, threshold)
            shortest = min(self._left, key=_rarest_first)
            if groups is not None and self._cost(groups) <= shortest.passages:
                self._read([tuple(group) for group in groups])
                break  # every passage that could pass the threshold was in a group
            self._read([(shortest,)])
            # A term's other list is read with the rest (the rest is read as every passage holding the term).
            done = {shortest} if shortest.salient else set(self._weights[shortest.term].lists)
            self._left = [p for p in self._left if p not in done]
        ranked = heapq.nsmallest(self._k, ((-score, i) for i, score in self._scores.items()))
        return [(i, -negative) for negative, i in ranked]

    def _seed(self) -> None:
        """Intersections of the rarest terms: the passages holding several of them, and so a threshold."""
        rarest = sorted(self._weights.values(), key=lambda w: (-w.idf, w.term))[:SEED_TERMS]
        every = [PostingList(w.term, False, 0.0, 0) for w in rarest]  # read as every passage holding the term
        for size in range(len(every), 1, -1):
            if len(self._best) >= self._k:
                return
            self._read([tuple(every[:size])])

    def _threshold(self) -> float:
        return self._best[0] if len(self._best) >= self._k else 0.0

    def _cost(self, groups: list[list[PostingList]]) -> float:
        """The passages the groups are expected to match (as if words were independent: only speed depends on it)."""
        n = max(self._passages, 1)
        return sum(n * math.prod(min(1.0, p.passages / n) for p in group) for group in groups)

    def _read(self, groups: list[tuple[PostingList, ...]]) -> None:
        new = [i for i in self._matching(groups) if i not in self._scores]
        if not new:
            return
        for i, score in self._scoring(new, self._threshold()).items():
            self._scores[i] = score
            if len(self._best) < self._k:
                heapq.heappush(self._best, score)
            elif score > self._best[0]:
                heapq.heapreplace(self._best, score)
        for i in new:  # passages that hold none of the terms, or cannot reach the threshold: never in the top k
            self._scores.setdefault(i, 0.0)


def _groups(left: list[PostingList], threshold: float) -> list[list[PostingList]] | None:
    """The smallest groups of `left` (sorted by bound, highest first) whose bounds add up to more than the
    threshold, one list of a term at most (a passage is in one of them): a passage in lists of `left` alone
    can pass it only if it is in every list of one of them. None when there are more than MAX_GROUPS."""
    groups: list[list[PostingList]] = []
    suffix = [0.0] * (len(left) + 1)
    for i in range(len(left) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + left[i].bound

    def extend(start: int, chosen: list[PostingList], total: float) -> bool:
        for i in range(start, len(left)):
            if total + suffix[i] <= threshold:
                return True  # the rest cannot make up the difference
            if any(p.term == left[i].term for p in chosen):
                continue
            with_list = total + left[i].bound
            if with_list > threshold:
                # Adding lists in order of bound, the last added is the lightest: without it the group would not
                # pass, so it is a smallest group.
                groups.append([*chosen, left[i]])
                if len(groups) > MAX_GROUPS:
                    return False
            elif not extend(i + 1, [*chosen, left[i]], with_list):
                return False
        return True

    return groups if extend(0, [], 0.0) else None
