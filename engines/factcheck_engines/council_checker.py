"""`local/checker` in its council role: answers the council fact-check call (`CouncilCheckInputs`: every response rated, its inaccurate claims named) offline.

The inputs give the responses (label and text, as the fact-checker is shown them) and the
reference passages; response and passage text is read line by line, as the prompt quotes it.
Nothing inside a response can pass for another response, a passage or an instruction.

For each response:
1. its claims are extracted by the built-in extractor (`extractor.extract_claims`);
2. each claim is judged against the passages by the engine's judge (judges.py: the embedded
   entailment model for `local/checker`, the lexical judge for `local/checker-lexical`):
   VERIFIED, DISPUTED or UNVERIFIABLE; a claim the judge cannot settle is also checked for a
   wrong name (`_wrong_name`): a passage that states the rest of the claim (at least
   NAME_SWAP_COVERAGE of its other words) but names someone else, and not the claim's name;
3. each inaccurate claim gets an error type from what the judge saw: a conflicting figure or
   date → Numerical/Statistical Error; a wrong or missing name → Misattribution; a weaker
   quantifier in the passage ("most" for the claim's "all") → Overgeneralization; anything
   else → Other;
4. the response is rated from its verified (v), disputed (d) and unverifiable (u) claims:
   | claims | rating |
   |---|---|
   | none checkable (v = d = 0) | MIXED (nothing for, nothing against) |
   | d = 0, v >= u | ACCURATE |
   | d = 0, v < u | MOSTLY ACCURATE |
   | d / (v + d) <= 1/4 | MOSTLY ACCURATE |
   | d / (v + d) <= 1/2 | MIXED |
   | d / (v + d) < 1 | MOSTLY INACCURATE |
   | every judged claim disputed | INACCURATE |
5. MOST RELIABLE is the best rating, then fewest disputed, then most verified claims, then
   the earliest label.

The answer is an analysis per response (accurate / inaccurate / unverifiable claims, with the
passage each verdict rests on), then the INACCURATE CLAIMS block
(`Response X | Error Type | claim | correction`) and the FACT CHECK SUMMARY block, exactly as
services/checker/factcheck_checker/council_summary.py reads them. Without passages every claim is
unverifiable: this engine has no knowledge of its own. Deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from factcheck.core.council_taxonomy import (
    CLAIM_FIELD_SEPARATOR,
    CLAIMS_HEADER,
    MOST_RELIABLE_PREFIX,
    RATING_SCORES,
    SUMMARY_HEADER,
    error_type_name,
    rating_name,
)
from factcheck.models.inputs import CouncilCheckInputs
from factcheck.text.sentences import split_sentences
from factcheck.v1 import council_pb2
from factcheck_engines.extractor import extract_claims
from factcheck_engines.generator import NO_SOURCES_MESSAGE
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_FIGURE,
    CONFLICT_NAME,
    CONFLICT_QUANTIFIER,
    DISPUTED,
    NOTHING_TO_READ,
    UNVERIFIABLE,
    VERIFIED,
    PassageText,
    name_stems,
    term_stems,
)
from factcheck_engines.judges import ClaimJudge, default_judge
from factcheck_engines.reading import as_lines

NAME_SWAP_COVERAGE = 0.8

_ERROR_BY_CONFLICT = {
    CONFLICT_FIGURE: council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    CONFLICT_DATE: council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    CONFLICT_NAME: council_pb2.ERROR_TYPE_MISATTRIBUTION,
    CONFLICT_QUANTIFIER: council_pb2.ERROR_TYPE_OVERGENERALIZATION,
}


@dataclass(frozen=True)
class CouncilCheckRequest:
    """What the council call asks: the responses (label, text) and the reference passages."""

    responses: tuple[tuple[str, str], ...]
    passages: tuple[PassageText, ...]


@dataclass(frozen=True)
class ClaimFinding:
    claim: str
    verdict: str
    error_type: int  # ERROR_TYPE_UNSPECIFIED unless DISPUTED
    correction: str
    passage_id: str | None
    quote: str | None


@dataclass
class ResponseFindings:
    label: str
    findings: list[ClaimFinding] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(1 for finding in self.findings if finding.verdict == verdict)

    @property
    def rating(self) -> int:
        return rate(self.count(VERIFIED), self.count(DISPUTED), self.count(UNVERIFIABLE))


def answer(inputs: CouncilCheckInputs, judge_claim: ClaimJudge = default_judge) -> str:
    """The analysis, the INACCURATE CLAIMS block and the FACT CHECK SUMMARY for the council call."""
    request = council_check_request(inputs)
    if not request.responses:
        return "The prompt lists no responses to fact-check, so there is nothing to rate."
    results = [check_response(label, text, request.passages, judge_claim) for label, text in request.responses]
    best = min(
        results,
        key=lambda r: (-RATING_SCORES[r.rating], r.count(DISPUTED), -r.count(VERIFIED), r.label),
    )
    sections = [_analysis(result, bool(request.passages)) for result in results]
    claims = [
        CLAIM_FIELD_SEPARATOR.join(
            (result.label, error_type_name(f.error_type), _cell(f.claim), _cell(f.correction) or "not known")
        )
        for result in results
        for f in result.findings
        if f.verdict == DISPUTED
    ]
    summary = [SUMMARY_HEADER, *(f"{r.label}: {rating_name(r.rating)}" for r in results)]
    summary.append(f"{MOST_RELIABLE_PREFIX}{best.label}")
    return "\n\n".join(sections) + "\n\n" + "\n".join([CLAIMS_HEADER, *(claims or ["None"]), *summary]) + "\n"


def council_check_request(inputs: CouncilCheckInputs) -> CouncilCheckRequest:
    """The responses and passages of a council call, their text read line by line."""
    responses = tuple((response.label, as_lines(response.text)) for response in inputs.responses)
    passages = tuple(PassageText(p.id, as_lines(p.text), p.title) for p in inputs.passages)
    return CouncilCheckRequest(responses, passages)


def check_response(
    label: str, text: str, passages: tuple[PassageText, ...], judge_claim: ClaimJudge = default_judge
) -> ResponseFindings:
    """Every claim of one response, judged against the passages by `judge_claim` and classified."""
    result = ResponseFindings(label)
    if text.strip() == NO_SOURCES_MESSAGE:
        return result  # local/generator's notice that it wrote nothing: no claims
    for claim in extract_claims(text):
        result.findings.append(_finding(claim.text, passages, judge_claim))
    return result


def rate(verified: int, disputed: int, unverifiable: int) -> int:
    """The rating from the claim counts (the table in the module docstring)."""
    judged = verified + disputed
    if judged == 0:
        return council_pb2.ACCURACY_RATING_MIXED
    if disputed == 0:
        return (
            council_pb2.ACCURACY_RATING_ACCURATE
            if verified >= unverifiable
            else council_pb2.ACCURACY_RATING_MOSTLY_ACCURATE
        )
    share = disputed / judged
    if share <= 0.25:
        return council_pb2.ACCURACY_RATING_MOSTLY_ACCURATE
    if share <= 0.5:
        return council_pb2.ACCURACY_RATING_MIXED
    if share < 1:
        return council_pb2.ACCURACY_RATING_MOSTLY_INACCURATE
    return council_pb2.ACCURACY_RATING_INACCURATE


def _finding(claim: str, passages: tuple[PassageText, ...], judge_claim: ClaimJudge) -> ClaimFinding:
    judgement = judge_claim(claim, passages) if passages else NOTHING_TO_READ
    if judgement.verdict == DISPUTED:
        error_type = _ERROR_BY_CONFLICT.get(judgement.conflict or "", council_pb2.ERROR_TYPE_OTHER)
        return ClaimFinding(
            claim, DISPUTED, error_type, judgement.correction or "", judgement.passage_id, judgement.quote
        )
    if judgement.verdict == UNVERIFIABLE and (swap := _wrong_name(claim, passages)):
        passage, sentence = swap
        return ClaimFinding(
            claim,
            DISPUTED,
            council_pb2.ERROR_TYPE_MISATTRIBUTION,
            f"According to {passage.id}: {sentence}",
            passage.id,
            sentence,
        )
    return ClaimFinding(
        claim, judgement.verdict, council_pb2.ERROR_TYPE_UNSPECIFIED, "", judgement.passage_id, judgement.quote
    )


def _wrong_name(claim: str, passages: tuple[PassageText, ...]) -> tuple[PassageText, str] | None:
    """A passage that states the claim's other words but names someone else instead of one of
    the claim's names (which it never mentions): (passage, its sentence that says so), else None."""
    names = name_stems(claim)
    claim_names = set().union(*names) if names else set()
    claim_stems = set(term_stems(claim))
    predicate = claim_stems - claim_names  # what the claim says of its names ("designed")
    if not names or not predicate:
        return None
    for passage in passages:
        held = set(term_stems(f"{passage.title}\n{passage.text}"))
        missing = [name for name in names if not name & held]
        rest = claim_stems - set().union(*missing) if missing else set()
        if not missing or not rest or len(rest & held) / len(rest) < NAME_SWAP_COVERAGE:
            continue
        sentences = [" ".join(s.split()) for s in split_sentences(passage.text)]
        scored = [(len(predicate & set(term_stems(s))), len(rest & set(term_stems(s))), s) for s in sentences]
        said, _, best = max(scored, key=lambda item: item[:2], default=(0, 0, ""))
        if said and any(not name <= claim_names for name in name_stems(best)):
            return passage, best
    return None


def _analysis(result: ResponseFindings, has_passages: bool) -> str:
    lines = [f"## {result.label}"]
    for heading, verdict in (
        ("Accurate Claims", VERIFIED),
        ("Inaccurate Claims", DISPUTED),
        ("Unverifiable Claims", UNVERIFIABLE),
    ):
        found = [f for f in result.findings if f.verdict == verdict]
        lines.append(f"{heading}:")
        lines += [_finding_line(f) for f in found] or ["- none"]
    reason = (
        "local/checker compares claims with the reference passages only"
        if has_passages
        else "no reference passages were given, and local/checker has no knowledge of its own"
    )
    lines.append(f"Missing Important Information: not assessed ({reason}).")
    return "\n".join(lines)


def _finding_line(finding: ClaimFinding) -> str:
    source = f"[{finding.passage_id}]" if finding.passage_id else ""
    quote = f' "{_one_line(finding.quote)}"' if finding.quote else ""
    if finding.verdict == VERIFIED:
        return f"- {_one_line(finding.claim)} ({source} states it:{quote})"
    if finding.verdict == DISPUTED:
        return (
            f"- {_one_line(finding.claim)} ({error_type_name(finding.error_type)}: {source} says otherwise:{quote}; "
            f"correction: {_one_line(finding.correction)})"
        )
    return f"- {_one_line(finding.claim)} (no passage states or contradicts it)"


def _cell(text: str) -> str:
    """One cell of a claim line: one line, and no "|" that would split it."""
    return _one_line(text).replace("|", "/")


def _one_line(text: str) -> str:
    return " ".join(text.split())
