"""`local/generator`: answers the generate call (`GenerateInputs`) extractively from its passages.

Every sentence of every passage is scored by lexical overlap with the question: the
IDF-weighted share of the question's content words (stemmed, stopwords removed, see
`sentences.content_words`) that the sentence contains, with IDF computed over the
passage sentences themselves. The best sentences (at most `MAX_SENTENCES`, each
scoring at least `MIN_SCORE`, near-duplicates dropped) are returned most relevant
first, each followed by its citation ("... in 1969 [P1]."). When no sentence shares a
word with the question, the passages' opening sentences are used in retrieval order,
since the knowledge store already ranked them for this question.

Without passages (an empty knowledge store) it writes no content at all, only
`NO_SOURCES_MESSAGE`: an embedded engine must never invent facts.

Limits: lexical only (no synonyms or paraphrase), sentences are quoted verbatim so
pronouns may refer to text that is not included.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from factcheck.models.inputs import GenerateInputs, Passage, unanswerable
from factcheck.text.sentences import content_words, split_sentences
from factcheck_engines.reading import as_lines

__all__ = ["NO_SOURCES_MESSAGE", "answer", "generate"]

NO_SOURCES_MESSAGE = (
    "The knowledge store has no documents about this question, so no content was generated. "
    "Add documents with `factcheck kb add`."
)
MAX_SENTENCES = 6
MIN_SCORE = 0.2
FALLBACK_PASSAGES = 3
DUPLICATE_OVERLAP = 0.8


@dataclass(frozen=True)
class _Candidate:
    text: str
    passage_id: str
    order: int  # position among all passage sentences, for stable ties
    words: frozenset[str]


def answer(inputs: object) -> str:
    if not isinstance(inputs, GenerateInputs):
        raise unanswerable(inputs, "local/generator", (GenerateInputs,))
    return generate(inputs.question.strip(), list(inputs.passages))


def generate(question: str, passages: list[Passage]) -> str:
    """The cited answer to `question` from `passages`, or the no-sources message."""
    candidates = _candidates(passages)
    if not candidates:
        return NO_SOURCES_MESSAGE
    chosen = _most_relevant(question, candidates) or _openings(candidates)
    return " ".join(_cited(candidate) for candidate in chosen)


def _candidates(passages: list[Passage]) -> list[_Candidate]:
    candidates: list[_Candidate] = []
    for passage in passages:
        for sentence in split_sentences(as_lines(passage.text)):
            text = " ".join(sentence.split())
            words = frozenset(content_words(text))
            if words:
                candidates.append(_Candidate(text, passage.id, len(candidates), words))
    return candidates


def _most_relevant(question: str, candidates: list[_Candidate]) -> list[_Candidate]:
    asked = set(content_words(question))
    if not asked:
        return []
    document_frequency = Counter(word for c in candidates for word in c.words)
    idf = {word: math.log(1 + len(candidates) / (1 + document_frequency[word])) for word in asked}
    total = sum(idf.values())
    scored = [(sum(idf[w] for w in asked & c.words) / total, c) for c in candidates]
    ranked = sorted((pair for pair in scored if pair[0] >= MIN_SCORE), key=lambda pair: (-pair[0], pair[1].order))
    return _without_duplicates([candidate for _, candidate in ranked])


def _openings(candidates: list[_Candidate]) -> list[_Candidate]:
    """The first sentence of each of the first passages, in retrieval order."""
    firsts: dict[str, _Candidate] = {}
    for candidate in candidates:
        firsts.setdefault(candidate.passage_id, candidate)
    return list(firsts.values())[:FALLBACK_PASSAGES]


def _without_duplicates(ranked: list[_Candidate]) -> list[_Candidate]:
    kept: list[_Candidate] = []
    for candidate in ranked:
        if all(_overlap(candidate.words, other.words) < DUPLICATE_OVERLAP for other in kept):
            kept.append(candidate)
        if len(kept) == MAX_SENTENCES:
            break
    return kept


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b))


def _cited(candidate: _Candidate) -> str:
    """The sentence with its citation before the final punctuation ("... 1969 [P1].")."""
    text = candidate.text
    body = text.rstrip(".!?")
    ending = text[len(body) :] or "."
    return f"{body} [{candidate.passage_id}]{ending}"
