"""Which claims the verification loop investigates, and in what order.

Each claim's dubious flags, by rules over its text, the first pass's votes and its evidence:
- PHANTOM: vague attribution ("officials say", "sources report", "reportedly");
- FOG: vague or unclear (a vague quantity with no figure, a hedge, no name and no figure at all);
- ANOMALY: a contradiction: a split vote (VERIFIED and DISPUTED verdicts), two claims of the
  content about the same thing with different figures or one negated, or evidence passages that
  give different figures for the claim;
- NOISE: no specific assertion (no name, no figure, and an opinion word or next to no content).

Candidates: claims whose consensus is not unanimous or is UNVERIFIABLE, and flagged claims; a
claim flagged NOISE alone is never investigated on its own. Each candidate gets an impact tier
(CRITICAL when it addresses the run's question or carries a contradiction) and a fixability
score (how likely a targeted search settles it); the queue is ordered by impact × fixability.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from factcheck.core.domain import ClaimConsensus, ExtractedClaim
from factcheck.text.sentences import STOPWORDS, stem, tokenize

PHANTOM, FOG, ANOMALY, NOISE = "PHANTOM", "FOG", "ANOMALY", "NOISE"
FLAGS = (PHANTOM, FOG, ANOMALY, NOISE)
CRITICAL, LESS_CRITICAL = "CRITICAL", "LESS_CRITICAL"
IMPACT = {CRITICAL: 1.0, LESS_CRITICAL: 0.5}
# How often a targeted search settles a claim of each kind (NOISE hardly ever: 0.1). A claim with
# several flags takes the best; one with none (only a split or unverifiable vote) takes UNFLAGGED.
FIXABILITY = {PHANTOM: 0.8, ANOMALY: 0.7, FOG: 0.5, NOISE: 0.1}
UNFLAGGED_FIXABILITY = 0.6
# A claim with both a name and a figure or date gives a search something to hold on to.
SPECIFICS_BONUS = 0.1
# A claim with no name or figure and this few content words asserts nothing specific.
NOISE_MAX_WORDS = 2
# Share of a claim's content words the question must hold for the claim to address it.
QUESTION_OVERLAP = 0.3
# Two claims are about the same thing when their content words (figures aside) overlap this much
# (Jaccard); a passage sentence is about the claim when it holds this share of the claim's words.
SAME_SUBJECT = 0.6

PHANTOM_PATTERN = re.compile(
    r"\b(?:(?:officials?|sources?|insiders?|experts?|analysts?|critics?|observers?|reports?|studies|"
    r"scientists|researchers|people|some|many|others)\s+(?:say|said|says|claim|claimed|claims|report|reported|"
    r"reports|believe|believed|suggest|suggested|show|showed|familiar with|close to|indicate|indicated)"
    r"|according to (?:sources|officials|reports|experts|insiders|some|many|people familiar)"
    r"|it (?:is|was|has been) (?:said|reported|claimed|believed|rumou?red|alleged)"
    r"|reportedly|allegedly|rumou?red|anonymous sources?|unnamed (?:officials?|sources?)|sources familiar)\b",
    re.IGNORECASE,
)
VAGUE_QUANTITY = re.compile(
    r"\b(?:dozens|scores|hundreds|thousands|millions|several|many|numerous|countless|a number of|a few|"
    r"a lot of|lots of|various|some|most|much|a handful of|a large number of)\b",
    re.IGNORECASE,
)
HEDGE = re.compile(
    r"\b(?:may|might|could|possibly|perhaps|probably|likely|unlikely|appears?|seems?|suggests?|"
    r"arguably|somewhat|reportedly|roughly|around|approximately|about|up to)\b"
)  # lower case only: "May" is a month
OPINION = re.compile(
    r"\b(?:best|worst|greatest|amazing|terrible|awful|wonderful|beautiful|great|important|interesting|"
    r"i think|i believe|in my opinion|should|must|everyone knows)\b",
    re.IGNORECASE,
)
NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|didn't|wasn't|isn't|doesn't|hasn't)\b", re.IGNORECASE)
FIGURE = re.compile(r"\d")
NUMBER = re.compile(r"\d[\d,.]*")


@dataclass(frozen=True)
class Candidate:
    claim: ExtractedClaim
    flags: tuple[str, ...]
    impact_tier: str
    fixability: float
    priority: float
    first_pass_verdict: str
    first_pass_confidence: str
    agreement_rate: float
    position: int  # in the content, for stable ties
    contradicts: tuple[str, ...] = ()  # other claims of the content it contradicts

    @property
    def key(self) -> tuple[float, int]:
        return -self.priority, self.position


def content_stems(text: str) -> set[str]:
    return {stem(t) for t in tokenize(text.lower()) if t not in STOPWORDS and len(t) > 1}


def has_name(text: str) -> bool:
    """A capitalised word that does not open the text (a crude named-entity test)."""
    words = text.split()
    return any(word[:1].isupper() and word[1:2].islower() for word in words[1:])


def has_figure(text: str) -> bool:
    return FIGURE.search(text) is not None


def text_flags(text: str) -> set[str]:
    """PHANTOM, FOG and NOISE, from the claim's wording alone."""
    flags: set[str] = set()
    named, figured = has_name(text), has_figure(text)
    if PHANTOM_PATTERN.search(text):
        flags.add(PHANTOM)
    noise = not (named or figured) and (OPINION.search(text) or len(content_stems(text)) <= NOISE_MAX_WORDS)
    if noise:
        flags.add(NOISE)
    vague = VAGUE_QUANTITY.search(text) is not None and not figured
    # Missing specifics makes a claim FOG only when it asserts something (NOISE is the other case).
    if vague or HEDGE.search(text) or not (named or figured or noise):
        flags.add(FOG)
    return flags


def split_vote(consensus: ClaimConsensus | None) -> bool:
    if consensus is None:
        return False
    verdicts = {v.verdict for v in consensus.verdicts}
    return "VERIFIED" in verdicts and "DISPUTED" in verdicts


def contradictions(claims: Sequence[ExtractedClaim]) -> dict[str, set[str]]:
    """Pairs of claims about the same thing (shared content words) with different figures, or one negated."""
    found: dict[str, set[str]] = {c.id: set() for c in claims}
    stems = {c.id: content_stems(NUMBER.sub(" ", c.claim)) for c in claims}
    for i, a in enumerate(claims):
        for b in claims[i + 1 :]:
            sa, sb = stems[a.id], stems[b.id]
            if not sa or not sb or len(sa & sb) / len(sa | sb) < SAME_SUBJECT:
                continue
            na, nb = set(NUMBER.findall(a.claim)), set(NUMBER.findall(b.claim))
            figures_differ = bool(na and nb and not (na & nb))
            negation_differs = bool(NEGATION.search(a.claim)) != bool(NEGATION.search(b.claim))
            if figures_differ or negation_differs:
                found[a.id].add(b.id)
                found[b.id].add(a.id)
    return found


def evidence_contradicts_itself(claim: str, passages: Sequence[str]) -> bool:
    """Two of the claim's passages give different figures in sentences about the claim."""
    wanted = content_stems(NUMBER.sub(" ", claim))
    if not wanted:
        return False
    figure_sets = []
    for text in passages:
        figures: set[str] = set()
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            if len(content_stems(sentence) & wanted) / len(wanted) >= SAME_SUBJECT:
                figures |= {n.rstrip(".,") for n in NUMBER.findall(sentence)}
        if figures:
            figure_sets.append(figures)
    return any(not (a & b) for i, a in enumerate(figure_sets) for b in figure_sets[i + 1 :])


def addresses_question(claim: str, question: str) -> bool:
    """The claim's content words are QUESTION_OVERLAP or more in the run's question."""
    wanted = content_stems(claim)
    return bool(wanted) and len(wanted & content_stems(question)) / len(wanted) >= QUESTION_OVERLAP


def impact_tier(claim: str, flags: set[str], question: str) -> str:
    return CRITICAL if addresses_question(claim, question) or ANOMALY in flags else LESS_CRITICAL


def fixability(claim: str, flags: set[str]) -> float:
    # NOISE only lowers a claim that has nothing else to go on.
    base = max((FIXABILITY[f] for f in flags - {NOISE}), default=UNFLAGGED_FIXABILITY)
    if has_name(claim) and has_figure(claim):
        base += SPECIFICS_BONUS
    return round(min(base, 1.0), 3)


def select_candidates(
    claims: Sequence[ExtractedClaim],
    consensus: Sequence[ClaimConsensus],
    claim_passages: dict[str, list[str]],
    question: str,
) -> list[Candidate]:
    """The investigation queue: dubious claims, highest impact × fixability first."""
    by_id = {c.claim_id: c for c in consensus}
    contradicting = contradictions(claims)
    queue: list[Candidate] = []
    for position, claim in enumerate(claims):
        item = by_id.get(claim.id)
        flags = text_flags(claim.claim)
        if (
            split_vote(item)
            or contradicting.get(claim.id)
            or evidence_contradicts_itself(claim.claim, claim_passages.get(claim.id, []))
        ):
            flags.add(ANOMALY)
        verdict = item.consensus_verdict if item else "UNVERIFIABLE"
        dubious_vote = item is None or item.agreement_rate < 100 or verdict == "UNVERIFIABLE"
        if not (dubious_vote or flags) or flags == {NOISE}:
            continue
        tier = impact_tier(claim.claim, flags, question)
        fix = fixability(claim.claim, flags)
        queue.append(
            Candidate(
                claim=claim,
                flags=tuple(f for f in FLAGS if f in flags),
                impact_tier=tier,
                fixability=fix,
                priority=round(IMPACT[tier] * fix, 4),
                first_pass_verdict=verdict,
                first_pass_confidence=item.consensus_confidence if item else "LOW",
                agreement_rate=item.agreement_rate if item else 0.0,
                position=position,
                contradicts=tuple(sorted(contradicting.get(claim.id, ()))),
            )
        )
    return sorted(queue, key=lambda c: c.key)
