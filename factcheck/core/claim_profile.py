"""A claim's confidence level and numeric detail (claim-level citations).

Confidence levels route verification (services/gateway/factcheck_gateway/modes/fact_check/citations.py):
- HIGH: a direct quote, or an exact figure or full date stated as fact;
- LOW: hedged ("may", "reportedly", "about"), comparative ("more than", "-er than",
  superlatives) or synthetic (totals, averages, conclusions: "overall", "therefore") claims.
  Ordinals are not comparisons: "in its first year", "the third bridge" state a plain fact;
- MEDIUM: everything else (paraphrased facts).

A model may state the level (the extraction prompt's "Level:" line); `confidence_level` is
the built-in rule, used by local/extractor and whenever the model gives none.

Numeric detail is always computed here, server-side, from the claim's own words: the
figure the claim asserts normalised by factcheck/text/numbers.py (one place for numbers),
the entity it describes, and for derived figures ("doubled", "grew 20%") the computation.
A model's "Entity:" line, when given, names the entity instead of the rule below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from factcheck.text.numbers import GROWTH_PHRASE, Derivation, Figure, find_dates, find_derivation, main_figure

HIGH, MEDIUM, LOW = "HIGH", "MEDIUM", "LOW"
LEVELS = (HIGH, MEDIUM, LOW)

_HEDGED = re.compile(
    r"\b(may|might|could|possibly|perhaps|probably|likely|reportedly|allegedly|apparently|suggests?|"
    r"appears?|seems?|estimated|approximately|about|around|roughly|nearly|almost|some|up to|as many as)\b",
    re.IGNORECASE,
)
_COMPARATIVE = re.compile(
    r"\b(more|less|fewer|greater|higher|lower|larger|smaller|better|worse|bigger|faster|slower)\s+(?:\w+\s+){0,3}?than\b|"
    r"\b\w+er than\b|\b(most|least|largest|smallest|biggest|highest|lowest|best|worst|only)\b|"
    r"\b(compared (?:to|with)|outpaced|surpassed|exceeded|ranks?|ranked)\b",
    re.IGNORECASE,
)
_SYNTHETIC = re.compile(
    r"\b(overall|in total|combined|on average|average|altogether|therefore|thus|hence|which means|"
    r"as a result|in sum|taken together|collectively)\b",
    re.IGNORECASE,
)
_QUOTED = re.compile(r"[\"\u201c][^\"\u201d]{3,}[\"\u201d]")
_EXACT_FIGURE = re.compile(r"\d[\d,]*\.\d+|\b\d{1,3}(?:,\d{3})+\b|\b\d*[1-9]\d*\b")
_TRAILING_FILLER = re.compile(
    r"(?:\b(?:was|were|is|are|has|have|had|reached|totalled|totaled|totals|stood at|stands at|amounted to|"
    r"of|at|to|by|about|around|nearly|almost|approximately|roughly|some|over|more than|less than|"
    r"grew|rose|fell|increased|decreased|declined|dropped|an estimated|estimated|reported|with|had a|has a|"
    # verbs that state a count ("Acme Corp employs 4,500 people" is about Acme Corp's workforce)
    r"employs?|employed|carr(?:y|ies|ied)|holds?|held|houses?|housed|hosts?|hosted|serves?|served|"
    r"receives?|received|welcomed|welcomes|attracts?|attracted|sells?|sold|produces?|produced|owns?|owned|"
    r"operates?|operated|contains?|contained|includes?|included|records?|recorded|counts?|counted|"
    r"numbers?|numbered|spends?|spent|earns?|earned|raised|makes?|made|built|builds?|lists?|listed)\s*)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class NumericProfile:
    figure: Figure | None  # None for a derivation without a stated figure ("sales doubled")
    entity: str
    raw: str
    derivation: Derivation | None = None


@dataclass(frozen=True)
class ClaimProfile:
    level: str
    numeric: NumericProfile | None = None
    reasons: tuple[str, ...] = field(default=())


_NO_FIGURE = object()


def confidence_level(claim: str, figure=_NO_FIGURE) -> str:
    """HIGH / MEDIUM / LOW by the rules in the module docstring (`figure`: the claim's main figure, when
    the caller has read it already)."""
    if _HEDGED.search(claim) or _COMPARATIVE.search(claim) or _SYNTHETIC.search(claim):
        return LOW
    if _QUOTED.search(claim):
        return HIGH
    if figure is _NO_FIGURE:
        figure = main_figure(claim)
    if figure is not None and _EXACT_FIGURE.search(figure.raw) and not figure.assumptions.get("approximation"):
        return HIGH
    if any(d.day is not None for d in find_dates(claim)):
        return HIGH
    return MEDIUM


def numeric_profile(claim: str, entity: str | None = None, figure=_NO_FIGURE) -> NumericProfile | None:
    """The claim's asserted figure, normalised, with its entity and derivation; None for a claim without one.
    Dates and years are not figures (a claim "in 1969" is not numeric)."""
    if figure is _NO_FIGURE:
        figure = main_figure(claim)
    derivation = find_derivation(claim)
    if figure is None and derivation is None:
        return None
    if figure is not None:
        raw = figure.raw
    else:
        assert derivation is not None  # (checked above)
        raw = derivation.details.get("phrase", "")
    cut = figure if figure is not None else claim.lower().find(raw.lower())
    return NumericProfile(figure, (entity or "").strip() or entity_reference(claim, cut), raw, derivation)


_LEADING_FILLER = re.compile(
    r"^(?:(?:overall|in total|in \d{4}|by \d{4}|according to [^,]+|however|today)\s*,?\s*)+", re.I
)
_OF = re.compile(r"^(?:of|in|for)\s+", re.I)


def entity_reference(claim: str, figure: Figure | int) -> str:
    """What the figure describes: the words before it, less the verb that states it, plus the year
    ("France's population was 67 million in 2020" → "France's population (2020)"); the words after
    it when nothing precedes it ("45% of voters backed it" → "voters backed it")."""
    start, end = (figure, figure) if isinstance(figure, int) else (figure.start, figure.end)
    # "Revenue grew 12% to $1.2 billion" is about revenue: the rate of change is not part of the entity.
    head = _LEADING_FILLER.sub("", GROWTH_PHRASE.sub("", claim[:start]).strip(" ,;:-"))
    head = _TRAILING_FILLER.sub("", head).strip(" ,;:-")
    if not head:
        head = _OF.sub("", claim[end:].strip(" .,;:"))
    years = sorted({d.year for d in find_dates(claim)} - {d.year for d in find_dates(head)})
    suffix = f" ({', '.join(str(y) for y in years)})" if years else ""
    return (head[:200] + suffix).strip()


def profile(claim: str, level: str | None = None, entity: str | None = None) -> ClaimProfile:
    """The claim's profile; a model's level or entity, when given and valid, win over the rules."""
    figure = main_figure(claim)
    chosen = level.upper() if level and level.upper() in LEVELS else confidence_level(claim, figure)
    return ClaimProfile(chosen, numeric_profile(claim, entity, figure))
