"""How a grounding model's readings become verifications: the one decision and answer text shared by the
`onnx/` checkers (engines/factcheck_engines/onnx_checker.py) and the dialect checkers on an inference server
(services/checker/factcheck_checker/dialect_verify.py).

A grounding model reads (evidence unit, claim) pairs. A unit is a verbatim piece of one passage: a
chunk of consecutive sentences up to the model's length (MiniCheck's reading: the best chunk decides)
or one sentence (SummaC's). For each pair the model gives P(supported) and, when its labels include a
contradiction class, P(contradicted).

The decision for one claim, whose parts are the claim itself or, under sentence aggregation, its
sentences (each read against every unit):
- each part's best unit is the one with the highest P(supported); the claim is as supported as its
  least supported part (one unsupported sentence leaves the claim unsupported);
- a contradiction is a unit whose P(contradicted) reaches the contradiction threshold and is above its
  own P(supported) (only a model with a contradiction class has any);
- the strongest contradiction, when it is stronger than the claim's support, makes it DISPUTED, with no
  correction (a grounding model says whether a passage contradicts a claim, not what is true instead;
  corrections for these models will follow the built-in checker's grounded-verdict rules);
- else the claim is VERIFIED when its support reaches the threshold, and UNVERIFIABLE otherwise, with
  the reason: how far the best unit was from the threshold, or why nothing could be read.

Confidence is the probability of the verdict (P(supported) for VERIFIED, P(contradicted) for DISPUTED,
1 - the strongest of the two for UNVERIFIABLE): HIGH from 0.8, MEDIUM from 0.5, LOW below, as
local/checker's.

The answer is the verification format's blocks and summary, so the checker's parser, its citation
check and the gateway's quote audit read it as any checker's: the Evidence line quotes the deciding
units verbatim with their probabilities, and Sources cites each by its passage label. A Threshold line
(which the verification parser skips) gives the threshold the claim was read against and, when the
threshold decided the verdict, the claim's P(supported) in full precision: `read_thresholds` reads them
back for the checker's structured fields (ClaimVerification.support_threshold, support_probability), from
which an evaluation fits a threshold. The verdict rests on the threshold exactly when it is VERIFIED, or
UNVERIFIABLE only because the support is below it: a DISPUTED (a contradiction stronger than the support,
whose threshold is fixed), a claim not checked and a support made doubtful by unread units are what they
are at any threshold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from factcheck.core.domain import ClaimVerification

VERIFIED, DISPUTED, UNVERIFIABLE = "VERIFIED", "DISPUTED", "UNVERIFIABLE"
HIGH_FROM, MEDIUM_FROM = 0.8, 0.5
# A quote is cut to this many characters in the Evidence line (Sources carries it whole).
_EVIDENCE_QUOTE_CHARS = 300


@dataclass(frozen=True)
class Unit:
    """A verbatim piece of one passage that a grounding model reads with the claim."""

    passage_id: str
    title: str
    text: str
    # "chunk" or "sentence": what the unit is, in the evidence text.
    kind: str = "chunk"


@dataclass(frozen=True)
class UnitReading:
    """A model's reading of one unit against one part of a claim."""

    unit: Unit
    supported: float
    # None: the model has no contradiction class.
    contradicted: float | None = None


@dataclass(frozen=True)
class ClaimReading:
    """Everything a grounding model read for one claim.

    `parts`: one tuple of readings per part of the claim (the claim whole, or each of its sentences).
    `not_checked`: why the claim could not be read at all (no passages, a claim longer than the model
    reads, a failure); its verdict is then UNVERIFIABLE, LOW, saying so. `unread`: how many units the
    model could not read (a failed call, an answer that was not Yes or No), and why (`unread_reason`).
    `note`: how the readings were taken, when the caller must know (probabilities read from an answer
    token because the server gave no log-probabilities)."""

    claim_id: str
    parts: tuple[tuple[UnitReading, ...], ...] = ()
    not_checked: str | None = None
    unread: int = 0
    unread_reason: str = ""
    note: str = ""


@dataclass(frozen=True)
class Thresholds:
    """From the model's card (onnx/) or its dialect: P(supported) at or above `supported` is support;
    P(contradicted) at or above `contradicted` (and above the unit's P(supported)) is a contradiction."""

    supported: float = 0.5
    contradicted: float = 0.5


@dataclass(frozen=True)
class Decision:
    verdict: str
    confidence: str
    probability: float  # of the verdict
    evidence: str
    cited: tuple[UnitReading, ...]
    # The threshold the claim was read against, and its P(supported) when that threshold decided the
    # verdict (None otherwise: see the module docstring).
    threshold: float = 0.5
    support: float | None = None


@dataclass(frozen=True)
class ThresholdReading:
    """What a grounding answer's Threshold line says of one claim."""

    threshold: float
    support: float | None  # None: the threshold did not decide the verdict


def decide(reading: ClaimReading, thresholds: Thresholds, model: str) -> Decision:
    """The verdict of one claim from its readings (see the module docstring)."""
    fixed = thresholds.supported
    if reading.not_checked is not None:
        return Decision(UNVERIFIABLE, "LOW", 0.0, f"Not checked: {reading.not_checked}", (), fixed)
    parts = [part for part in reading.parts if part]
    if not parts:
        reason = reading.unread_reason or "nothing of the passages could be read"
        return Decision(UNVERIFIABLE, "LOW", 0.0, _with_note(f"Not checked: {reason}", reading), (), fixed)
    best = [max(part, key=lambda r: r.supported) for part in parts]
    weakest = min(best, key=lambda r: r.supported)
    support = weakest.supported
    contradictions = [
        r
        for part in parts
        for r in part
        if r.contradicted is not None and r.contradicted >= thresholds.contradicted and r.contradicted > r.supported
    ]
    units = sum(len(part) for part in parts)
    if contradictions:
        strongest = max(contradictions, key=lambda r: r.contradicted or 0.0)
        contradicted = strongest.contradicted or 0.0
        if contradicted > support:
            evidence = (
                f"{_source(strongest.unit)} contradicts it ({model}: P(contradicted) {contradicted:.3f}, "
                f"threshold {thresholds.contradicted:.2f}; the best support P(supported) {support:.3f}, "
                f"of {_count(units, strongest.unit.kind)}): {_quoted(strongest.unit.text, _EVIDENCE_QUOTE_CHARS)}"
            )
            return Decision(
                DISPUTED, _confidence(contradicted), contradicted, _with_note(evidence, reading), (strongest,), fixed
            )
    # Unread units that may hold a contradiction: no threshold makes this claim VERIFIED.
    doubtful = bool(reading.unread) and _can_dispute(parts)
    if support >= thresholds.supported and doubtful:
        evidence = (
            f"{_source(weakest.unit)} supports it ({model}: P(supported) {support:.3f}), but "
            f"{reading.unread} {_plural(reading.unread, 'unit')} of the passages could not be read "
            f"({reading.unread_reason}) and may contradict it: {_quoted(weakest.unit.text, _EVIDENCE_QUOTE_CHARS)}"
        )
        return Decision(UNVERIFIABLE, "LOW", 1.0 - support, _with_note(evidence, reading), (weakest,), fixed)
    if support >= thresholds.supported:
        if len(best) == 1:
            evidence = (
                f"{_source(weakest.unit)} supports it ({model}: P(supported) {support:.3f}, threshold "
                f"{thresholds.supported:.2f}; the best of {_count(units, weakest.unit.kind)}): "
                f"{_quoted(weakest.unit.text, _EVIDENCE_QUOTE_CHARS)}"
            )
        else:
            each = "; ".join(
                f"{_source(r.unit)} ({r.supported:.3f}): {_quoted(r.unit.text, _EVIDENCE_QUOTE_CHARS)}" for r in best
            )
            evidence = (
                f"Each of its {len(best)} sentences is supported ({model}: the least P(supported) {support:.3f}, "
                f"threshold {thresholds.supported:.2f}; {_count(units, weakest.unit.kind)} read): {each}"
            )
        return Decision(
            VERIFIED, _confidence(support), support, _with_note(evidence, reading), tuple(best), fixed, support
        )
    strongest_reading = max(support, max((r.contradicted or 0.0 for part in parts for r in part), default=0.0))
    probability = 1.0 - strongest_reading
    what = "its least supported sentence's best" if len(best) > 1 else "the best"
    evidence = (
        f"No passage given for it supports it well enough: {what} of {_count(units, weakest.unit.kind)}, "
        f"{_source(weakest.unit)}, reads P(supported) {support:.3f}, below {model}'s threshold "
        f"{thresholds.supported:.2f}: {_quoted(weakest.unit.text, _EVIDENCE_QUOTE_CHARS)}"
    )
    if reading.unread:
        evidence += f" Not read: {reading.unread} {_plural(reading.unread, 'unit')} ({reading.unread_reason})."
    return Decision(
        UNVERIFIABLE,
        _confidence(probability),
        probability,
        _with_note(evidence, reading),
        (weakest,),
        fixed,
        None if doubtful else support,
    )


def verification_block(claim_id: str, decision: Decision, *, with_sources: bool) -> str:
    """One block of the verification format (Correction is always N/A: see the module docstring)."""
    lines = [
        f"VERIFICATION {claim_id}: {decision.verdict}",
        f"Evidence: {_one_line(decision.evidence)}",
        "Correction: N/A",
        f"Confidence: {decision.confidence}",
        threshold_line(decision),
    ]
    if with_sources:
        cited: dict[tuple[str, str], UnitReading] = {}
        for reading in decision.cited:
            cited.setdefault((reading.unit.passage_id, reading.unit.text), reading)
        sources = "; ".join(f"[{r.unit.passage_id}] {_quoted(r.unit.text)}" for r in cited.values())
        lines.append(f"Sources: {sources or 'none'}")
    return "\n".join(lines)


def threshold_line(decision: Decision) -> str:
    """The block's Threshold line: the threshold, and the P(supported) it decided on (repr: full precision)."""
    if decision.support is None:
        return f"Threshold: {decision.threshold!r} (the verdict does not rest on it)"
    return f"Threshold: {decision.threshold!r} (P(supported) {decision.support!r} read against it)"


_BLOCK_HEADER = re.compile(r"^VERIFICATION (\S+): ")
_THRESHOLD_LINE = re.compile(
    r"^Threshold: ([0-9.eE+-]+) \((?:P\(supported\) ([0-9.eE+-]+) read against it|the verdict does not rest on it)\)$"
)


def read_thresholds(text: str) -> dict[str, ThresholdReading]:
    """Each claim's Threshold line of an answer `verification_block` wrote (by claim id). Only for the text of
    a grounding model's answer, which this module wrote: any other checker's text is never read for it."""
    found: dict[str, ThresholdReading] = {}
    claim_id: str | None = None
    for line in text.splitlines():
        if header := _BLOCK_HEADER.match(line):
            claim_id = header.group(1)
        elif claim_id is not None and (match := _THRESHOLD_LINE.match(line)):
            support = float(match.group(2)) if match.group(2) is not None else None
            found.setdefault(claim_id, ThresholdReading(float(match.group(1)), support))
            claim_id = None
    return found


def with_threshold_readings(verifications: Sequence[ClaimVerification], text: str) -> list[ClaimVerification]:
    """A grounding model's verifications with the threshold and P(supported) its answer's Threshold lines give."""
    readings = read_thresholds(text)
    return [
        replace(v, support_threshold=found.threshold, support_probability=found.support)
        if (found := readings.get(v.claim_id)) is not None
        else v
        for v in verifications
    ]


def answer_text(blocks: Sequence[str], verdicts: Sequence[str]) -> str:
    """The blocks and the VERIFICATION SUMMARY, as the verification format ends."""
    summary = (
        "VERIFICATION SUMMARY:\n"
        f"Verified: {list(verdicts).count(VERIFIED)}\n"
        f"Disputed: {list(verdicts).count(DISPUTED)}\n"
        f"Unverifiable: {list(verdicts).count(UNVERIFIABLE)}"
    )
    return "\n\n".join([*blocks, summary]) + "\n"


def no_passages_reason(model: str, call_had_evidence: bool) -> str:
    """Why a claim without passages is not checked: a grounding model knows nothing of its own."""
    given = "no evidence passages were given for this claim" if call_had_evidence else "the call gave no evidence"
    return f"{given}, and {model} judges claims only against the passages it is given"


def _can_dispute(parts: list[tuple[UnitReading, ...]]) -> bool:
    """Whether the model has a contradiction class: then a unit it could not read may hold a contradiction
    that would turn a VERIFIED around (without one, an unread unit can only add support)."""
    return any(r.contradicted is not None for part in parts for r in part)


def _with_note(evidence: str, reading: ClaimReading) -> str:
    return f"{evidence} ({reading.note})" if reading.note else evidence


def _confidence(probability: float) -> str:
    if probability >= HIGH_FROM:
        return "HIGH"
    return "MEDIUM" if probability >= MEDIUM_FROM else "LOW"


def _source(unit: Unit) -> str:
    title = _one_line(unit.title)
    return f"[{unit.passage_id}] {title}" if title and title != unit.passage_id else f"[{unit.passage_id}]"


def _count(units: int, kind: str) -> str:
    return f"{units} {_plural(units, kind)}"


def _plural(count: int, noun: str) -> str:
    return noun if count == 1 else f"{noun}s"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str, limit: int | None = None) -> str:
    """`text` on one line between quotation marks the verification format reads (a quote holds no `"`
    when it is between straight ones, no `”` between curly ones): straight when it holds no `"`,
    curly when it holds no `”`, else its longest stretch that holds neither. Cut to `limit`
    characters (at a word) with an ellipsis outside the marks."""
    line = _one_line(text)
    if '"' in line and "\u201d" in line:
        pieces = [piece.strip() for piece in line.replace("\u201d", '"').split('"')]
        line = max(pieces, key=len)
    cut = ""
    if limit is not None and len(line) > limit:
        line, cut = line[:limit].rsplit(" ", 1)[0] or line[:limit], " …"
    if '"' in line:
        return f"\u201c{line}\u201d{cut}"
    return f'"{line}"{cut}'
