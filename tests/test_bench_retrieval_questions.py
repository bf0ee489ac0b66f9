"""bench.retrieval_questions: the hard corpus is what it says it is, and its exact BM25 is exact."""

from __future__ import annotations

import re

import pytest

from bench.retrieval_questions import KIND_SYNONYMS, HardCorpus, exact_bm25_top, hard_corpus
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.ranking import K1, B, idf
from factcheck_gateway.knowledge.tokens import search_terms, term_counts

# A fact's passage names its entity as "the <Name> <Name> <kind>" (both name words capitalised).
_ENTITY = re.compile(r"\b[Tt]he ([A-Z][a-z]+) ([A-Z][a-z]+) (" + "|".join(KIND_SYNONYMS) + r")\b")


@pytest.fixture(scope="module")
def corpus() -> HardCorpus:
    return hard_corpus(3000, facts=30)


@pytest.fixture(scope="module")
def passage_terms(corpus: HardCorpus) -> list[dict[str, int]]:
    return [term_counts(text) for text in corpus.passages]


def _names(corpus: HardCorpus, fact: int) -> tuple[str, str]:
    match = _ENTITY.search(corpus.passages[corpus.answers[fact]])
    assert match is not None, corpus.passages[corpus.answers[fact]]
    return match.group(1).lower(), match.group(2).lower()


def test_the_same_seed_gives_the_same_corpus(corpus: HardCorpus) -> None:
    assert hard_corpus(3000, facts=30) == corpus
    assert hard_corpus(3000, facts=30, seed=12).questions != corpus.questions


def test_passages_are_the_documents_chunked_one_paragraph_each(corpus: HardCorpus) -> None:
    assert len(corpus.passages) == 3000
    assert [chunk.text for _, text in corpus.documents for chunk in chunk_text(text)] == corpus.passages
    assert [p for _, text in corpus.documents for p in text.split("\n\n")] == corpus.passages
    assert len(corpus.questions) == len(corpus.answers) == 30


def test_name_words_are_in_other_passages_but_together_only_in_the_facts(
    corpus: HardCorpus, passage_terms: list[dict[str, int]]
) -> None:
    for fact, answer in enumerate(corpus.answers):
        first, second = _names(corpus, fact)
        holding = [{i for i, terms in enumerate(passage_terms) if word in terms} for word in (first, second)]
        assert holding[0] & holding[1] == {answer}
        assert min(len(holding[0]), len(holding[1])) - 1 >= 3


def test_each_question_asks_about_its_answers_fact(corpus: HardCorpus, passage_terms: list[dict[str, int]]) -> None:
    half_names = 0
    for fact, question in enumerate(corpus.questions):
        names = set(_names(corpus, fact))
        asked = names.intersection(search_terms(question))
        assert asked, question
        half_names += len(asked) == 1
        assert asked <= passage_terms[corpus.answers[fact]].keys()
    assert 0 < half_names < len(corpus.questions)


def test_exact_bm25_finds_most_answers(corpus: HardCorpus) -> None:
    tops = exact_bm25_top(corpus.passages, corpus.questions)
    assert all(len(top) == 3 for top in tops)
    hits = sum(answer in top for answer, top in zip(corpus.answers, tops))
    assert hits / len(tops) >= 0.9


def test_exact_bm25_agrees_with_bm25_written_out(corpus: HardCorpus, passage_terms: list[dict[str, int]]) -> None:
    lengths = [sum(terms.values()) for terms in passage_terms]
    average = sum(lengths) / len(lengths)
    questions = corpus.questions[:6]
    for question, top in zip(questions, exact_bm25_top(corpus.passages, questions)):
        terms = search_terms(question)
        df = {term: sum(term in counts for counts in passage_terms) for term in terms}
        scores = []
        for index, counts in enumerate(passage_terms):
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    norm = K1 * (1 - B + B * lengths[index] / average)
                    score += idf(df[term], len(passage_terms)) * tf * (K1 + 1) / (tf + norm)
            scores.append(score)
        naive = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:3]
        # The same sums in the same order: equal scores are ties, broken by passage index.
        assert top == naive, question
