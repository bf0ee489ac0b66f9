"""Re-classification: what the evidence found so far makes of a claim.

Over the independent relevant results found so far (one per owner and per story, see authority.py):
- CONFIRMED: supporting evidence meets the bar: one source of authority >= 0.85, or two or more
  independent lower ones; and refuting evidence does not.
- REFUTED: refuting evidence meets the same bar and supporting evidence does not.
- SUPERSEDED: the refutation is temporal: every counted refuting result is marked temporal by the
  assessment AND is dated, and later than every dated supporting result (both were true at their
  own dates). Anything short of that, a mix of temporal and factual refutations included, is REFUTED.
- Both sides meet the bar: a temporal refutation (as above) still gives SUPERSEDED; otherwise the
  stronger side by the same rule wins, never by summed scores (`standing`): a side with a source of
  authority >= 0.85 beats one without (five blog posts citing each other are worth less than one AP
  report); then more independent high-authority sources; then more independent sources of news
  authority (>= 0.5), then more independent sources. Equal standing is UNVERIFIABLE ("evidence
  conflicts"): two authoritative sources that disagree settle nothing.
- Neither side meets the bar: undecided, and the next query variant runs; after the last one the
  claim is UNVERIFIABLE ("verification exhausted").

Confidence: the first pass's confidence as a base (a dubious claim starts low: BASE_CONFIDENCE),
plus, for each counted source on the deciding side, +0.3 (authority >= 0.85: wire services,
.gov, .edu), +0.2 (news and .org, authority >= 0.5) or +0.1 (below: social media), capped at 1.0;
every boost is kept in the breakdown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from factcheck_gateway.modes.fact_check.investigate.authority import HIGH_AUTHORITY, NEWS, independent_groups

# The outcomes' names, as stored and as reviews show them.
from factcheck_gateway.reviews.states import CONFIRMED, REFUTED, SUPERSEDED, UNVERIFIABLE

SUPPORTS, REFUTES, IRRELEVANT = "SUPPORTS", "REFUTES", "IRRELEVANT"
BASE_CONFIDENCE = {"HIGH": 0.5, "MEDIUM": 0.4, "LOW": 0.3}
DEFAULT_BASE_CONFIDENCE = 0.3
HIGH_BOOST, NEWS_BOOST, LOW_BOOST = 0.3, 0.2, 0.1
MAX_CONFIDENCE = 1.0
MIN_INDEPENDENT = 2

RULE_ONE_HIGH = "one source of authority >= 0.85"
RULE_INDEPENDENT = "two or more independent sources"
EXHAUSTED = "verification exhausted"


@dataclass(frozen=True)
class Assessed:
    """One search result with its assessment, as the rules see it."""

    id: str
    stance: str
    temporal: bool
    authority: float
    owner: str
    text: str
    title: str = ""
    published_at: str | None = None
    domain: str = ""  # the result's site: sources that cite each other count once


@dataclass(frozen=True)
class Boost:
    source: str
    authority: float
    boost: float


@dataclass(frozen=True)
class Decision:
    status: str
    rule: str
    reasoning: str
    base_confidence: float
    confidence: float
    breakdown: tuple[Boost, ...] = ()
    supporting: tuple[str, ...] = ()  # ids counted on each side
    refuting: tuple[str, ...] = ()
    counted: tuple[str, ...] = field(default=())  # every id counted (independent)


def base_confidence(first_pass_confidence: str) -> float:
    return BASE_CONFIDENCE.get(first_pass_confidence, DEFAULT_BASE_CONFIDENCE)


def boost_for(authority: float) -> float:
    if authority >= HIGH_AUTHORITY:
        return HIGH_BOOST
    if authority >= NEWS:
        return NEWS_BOOST
    return LOW_BOOST


def counted(results: Sequence[Assessed], stance: str) -> list[Assessed]:
    """The independent results of one stance: one per owner and per syndicated story."""
    side = [r for r in results if r.stance == stance]
    return [side[i] for i in independent_groups([(r.owner, r.authority, r.text, r.domain) for r in side])]


def meets_bar(side: Sequence[Assessed]) -> str | None:
    """The rule a side satisfies, or None."""
    if any(r.authority >= HIGH_AUTHORITY for r in side):
        return RULE_ONE_HIGH
    if len(side) >= MIN_INDEPENDENT:
        return RULE_INDEPENDENT
    return None


def standing(side: Sequence[Assessed]) -> tuple[bool, int, int, int]:
    """How strong one side's independent evidence is, compared tier by tier, highest tier first (no sums):
    whether it has a source of authority >= 0.85, how many it has, how many of news authority or more,
    how many in all."""
    high = sum(1 for r in side if r.authority >= HIGH_AUTHORITY)
    news = sum(1 for r in side if r.authority >= NEWS)
    return high > 0, high, news, len(side)


def _why_stronger(winner: Sequence[Assessed], loser: Sequence[Assessed]) -> str:
    ours, theirs = standing(winner), standing(loser)
    if ours[0] != theirs[0]:
        return "a source of authority >= 0.85 stands on its own against lower-authority"
    if ours[1] != theirs[1]:
        return f"{ours[1]} independent high-authority sources against {theirs[1]} from"
    if ours[2] != theirs[2]:
        return f"{ours[2]} independent sources of news authority or more against {theirs[2]} from"
    return f"{ours[3]} independent sources against {theirs[3]} from"


def temporal_refutation(refuting: Sequence[Assessed], supporting: Sequence[Assessed]) -> bool:
    """Every refutation is temporal and dated, and later than every dated support."""
    if not refuting or not all(r.temporal and r.published_at for r in refuting):
        return False
    supported_dates = [s.published_at for s in supporting if s.published_at]
    if not supported_dates:
        return True
    # ISO 8601 sorts as text (every refutation is dated: checked above).
    return min(r.published_at for r in refuting if r.published_at) > max(supported_dates)


def confidence_of(base: float, side: Sequence[Assessed]) -> tuple[float, tuple[Boost, ...]]:
    breakdown = tuple(Boost(r.title or r.id, r.authority, boost_for(r.authority)) for r in side)
    return round(min(MAX_CONFIDENCE, base + sum(b.boost for b in breakdown)), 3), breakdown


def decide(results: Sequence[Assessed], base: float, *, exhausted: bool) -> Decision | None:
    """The claim's new status from the evidence so far; None while undecided and variants remain."""
    supporting, refuting = counted(results, SUPPORTS), counted(results, REFUTES)
    support_rule, refute_rule = meets_bar(supporting), meets_bar(refuting)
    ids = tuple(r.id for r in (*supporting, *refuting))

    def outcome(status: str, rule: str, reasoning: str, side: Sequence[Assessed]) -> Decision:
        confidence, breakdown = confidence_of(base, side)
        return Decision(
            status,
            rule,
            reasoning,
            base,
            confidence,
            breakdown,
            tuple(r.id for r in supporting),
            tuple(r.id for r in refuting),
            ids,
        )

    def named(side: Sequence[Assessed]) -> str:
        return ", ".join(r.title or r.id for r in side[:3])

    if refute_rule and temporal_refutation(refuting, supporting):
        return outcome(
            SUPERSEDED,
            refute_rule,
            f"True at its date; newer sources report a later state ({named(refuting)}).",
            refuting,
        )
    if support_rule and not refute_rule:
        return outcome(CONFIRMED, support_rule, f"Confirmed by {named(supporting)} ({support_rule}).", supporting)
    if refute_rule and not support_rule:
        return outcome(REFUTED, refute_rule, f"Refuted by {named(refuting)} ({refute_rule}).", refuting)
    if support_rule and refute_rule:
        support_standing, refute_standing = standing(supporting), standing(refuting)
        if support_standing > refute_standing:
            return outcome(
                CONFIRMED,
                support_rule,
                f"Confirmed by {named(supporting)}; {_why_stronger(supporting, refuting)} {named(refuting)}.",
                supporting,
            )
        if refute_standing > support_standing:
            return outcome(
                REFUTED,
                refute_rule,
                f"Refuted by {named(refuting)}; {_why_stronger(refuting, supporting)} {named(supporting)}.",
                refuting,
            )
        return outcome(
            UNVERIFIABLE,
            "evidence conflicts",
            f"Sources of equal standing support ({named(supporting)}) and refute ({named(refuting)}) it.",
            (),
        )
    if not exhausted:
        return None
    if supporting or refuting:
        reasoning = (
            "Verification exhausted: the evidence found does not meet the bar (one source >= 0.85 or two independent)."
        )
    else:
        reasoning = "Verification exhausted: no relevant evidence in three query variants."
    return outcome(UNVERIFIABLE, EXHAUSTED, reasoning, ())
