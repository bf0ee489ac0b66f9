"""Three query variants per claim, generated up front and run in order.

1. entity-focused: the claim's names, figures and dates with its rarest other words (highest precision);
2. exact phrase: the claim's longest distinctive run of words, in quotes;
3. broader context: the names and topic words without the specifics, to find the wider story.

A PHANTOM claim's first variant is a source-chain query instead: the claim without its vague
attribution, plus words that name an explicit source ("said", "spokesperson", "statement"), to
find who actually said it. An ANOMALY claim's first variant is a compound query combining time
(its dates, "as of"), authority ("official") and specificity (its figures). Queries are plain
text: providers that do not understand quotes (the knowledge store) drop them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from factcheck.text.sentences import STOPWORDS, tokenize
from factcheck_gateway.modes.fact_check.investigate.flags import ANOMALY, PHANTOM, PHANTOM_PATTERN

ENTITY, EXACT_PHRASE, BROADER = "entity", "exact_phrase", "broader"
SOURCE_CHAIN, COMPOUND = "source_chain", "compound"
MAX_QUERY_WORDS = 12
MAX_PHRASE_WORDS = 8
MIN_PHRASE_WORDS = 3
SOURCE_WORDS = "said spokesperson statement announced"
AUTHORITY_WORDS = "official"

_WORD = re.compile(r"[A-Za-z0-9][\w'’.,%-]*[A-Za-z0-9%]|[A-Za-z0-9]")
_YEAR = re.compile(r"^(1[5-9]\d\d|20\d\d)$")
_VAGUE = re.compile(
    r"\b(?:dozens|scores|hundreds|thousands|several|many|numerous|countless|some|various|about|around|"
    r"approximately|roughly|nearly|almost|more|less|than|over|under|up|to|reportedly|allegedly)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QueryVariant:
    variant: str
    query: str


def _words(text: str) -> list[str]:
    return [w.strip(".,") for w in _WORD.findall(text)]


def _is_name(word: str, index: int) -> bool:
    return index > 0 and word[:1].isupper()


def _is_figure(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def _topic_words(words: list[str]) -> list[str]:
    """Content words that are neither names nor figures, longest (rarest, roughly) first."""
    seen: dict[str, None] = {}
    for index, word in enumerate(words):
        low = word.lower()
        if low in STOPWORDS or len(low) < 3 or _is_figure(word) or _is_name(word, index) or _VAGUE.fullmatch(low):
            continue
        seen.setdefault(low)
    return sorted(seen, key=lambda w: -len(w))


def _names(words: list[str]) -> list[str]:
    return list(dict.fromkeys(w for i, w in enumerate(words) if _is_name(w, i) and w.lower() not in STOPWORDS))


def _figures(words: list[str]) -> list[str]:
    return list(dict.fromkeys(w for w in words if _is_figure(w)))


def _join(parts: list[str]) -> str:
    return " ".join(dict.fromkeys(p for p in parts if p)).strip()[:400]


def _limit(parts: list[str]) -> list[str]:
    return parts[:MAX_QUERY_WORDS]


def without_attribution(claim: str) -> str:
    return " ".join(PHANTOM_PATTERN.sub(" ", claim).split())


def exact_phrase(claim: str) -> str:
    """The longest run of words with no vague attribution, at most MAX_PHRASE_WORDS, quoted."""
    words = _words(without_attribution(claim))
    if not words:
        return ""
    best: list[str] = []
    for start in range(len(words)):
        run = words[start : start + MAX_PHRASE_WORDS]
        # A phrase that starts or ends on a stopword is a worse search key.
        while run and run[-1].lower() in STOPWORDS:
            run = run[:-1]
        if run and run[0].lower() in STOPWORDS:
            continue
        weight = sum(1 for w in run if w.lower() not in STOPWORDS)
        if weight > sum(1 for w in best if w.lower() not in STOPWORDS):
            best = run
    if len(best) < MIN_PHRASE_WORDS:
        best = words[:MAX_PHRASE_WORDS]
    return f'"{" ".join(best)}"'


def query_variants(claim: str, flags: tuple[str, ...]) -> list[QueryVariant]:
    """The claim's three queries, in the order they run."""
    words = _words(without_attribution(claim) if PHANTOM in flags else claim)
    names, figures, topic = _names(words), _figures(words), _topic_words(words)
    years = [f for f in figures if _YEAR.match(f)]
    if PHANTOM in flags:
        first = QueryVariant(SOURCE_CHAIN, _join(_limit(names + figures + topic[:4]) + SOURCE_WORDS.split()))
    elif ANOMALY in flags:
        time_words = years or ["as of"]
        first = QueryVariant(COMPOUND, _join(_limit(names + figures + topic[:3]) + time_words + [AUTHORITY_WORDS]))
    else:
        first = QueryVariant(ENTITY, _join(_limit(names + figures + topic[:4])))
    broader = QueryVariant(BROADER, _join(_limit(names + topic[:3])) or _join(topic[:5]))
    return [first, QueryVariant(EXACT_PHRASE, exact_phrase(claim)), broader]


def plain_terms(query: str) -> str:
    """A query for a provider without quote or operator syntax (the knowledge store's full-text search)."""
    return " ".join(tokenize(query.replace('"', " ")))
