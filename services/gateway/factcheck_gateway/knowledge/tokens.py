"""Search terms of a text: lower-cased words and numbers without stopwords."""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*", re.UNICODE)
# The same words in a text without "_" (the negated classes cost a fifth more; search tokenizes thousands of passages).
_WORD_WITHOUT_UNDERSCORES = re.compile(r"\w+(?:[.,']\w+)*", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be been being but by can did do does for from had has have he her his how i if in
    into is it its it's of on or our she so than that the their them then there these they this those to was
    we were what when where which while who whom why will with would you your not no""".split()
)


def _words(text: str) -> list[str]:
    """Lower-cased words; a number's thousands separators dropped, so "1,000" in a passage is "1000" in a query."""
    lowered = text.lower()
    words = (_WORD if "_" in lowered else _WORD_WITHOUT_UNDERSCORES).findall(lowered)
    if "," in lowered:
        words = [word.replace(",", "") if word.replace(",", "").isdigit() else word for word in words]
    return words


def separated_numbers(text: str) -> list[str]:
    """The numbers the text writes with thousands separators, as terms ("1,000" -> "1000"): a full-text index
    tokenizes the written form apart ("1", "000"), so it is given the term too (kb_passages.salient)."""
    return [
        word.replace(",", "") for word in _WORD.findall(text.lower()) if "," in word and word.replace(",", "").isdigit()
    ]


def search_terms(text: str) -> list[str]:
    """Distinct terms in order of first appearance."""
    seen: dict[str, None] = {}
    for word in _words(text):
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


def term_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in _words(text):
        if word not in STOPWORDS:
            counts[word] = counts.get(word, 0) + 1
    return counts


def term_frequencies(text: str, terms: Sequence[str]) -> tuple[list[int], int]:
    """How many times the text holds each of `terms`, and its length in terms (as `term_counts` counts them):
    cheaper than `term_counts` when a few terms are asked of thousands of passages."""
    words = _words(text)
    return [words.count(term) for term in terms], len(words) - sum(map(STOPWORDS.__contains__, words))
