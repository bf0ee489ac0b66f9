"""Search terms of a text: lower-cased words and numbers without stopwords."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+(?:[.,'][^\W_]+)*", re.UNICODE)
STOPWORDS = frozenset(
    """a an and are as at be been being but by can did do does for from had has have he her his how i if in
    into is it its it's of on or our she so than that the their them then there these they this those to was
    we were what when where which while who whom why will with would you your not no""".split()
)


def search_terms(text: str) -> list[str]:
    """Distinct terms in order of first appearance."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        word = word.replace(",", "") if word.replace(",", "").isdigit() else word
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)


def term_counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS:
            counts[word] = counts.get(word, 0) + 1
    return counts
