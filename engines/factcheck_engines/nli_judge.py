"""Judge one claim with the embedded entailment model: VERIFIED, DISPUTED or UNVERIFIABLE.

`judge(claim, passages)` returns the same `Judgement` as the lexical `judge.judge`, so
`local/checker` can run on either. Steps (the zero-shot and convolutional SummaC readings):

1. Read everything. The claim is scored against every sentence of every passage listed for
   it that shares a content word or a figure with it (`evidence_windows.claim_sentences`), plus
   the best WINDOWS_PER_CLAIM context windows (`claim_windows`: a sentence with its neighbours,
   what the model was trained on). The cross-encoder (`nli_model`) gives each (claim, piece)
   calibrated P(SUPPORTED, REFUTED, PARTIAL, UNRELATED); one claim's pairs are one batch.
2. Every clause. A claim of several clauses ("X was born in 1950 and won the award in 1990"),
   or a clause longer than the model reads whole (CLAIM_PIECE_WORDS words), is cut into pieces
   (`claim_pieces`); each piece is scored against the PIECE_SENTENCES sentences that hold most of
   its words (a piece whose every word one sentence holds counts as stated). The claim is only
   as supported as its least supported piece.
3. Decide. A figure or date conflict the lexical rules find in a sentence about the claim's
   subject comes first: DISPUTED with the corrected figure ("in 2016 (not 2015)"), unless the
   model is nearly sure (FIGURE_OVERRIDE) that a sentence states the claim. Otherwise a small
   logistic regression shipped in `model.json` ("combiner", fitted by
   `scripts/train_checker.py` on training sets only) weighs the strongest entailment and
   contradiction over the sentences, their spread, the least supported piece, the claim's
   word coverage and plain word overlap, and the lexical rules' readings (figures, dates,
   names, negation, quantifiers: `judge.judge`); its probability is the verdict's score.
4. Dispute only on a contradiction. DISPUTED stands only with a sentence that contradicts the
   claim: a single sentence the model reads as contradicting it (P(REFUTED) at least CONTRADICTION
   and above the strongest P(SUPPORTED) any sentence gives the claim) that names the claim's
   subject (NAMED of its names: a pronoun does not say who) and holds at least SAME_SUBJECT of
   its other words (the same thing said of the same subject), or the lexical rules' figure, date,
   negation or quantifier conflict (which the rules find only in a sentence about the claim's
   subject). Otherwise the more likely of VERIFIED and UNVERIFIABLE is the verdict. The
   correction is the rules' ("in 2016 (not 2015)") or the contradicting sentence itself.
   Without a combiner (a model card without one), the sentences' own verdicts decide.

The quote is a verbatim piece of the deciding sentence or window, so that it survives the
answer's `Sources: [P1] "..."` line: the shortest run of the window's sentences that still holds
every claim word the window holds; a leading sentence that carries only the claim's names is
dropped too when the next one refers back to them ("The company ...").
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from factcheck.text.sentences import refers_back, sentence_spans
from factcheck_engines import judge as lexical
from factcheck_engines.evidence_windows import EvidenceWindow, claim_sentences, claim_windows, word_overlap
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_NEGATION,
    CONFLICT_QUANTIFIER,
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
from factcheck_engines.nli_model import EntailmentModel, EntailmentScores, configured_threads, default_model
from factcheck_engines.verifier_model import VerifierModel

# The model's P(SUPPORTED) above which the rules' figure or date conflict is taken for a misreading.
FIGURE_OVERRIDE = 0.9
# A piece of the claim counts as stated when some sentence supports it at least this surely.
PIECE_SUPPORTED = 0.5
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


# The model's P(REFUTED) a sentence needs to contradict the claim (and above its P(SUPPORTED)), and
# the share of the claim's words other than names it must hold to be about the same thing. Chosen on
# Factcheck-Bench's train split: the model's contradiction separates refuting web pages from the rest
# only weakly, and a stricter gate (0.5 and half the claim's words) kept 1 dispute in 10.
CONTRADICTION = 0.5
SAME_SUBJECT = 0.3
# The share of the claim's named entities that sentence must name (a pronoun does not say who).
NAMED = 0.5
# Sentences each piece of a long or many-claused claim is scored against.
PIECE_SENTENCES = 4
# The combiner's inputs, in the order `scripts/train_checker.py` fits them.
FEATURES = (
    "nli_supported",
    "nli_refuted",
    "nli_refuted_on_subject",
    "nli_partial",
    "nli_unrelated",
    "nli_spread",
    "nli_margin",
    "piece_supported",
    "coverage",
    "word_overlap",
    "lexical_verified",
    "lexical_disputed",
    "lexical_score",
    "lexical_p_verified",
    "lexical_p_disputed",
    "figure_conflict",
    "wording_conflict",
    "many_pieces",
)


@dataclass(frozen=True)
class Reading:
    """What the model and the lexical rules saw for one claim, before the decision."""

    claim: str
    windows: list[EvidenceWindow]  # the sentences and context windows read, in order
    scores: list[EntailmentScores]
    pieces: list[str]
    piece_support: list[float]  # per piece: its best P(SUPPORTED), 1.0 when a sentence holds every word
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
    if _figure_conflict(reading.rules) and reading.features["nli_supported"] < FIGURE_OVERRIDE:
        # A sentence about the claim's subject gives another figure or date: a contradiction, whatever
        # the combiner weighs (on web pages such conflicts are often another event's figure, so it
        # learnt to trust them little), with the corrected figure.
        return reading.rules
    combiner = _combiner(model)
    return _combined(reading, combiner) if combiner else _by_rules(reading)


def judge_claims(
    items: Sequence[tuple[str, Sequence[PassageText]]],
    model: EntailmentModel | None = None,
    judge_one: Callable[[str, Sequence[PassageText], EntailmentModel | None], Judgement] | None = None,
) -> list[Judgement]:
    """`judge(claim, passages)` for each item, in order, FACTCHECK_NLI_THREADS claims at a time
    (`judge_one` in its place: judges.py's, which keeps one claim's failure to that claim).

    The model's runs release the GIL, so one claim's run overlaps another's and the lexical
    reading of the next; each claim's pairs are still batches of their own, so every
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
    """The model's scores for every sentence and context window the claim's passages hold, its
    pieces' support and the lexical judge's verdict; None when there is nothing to read (no
    passage, or a claim without content words)."""
    if _nothing_to_read(claim, passages):
        return None
    windows = _unique([*claim_sentences(claim, passages), *claim_windows(claim, passages)])
    if not windows:
        return None
    scores = model.scores([(claim, w.text) for w in windows])
    pieces = claim_pieces(claim)
    piece_support = _piece_support(pieces, windows, scores, model)
    rules, lexical_probabilities = lexical.judge_with_probabilities(claim, passages)
    supported = [s.supported for s in scores]
    features = {
        "nli_supported": max(supported),
        "nli_refuted": max(s.refuted for s in scores),
        "nli_refuted_on_subject": max(
            (s.refuted for w, s in zip(windows, scores) if w.coverage >= SAME_SUBJECT), default=0.0
        ),
        "nli_partial": max(s.partial for s in scores),
        "nli_unrelated": min(s.unrelated for s in scores),
        "nli_spread": max(supported) - sum(supported) / len(supported),
        "nli_margin": max(s.supported - s.refuted for s in scores),
        "piece_supported": min(piece_support),
        "coverage": max(w.coverage for w in windows),
        "word_overlap": max(word_overlap(claim, p.text) for p in passages),
        "lexical_verified": float(rules.verdict == VERIFIED),
        "lexical_disputed": float(rules.verdict == DISPUTED),
        "lexical_score": rules.score,
        "lexical_p_verified": lexical_probabilities[VERIFIED],
        "lexical_p_disputed": lexical_probabilities[DISPUTED],
        "figure_conflict": float(_figure_conflict(rules)),
        "wording_conflict": float(_wording_conflict(rules)),
        "many_pieces": float(len(pieces) > 1),
    }
    return Reading(claim, windows, scores, pieces, piece_support, rules, features)


def _unique(windows: list[EvidenceWindow]) -> list[EvidenceWindow]:
    """The windows without repeats (a context window can be a single sentence already read)."""
    seen: dict[tuple[str, int, int], EvidenceWindow] = {}
    for window in windows:
        seen.setdefault((window.passage.id, window.start, window.end), window)
    return list(seen.values())


def _piece_support(
    pieces: list[str], windows: list[EvidenceWindow], scores: list[EntailmentScores], model: EntailmentModel
) -> list[float]:
    """Each piece's best P(SUPPORTED): the whole claim's scores for a claim of one piece; 1.0 for a
    piece whose every content word one window holds (figures included)."""
    if len(pieces) < 2:
        return [max(s.supported for s in scores)]
    support = [1.0] * len(pieces)
    pairs: list[tuple[int, str, str]] = []
    for index, piece in enumerate(pieces):
        held = [(_lexical_coverage(piece, w.text), w) for w in windows]
        if any(c >= lexical.SUPPORT_ALIGNMENT for c, _ in held):
            continue
        best = sorted(held, key=lambda cw: -cw[0])[:PIECE_SENTENCES]
        pairs += [(index, piece, w.text) for _, w in best]
    if pairs:
        found = model.scores([(piece, text) for _, piece, text in pairs])
        for index in {i for i, _, _ in pairs}:
            support[index] = max(s.supported for (i, _, _), s in zip(pairs, found) if i == index)
    return support


def _nothing_to_read(claim: str, passages: Sequence[PassageText]) -> bool:
    return not passages or not term_stems(claim)


def _figure_conflict(rules: Judgement) -> bool:
    return rules.verdict == DISPUTED and rules.conflict in (CONFLICT_FIGURE, CONFLICT_DATE)


def _wording_conflict(rules: Judgement) -> bool:
    return rules.verdict == DISPUTED and rules.conflict in (CONFLICT_NEGATION, CONFLICT_QUANTIFIER)


def _by_rules(reading: Reading) -> Judgement:
    """The decision without a fitted combiner: the rules' wording conflict first (unless the model is
    nearly sure, FIGURE_OVERRIDE, that a sentence states the claim), then the sentences' own verdicts,
    every piece supported for VERIFIED, a contradiction for DISPUTED."""
    if reading.features["nli_supported"] < FIGURE_OVERRIDE and _wording_conflict(reading.rules):
        return reading.rules
    supporting = [(w, s) for w, s in zip(reading.windows, reading.scores) if _verdict(s) == VERIFIED]
    if supporting:
        window, score = max(supporting, key=lambda ws: ws[1].supported)
        return _supported(reading, window, score.supported)
    disputed = _contradiction(reading, reading.features["nli_refuted"])
    return disputed or _unverifiable(reading)


def _combined(reading: Reading, combiner: VerifierModel) -> Judgement:
    """The decision of the combiner fitted on training sets, DISPUTED only with a contradiction."""
    probabilities = combiner.probabilities(reading.features)
    verdict = max(probabilities, key=probabilities.__getitem__)
    if verdict == DISPUTED:
        disputed = _contradiction(reading, probabilities[DISPUTED])
        if disputed:
            return disputed
        rest = probabilities[VERIFIED] + probabilities[UNVERIFIABLE]
        probabilities = {VERIFIED: probabilities[VERIFIED] / rest, UNVERIFIABLE: probabilities[UNVERIFIABLE] / rest}
        verdict = max(probabilities, key=probabilities.__getitem__)
    if verdict == VERIFIED:
        window = _cited_window(reading.windows, reading.scores, lambda s: s.supported)
        return _supported(reading, window, probabilities[VERIFIED])
    return _unverifiable(reading, probabilities[UNVERIFIABLE])


def _contradiction(reading: Reading, probability: float) -> Judgement | None:
    """DISPUTED resting on a sentence that contradicts the claim, or None when none does: the rules'
    figure, date, negation or quantifier conflict (with their correction), else the sentence about
    the claim's subject that the model reads as REFUTED most surely."""
    rules = reading.rules
    if _figure_conflict(rules) or _wording_conflict(rules):
        return replace(rules, score=probability, confidence=_confidence(probability))
    strongest_support = reading.features["nli_supported"]
    refuting = [
        (w, s)
        for w, s in zip(reading.windows, reading.scores)
        if w.sentence
        and s.refuted >= CONTRADICTION
        and s.refuted > strongest_support
        and _names_share(reading.claim, w.text) >= NAMED
        and _predicate_coverage(reading.claim, w.text) >= SAME_SUBJECT
    ]
    if not refuting:
        return None
    window, _ = max(refuting, key=lambda ws: (ws[1].refuted, ws[0].coverage))
    return _judgement(reading.claim, DISPUTED, window, probability)


def _names_share(claim: str, text: str) -> float:
    """The share of the claim's named entities `text` names (1.0 for a claim without names): "It was
    completed in 1889" does not say which tower, so it cannot contradict a claim about one."""
    names = name_stems(claim)
    held = set(term_stems(text))
    return sum(bool(name & held) for name in names) / len(names) if names else 1.0


def _predicate_coverage(claim: str, text: str) -> float:
    """The share of the claim's content words other than its names that `text` holds: a sentence
    naming the claim's subject but saying something else about it is not about the same thing."""
    names = set().union(*name_stems(claim))
    return _held_share([s for s in term_stems(claim) if s not in names], text)


def _cited_window(
    windows: list[EvidenceWindow], scores: list[EntailmentScores], probability: Callable[[EntailmentScores], float]
) -> EvidenceWindow:
    """The window a combined verdict cites: the model's surest among the windows that hold some of
    the claim's content words (one that shares no word with the claim cannot be what states it)."""
    candidates = [(w, s) for w, s in zip(windows, scores) if w.coverage > 0] or list(zip(windows, scores))
    # Of equally sure windows, the one holding most of the claim's words.
    return max(candidates, key=lambda ws: (probability(ws[1]), ws[0].coverage))[0]


def _supported(reading: Reading, window: EvidenceWindow, probability: float) -> Judgement:
    """VERIFIED when every piece is supported, else UNVERIFIABLE saying which piece is not."""
    missing = next((piece for piece, p in zip(reading.pieces, reading.piece_support) if p < PIECE_SUPPORTED), None)
    if missing is None or len(reading.pieces) < 2:
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


def _lexical_coverage(clause: str, text: str) -> float:
    """The share of the clause's content words the window holds (a clause the model misses but
    whose every word is there, figures included, counts as stated)."""
    return _held_share(term_stems(clause), text)


def _held_share(wanted: Sequence[str], text: str) -> float:
    """The share of the `wanted` content stems that `text` holds (1.0 when none are wanted)."""
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
