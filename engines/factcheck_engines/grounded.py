"""Grounded verdicts: every built-in checker's judgement held to what its passages say.

A judge (the entailment model, the lexical rules, word overlap) reads a claim's meaning; whether the passages
hold the claim's specifics (figures, dates, names, contrast terms) is decided here, the same way for every
engine, by `factcheck.core.grounding`:

- A claim with a specific the passages do not state about its subject is never VERIFIED. When a sentence about
  the subject gives another value for that attribute (another year for the same landing, another country for the
  same mountain) the claim is DISPUTED (HIGH when that value stands where the claim's does), with the correction that puts that value in place of the claim's
  ("Apollo 11 landed on the Moon in 1969 (not 1972) [P1]"), citing that sentence. Otherwise it is UNVERIFIABLE,
  and the evidence says what is missing ("the sources do not mention Mars").
- A DISPUTED judgement carries a correction only from such a conflict: never a sentence about something else,
  never another event's value. Where every specific is stated, a judge's DISPUTED stands (at most MEDIUM,
  without a correction) only on a conflict it names (a negation, a weaker quantifier, a value it read in its own
  window) or a claim that denies what the sentence states; the judge's reading alone ("the model reads it as
  refuted") is no contradiction of anything the claim names, and the claim is UNVERIFIABLE.
- A claim the judge left UNVERIFIABLE is VERIFIED (MEDIUM) when one sentence about its subject holds every
  specific and every content word of it (synonyms folded) and denies nothing of it: a lexical entailment the
  small model missed.
- A VERIFIED judgement cites the sentence that grounds the claim (the one about its subject holding most of its
  specifics) and is HIGH only when every specific is stated verbatim; a DISPUTED one the judge reached without
  such a conflict (a negation, the model's reading) is at most MEDIUM.
- A claim without passages, or one the judge failed on, is left as the judge gave it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from factcheck.core.grounding import Grounding, PassageText, ground
from factcheck.text.specifics import KIND_DATE, KIND_FIGURE, KIND_NAME
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_NAME,
    CONFLICT_NEGATION,
    CONFLICT_TERM,
    CONFLICT_VERIFIER,
    DISPUTED,
    UNVERIFIABLE,
    VERIFIED,
    Judgement,
    window_quote,
)

# The probability given to a verdict these rules decide against the judge: a stated conflict of the same attribute
# (DISPUTED), and a specific no passage states (UNVERIFIABLE).
CONFLICT_SCORE = 0.9
MISSING_SCORE = 0.75
# The probability given to a VERIFIED these rules reach where the judge did not: the claim's every word and
# specific in one sentence about its subject.
WORDED_SCORE = 0.75
_CONFLICT_KIND = {KIND_DATE: CONFLICT_DATE, KIND_FIGURE: CONFLICT_FIGURE, KIND_NAME: CONFLICT_NAME}
# A judge's DISPUTED for no conflict its rules name: the verifier's reading alone (the entailment model's, the
# lexical verifier's), which disputes nothing where every specific of the claim is stated.
READING_ONLY = (None, CONFLICT_VERIFIER)


def grounded(judgement: Judgement, claim: str, passages: Sequence[PassageText]) -> Judgement:
    """`judgement` held to what `passages` state of the claim's specifics (see the module docstring)."""
    if judgement.failure or not passages:
        return judgement
    grounding = ground(claim, passages)
    if grounding.conflicts:
        return _conflicting(judgement, claim, grounding)
    if grounding.missing:
        return _missing(judgement, claim, grounding)
    return _stated(judgement, claim, grounding)


def _conflicting(judgement: Judgement, claim: str, grounding: Grounding) -> Judgement:
    passage_id, quote = _cited(claim, grounding)
    first = grounding.conflicts[0].specific
    return Judgement(
        verdict=DISPUTED,
        confidence="HIGH" if all(c.explicit for c in grounding.conflicts) else "MEDIUM",
        correction=grounding.correction(claim),
        passage_id=passage_id,
        quote=quote,
        score=max(CONFLICT_SCORE, judgement.score if judgement.verdict == DISPUTED else 0.0),
        conflict=_CONFLICT_KIND.get(first.kind, CONFLICT_TERM),
    )


def _missing(judgement: Judgement, claim: str, grounding: Grounding) -> Judgement:
    """UNVERIFIABLE, saying what the passages do not mention, citing the closest sentence about the subject."""
    passage_id, quote = _cited(claim, grounding)
    score = MISSING_SCORE if judgement.verdict != UNVERIFIABLE else max(MISSING_SCORE, judgement.score)
    return Judgement(
        verdict=UNVERIFIABLE,
        confidence="MEDIUM",
        correction=None,
        passage_id=passage_id,
        quote=quote,
        score=score,
        partial=grounding.missing_reason(),
    )


def _stated(judgement: Judgement, claim: str, grounding: Grounding) -> Judgement:
    if grounding.polarity_differs and judgement.verdict != UNVERIFIABLE:
        # The sentence holding every specific says the opposite ("was not" / "was"): a contradiction of the
        # claim's wording, not of a value, so no correction.
        passage_id, quote = _cited(claim, grounding)
        return Judgement(
            DISPUTED, "MEDIUM", None, passage_id, quote, max(judgement.score, MISSING_SCORE), CONFLICT_NEGATION
        )
    if judgement.verdict == VERIFIED and grounding.denial_unstated:
        # "X is not Y" against a sentence that never denies anything of it: a small model reads past the "not".
        passage_id, quote = _cited(claim, grounding)
        return Judgement(
            UNVERIFIABLE,
            "MEDIUM",
            None,
            passage_id,
            quote,
            MISSING_SCORE,
            partial="the sources do not state the denial",
        )
    if judgement.verdict == VERIFIED:
        passage_id, quote = _cited(claim, grounding) if grounding.specifics else (None, None)
        confidence = judgement.confidence if grounding.verbatim else _at_most_medium(judgement.confidence)
        return replace(
            judgement,
            passage_id=passage_id or judgement.passage_id,
            quote=quote or judgement.quote,
            confidence=confidence,
        )
    if judgement.verdict == UNVERIFIABLE and not judgement.partial and grounding.specifics and grounding.worded:
        # Every specific stated about the subject, every word of the claim in that one sentence, nothing denied:
        # the sentence says the claim, whatever a small model made of its wording.
        passage_id, quote = _cited(claim, grounding)
        return Judgement(VERIFIED, "MEDIUM", None, passage_id, quote, WORDED_SCORE)
    if judgement.verdict == DISPUTED and (judgement.conflict not in READING_ONLY or grounding.denial_unstated):
        # Every specific is stated: the judge names a conflict of the wording (a negation, a weaker quantifier, a
        # claim that denies what the sentence states) or one it read in its own window, not a value these rules
        # found, so there is no value of the same attribute to correct with.
        return replace(judgement, correction=None, confidence=_at_most_medium(judgement.confidence))
    if judgement.verdict == DISPUTED:
        # Every specific is stated and the judge names no conflict: its reading alone contradicts nothing the
        # claim names.
        passage_id, quote = _cited(claim, grounding)
        return Judgement(UNVERIFIABLE, "MEDIUM", None, passage_id, quote, MISSING_SCORE)
    return judgement


def _cited(claim: str, grounding: Grounding) -> tuple[str | None, str | None]:
    sentence = grounding.citation
    if sentence is None:
        return None, None
    return sentence.passage.id, window_quote(claim, sentence.passage.text, sentence.start, sentence.end)


def _at_most_medium(confidence: str) -> str:
    return "MEDIUM" if confidence == "HIGH" else confidence
