"""`local/reporter` and `local/title`: fact-check mode's report and a title, deterministically.

The report call's inputs (`ReportInputs`: the content, each claim's consensus and checkers'
verdicts, the model names) are written as the report's sections (docs/modes.md#fact-check-mode):
Content Summary, Overall Reliability Score with a justification, Evidence Table, Detailed Findings
by verdict, Annotated Content and Methodology.

Reliability score (`reliability_score`). Each claim earns a credit from its consensus
verdict, VERIFIED = 1, UNVERIFIABLE = 0.5 (partial: nothing was found against it, nor
for it), DISPUTED = 0, pulled toward 0.5 by checker disagreement:
`weighted = 0.5 + (credit - 0.5) * agreement`, with agreement the share (0-1) of
checkers behind the consensus. Then, with `mean_a` the mean agreement and `mean_w` the
mean weighted credit:

- every claim VERIFIED: `90 + 10 * mean_a`            (90-100, "highly reliable")
- every claim DISPUTED: `20 * (1 - mean_a)`           (0-20, "significant inaccuracies")
- any other mix:        `21 + 68 * mean_w`            (21-89, strictly between the two)

so the report's bands (every claim verified 90-100, every claim disputed 0-20) hold for every
mix by construction (tested with hypothesis), one disputed claim among many verified ones
lands in "mostly reliable" (70-89) and a text whose claims are all unverifiable gets the
neutral 55. Scores round half up.

Notes every report carries when they apply: 1-2 claims → "Limited number of verifiable
claims."; a claim on which the checkers split evenly is called out with the tie rule that
decided it; few claims for many sentences → "Limited verifiable factual content ...".

The council chairman's synthesis call is answered by `synthesis` (the best response, corrected).

Titles (`title`): "Fact-check: <key phrase>" from the question, or from the content's
first sentence when there is no question; at most 8 words and 80 characters, with no
quotes or markdown.

Limits: the summary is extractive (size and salient words), not an abstract; claims
are annotated where their text (or its tail, for claims that repeat a subject) occurs
in the content, and a claim found nowhere gets no marker.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace
from typing import Iterable, Sequence

from factcheck.core.fallback_report import NO_CLAIMS_REPORT, markdown_cell
from factcheck.core.title_subject import title_question
from factcheck.engines import synthesis
from factcheck.engines.reading import one_line
from factcheck.models.inputs import ReportEntry, ReportInputs, SynthesisInputs, TitleInputs, unanswerable
from factcheck.text.sentences import STOPWORDS, split_sentences
from factcheck.text.shorten import ELLIPSIS, shorten
from factcheck.text.wording import counted

__all__ = ["annotate", "answer", "reliability_score", "score_band", "title", "write_report"]

TITLE_MAX_CHARS = 80
TITLE_MAX_WORDS = 8
_MIN_PHRASE_WORDS = 4
FEW_CLAIMS_NOTE = "Limited number of verifiable claims."
FEW_FACTS_NOTE = "Limited verifiable factual content. This content is primarily opinion or analysis."
EVIDENCE_MAX_CHARS = 300

_CREDIT = {"VERIFIED": 1.0, "UNVERIFIABLE": 0.5, "DISPUTED": 0.0}
_BANDS = (
    (90, "Highly reliable"),
    (70, "Mostly reliable with minor issues"),
    (50, "Mixed accuracy"),
    (30, "Significant inaccuracies"),
    (0, "Unreliable"),
)
_FINDING_HEADINGS = (
    ("VERIFIED", "Verified Claims"),
    ("DISPUTED", "Disputed Claims"),
    ("UNVERIFIABLE", "Unverifiable Claims"),
)


def answer(inputs: object) -> str:
    """A title for the title call, the chairman's answer for the council synthesis call, the report
    for the report call."""
    if isinstance(inputs, TitleInputs):
        return title(inputs.question.strip(), inputs.content.strip())
    if isinstance(inputs, SynthesisInputs):
        return synthesis.answer(inputs)
    if isinstance(inputs, ReportInputs):
        return write_report(inputs)
    raise unanswerable(inputs, "local/reporter", (ReportInputs, TitleInputs, SynthesisInputs))


# --- score --------------------------------------------------------------------------


def reliability_score(results: Iterable[tuple[str, float]]) -> int | None:
    """Score 0-100 from (consensus verdict, agreement percent) pairs; None with no claims."""
    pairs = [(verdict, min(max(agreement, 0.0), 100.0) / 100) for verdict, agreement in results]
    if not pairs:
        return None
    verdicts = {verdict for verdict, _ in pairs}
    mean_agreement = sum(a for _, a in pairs) / len(pairs)
    if verdicts == {"VERIFIED"}:
        return _round(90 + 10 * mean_agreement)
    if verdicts == {"DISPUTED"}:
        return _round(20 * (1 - mean_agreement))
    mean_weighted = sum(0.5 + (_CREDIT[v] - 0.5) * a for v, a in pairs) / len(pairs)
    return _round(21 + 68 * mean_weighted)


def score_band(score: int) -> str:
    """The label of a score in the reporter prompt's scoring guide."""
    return next(label for floor, label in _BANDS if score >= floor)


def _round(value: float) -> int:
    return math.floor(value + 0.5)


# --- report -------------------------------------------------------------------------


def write_report(request: ReportInputs) -> str:
    """The report's sections (docs/modes.md#fact-check-mode) for the consensus in `request`."""
    request = _as_written(request)
    entries = request.entries
    score = reliability_score((e.verdict, e.agreement) for e in entries)
    findings = (_findings(entries, verdict, heading) for verdict, heading in _FINDING_HEADINGS)
    sections = [
        "# Fact-Check Report",
        "## Content Summary\n" + _summary(request),
        f"## Overall Reliability Score: {score if score is not None else 'N/A'}\n" + _justification(request, score),
        "## Evidence Table\n\n" + _evidence_table(entries),
        "## Detailed Findings\n\n" + "\n\n".join(findings),
        "## Annotated Content\n" + (annotate(request.content, entries) or "(no content)"),
        "## Methodology\n" + _methodology(request),
    ]
    return "\n\n".join(sections) + "\n"


_VERDICTS = frozenset(verdict for verdict, _ in _FINDING_HEADINGS)
_CONFIDENCES = frozenset({"HIGH", "MEDIUM", "LOW"})


def _as_written(request: ReportInputs) -> ReportInputs:
    """The inputs as the report writes them: a claim, its correction and its sources on one line, and
    only the checker verdicts it can group (a known verdict and confidence)."""
    entries = tuple(
        replace(
            entry,
            claim=one_line(entry.claim),
            correction=one_line(entry.correction) if entry.correction else None,
            sources=one_line(entry.sources) if entry.sources else None,
            verdicts=tuple(v for v in entry.verdicts if v.verdict in _VERDICTS and v.confidence in _CONFIDENCES),
        )
        for entry in request.entries
    )
    return replace(request, entries=entries)


def _summary(request: ReportInputs) -> str:
    sentences = split_sentences(request.content)
    words = len(request.content.split())
    terms = _salient_terms(request.content)
    about = f" about {', '.join(terms)}" if terms else ""
    checkers = max((request.checker_count or len(e.verdicts) for e in request.entries), default=0)
    return (
        f"A {len(sentences)}-sentence text ({words} words){about} was fact-checked. "
        f"{counted(len(request.entries), 'claim')} {'was' if len(request.entries) == 1 else 'were'} extracted "
        f"and assessed by {counted(checkers, 'independent checker')}."
    )


def _salient_terms(content: str, limit: int = 4) -> list[str]:
    """The most frequent non-stopwords (names count double), in their first spelling."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,}", content)
    counts: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    for word in words:
        key = word.lower()
        if key in STOPWORDS:
            continue
        spelling.setdefault(key, word)
        counts[key] += 2 if word[0].isupper() else 1
    ranked = sorted(counts, key=lambda key: -counts[key])  # stable: ties keep first appearance
    return [spelling[key] for key in ranked[:limit]]


def _justification(request: ReportInputs, score: int | None) -> str:
    entries = request.entries
    if score is None:
        return NO_CLAIMS_REPORT
    counts = Counter(e.verdict for e in entries)
    mean_agreement = _round(sum(e.agreement for e in entries) / len(entries))
    lines = [
        f"{score_band(score)}: {counts['VERIFIED']} of {len(entries)} claims verified, "
        f"{counts['DISPUTED']} disputed and {counts['UNVERIFIABLE']} unverifiable, "
        f"with {mean_agreement}% average checker agreement."
    ]
    if counts["VERIFIED"] == len(entries):
        lines.append("The checked claims show high factual accuracy.")
    elif counts["DISPUTED"] == len(entries):
        lines.append("Warning: every checked claim was disputed; the content has significant inaccuracies.")
    elif counts["UNVERIFIABLE"] == len(entries):
        lines.append("No claim could be confirmed or refuted with the available evidence, so the score is neutral.")
    if len(entries) <= 2:
        lines.append(f"{FEW_CLAIMS_NOTE} The small sample means the score may not be representative.")
    if _mostly_opinion(request.content, len(entries)):
        lines.append(FEW_FACTS_NOTE)
    lines.extend(_split_note(e) for e in entries if _is_even_split(e))
    return "\n".join(lines)


def _mostly_opinion(content: str, claim_count: int) -> bool:
    sentences = len(split_sentences(content))
    return sentences >= 4 and claim_count * 3 < sentences


def _is_even_split(entry: ReportEntry) -> bool:
    tally = Counter(v.verdict for v in entry.verdicts).most_common()
    return len(tally) > 1 and tally[0][1] == tally[1][1]


def _split_note(entry: ReportEntry) -> str:
    tally = Counter(v.verdict for v in entry.verdicts)
    split = ", ".join(f"{tally[verdict]} {verdict}" for verdict, _ in _FINDING_HEADINGS if tally[verdict])
    return (
        f"Checkers split evenly on {entry.claim_id} ({split}); it is reported as {entry.verdict} "
        "under the conservative tie rule, with low confidence."
    )


def _evidence_table(entries: Sequence[ReportEntry]) -> str:
    """The Evidence Table (claim, type, verdict, agreement, correction); with a Sources column naming the cited
    sources when the run had evidence."""
    with_sources = any(e.sources for e in entries)
    rows = [
        "| # | Claim | Type | Verdict | Agreement | Correction |" + (" Sources |" if with_sources else ""),
        "|---|-------|------|---------|:---------:|-----------|" + ("---------|" if with_sources else ""),
    ]
    for e in entries:
        cells = [e.claim_id, e.claim, e.type, e.verdict, f"{e.agreement}%", e.correction or "\u2014"]
        if with_sources:
            cells.append(e.sources or "\u2014")
        rows.append("| " + " | ".join(markdown_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def _findings(entries: Sequence[ReportEntry], verdict: str, heading: str) -> str:
    group = [e for e in entries if e.verdict == verdict]
    lines = [f"### {heading} ({len(group)})"]
    if not group:
        lines.append("None.")
    for entry in group:
        lines.append(f"- **{entry.claim_id}**: {entry.claim}")
        if verdict == "DISPUTED" and entry.correction:
            lines.append(f"  - Correction: {entry.correction}")
        lines.extend(_evidence_lines(entry))
    return "\n".join(lines)


def _evidence_lines(entry: ReportEntry) -> list[str]:
    """The evidence of the checkers behind the consensus (all checkers if none matches)."""
    backing = [v for v in entry.verdicts if v.verdict == entry.verdict] or list(entry.verdicts)
    if not backing:
        return ["  - No checker evidence was recorded for this claim."]
    return [
        f"  - {v.model} ({v.confidence}): {shorten(v.evidence, EVIDENCE_MAX_CHARS) or 'no evidence given'}"
        for v in backing
    ]


def _methodology(request: ReportInputs) -> str:
    return "\n".join(
        [
            f"- Claims extracted by: {request.extractor_model or 'unknown'}",
            f"- Independent checkers: {request.checker_models or 'unknown'}",
            "- Consensus method: Majority verdict (ties broken conservatively toward DISPUTED)",
            f"- Report generated by: {request.reporter_model or 'unknown'}",
            "- Reliability score: verified = 1, unverifiable = 0.5, disputed = 0 per claim, pulled toward 0.5 by "
            "checker disagreement; all verified maps to 90-100, all disputed to 0-20, any mix to 21-89.",
        ]
    )


# --- annotation ---------------------------------------------------------------------


def annotate(content: str, entries: Sequence[ReportEntry]) -> str:
    """The content with "[VERDICT]" after each claim's text where it is found."""
    insertions: list[tuple[int, int, str]] = []
    cursor = 0
    for order, entry in enumerate(entries):
        span = _claim_span(content, entry.claim, cursor)
        if span is not None:
            insertions.append((span[1], order, f" [{entry.verdict}]"))
            cursor = span[0]
    annotated = content
    for position, _, marker in sorted(insertions, reverse=True):
        annotated = annotated[:position] + marker + annotated[position:]
    return annotated.strip()


def _claim_span(content: str, claim: str, cursor: int) -> tuple[int, int] | None:
    """Where the claim's words occur (any case and spacing), preferring after `cursor`.

    A claim that repeats a subject ("He served ...") is not verbatim in the content, so
    its leading words are dropped one at a time while at least three remain.
    """
    words = claim.rstrip(". ").split()
    if not words:
        return None
    for skip in range(0, max(len(words) - 2, 1)):
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words[skip:]), re.IGNORECASE)
        match = pattern.search(content, cursor) or pattern.search(content)
        if match:
            return match.span()
    return None


# --- title --------------------------------------------------------------------------

_INTERROGATIVE = re.compile(
    r"^(?:(?:what|who|whom|when|where|which|why|how)(?:\s+(?:is|are|was|were|did|does|do|has|have|had|many|much|"
    r"long|old|big|far))?|is it true that|is it true|tell me about|explain|describe|is|are|was|were|did|does|do|"
    r"can|could)\s+",
    re.IGNORECASE,
)
# "Fact-check the Eiffel Tower's height": the title says "Fact-check: " already.
_INSTRUCTION_VERB = re.compile(r"^(?:please\s+)?(?:fact[\s-]*check|verify|check)\s+", re.IGNORECASE)
_TITLE_NOISE = re.compile(r"[\"`*_#\[\]{}<>|\u201c\u201d\u2018\u00ab\u00bb]|(?<![A-Za-z])'|'(?![A-Za-z])")


def title(question: str, content: str) -> str:
    """ "Fact-check: <key phrase>" (<= 8 words, <= 80 chars), from the question or the content."""
    source = title_question(question).strip() or next(iter(split_sentences(content)), "")
    phrase = _key_phrase(source)
    return f"Fact-check: {phrase}" if phrase else "Fact-check"


def _key_phrase(text: str) -> str:
    text = " ".join(_TITLE_NOISE.sub(" ", text).split())
    text = _INTERROGATIVE.sub("", _INSTRUCTION_VERB.sub("", text)).rstrip("?!.:;, ")
    words = text.split()
    if words and words[0].lower() in {"the", "a", "an"}:
        words = words[1:]
    kept = words[: TITLE_MAX_WORDS - 1]
    cut = len(kept) < len(words)
    if cut:
        kept = _to_phrase_end(kept)
    while kept and kept[-1].lower().strip(",;:") in STOPWORDS:
        kept.pop()
    phrase = " ".join(kept).rstrip(",;:-")
    budget = TITLE_MAX_CHARS - len("Fact-check: ")
    if cut and phrase and len(phrase) < budget:
        return phrase + ELLIPSIS  # the words left out are marked, as a cut by length is
    return shorten(phrase, budget)


def _to_phrase_end(words: list[str]) -> list[str]:
    """The words up to the last end of a phrase among them (a comma, or before "and"/"or"), if that keeps at
    least four: a title cut from a list ends with whole items ("the Eiffel Tower…", not "…, the Paris")."""
    for end in range(len(words), _MIN_PHRASE_WORDS - 1, -1):
        if words[end - 1].endswith((",", ";")) or (end < len(words) and words[end].lower() in {"and", "or"}):
            return words[:end]
    return words
