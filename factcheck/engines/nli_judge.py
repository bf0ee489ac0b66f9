"""Judge one claim with the embedded entailment model: VERIFIED, DISPUTED or UNVERIFIABLE.

`judge(claim, passages)` returns the same `Judgement` as the lexical `judge.judge`, so
`local/checker` can run on either. Steps:

1. Prefilter. The lexical aligner picks the claim's best WINDOWS_PER_CLAIM sentence windows
   over all its passages (`evidence_windows.claim_windows`); only those go to the model.
2. Score. The cross-encoder (`nli_model`) gives each (claim, window) calibrated
   P(SUPPORTED, REFUTED, PARTIAL, UNRELATED). A window's verdict is the largest of
   P(SUPPORTED), P(REFUTED) and P(PARTIAL) + P(UNRELATED).
3. Decide. The lexical judge still runs (figures, dates, names, negation: `judge.judge`). When
   the shipped `model.json` has a combiner (`scripts/train_nli.py` fits one on held-out pairs),
   a small logistic regression over the model's best P(SUPPORTED), P(REFUTED), P(PARTIAL),
   lowest P(UNRELATED), the lexical verdict, its probability, whether it rests on a figure or
   date conflict, and the best window's word coverage gives the verdict and its probability. A
   DISPUTED verdict that the lexical judge shares keeps its correction. Without a combiner, the
   windows' verdicts decide. Either way a figure or date conflict comes first: DISPUTED, with a
   correction that rewrites the figure ("in 2016 (not 2015)"), unless the model is nearly sure
   (FIGURE_OVERRIDE) that the same passage supports the claim (the lexical rule misreads a date
   from a neighbouring sentence).
4. Every clause. A claim of several clauses ("X was born in 1950 and won the award in 1990")
   is VERIFIED only when each clause is stated by some window on its own (the model reads the
   clause as SUPPORTED, or the window holds every one of its content words); otherwise it is
   UNVERIFIABLE, and `Judgement.partial` says which clause the evidence does not state.
   A window the model reads as PARTIAL is reported the same way. A clause longer than the model
   reads whole (it keeps about half its 128 tokens for the claim) is checked in pieces of
   CLAIM_PIECE_WORDS words, so a long claim is VERIFIED only when every piece of it is stated.

The quote
is a verbatim piece of the deciding window (as `judge` quotes its windows), so that it
survives the answer's `Sources: [P1] "..."` line: the shortest run of the window's sentences
that still holds every claim word the window holds, so that the sentences added around the
window for the model's context are not quoted unless they carry part of the claim; a leading
sentence that carries only the claim's names is dropped too when the next one refers back to
them ("The company ..."): the span is the minimal text that states the claim.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from factcheck.engines import judge as lexical
from factcheck.engines.evidence_windows import EvidenceWindow, claim_windows
from factcheck.engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_VERIFIER,
    DISPUTED,
    NOTHING_TO_READ,
    UNVERIFIABLE,
    VERIFIED,
    Judgement,
    PassageText,
    name_stems,
    term_stems,
    window_quote,
)
from factcheck.engines.nli_model import EntailmentModel, EntailmentScores, configured_threads, default_model
from factcheck.engines.verifier_model import VerifierModel
from factcheck.text.sentences import refers_back, sentence_spans

# The model's P(SUPPORTED) above which a lexical figure/date conflict in the same passage is
# taken for a misreading.
FIGURE_OVERRIDE = 0.9
# A clause needs this many content words to be checked on its own ("and died" is not a claim).
CLAUSE_MIN_WORDS = 2
# The longest piece of a claim checked on its own: about 40 tokens, within the half of the model's
# 128 tokens a pair keeps for its claim (nli_model), so every piece is read whole.
CLAIM_PIECE_WORDS = 30
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


@dataclass(frozen=True)
class Reading:
    """What the model and the lexical rules saw for one claim, before the decision."""

    claim: str
    windows: list[EvidenceWindow]
    scores: list[EntailmentScores]
    rules: Judgement  # the lexical judge's verdict (figures, dates, names, corrections)
    features: dict[str, float]  # the combiner's inputs


def judge(claim: str, passages: Sequence[PassageText], model: EntailmentModel | None = None) -> Judgement:
    """The verdict on `claim` given `passages` (see the module docstring)."""
    if _nothing_to_read(claim, passages):  # the model is not even loaded
        return NOTHING_TO_READ
    model = model or default_model()
    reading = read(claim, passages, model)
    if reading is None:
        return NOTHING_TO_READ
    rules = reading.rules
    if (
        _figure_conflict(rules)
        and _passage_support(rules.passage_id, reading.windows, reading.scores) < FIGURE_OVERRIDE
    ):
        return rules  # the passage gives another figure or date: DISPUTED, with the corrected figure
    combiner = _combiner(model)
    return _combined(reading, model, combiner) if combiner else _by_rules(reading, model)


def judge_claims(
    items: Sequence[tuple[str, Sequence[PassageText]]],
    model: EntailmentModel | None = None,
    judge_one: Callable[[str, Sequence[PassageText], EntailmentModel | None], Judgement] | None = None,
) -> list[Judgement]:
    """`judge(claim, passages)` for each item, in order, FACTCHECK_NLI_THREADS claims at a time
    (`judge_one` in its place: judges.py's, which keeps one claim's failure to that claim).

    The model's runs release the GIL, so one claim's run overlaps another's and the lexical
    reading of the next; each claim's windows are still one batch of their own, so every
    judgement is exactly what `judge` gives for that claim alone.
    """
    one = judge_one or judge
    if not any(passages for _, passages in items):  # nothing to read: the model is not even loaded
        return [one(claim, passages, None) for claim, passages in items]
    model = model or default_model()  # loaded once, before the workers share it
    workers = min(len(items), configured_threads())
    if workers <= 1:
        return [one(claim, passages, model) for claim, passages in items]
    with ThreadPoolExecutor(workers, thread_name_prefix="nli-judge") as pool:
        return list(pool.map(lambda item: one(item[0], item[1], model), items))


def read(claim: str, passages: Sequence[PassageText], model: EntailmentModel) -> Reading | None:
    """The model's scores for the claim's best windows and the lexical judge's verdict; None when
    there is nothing to read (no passage, or a claim without content words)."""
    if _nothing_to_read(claim, passages):
        return None
    windows = claim_windows(claim, passages)
    if not windows:
        return None
    scores = model.scores([(claim, w.text) for w in windows])
    rules = lexical.judge(claim, passages)
    features = {
        "nli_supported": max(s.supported for s in scores),
        "nli_refuted": max(s.refuted for s in scores),
        "nli_partial": max(s.partial for s in scores),
        "nli_unrelated": min(s.unrelated for s in scores),
        "lexical_verified": float(rules.verdict == VERIFIED),
        "lexical_disputed": float(rules.verdict == DISPUTED),
        "lexical_score": rules.score,
        "figure_conflict": float(_figure_conflict(rules)),
        "coverage": max(w.coverage for w in windows),
    }
    return Reading(claim, windows, scores, rules, features)


def _nothing_to_read(claim: str, passages: Sequence[PassageText]) -> bool:
    return not passages or not term_stems(claim)


def _figure_conflict(rules: Judgement) -> bool:
    return rules.verdict == DISPUTED and rules.conflict in (CONFLICT_FIGURE, CONFLICT_DATE)


def _by_rules(reading: Reading, model: EntailmentModel) -> Judgement:
    """The decision without a fitted combiner: the model's verdicts, figure conflicts first."""
    claim, windows, scores = reading.claim, reading.windows, reading.scores
    supporting = [(w, s) for w, s in zip(windows, scores) if _verdict(s) == VERIFIED]
    if supporting:
        window, score = max(supporting, key=lambda ws: ws[1].supported)
        return _supported(reading, model, window, score.supported)
    refuting = [(w, s) for w, s in zip(windows, scores) if _verdict(s) == DISPUTED]
    if refuting:
        window, score = max(refuting, key=lambda ws: ws[1].refuted)
        return _judgement(claim, DISPUTED, window, score.refuted)
    return _unverifiable(reading)


def _combined(reading: Reading, model: EntailmentModel, combiner: VerifierModel) -> Judgement:
    """The decision of the combiner fitted on held-out pairs over the model's and the rules' readings."""
    probabilities = combiner.probabilities(reading.features)
    verdict = max(probabilities, key=probabilities.__getitem__)
    windows, scores, rules = reading.windows, reading.scores, reading.rules
    if verdict == VERIFIED:
        window = _cited_window(windows, scores, lambda s: s.supported)
        return _supported(reading, model, window, probabilities[VERIFIED])
    if verdict == DISPUTED:
        if rules.verdict == DISPUTED:  # keeps the rules' correction ("in 2016 (not 2015)")
            return replace(rules, score=probabilities[DISPUTED], confidence=_confidence(probabilities[DISPUTED]))
        window = _cited_window(windows, scores, lambda s: s.refuted)
        return _judgement(reading.claim, DISPUTED, window, probabilities[DISPUTED])
    return _unverifiable(reading, probabilities[UNVERIFIABLE])


def _cited_window(
    windows: list[EvidenceWindow], scores: list[EntailmentScores], probability: Callable[[EntailmentScores], float]
) -> EvidenceWindow:
    """The window a combined verdict cites: the model's surest among the windows that hold some of
    the claim's content words. The prefilter gives every passage a window, so an unrelated passage's
    window is among them, and the combiner's verdict may rest on the lexical readings rather than on
    that window's score: a window sharing no word with the claim cannot be what states it."""
    candidates = [(w, s) for w, s in zip(windows, scores) if w.coverage > 0] or list(zip(windows, scores))
    return max(candidates, key=lambda ws: probability(ws[1]))[0]


def _supported(reading: Reading, model: EntailmentModel, window: EvidenceWindow, probability: float) -> Judgement:
    """VERIFIED when every clause is covered, else UNVERIFIABLE saying which clause is not."""
    missing = _unsupported_clause(reading.claim, reading.windows, model)
    if missing is None:
        return _judgement(reading.claim, VERIFIED, window, probability)
    return _partial(reading.claim, window, probability, f'not stated: "{missing}"')


def _unverifiable(reading: Reading, probability: float | None = None) -> Judgement:
    window, score = max(zip(reading.windows, reading.scores), key=lambda ws: ws[1].partial)
    if score.partial > max(score.supported, score.refuted, score.unrelated):
        return _partial(reading.claim, window, score.partial, "the passage states only part of the claim")
    best = probability if probability is not None else max(s.unverifiable for s in reading.scores)
    return Judgement(UNVERIFIABLE, _confidence(best), None, None, None, best)


def _combiner(model: EntailmentModel) -> VerifierModel | None:
    data = model.card.get("combiner")
    return VerifierModel.from_json({"idf": {}, "default_idf": 1.0, **data}) if data else None


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


def claim_pieces(claim: str) -> list[str]:
    """The claim's clauses, a clause over CLAIM_PIECE_WORDS words cut into runs of that many words."""
    pieces = []
    for clause in claim_clauses(claim):
        words = clause.split()
        pieces += [" ".join(words[i : i + CLAIM_PIECE_WORDS]) for i in range(0, len(words), CLAIM_PIECE_WORDS)]
    return pieces or [claim]


def _verdict(score: EntailmentScores) -> str:
    by = {VERIFIED: score.supported, DISPUTED: score.refuted, UNVERIFIABLE: score.unverifiable}
    return max(by, key=by.__getitem__)


def _passage_support(passage_id: str | None, windows: list[EvidenceWindow], scores: list[EntailmentScores]) -> float:
    return max((s.supported for w, s in zip(windows, scores) if w.passage.id == passage_id), default=0.0)


def _unsupported_clause(claim: str, windows: list[EvidenceWindow], model: EntailmentModel) -> str | None:
    """The first clause (or piece of a long one) no window supports on its own, or None when every
    one is supported."""
    clauses = claim_pieces(claim)
    if len(clauses) < 2:
        return None
    # A clause whose every word a window holds counts as stated without asking the model.
    unread = [c for c in clauses if not any(_lexical_coverage(c, w.text) >= lexical.SUPPORT_ALIGNMENT for w in windows)]
    scores = model.scores([(clause, w.text) for clause in unread for w in windows])
    for index, clause in enumerate(unread):
        if not any(_verdict(s) == VERIFIED for s in scores[index * len(windows) : (index + 1) * len(windows)]):
            return clause
    return None


def _lexical_coverage(clause: str, text: str) -> float:
    """The share of the clause's content words the window holds (a clause the model misses but
    whose every word is there, figures included, counts as stated)."""
    wanted = term_stems(clause)
    held = set(term_stems(text))
    return sum(s in held for s in wanted) / len(wanted) if wanted else 1.0


def _judgement(claim: str, verdict: str, window: EvidenceWindow, probability: float) -> Judgement:
    quote = _quote(claim, window)
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
    quote = _quote(claim, window)
    return Judgement(UNVERIFIABLE, "LOW", None, window.passage.id, quote, probability, None, missing)


def _quote(claim: str, window: EvidenceWindow) -> str | None:
    """The window's quote (see the module docstring): its outer sentences are dropped while the
    rest holds the same claim words."""
    wanted = set(term_stems(claim))
    text = window.passage.text
    spans = [(window.start + a, window.start + b) for a, b in sentence_spans(window.text)]
    if not spans:
        return window_quote(claim, text, window.start, window.end)

    def held(first: int, last: int) -> set[str]:
        return wanted & set(term_stems(text[spans[first][0] : spans[last][1]]))

    first, last = 0, len(spans) - 1
    full = held(first, last)
    while first < last and held(first + 1, last) == full:
        first += 1
    while last > first and held(first, last - 1) == full:
        last -= 1
    # A leading sentence that adds only the claim's names goes too when the rest refers back to them
    # ("Acme Corp makes anvils. The company employs 4,500 people." quotes the second sentence).
    names = set().union(*name_stems(claim))
    while (
        first < last
        and refers_back(text[spans[first + 1][0] : spans[last][1]])
        and held(first, last) - held(first + 1, last) <= names
    ):
        first += 1
    return window_quote(claim, text, spans[first][0], spans[last][1])


def _confidence(probability: float) -> str:
    if probability >= 0.8:
        return "HIGH"
    return "MEDIUM" if probability >= 0.5 else "LOW"
