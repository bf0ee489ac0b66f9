"""A claim's type (common.ClaimType's names), read from its words by cues: the built-in extractor types each
claim it finds with it, and an evaluation types each labelled claim it sends to the checkers the same way.

First match wins: ATTRIBUTION ("said", "according to") > CAUSAL ("because", "due to", "caused", "leads to") >
COMPARISON ("larger than", "the highest", "-est") > STATISTIC (a number that is not a date, "%", "million") > DATE
(a year, a day and month, "century", "AD 79", "in 476.") > TECHNICAL. Structural relations come first because they
say what has to be checked (who said it, what caused what, what ranks above what); a quantity outranks the year that
merely scopes it ("grew 30% in 2020" is a STATISTIC), and "more than 27 years" is a quantity, not a comparison. A
year is a date, never a figure, and neither is a number that is part of a name ("Apollo 11 landed on the Moon in
1969" is a DATE; "Apollo 11 carried 3 astronauts" a STATISTIC: a count).

Limits: English only and lexical.
"""

from __future__ import annotations

import re

from factcheck.text.sentences import STOPWORDS

__all__ = ["ATTRIBUTION", "claim_type"]

# A claim that reports what someone said: its type, and (for the extractor) a statement that is checkable as
# said even when what was said is an opinion or a prediction.
ATTRIBUTION = re.compile(
    r"\b(?:said|says|say that|stated|told|announced|testified|declared that|claimed that|wrote that|reported that|"
    r"argued that|insisted that|confirmed that|denied that|admitted that)\b|\b[Aa]ccording to\b|\bin a statement\b"
)
_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?"
)
_DATE = re.compile(
    rf"\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}"
    r"|\b\d{4}-\d{2}-\d{2}\b"
    r"|(?<![$€£.,\d])\b(?:1[0-9]|20)\d{2}s?\b(?!\s*(?:%|percent|people|km|kg|miles|meters|metres|tons|units|"
    r"dollars|euros|feet|members|employees|students|cases|deaths))"
    r"|\b(?:century|centuries|decade|BCE?|AD)\b"
)
# A year written without its four digits or with an era: "AD 79", "44 BC", "in 476." (a bare number after "in",
# "since", "until" or "circa" that ends its clause: nothing it counts follows it).
_ERA_YEAR = re.compile(
    r"\b(?:AD|A\.D\.|CE)\s+\d{1,4}\b|\b\d{1,4}\s+(?:BCE?|B\.C\.|AD|A\.D\.|CE)\b"
    r"|\b(?:in|since|until|till|circa|c\.)\s+\d{3,4}(?=\s*(?:[.,;:)]|$))"
)
# A number that is part of a name ("Apollo 11", "World War 2", "Boeing 747", "Windows 95"): it follows a capitalised
# word that is no function or approximation word ("About 7 million", "Over 500 people" are figures).
_NAME_NUMBER = re.compile(r"\b([A-Z][\w'-]*)\s+\d+\b(?![.,]\d|\s*(?:%|percent|per cent))")
_NOT_NAME_WORDS = STOPWORDS | frozenset(
    "nearly almost around roughly approximately exactly since every less some over under just only up".split()
)
_NUMBER = re.compile(r"(?<![\w.])\$?\d[\d,.]*(?!\d|st\b|nd\b|rd\b|th\b)")
_QUANTITY_WORDS = re.compile(
    r"%|\b(?:percent|per cent|million|billion|trillion|thousand|hundreds|dozens)\b", re.IGNORECASE
)
_CAUSAL = re.compile(
    r"\b(?:because|due to|owing to|caused|causes|causing|leads? to|led to|leading to|results? in|resulted in|"
    r"resulting in|as a result of|contributes? to|contributed to|triggered|responsible for)\b",
    re.IGNORECASE,
)
_NOT_SUPERLATIVE = frozenset(
    "forest interest contest protest request harvest conquest honest modest manifest digest arrest everest "
    "earnest northwest southwest midwest suggest invest attest detest behest unrest inquest bequest tempest".split()
)
_THAN = re.compile(r"\b(\w+)\s+than\b(?!\s+(?:about\s+|around\s+|nearly\s+)?[$€£]?\d)", re.IGNORECASE)
_SUPERLATIVE = re.compile(
    r"\b(?:the|its|their|his|her|our|\w+'s)\s+(?:(?:second|third|fourth|fifth)[\s-]+)?(\w+est|most|least)\b",
    re.IGNORECASE,
)
_COMPARISON_VERBS = re.compile(
    r"\b(?:compared (?:to|with)|outnumber\w*|surpass\w*|exceed\w*|ranked|ranks)\b", re.IGNORECASE
)


def claim_type(claim: str) -> str:
    """The claim's type (one of CLAIM_TYPES) by cues, in the precedence above."""
    if ATTRIBUTION.search(claim):
        return "ATTRIBUTION"
    if _CAUSAL.search(claim):
        return "CAUSAL"
    if _is_comparison(claim):
        return "COMPARISON"
    if _is_statistic(claim):
        return "STATISTIC"
    if _DATE.search(claim) or _ERA_YEAR.search(claim):
        return "DATE"
    return "TECHNICAL"


def _is_comparison(claim: str) -> bool:
    if _COMPARISON_VERBS.search(claim):
        return True
    if any(m.group(1).lower() not in {"rather", "other"} for m in _THAN.finditer(claim)):
        return True
    return any(m.group(1).lower() not in _NOT_SUPERLATIVE for m in _SUPERLATIVE.finditer(claim))


def _is_statistic(claim: str) -> bool:
    """A figure: a quantity word, or a number that is neither a date (a year is a date) nor part of a name."""
    if _QUANTITY_WORDS.search(claim):
        return True
    undated = _DATE.sub(" ", _ERA_YEAR.sub(" ", claim))
    unnamed = _NAME_NUMBER.sub(_without_name_number, undated)
    return _NUMBER.search(unnamed) is not None


def _without_name_number(match: re.Match[str]) -> str:
    return match.group(0) if match.group(1).lower() in _NOT_NAME_WORDS else " "
