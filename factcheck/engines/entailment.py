"""`local/entailment`: the four entailment agents of seed 1, offline. The agent is read from the
prompt's opening line (`factcheck.entailment.PROMPT_OPENINGS`), its input from the prompt's quoted
sections, and the answer is the seed's JSON.

- EXTRACTOR: the excerpt's sentences (`sentences.py`) that bear on the claim, verbatim: those holding
  at least two of the claim's content words (or one, for a claim with fewer than three), at most
  MAX_STATEMENTS of the best, in excerpt order.
- RELIABILITY: reads the source-type description: a caller's "authority" figure when given, else
  words of rigour ("peer-reviewed", "official statistics", ".gov") or of its absence ("anonymous",
  "forum", "blog"); anything else is MEDIUM with low certainty.
- ENTAILMENT JUDGE: the built-in evidence judge (`judges.default_judge`, the embedded entailment
  model that `local/checker` judges with) on the statements as one passage:
  VERIFIED -> SUPPORTED, DISPUTED -> CONTRADICTED, UNVERIFIABLE -> NOT ENOUGH INFO; reasoning names
  the statement its quote is in. Confidence is calibrated: how often that verdict was right at
  that judge probability on Factcheck-Bench's train split (data/entailment_calibration.json,
  written by scripts/fit_entailment_calibration.py). No statements: NOT ENOUGH INFO, confidence 10.
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

from factcheck.engines.judge import DISPUTED, VERIFIED, PassageText
from factcheck.engines.judges import default_judge
from factcheck.engines.sentences import STOPWORDS, content_words, sentence_spans, tokenize
from factcheck.entailment import NOT_ENOUGH_INFO, PROMPT_OPENINGS, unquote
from factcheck.v1 import entailment_pb2 as pb

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


def answer(prompt: str) -> str:
    lines = prompt.split("\n")
    opening = lines[0].strip() if lines else ""
    if opening == PROMPT_OPENINGS[pb.ENTAILMENT_AGENT_EXTRACTOR]:
        data = extract(_section(lines, "CLAIM:"), _section(lines, "SOURCE EXCERPT:"))
    elif opening == PROMPT_OPENINGS[pb.ENTAILMENT_AGENT_RELIABILITY]:
        data = rate_source(_section(lines, "SOURCE TYPE:"))
    elif opening == PROMPT_OPENINGS[pb.ENTAILMENT_AGENT_JUDGE]:
        data = judge_statements(_section(lines, "CLAIM:"), _statements(lines))
    elif opening == PROMPT_OPENINGS[pb.ENTAILMENT_AGENT_AUDITOR]:
        verdict = _judge_verdict(lines)
        data = audit(_section(lines, "CLAIM:"), _section(lines, "SOURCE EXCERPT:"), verdict)
    else:
        raise ValueError("local/entailment answers only the entailment agents' prompts")
    return json.dumps(data, ensure_ascii=False)


# --- reading the prompt ------------------------------------------------------------------------------


def _section(lines: list[str], heading: str) -> str:
    """The quoted lines right after the first line equal to `heading`, unquoted."""
    start = lines.index(heading) + 1
    end = start
    while end < len(lines) and lines[end].startswith(">"):
        end += 1
    return unquote(lines[start:end])


def _statements(lines: list[str]) -> list[dict]:
    index = lines.index("EXTRACTED STATEMENTS (JSON):")
    return json.loads(lines[index + 1])


def _judge_verdict(lines: list[str]) -> str:
    line = next(line for line in lines if line.startswith("JUDGE VERDICT: "))
    match = re.match(r"JUDGE VERDICT: (.*?) \(confidence \d+\)$", line)
    assert match is not None  # (the prompt's line, as the prompt builder writes it)
    return match.group(1)


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
    verdict, score, quote = judge_raw(claim, statements)
    cited = _statement_of(quote, statements) if quote else None
    ids = ", ".join(str(s["id"]) for s in statements)
    if verdict == "SUPPORTED" and cited:
        reasoning = [f'Statement {cited["id"]} explicitly states the claim: "{quote}".']
    elif verdict == "CONTRADICTED" and cited:
        reasoning = [f'Statement {cited["id"]} contradicts the claim: "{quote}".']
    elif verdict == "CONTRADICTED":
        reasoning = [f"Statements {ids} are incompatible with the claim."]
    else:
        reasoning = [f"Statements {ids} neither state nor contradict the claim explicitly."]
    confidence = calibrated_confidence(verdict, score)
    return {"agent": "ENTAILMENT_JUDGE", "verdict": verdict, "confidence": confidence, "reasoning": reasoning}


def judge_raw(claim: str, statements: list[dict]) -> tuple[str, float, str | None]:
    """The evidence judge on the statements as one passage: (seed verdict, its probability, its quote)."""
    judgement = default_judge(claim, [PassageText("S", " ".join(s["text"] for s in statements))])
    verdict = {VERIFIED: "SUPPORTED", DISPUTED: "CONTRADICTED"}.get(judgement.verdict, NOT_ENOUGH_INFO)
    return verdict, judgement.score, judgement.quote


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
