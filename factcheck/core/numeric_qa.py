"""QA verification of numeric claims (claim-level citations' qa_verification).

A question is asked of the claim and of its cited span; `verify_answers` normalises both
answers with factcheck/text/numbers.py (scale words, percentages, units, currencies,
ranges, approximations) and compares them within a stated tolerance: each figure's own
rounding, and QA_RELATIVE_TOLERANCE (2%) of the larger magnitude. An evidence answer that
is empty ("not stated") never matches. The result has the QAVerificationResult shape
(question, both answers, match, normalised comparison).

`answer_from_text` is the built-in answerer (local/checker, and the benchmark's baseline):
the figure of the text that counts the same thing as the claim's, in a sentence that names
the claim's entity and (when the claim has one) its year, closest in value to the claim's.
When no sentence naming the entity states the figure, a sentence that refers back to it ("The
company employs 4,500 people." for "Acme Corp") answers with a figure counting the same thing
("4,500 people"); a bare count, another unit or a sentence about another named subject does not.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from factcheck.text.numbers import (
    QA_RELATIVE_TOLERANCE,
    Figure,
    compare_figures,
    figure_of,
    find_dates,
    find_quantities,
    main_figure,
    normalise_figure,
)
from factcheck.text.sentences import refers_back, sentence_spans

_NAME = re.compile(r"\b[A-Z][\w&.\-]*[A-Za-z0-9]")
_GENERIC_CAPITALS = frozenset(
    "The A An In On At By For Of And Its It This That These Those Overall According Today Revenue Sales".split()
)


@dataclass(frozen=True)
class QAResult:
    question: str
    claim_answer: str
    evidence_answer: str
    match: bool
    claim_normalised: Figure | None
    evidence_normalised: Figure | None
    tolerance: float
    explanation: str

    def to_json(self) -> dict:
        """The stored qa_verification item (the QAVerificationResult shape, with the normalised comparison)."""
        return {
            "question": self.question,
            "claim_answer": self.claim_answer,
            "evidence_answer": self.evidence_answer,
            "match": self.match,
            "normalized_comparison": {
                "claim": figure_json(self.claim_normalised),
                "evidence": figure_json(self.evidence_normalised),
                "tolerance": self.tolerance,
                "explanation": self.explanation,
            },
        }


def figure_json(figure: Figure | None) -> dict | None:
    if figure is None:
        return None
    bound = lambda v: None if math.isinf(v) else v
    return {
        "raw": figure.raw,
        "value": figure.value,
        "low": bound(figure.low),
        "high": bound(figure.high),
        "unit": figure.unit,
        "assumptions": dict(figure.assumptions),
    }


def question_for(entity: str, figure: Figure | None) -> str:
    """The QA question of a numeric claim: what its figure is, for its entity."""
    what = entity.strip() or "the figure stated"
    if figure is not None and figure.unit == "%":
        return f"What percentage is stated for {what}?"
    if figure is not None and figure.unit in ("USD", "EUR", "GBP", "JPY", "INR"):
        return f"What amount is stated for {what}?"
    return f"What is the figure for {what}?"


def verify_answers(
    question: str, claim_answer: str, evidence_answer: str, relative: float = QA_RELATIVE_TOLERANCE
) -> QAResult:
    claimed = normalise_figure(claim_answer) if claim_answer else None
    stated = normalise_figure(evidence_answer) if evidence_answer else None
    comparison = compare_figures(claimed, stated, relative)
    return QAResult(
        question,
        claim_answer,
        evidence_answer,
        comparison.match,
        claimed,
        stated,
        comparison.tolerance,
        comparison.explanation,
    )


def entity_names(entity: str, claim: str) -> set[str]:
    """The proper names of an entity ("France's population (2020)" → {"france"}); the claim's when it has none."""
    names = {
        m.group(0).lower().removesuffix("'s") for m in _NAME.finditer(entity) if m.group(0) not in _GENERIC_CAPITALS
    }
    if not names:
        names = {
            m.group(0).lower().removesuffix("'s")
            for m in _NAME.finditer(claim)
            if m.start() > 0 and m.group(0) not in _GENERIC_CAPITALS
        }
    return {n for n in names if not n.isdigit()}


def answer_from_text(claim: str, entity: str, text: str) -> str | None:
    """The figure of `text` that answers the claim's question, verbatim; None when it is not stated there
    for the claim's entity and year (see the module docstring)."""
    found = locate_answer(claim, entity, text)
    return found[0] if found else None


def locate_answer(claim: str, entity: str, text: str) -> tuple[str, str] | None:
    """(the answering figure, the sentence it is in), both verbatim from `text`; None when not stated."""
    claimed = main_figure(claim)
    if claimed is None:
        return None
    years = {d.year for d in find_dates(claim)}
    names = entity_names(entity, claim)
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    naming = [s for s in sentences if all(re.search(rf"\b{re.escape(n)}", s.lower()) for n in names)]
    found = _closest(claimed, years, naming, same_thing_only=False)
    if found is None and names:
        # A sentence that refers back to the entity without naming it ("Acme Corp employs 4,500 people."
        # against "The company employs 4,500 people.") may answer too, but only with a figure counting the
        # same thing; a sentence about another named subject ("Globex employs ...") never does.
        referring = [s for s in sentences if refers_back(s)]
        found = _closest(claimed, years, referring, same_thing_only=True, measure=_measure_words(entity))
    return found


def _measure_words(entity: str) -> set[str]:
    """The entity's lower-case content words: what a bare count measures ("population" of "The population
    of France (2021)")."""
    return {w for w in re.findall(r"\b[a-z][a-z-]{2,}\b", entity) if w not in _FUNCTION_WORDS}


_FUNCTION_WORDS = frozenset("the and for from with into onto over under about was were has had have its their".split())


def _closest(
    claimed: Figure,
    years: set[int],
    sentences: list[str],
    *,
    same_thing_only: bool,
    measure: frozenset[str] | set[str] = frozenset(),
) -> tuple[str, str] | None:
    """The figure of `sentences` closest to the claimed one among those that may answer it, with its sentence.
    `same_thing_only`: a figure answers only when it counts the same named thing, or, for a bare count, when
    the sentence names every word of what the claim measures (`measure`)."""
    best: tuple[float, str, str] | None = None
    for sentence in sentences:
        sentence_years = {d.year for d in find_dates(sentence)}
        if years and sentence_years and not years & sentence_years:
            continue
        for quantity in find_quantities(sentence):
            figure = figure_of(quantity)
            if claimed.unit and figure.unit and claimed.unit != figure.unit:
                continue
            if same_thing_only and not (
                (claimed.unit and claimed.unit == figure.unit)
                or (
                    not claimed.unit
                    and not figure.unit
                    and measure
                    and all(re.search(rf"\b{re.escape(w)}", sentence.lower()) for w in measure)
                )
            ):
                continue
            if bool(claimed.unit == "%") != bool(figure.unit == "%"):
                continue
            distance = _distance(claimed, figure)
            if best is None or distance < best[0]:
                best = (distance, quantity.text, sentence)
    return (best[1], best[2]) if best else None


def _distance(a: Figure, b: Figure) -> float:
    if a.value <= 0 or b.value <= 0:
        return abs(a.value - b.value)
    return abs(math.log(a.value / b.value))
