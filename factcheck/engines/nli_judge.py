"""Judge one claim with the embedded entailment model: VERIFIED, DISPUTED or UNVERIFIABLE.

`judge(claim, passages)` returns the same `Judgement` as the lexical `judge.judge`, so
`local/checker` can run on either. Steps:

1. Prefilter. The lexical aligner picks the claim's best WINDOWS_PER_CLAIM sentence windows
   over all its passages (`evidence_windows.claim_windows`); only those go to the model.
2. Score. The cross-encoder (`nli_model`) gives each (claim, window) calibrated
   P(SUPPORTED, REFUTED, PARTIAL, UNRELATED). A window's verdict is the largest of
   P(SUPPORTED), P(REFUTED) and P(PARTIAL) + P(UNRELATED).
3. Figures, dates and names. The lexical judge still runs: when it finds a figure or date
   conflict (the passage gives another figure for what the claim states), the claim is
   DISPUTED and its correction rewrites the figure ("in 2016 (not 2015)") unless the model is
   nearly sure (FIGURE_OVERRIDE) that the same passage supports the claim (the lexical rule
   misreads a date from a neighbouring sentence).
4. Every clause. A claim of several clauses ("X was born in 1950 and won the award in 1990")
   is VERIFIED only when each clause is supported by some window on its own; otherwise it is
   UNVERIFIABLE, and `Judgement.partial` says which clause the evidence does not state.
   A window the model reads as PARTIAL is reported the same way.

Across windows a supporting one wins, then a refuting one; otherwise UNVERIFIABLE. The quote
is a verbatim piece of the deciding window (as `judge` quotes), so that it survives the
answer's `Sources: [P1] "..."` line.
"""

from __future__ import annotations

import re
from typing import Sequence

from factcheck.engines import judge as lexical
from factcheck.engines.evidence_windows import EvidenceWindow, claim_windows
from factcheck.engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_VERIFIER,
    DISPUTED,
    UNVERIFIABLE,
    VERIFIED,
    Judgement,
    PassageText,
    term_stems,
    window_quote,
)
from factcheck.engines.nli_model import EntailmentModel, EntailmentScores, default_model

# The model's P(SUPPORTED) above which a lexical figure/date conflict in the same passage is
# taken for a misreading.
FIGURE_OVERRIDE = 0.9
# A clause needs this many content words to be checked on its own ("and died" is not a claim).
CLAUSE_MIN_WORDS = 2
_VERB = (
    r"(?:\w+ed|is|are|was|were|has|have|had|won|became|made|wrote|built|took|gave|went|led|held|began|"
    r"died|served|received|remains|includes|contains|lies)"
)
# Where a claim splits into clauses: a semicolon, a conjunction after a comma, or "and"/"but"
# followed by a verb-like word (a past tense or a copula) rather than a noun ("salt and pepper").
_CLAUSE_CUT = re.compile(rf"\s*;\s*|,\s+(?:and|but|while|whereas)\s+|\s+(?:and|but)\s+(?={_VERB}\b)", re.IGNORECASE)
# The subject of the first clause, lent to a clause that starts with its verb ("... and won X").
_SUBJECT = re.compile(rf"^(.+?)\s+(?={_VERB}\b)", re.IGNORECASE)
_STARTS_WITH_VERB = re.compile(rf"^{_VERB}\b", re.IGNORECASE)


def judge(claim: str, passages: Sequence[PassageText], model: EntailmentModel | None = None) -> Judgement:
    """The verdict on `claim` given `passages` (see the module docstring)."""
    if not passages or not term_stems(claim):
        return Judgement(UNVERIFIABLE, "LOW", None, None, None, 0.0)
    model = model or default_model()
    windows = claim_windows(claim, passages)
    if not windows:
        return Judgement(UNVERIFIABLE, "LOW", None, None, None, 0.0)
    scores = model.scores([(claim, w.text) for w in windows])
    rules = lexical.judge(claim, passages)
    figure_conflict = rules.verdict == DISPUTED and rules.conflict in (CONFLICT_FIGURE, CONFLICT_DATE)
    if figure_conflict and not _passage_support(rules.passage_id, windows, scores) >= FIGURE_OVERRIDE:
        return rules
    supporting = [(w, s) for w, s in zip(windows, scores) if _verdict(s) == VERIFIED]
    if supporting:
        window, score = max(supporting, key=lambda ws: ws[1].supported)
        missing = _unsupported_clause(claim, windows, model)
        if missing is None:
            return _judgement(claim, VERIFIED, window, score.supported)
        return _partial(claim, window, score.supported, f'not stated: "{missing}"')
    refuting = [(w, s) for w, s in zip(windows, scores) if _verdict(s) == DISPUTED]
    if refuting:
        window, score = max(refuting, key=lambda ws: ws[1].refuted)
        return _judgement(claim, DISPUTED, window, score.refuted)
    window, score = max(zip(windows, scores), key=lambda ws: ws[1].partial)
    if score.partial > max(score.supported, score.refuted, score.unrelated):
        return _partial(claim, window, score.partial, "the passage states only part of the claim")
    best = max(s.unverifiable for s in scores)
    return Judgement(UNVERIFIABLE, _confidence(best), None, None, None, best)


def claim_clauses(claim: str) -> list[str]:
    """The claim's clauses (the whole claim when it has one), each a piece of the claim's text; a
    piece too short to check stays with its neighbour, and a clause that starts with a verb gets
    the first clause's subject ("Curie was born in 1867 and won the prize" → "Curie won the prize")."""
    spans, start = [], 0
    for cut in _CLAUSE_CUT.finditer(claim):
        spans.append((start, cut.start(), cut.end()))
        start = cut.end()
    spans.append((start, len(claim), len(claim)))
    merged: list[tuple[int, int]] = []
    for first, end, _ in spans:
        if merged and (
            len(term_stems(claim[first:end])) < CLAUSE_MIN_WORDS
            or len(term_stems(claim[slice(*merged[-1])])) < CLAUSE_MIN_WORDS
        ):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((first, end))
    clauses = [claim[a:b].strip(" ,.;") for a, b in merged]
    subject = _SUBJECT.match(clauses[0]) if len(clauses) > 1 else None
    if subject:
        clauses = clauses[:1] + [f"{subject.group(1)} {c}" if _STARTS_WITH_VERB.match(c) else c for c in clauses[1:]]
    return [c for c in clauses if c] or [claim]


def _verdict(score: EntailmentScores) -> str:
    by = {VERIFIED: score.supported, DISPUTED: score.refuted, UNVERIFIABLE: score.unverifiable}
    return max(by, key=by.__getitem__)


def _passage_support(passage_id: str | None, windows: list[EvidenceWindow], scores: list[EntailmentScores]) -> float:
    return max((s.supported for w, s in zip(windows, scores) if w.passage.id == passage_id), default=0.0)


def _unsupported_clause(claim: str, windows: list[EvidenceWindow], model: EntailmentModel) -> str | None:
    """The first clause no window supports on its own, or None when every clause is supported."""
    clauses = claim_clauses(claim)
    if len(clauses) < 2:
        return None
    pairs = [(clause, w.text) for clause in clauses for w in windows]
    scores = model.scores(pairs)
    for index, clause in enumerate(clauses):
        mine = scores[index * len(windows) : (index + 1) * len(windows)]
        if not any(_verdict(s) == VERIFIED for s in mine):
            return clause
    return None


def _judgement(claim: str, verdict: str, window: EvidenceWindow, probability: float) -> Judgement:
    quote = window_quote(claim, window.passage.text, window.start, window.end)
    return Judgement(
        verdict=verdict,
        confidence=_confidence(probability),
        correction=f"According to {window.passage.id}: {quote}" if verdict == DISPUTED else None,
        passage_id=window.passage.id,
        quote=quote,
        score=probability,
        conflict=CONFLICT_VERIFIER if verdict == DISPUTED else None,
    )


def _partial(claim: str, window: EvidenceWindow, probability: float, missing: str) -> Judgement:
    quote = window_quote(claim, window.passage.text, window.start, window.end)
    return Judgement(UNVERIFIABLE, "LOW", None, window.passage.id, quote, probability, None, missing)


def _confidence(probability: float) -> str:
    if probability >= 0.8:
        return "HIGH"
    return "MEDIUM" if probability >= 0.5 else "LOW"
