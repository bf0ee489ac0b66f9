"""`local/entailment`: the four entailment agents (extractor, reliability, judge, auditor), offline. The agent is the kind of the
call's inputs (`ExtractorAgentInputs`, `ReliabilityAgentInputs`, `JudgeAgentInputs`,
`AuditorAgentInputs`), and the answer is the agent's JSON output (`factcheck.core.entailment_rules`).

- EXTRACTOR: the excerpt's sentences (`factcheck/text/sentences.py`) that bear on the claim, verbatim: those holding
  at least two of the claim's content words (or one, for a claim with fewer than three), at most
  MAX_STATEMENTS of the best, in excerpt order.
- RELIABILITY: reads the source-type description: a caller's "authority" figure when given, else
  words of rigour ("peer-reviewed", "official statistics", ".gov") or of its absence ("anonymous",
  "forum", "blog"); anything else is MEDIUM with low certainty.
- ENTAILMENT JUDGE: the built-in evidence judge (`judges.default_judge`, the embedded entailment
  model that `local/checker` judges with) on the statements as one passage:
  VERIFIED -> SUPPORTED, DISPUTED -> CONTRADICTED, UNVERIFIABLE -> NOT ENOUGH INFO; reasoning names
  the statement its quote is in. The confidence follows the mandatory calibration anchors: the text
  puts the verdict in a band (`evidence_band`), and the calibration (how often that verdict was
  right at that judge probability on Factcheck-Bench's train split, data/entailment_calibration.json,
  written by scripts/fit_entailment_calibration.py) only places it within that band:
    90-100 explicit: SUPPORTED by a statement (read with the one naming its subject when it opens
           with a pronoun) holding every content word and figure of the claim, with the same
           polarity and no hedge or weaker quantifier; CONTRADICTED by a negation conflict, or by
           one other figure where the claim gives its own ("completed in 1889" against "completed
           in 1925"), in a statement holding every other content word of the claim;
    70-89  strong: the same with most (STRONG_COVERAGE) of those words, or a figure conflict that
           may be another event's (several other figures, a range, a figure elsewhere);
    40-69  partial or qualified: SUPPORTED where the source hedges or narrows the claim;
           CONTRADICTED by such a conflict in a statement holding half the other words, by a weaker
           quantifier, or by other names in a statement holding most of the claim's other words;
    0-39   weak: NOT ENOUGH INFO, always. A SUPPORTED or CONTRADICTED reading the text does not back
           this far (missing words, the opposite polarity, a contradiction only the model reads) is
           NOT ENOUGH INFO too: the engine cannot tell it from a weak one, and a confident verdict
           with a low number would say two things at once.
  No statements: NOT ENOUGH INFO, confidence 10.
- ADVERSARIAL AUDITOR: in the excerpt's sentences that bear on the claim, a material ambiguity the
  claim does not share: a hedge or modal ("may", "suggests", "likely") under a definitive claim, a
  weaker quantifier than the claim's ("many" for "all"), or a sentence that opens with a pronoun
  whose referent the excerpt never names. It downgrades SUPPORTED or CONTRADICTED to NOT ENOUGH INFO
  (-15) only then; otherwise UNCHANGED, 0.
"""

from __future__ import annotations

import bisect
import json
import re
from functools import lru_cache
from pathlib import Path

from factcheck.core.entailment_rules import NOT_ENOUGH_INFO
from factcheck.models.inputs import (
    AuditorAgentInputs,
    ExtractorAgentInputs,
    JudgeAgentInputs,
    ReliabilityAgentInputs,
    unanswerable,
)
from factcheck.text.sentences import STOPWORDS, content_words, sentence_spans, tokenize
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_NAME,
    CONFLICT_NEGATION,
    CONFLICT_QUANTIFIER,
    DISPUTED,
    VERIFIED,
    Judgement,
    PassageText,
    term_stems,
)
from factcheck_engines.judges import default_judge

MAX_STATEMENTS = 5
CALIBRATION_FILE = Path(__file__).resolve().parent / "data" / "entailment_calibration.json"
EMPTY_SOURCE_CONFIDENCE = 10
DOWNGRADE = -15

_HEDGES = frozenset(
    "may might could possibly perhaps likely probably suggests suggest suggested appears appear seems seem "
    "reportedly allegedly potentially unclear uncertain preliminary".split()
)
_QUANTIFIER_RANK = {
    **dict.fromkeys("all every always each entire entirely universally".split(), 4),
    **dict.fromkeys("most majority mostly usually".split(), 3),
    **dict.fromkeys("many often numerous several much".split(), 2),
    **dict.fromkeys("some few sometimes occasionally minority".split(), 1),
}
_PRONOUN_OPENERS = frozenset("it its they their them this these that those he she his her such".split())

_HIGH_SOURCES = (
    "peer-reviewed",
    "peer reviewed",
    "systematic review",
    "meta-analysis",
    "journal",
    "official statistic",
    "government",
    "census",
    "encyclopedia",
    "encyclopaedia",
    "court record",
    "standards body",
    "textbook",
    "academic",
    "university press",
    ".gov",
    ".edu",
    "who.int",
    "nature.com",
    "science.org",
)
_LOW_SOURCES = (
    "anonymous",
    "forum",
    "blog",
    "social media",
    "tweet",
    "twitter",
    "reddit",
    "rumor",
    "rumour",
    "gossip",
    "opinion",
    "unverified",
    "comment",
    "chain email",
    "tabloid",
    "satire",
    "advertisement",
    "press release",
    "self-published",
    "personal website",
)
_MEDIUM_SOURCES = ("news", "newspaper", "magazine", "wikipedia", "report", "book", "encyclopedic", "interview")
_AUTHORITY = re.compile(r"authority\s*[:=]?\s*([01](?:\.\d+)?)", re.I)


_AGENTS = (ExtractorAgentInputs, ReliabilityAgentInputs, JudgeAgentInputs, AuditorAgentInputs)


def answer(inputs: object) -> str:
    if isinstance(inputs, ExtractorAgentInputs):
        data = extract(inputs.claim, inputs.source_excerpt)
    elif isinstance(inputs, ReliabilityAgentInputs):
        data = rate_source(inputs.source_type)
    elif isinstance(inputs, JudgeAgentInputs):
        data = judge_statements(inputs.claim, [{"id": s.id, "text": s.text} for s in inputs.statements])
    elif isinstance(inputs, AuditorAgentInputs):
        data = audit(inputs.claim, inputs.source_excerpt, inputs.judge_verdict)
    else:
        raise unanswerable(inputs, "local/entailment", _AGENTS)
    return json.dumps(data, ensure_ascii=False)


# --- the agents --------------------------------------------------------------------------------------


def relevant_sentences(claim: str, source_excerpt: str) -> list[str]:
    """The excerpt's sentences bearing on the claim, verbatim, best MAX_STATEMENTS in excerpt order."""
    wanted = set(content_words(claim))
    if not wanted:
        return []
    needed = 1 if len(wanted) < 3 else 2
    scored = []
    for position, (start, end) in enumerate(sentence_spans(source_excerpt)):
        text = source_excerpt[start:end]
        shared = len(wanted & set(content_words(text)))
        if shared >= needed:
            scored.append((shared, -position, text))
    best = sorted(scored, reverse=True)[:MAX_STATEMENTS]
    return [text for _, _, text in sorted(best, key=lambda item: -item[1])]


def extract(claim: str, source_excerpt: str) -> dict:
    statements = relevant_sentences(claim, source_excerpt)
    return {"agent": "EXTRACTOR", "statements": [{"id": n, "text": s} for n, s in enumerate(statements, 1)]}


def rate_source(source_type: str) -> dict:
    text = source_type.lower()
    authority = _AUTHORITY.search(source_type)
    if authority:
        value = float(authority.group(1))
        rating = "HIGH" if value >= 0.75 else "MEDIUM" if value >= 0.4 else "LOW"
        confidence = 70
    elif any(word in text for word in _LOW_SOURCES):
        rating, confidence = "LOW", 80
    elif any(word in text for word in _HIGH_SOURCES):
        rating, confidence = "HIGH", 80
    elif any(word in text for word in _MEDIUM_SOURCES):
        rating, confidence = "MEDIUM", 70
    else:
        rating, confidence = "MEDIUM", 40
    return {"agent": "RELIABILITY", "source_type": source_type, "reliability": rating, "confidence": confidence}


def judge_statements(claim: str, statements: list[dict]) -> dict:
    if not statements:
        return {
            "agent": "ENTAILMENT_JUDGE",
            "verdict": NOT_ENOUGH_INFO,
            "confidence": EMPTY_SOURCE_CONFIDENCE,
            "reasoning": ["No statements were extracted from the source."],
        }
    verdict, score, quote, judgement = _judged(claim, statements)
    cited = _statement_of(quote, statements) if quote else None
    ids = ", ".join(str(s["id"]) for s in statements)
    band = evidence_band(claim, verdict, judgement.conflict, statements)
    calibrated = calibrated_confidence(verdict, score)
    if band == WEAK and verdict != NOT_ENOUGH_INFO:
        calibrated = 100 - calibrated  # the likelier the model's reading, the less certain "not enough info"
        which = f"Statement {ids} does" if len(statements) == 1 else f"Statements {ids} do"
        reasoning = [
            f"{which} not state or contradict the claim explicitly enough to tell a {verdict} reading from a "
            "weak match."
        ]
        verdict = NOT_ENOUGH_INFO
    elif verdict == "SUPPORTED" and cited and band == PARTIAL:
        reasoning = [f'Statement {cited["id"]} states the claim only with a qualification: "{quote}".']
    elif verdict == "SUPPORTED" and cited:
        reasoning = [f'Statement {cited["id"]} explicitly states the claim: "{quote}".']
    elif verdict == "CONTRADICTED" and cited:
        reasoning = [f'Statement {cited["id"]} contradicts the claim: "{quote}".']
    elif verdict == "CONTRADICTED":
        reasoning = [f"Statements {ids} are incompatible with the claim."]
    else:
        reasoning = [f"Statements {ids} neither state nor contradict the claim explicitly."]
    confidence = within_band(calibrated, band)
    return {"agent": "ENTAILMENT_JUDGE", "verdict": verdict, "confidence": confidence, "reasoning": reasoning}


def judge_raw(claim: str, statements: list[dict]) -> tuple[str, float, str | None]:
    """The evidence judge on the statements as one passage: (entailment verdict, its probability, its quote)."""
    verdict, score, quote, _ = _judged(claim, statements)
    return verdict, score, quote


def _judged(claim: str, statements: list[dict]) -> tuple[str, float, str | None, Judgement]:
    judgement = default_judge(claim, [PassageText("S", " ".join(s["text"] for s in statements))])
    verdict = {VERIFIED: "SUPPORTED", DISPUTED: "CONTRADICTED"}.get(judgement.verdict, NOT_ENOUGH_INFO)
    return verdict, judgement.score, judgement.quote, judgement


# --- the confidence calibration anchors -----------------------------------------------------------------

EXPLICIT, STRONG, PARTIAL, WEAK = (90, 100), (70, 89), (40, 69), (0, 39)
# Share of the claim's content words (stemmed, synonyms folded) a statement must hold.
STRONG_COVERAGE = 0.75
PARTIAL_COVERAGE = 0.5
_FIGURE = re.compile(r"\d")
_RANGE = re.compile(r"\d\s*[-\u2013/]\s*\d")
_NEGATION = re.compile(r"\b(?:not|no|never|none|neither|nor|without|cannot|nobody|nothing)\b|n't\b", re.I)


def evidence_band(claim: str, verdict: str, conflict: str | None, statements: list[dict]) -> tuple[int, int]:
    """The anchor band the statements' text puts `verdict` in (see the module docstring): the best
    band one statement gives, a statement opening with a pronoun read with the statement before it
    that names its subject (words scattered over several statements are no explicit statement)."""
    if verdict == NOT_ENOUGH_INFO or not statements:
        return WEAK
    return max(
        (_statement_band(claim, verdict, conflict, own, text) for own, text in _readings(statements)),
        key=lambda band: band[0],
    )


def _readings(statements: list[dict]) -> list[tuple[str, str]]:
    """(the statement, the statement read with the one naming its subject when it opens with a pronoun)."""
    texts = [s["text"] for s in statements]
    readings = []
    for index, text in enumerate(texts):
        words = tokenize(text)
        reading = text
        if words and words[0] in _PRONOUN_OPENERS:
            named = next(
                (t for t in reversed(texts[:index]) if tokenize(t)[:1] and tokenize(t)[0] not in _PRONOUN_OPENERS), ""
            )
            reading = f"{named} {text}".strip()
        readings.append((text, reading))
    return readings


def _statement_band(claim: str, verdict: str, conflict: str | None, own: str, text: str) -> tuple[int, int]:
    if verdict == "SUPPORTED":
        coverage = _coverage(term_stems(claim), text)
        if coverage < STRONG_COVERAGE or bool(_NEGATION.search(claim)) != bool(_NEGATION.search(text)):
            return WEAK  # words or figures of the claim missing, or the opposite polarity
        if material_ambiguities(claim, text):
            return PARTIAL  # the source hedges or narrows what the claim states
        return EXPLICIT if coverage == 1.0 else STRONG
    # CONTRADICTED: what the conflict is, and how much of the rest of the claim the statement states.
    figures = {t for t in term_stems(claim) if _FIGURE.search(t)}
    coverage = _coverage([t for t in term_stems(claim) if t not in figures], text)
    stated = {t for t in term_stems(text) if _FIGURE.search(t)}
    if figures - stated and stated - figures:
        conflict = CONFLICT_FIGURE  # the statement gives another figure where the claim's is missing
    elif conflict in (CONFLICT_FIGURE, CONFLICT_DATE):
        conflict = None  # no other figure in the statement: the claim's is missing, not contradicted
    if conflict in (CONFLICT_FIGURE, CONFLICT_NEGATION):
        if coverage == 1.0 and (conflict == CONFLICT_NEGATION or _same_slot_figure(claim, own)):
            return EXPLICIT
        return STRONG if coverage >= STRONG_COVERAGE else PARTIAL if coverage >= PARTIAL_COVERAGE else WEAK
    if conflict == CONFLICT_QUANTIFIER:
        return PARTIAL if coverage >= PARTIAL_COVERAGE else WEAK
    if conflict == CONFLICT_NAME:
        return PARTIAL if coverage >= STRONG_COVERAGE else WEAK
    return WEAK  # the model's reading alone: nothing in the text the engine can point to


def _same_slot_figure(claim: str, statement: str) -> bool:
    """Whether the statement gives one other figure, where the claim gives its own: next to the same
    word ("completed in 1889" against "completed in 1925"). A statement with several other figures
    ("won their seventh title in 1952-53") or one elsewhere ("Crowe's 2005 film") may speak of another
    event: a figure that differs is then no explicit contradiction."""
    claim_words, words = _content_sequence(claim), _content_sequence(statement)
    claimed = {w for w in claim_words if _FIGURE.search(w)}
    others = [i for i, w in enumerate(words) if _FIGURE.search(w) and w not in claimed]
    if len({words[i] for i in others}) != 1 or _RANGE.search(words[others[0]]):
        return False  # several other figures, or a range ("1952-53"): perhaps another event
    near = {w for i in others for w in words[max(i - 1, 0) : i] + words[i + 1 : i + 2]}
    missing = [i for i, w in enumerate(claim_words) if w in claimed and w not in words]
    return any(w in near for i in missing for w in claim_words[max(i - 1, 0) : i] + claim_words[i + 1 : i + 2])


def _content_sequence(text: str) -> list[str]:
    """The text's content stems in order (`term_stems` of each token)."""
    return [stems[0] for token in tokenize(text) if (stems := term_stems(token))]


def within_band(calibrated: int, band: tuple[int, int]) -> int:
    """The calibrated confidence (0-100) placed proportionally within `band`: the calibration orders
    verdicts inside a band, it never moves one out of it."""
    low, high = band
    return low + round(max(0, min(100, calibrated)) * (high - low) / 100)


def _coverage(wanted: list[str], text: str) -> float:
    """The share of `wanted` (stems) that `text` holds; stems one or two letters apart at the end
    count as the same word (the stemmer gives "cures" "cur" but "cure" "cure")."""
    if not wanted:
        return 1.0
    held = set(term_stems(text))
    return sum(any(_same_stem(term, other) for other in held) for term in wanted) / len(wanted)


def _same_stem(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= 3 and len(long) - len(short) <= 2 and long.startswith(short) and not _FIGURE.search(long)


@lru_cache(maxsize=1)
def _calibration() -> dict:
    """Per verdict, the judge probability's bins and the confidence each maps to
    (scripts/fit_entailment_calibration.py; absent: the probability itself)."""
    try:
        return json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))["verdicts"]
    except FileNotFoundError:
        return {}


def calibrated_confidence(verdict: str, score: float) -> int:
    """How often the judge's verdict was right at this probability on the train split, as 0-100."""
    table = _calibration().get(verdict)
    if table is None:
        return max(0, min(100, round(score * 100)))
    index = bisect.bisect_left(table["upper_edges"], score)
    return table["confidence"][min(index, len(table["confidence"]) - 1)]


def _statement_of(quote: str, statements: list[dict]) -> dict | None:
    for statement in statements:
        if quote in statement["text"] or statement["text"] in quote:
            return statement
    words = set(tokenize(quote))
    return max(statements, key=lambda s: len(words & set(tokenize(s["text"]))), default=None)


def audit(claim: str, source_excerpt: str, judge_verdict: str) -> dict:
    unchanged = {
        "agent": "ADVERSARIAL_AUDITOR",
        "final_verdict": "UNCHANGED",
        "confidence_adjustment": 0,
        "auditor_reasoning": [],
    }
    if judge_verdict == NOT_ENOUGH_INFO:
        return unchanged
    reasons = material_ambiguities(claim, source_excerpt)
    if not reasons:
        return unchanged
    return {
        "agent": "ADVERSARIAL_AUDITOR",
        "final_verdict": NOT_ENOUGH_INFO,
        "confidence_adjustment": DOWNGRADE,
        "auditor_reasoning": reasons,
    }


def material_ambiguities(claim: str, source_excerpt: str) -> list[str]:
    """Ambiguities of the relevant sentences that the claim does not share (each changes what is claimed)."""
    claim_tokens = tokenize(claim)
    claim_hedges = _HEDGES & set(claim_tokens)
    claim_rank = max((_QUANTIFIER_RANK[t] for t in claim_tokens if t in _QUANTIFIER_RANK), default=None)
    excerpt_words = set(content_words(source_excerpt))
    reasons: list[str] = []
    for sentence in relevant_sentences(claim, source_excerpt):
        tokens = tokenize(sentence)
        hedges = sorted((_HEDGES & set(tokens)) - claim_hedges)
        if hedges:
            reasons.append(
                f"Ambiguity in phrase '{hedges[0]}' ({_short(sentence)}): the source hedges what the claim states "
                "as definite, which materially affects interpretation."
            )
        ranks = [(_QUANTIFIER_RANK[t], t) for t in tokens if t in _QUANTIFIER_RANK]
        if claim_rank is not None and ranks and max(ranks)[0] < claim_rank:
            reasons.append(
                f"Ambiguity in quantifier '{max(ranks)[1]}' ({_short(sentence)}): weaker than the claim's, so the "
                "source does not establish the claim's scope."
            )
        if tokens and tokens[0] in _PRONOUN_OPENERS and not _claim_subject_named(claim_tokens, excerpt_words):
            reasons.append(
                f"Unresolved reference '{tokens[0]}' ({_short(sentence)}): the excerpt never names what it refers "
                "to, so it may not be the claim's subject."
            )
    return reasons


def _claim_subject_named(claim_tokens: list[str], excerpt_words: set[str]) -> bool:
    """Whether the claim's first content word (its usual subject) occurs in the excerpt."""
    for token in claim_tokens:
        if token not in STOPWORDS and len(token) > 1:
            return bool(set(content_words(token)) & excerpt_words)
    return True


def _short(sentence: str) -> str:
    text = " ".join(sentence.split())
    return f'"{text[:80]}…"' if len(text) > 80 else f'"{text}"'
