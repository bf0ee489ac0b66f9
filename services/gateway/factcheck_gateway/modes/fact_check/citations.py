"""Claim-level citations: an option of fact-check mode (FactCheckConfig.citations).

steps.py and verification.py call in at a few points, and each call does nothing unless the run asked for citations:
- extraction asks for each claim's profile (confidence level, numeric detail), stored in the
  extract row as "claimProfiles";
- verification asks every checker for the four-tier Support line (services/checker/factcheck_checker/support.py),
  stored in each verify row as "supports";
- after all_checkers_complete (`after_verify`): per claim the four-tier consensus
  (services/gateway/factcheck_gateway/claims/tiers.py), its spans and citations → `claim_verified`; the citation
  review (CheckerService.ReviewCitations: corrections and numeric QA questions); per numeric claim
  the QA comparison (factcheck/core/numeric_qa.py) → `numeric_claim_detected`; per correction other
  than keep → `citation_corrected`; then `verification_summary`, with the "citations" stage row
  (the whole CitationsResult, read back by GetResult);
- the report row gains "verificationSummary".
Every event is stored with the rows it reports (claims/writes.py), in the run's fenced commits.
The gateway calls no model: the review runs in the checker service.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict, ParseDict

from factcheck.core.audit import counted_as
from factcheck.core.domain import AuditFlag, ExtractedClaim, claim_type_to_proto, verdict_to_proto
from factcheck.core.numeric_qa import question_for, verify_answers
from factcheck.text.numbers import find_quantities
from factcheck.text.spans import locate
from factcheck.text.text_safety import clean_text, excerpt
from factcheck.v1 import checker_pb2, citations_pb2, common_pb2, extractor_pb2, factcheck_pb2
from factcheck_gateway.claims.tiers import CONTRADICTED, PARTIAL, SUPPORTED, UNSUPPORTED, Vote, decide_tier
from factcheck_gateway.claims.writes import RowWrites, stable_id
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.runs.run import rpc_error_text, rpc_failure, stored_data
from factcheck_gateway.store.records import StageRow

log = logging.getLogger("factcheck.gateway.citations")

STAGE_CITATIONS = ("citations", 96)
ROLE_CITATIONS = "citation_reviewer"
# A run's summary warns when more than 20% of claims are unsupported or more than 5% contradicted.
UNSUPPORTED_WARNING_RATE = 0.20
CONTRADICTED_WARNING_RATE = 0.05
PREVIEW_CHARS = 200
MAX_REASONING_CHARS = 1000

TIER_NAMES = {
    citations_pb2.SUPPORT_TIER_SUPPORTED: SUPPORTED,
    citations_pb2.SUPPORT_TIER_PARTIAL: PARTIAL,
    citations_pb2.SUPPORT_TIER_UNSUPPORTED: UNSUPPORTED,
    citations_pb2.SUPPORT_TIER_CONTRADICTED: CONTRADICTED,
}
TIER_PROTOS = {name: value for value, name in TIER_NAMES.items()}
LEVEL_NAMES = {
    citations_pb2.CONFIDENCE_LEVEL_HIGH: "high",
    citations_pb2.CONFIDENCE_LEVEL_MEDIUM: "medium",
    citations_pb2.CONFIDENCE_LEVEL_LOW: "low",
}
CORRECTION_NAMES = {
    citations_pb2.CORRECTION_TYPE_KEEP: "keep",
    citations_pb2.CORRECTION_TYPE_REPLACE: "replace",
    citations_pb2.CORRECTION_TYPE_REMOVE: "remove",
    citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE: "add_alternate",
}


@dataclass
class CitationState:
    """What the option keeps on the run between its hooks."""

    profiles: dict[str, citations_pb2.ClaimProfile] = field(default_factory=dict)
    records: list[citations_pb2.ClaimRecord] = field(default_factory=list)
    summary: citations_pb2.VerificationSummary | None = None


def enabled(run: FactCheckRun) -> bool:
    return bool(getattr(run.plan, "citations", False))


def _state(run: FactCheckRun) -> CitationState:
    if run.citation_state is None:
        run.citation_state = CitationState()
    return run.citation_state


# --- extraction ----------------------------------------------------------------------------------------


def extract_request(run: FactCheckRun, request: extractor_pb2.ExtractRequest) -> extractor_pb2.ExtractRequest:
    if enabled(run):
        request.profiles = True
    return request


def extracted(run: FactCheckRun, response: extractor_pb2.ExtractResponse, parsed: dict[str, Any]) -> None:
    """The extraction's profiles, kept on the run and stored in the extract row."""
    if not enabled(run):
        return
    _state(run).profiles = {p.claim_id: p for p in response.profiles}
    parsed["claimProfiles"] = [MessageToDict(p) for p in response.profiles]


def extract_resumed(run: FactCheckRun, data: dict[str, Any]) -> None:
    if enabled(run):
        profiles = [ParseDict(p, citations_pb2.ClaimProfile()) for p in data.get("claimProfiles", [])]
        _state(run).profiles = {p.claim_id: p for p in profiles}


# --- verification --------------------------------------------------------------------------------------


def verify_request(run: FactCheckRun, request: checker_pb2.VerifyRequest) -> None:
    if enabled(run) and run.evidence is not None:
        request.support_tiers = True
        request.profiles.extend(_state(run).profiles.values())


def verify_data(run: FactCheckRun, data: dict[str, Any], response: checker_pb2.VerifyResponse) -> None:
    """The verify row keeps the checker's tiers, so a resumed run and GetResult see them."""
    if enabled(run) and response.supports:
        data["supports"] = [MessageToDict(s) for s in response.supports]


def stored_supports(data: dict[str, Any], response: checker_pb2.VerifyResponse) -> None:
    response.supports.extend(ParseDict(s, citations_pb2.ClaimSupport()) for s in data.get("supports", []))


# --- after all_checkers_complete -----------------------------------------------------------------------


@dataclass
class _Span:
    id: str
    passage_id: str
    proto: citations_pb2.EvidenceSpan

    def row(self, message_id: str) -> dict[str, Any]:
        span = self.proto
        return {
            "id": span.id,
            "message_id": message_id,
            "source_id": span.source_id,
            "source_title": span.source_title,
            "source_url": span.source_url,
            "quote_text": span.quote_text,
            "start_offset": span.start_offset,
            "end_offset": span.end_offset,
            "section_heading": span.section_heading or None,
            "relevance_score": span.relevance_score,
            "has_numeric_content": span.has_numeric_content,
        }


async def after_verify(run: FactCheckRun) -> None:
    """Everything the option adds after all_checkers_complete (see the module docstring)."""
    if not enabled(run):
        return
    state = _state(run)
    if (stored := run.stored.get(STAGE_CITATIONS[0])) is not None:
        result = ParseDict(stored_data(stored).get("result", {}), citations_pb2.CitationsResult())
        state.records, state.summary = list(result.claims), result.summary
        return
    passages = {p.id: p for p in run.evidence.passages} if run.evidence is not None else {}
    pool = _Pool(run.message_id, passages)
    succeeded = sorted((o for o in run.checkers if o.response is not None), key=lambda o: o.index)
    for index, (claim, consensus) in enumerate(zip(run.claims, run.consensus)):
        record, spans, links = _claim_record(run, claim, consensus, succeeded, pool)
        state.records.append(record)
        writes = RowWrites(
            spans=[s.row(run.message_id) for s in spans],
            claims=[_claim_row(run, record)],
            citations=[
                {
                    "id": stable_id(record.id, s.id),
                    "claim_id": record.id,
                    "evidence_span_id": s.id,
                    "confidence_score": score,
                    "is_primary": primary,
                }
                for s, score, primary in links
            ],
        )
        await run.emit("claim_verified", _verified_payload(record), rows=(writes,))

    review = await _review(run, state, pool)
    corrections = _apply_review(run, state, review, pool)
    for record in state.records:
        if record.HasField("numeric_detail"):
            await run.emit(
                "numeric_claim_detected", _numeric_payload(record), rows=(RowWrites(numeric=[_numeric_row(record)]),)
            )
    for index, (correction, writes, abstained) in enumerate(corrections):
        payload = citations_pb2.CitationCorrectedPayload(
            claim_id=correction.claim_id,
            correction_type=correction.correction_type,
            reasoning=correction.reasoning,
            index=index,
            claim_abstained=abstained,
        )
        if correction.HasField("original_evidence"):
            payload.original_evidence.CopyFrom(correction.original_evidence)
        if correction.HasField("corrected_evidence"):
            payload.corrected_evidence.CopyFrom(correction.corrected_evidence)
        await run.emit("citation_corrected", payload, rows=(writes,))

    state.summary = summarise(state.records)
    result = citations_pb2.CitationsResult(claims=state.records, summary=state.summary)
    await run.emit(
        "verification_summary",
        citations_pb2.VerificationSummaryPayload(summary=state.summary),
        stage=StageRow(
            STAGE_CITATIONS[0],
            STAGE_CITATIONS[1],
            review.model if review is not None else None,
            ROLE_CITATIONS,
            review.raw_text if review is not None else "",
            {
                "result": MessageToDict(result),
                "summary": summary_json(state.summary),
                "reviewDropped": review.dropped if review is not None else 0,
            },
            review.response_time_ms if review is not None else 0,
        ),
        rows=(RowWrites(summary={"message_id": run.message_id, **_summary_row(state.summary)}),),
    )


class _Pool:
    """The run's evidence passages, and the spans cut from them (offsets in the source's text)."""

    def __init__(self, message_id: str, passages: dict[str, common_pb2.Passage]) -> None:
        self.message_id = message_id
        self.passages = passages
        self.top_score = max((p.score for p in passages.values()), default=0.0)

    def span(self, passage_id: str, quote: str, start: int | None = None, end: int | None = None) -> _Span | None:
        """A span of passage `passage_id`: the quote's (located in the passage when no offsets are given)."""
        passage = self.passages.get(passage_id)
        if passage is None:
            return None
        if start is None or end is None:
            found = locate(passage.text, quote) if quote else (0, len(passage.text))
            if found is None:
                return None  # never store a quote that is not in its source
            start, end = passage.start_offset + found[0], passage.start_offset + found[1]
        text = passage.text[start - passage.start_offset : end - passage.start_offset]
        span_id = stable_id(self.message_id, passage.source_id, start, end)
        relevance = passage.score / self.top_score if self.top_score > 0 else 0.0
        proto = citations_pb2.EvidenceSpan(
            id=span_id,
            source_id=passage.source_id,
            source_title=passage.source_title,
            source_url=passage.source_url,
            quote_text=text,
            start_offset=start,
            end_offset=end,
            relevance_score=min(max(relevance, 0.0), 1.0),
            has_numeric_content=bool(find_quantities(text)),
            # A passage never crosses a heading, so its section is the quote's; the column holds 500 characters.
            section_heading=passage.section_title[:500],
        )
        return _Span(span_id, passage_id, proto)


def _claim_record(run, claim: ExtractedClaim, consensus, succeeded, pool: _Pool):
    profile = _state(run).profiles.get(claim.id)
    level = profile.confidence_level if profile is not None else citations_pb2.CONFIDENCE_LEVEL_MEDIUM
    votes, cited_by, flags = [], {}, []
    for outcome in succeeded:
        support = next((s for s in outcome.response.supports if s.claim_id == claim.id), None)
        tier = TIER_NAMES.get(support.tier) if support is not None and not support.abstained else None
        verification = next((v for v in outcome.verifications() if v.claim_id == claim.id), None)
        if verification is not None:
            flags += verification.audit_flags
            if tier in (SUPPORTED, PARTIAL) and counted_as(verification).verdict != verification.verdict:
                tier = UNSUPPORTED  # a VERIFIED the audit flagged: its support rests on nothing the passages say
        votes.append(Vote(outcome.index, tier))
        cited_by[outcome.index] = (tier, verification)
    has_evidence = bool(run.evidence is not None and run.evidence.claim_passages.get(claim.id))
    decision = decide_tier(votes, has_evidence=has_evidence, low_confidence=level == citations_pb2.CONFIDENCE_LEVEL_LOW)
    # Citations of the checkers that voted the claim's tier (all checkers' when it abstained).
    voters = [i for i, (tier, _) in cited_by.items() if decision.abstained or tier == decision.tier]
    counts: Counter[str] = Counter()
    spans: dict[str, _Span] = {}
    for i in voters:
        verification = cited_by[i][1]
        for citation in verification.citations if verification is not None else ():
            span = pool.span(citation.passage_id, citation.quote, citation.start, citation.end)
            if span is not None and span.proto.quote_text:
                spans.setdefault(span.id, span)
                counts[span.id] += 1
    ordered = sorted(spans, key=lambda sid: (-counts[sid], -spans[sid].proto.relevance_score, sid))
    links = [(spans[sid], min(counts[sid] / max(len(succeeded), 1), 1.0), n == 0) for n, sid in enumerate(ordered)]
    reasoning = _reasoning(decision, cited_by, voters)
    record = citations_pb2.ClaimRecord(
        id=stable_id(run.message_id, "claim", claim.id),
        message_id=run.message_id,
        claim_key=claim.id,
        claim_text=claim.claim,
        claim_type=profile.claim_type if profile is not None else citations_pb2.CITATION_CLAIM_TYPE_GENERAL,
        confidence_level=level,
        support=TIER_PROTOS.get(decision.tier or "", citations_pb2.SUPPORT_TIER_UNSPECIFIED),  # None: abstained
        spec_verdict=verdict_to_proto(consensus.consensus_verdict),
        verification_reasoning=reasoning,
        abstained=decision.abstained,
        spec_type=claim_type_to_proto(claim.type),
        audit_flags=[flag.to_proto() for flag in flags],
        citations=[
            citations_pb2.CitationLink(evidence_span=span.proto, confidence_score=score, is_primary=primary)
            for span, score, primary in links
        ],
    )
    if claim.start is not None and claim.end is not None:
        record.position_start, record.position_end = claim.start, claim.end
    if profile is not None and profile.HasField("numeric"):
        record.numeric_detail.CopyFrom(profile.numeric)
    return record, list(spans.values()), links


def _reasoning(decision, cited_by, voters) -> str:
    texts = [cited_by[i][1].evidence for i in voters if cited_by[i][1] is not None and cited_by[i][1].evidence]
    head = f"{'Abstained' if decision.abstained else decision.tier.capitalize()}: {decision.rule}."
    return clean_text(f"{head} {texts[0]}" if texts else head)[:MAX_REASONING_CHARS]


def _claim_row(run, record: citations_pb2.ClaimRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "message_id": run.message_id,
        "tenant_id": run.tenant_id,
        "claim_key": record.claim_key,
        "claim_text": record.claim_text,
        "claim_type": "numeric" if record.claim_type == citations_pb2.CITATION_CLAIM_TYPE_NUMERIC else "general",
        "spec_type": common_pb2.ClaimType.Name(record.spec_type).removeprefix("CLAIM_TYPE_"),
        "confidence_level": LEVEL_NAMES.get(record.confidence_level),
        "position_start": record.position_start if record.HasField("position_start") else None,
        "position_end": record.position_end if record.HasField("position_end") else None,
        "verification_verdict": TIER_NAMES.get(record.support),
        "spec_verdict": common_pb2.Verdict.Name(record.spec_verdict).removeprefix("VERDICT_"),
        "verification_reasoning": record.verification_reasoning,
        "abstained": record.abstained,
        "audit_flags": [AuditFlag.from_proto(flag).to_json() for flag in record.audit_flags] or None,
    }


def _verified_payload(record: citations_pb2.ClaimRecord) -> citations_pb2.ClaimVerifiedPayload:
    primary = next((c for c in record.citations if c.is_primary), None)
    payload = citations_pb2.ClaimVerifiedPayload(
        claim_id=record.id,
        claim_key=record.claim_key,
        claim_text=record.claim_text,
        verdict=record.support,
        confidence_level=record.confidence_level,
        evidence_preview=excerpt(primary.evidence_span.quote_text, PREVIEW_CHARS) if primary else "",
        reasoning=record.verification_reasoning,
        abstained=record.abstained,
        spec_verdict=record.spec_verdict,
    )
    if record.HasField("position_start"):
        payload.position_start, payload.position_end = record.position_start, record.position_end
    return payload


# --- the review: corrections and numeric QA --------------------------------------------------------------


async def _review(run, state: CitationState, pool: _Pool) -> citations_pb2.ReviewCitationsResponse | None:
    """The checker service's review; None when there is nothing to review or the call failed (degraded)."""
    if not pool.passages or not state.records:
        return None
    model = run.plan.citation_review_model
    request = citations_pb2.ReviewCitationsRequest(
        model=model,
        pool=[
            citations_pb2.PoolSpan(id=p.id, source_id=p.source_id, source_title=p.source_title, text=p.text)
            for p in pool.passages.values()
        ],
    )
    for record, claim in zip(state.records, run.claims):
        item = citations_pb2.ReviewClaim(
            claim=claim.to_proto(),
            confidence_level=record.confidence_level,
            support=record.support,
            cited_span_ids=list(dict.fromkeys(_passage_of(pool, c.evidence_span) for c in record.citations)),
        )
        if record.HasField("numeric_detail"):
            item.numeric.CopyFrom(record.numeric_detail)
        request.claims.append(item)
    try:
        return await run.downstream.checker.ReviewCitations(request, timeout=run.stage_timeout_s)
    except grpc.aio.AioRpcError as error:
        log.warning(
            "%s: citation review failed (%s); citations stay as verified", run.message_id, rpc_error_text(error)
        )
        run.failures.append(rpc_failure(STAGE_CITATIONS[0], model, error))
        return None


def _passage_of(pool: _Pool, span: citations_pb2.EvidenceSpan) -> str:
    """The pool passage a span was cut from (the first passage of its source that contains it)."""
    for passage in pool.passages.values():
        if (
            passage.source_id == span.source_id
            and passage.start_offset <= span.start_offset
            and span.end_offset <= passage.end_offset
        ):
            return passage.id
    return ""


def _apply_review(
    run, state: CitationState, review, pool: _Pool
) -> list[tuple[citations_pb2.CitationCorrection, RowWrites, bool]]:
    """QA results onto the numeric records, and the corrections other than keep onto the records'
    citations; returns each correction with the rows that store it."""
    by_key = {record.claim_key: record for record in state.records}
    questions = {q.claim_id: q for q in review.questions} if review is not None else {}
    for numeric in state.records:
        if numeric.HasField("numeric_detail"):
            _verify_numeric(numeric, questions.get(numeric.claim_key))
    found = []
    for item in review.corrections if review is not None else ():
        record = by_key.get(item.claim_id)
        if record is None or item.correction_type == citations_pb2.CORRECTION_TYPE_KEEP:
            continue
        applied = _correct(run, record, item, pool)
        if applied is not None:
            found.append(applied)
    return found


def _verify_numeric(record: citations_pb2.ClaimRecord, question: citations_pb2.ReviewedQuestion | None) -> None:
    """QA verification of a numeric claim: the claim's answer (as the claim words it) against the span's, normalised."""
    detail = record.numeric_detail
    raw = detail.number.raw_value
    if not detail.number.HasField("value"):
        return  # a derivation without a stated figure ("sales doubled"): nothing to compare
    claim_answer = raw
    if question is not None and question.claim_answer and locate(record.claim_text, question.claim_answer):
        claim_answer = question.claim_answer  # the model's reading, when it is the claim's own words
    asked = (
        question.question if question is not None and question.question else question_for(detail.entity_reference, None)
    )
    evidence = question.evidence_answer if question is not None else ""
    result = verify_answers(asked, claim_answer, evidence)
    del detail.qa_verification[:]
    detail.qa_verification.append(
        citations_pb2.QAVerification(
            question=result.question,
            claim_answer=result.claim_answer,
            evidence_answer=result.evidence_answer,
            match=result.match,
            claim_normalised=_number(result.claim_normalised),
            evidence_normalised=_number(result.evidence_normalised),
            tolerance=result.tolerance,
            explanation=result.explanation,
        )
    )


def _number(figure) -> citations_pb2.NormalisedNumber | None:
    if figure is None:
        return None
    number = citations_pb2.NormalisedNumber(raw_value=figure.raw, value=figure.value, unit=figure.unit)
    if not math.isinf(figure.low):
        number.low = figure.low
    if not math.isinf(figure.high):
        number.high = figure.high
    number.assumptions.update(figure.assumptions)
    return number


def _correct(run, record: citations_pb2.ClaimRecord, item: citations_pb2.ReviewedCorrection, pool: _Pool):
    kind = item.correction_type
    original = next(
        (c for c in record.citations if _passage_of(pool, c.evidence_span) == item.original_span_id and c.is_primary),
        None,
    ) or next((c for c in record.citations if _passage_of(pool, c.evidence_span) == item.original_span_id), None)
    corrected = pool.span(item.corrected_span_id, item.corrected_quote) if item.corrected_span_id else None
    if (
        kind in (citations_pb2.CORRECTION_TYPE_REPLACE, citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE)
        and corrected is None
    ):
        return None
    if kind == citations_pb2.CORRECTION_TYPE_REMOVE and original is None:
        return None
    index = len([c for c in record.corrections])
    correction = citations_pb2.CitationCorrection(
        id=stable_id(record.id, "correction", index),
        claim_id=record.id,
        correction_type=kind,
        reasoning=clean_text(item.reasoning)[:MAX_REASONING_CHARS],
    )
    writes = RowWrites()
    if original is not None:
        correction.original_evidence.CopyFrom(original.evidence_span)
    if corrected is not None:
        correction.corrected_evidence.CopyFrom(corrected.proto)
        writes.spans.append(corrected.row(run.message_id))
    kept = list(record.citations)
    if kind in (citations_pb2.CORRECTION_TYPE_REPLACE, citations_pb2.CORRECTION_TYPE_REMOVE) and original is not None:
        kept = [c for c in kept if c.evidence_span.id != original.evidence_span.id]
        writes.deleted_citations.append((record.id, original.evidence_span.id))
    if corrected is not None:
        primary = kind == citations_pb2.CORRECTION_TYPE_REPLACE
        kept = [c for c in kept if c.evidence_span.id != corrected.id]
        writes.deleted_citations.append((record.id, corrected.id))
        if primary:
            kept = [_demoted(c) for c in kept]
        link = citations_pb2.CitationLink(evidence_span=corrected.proto, confidence_score=1.0, is_primary=primary)
        kept = [link, *kept] if primary else [*kept, link]
        writes.citations.append(
            {
                "id": stable_id(record.id, corrected.id),
                "claim_id": record.id,
                "evidence_span_id": corrected.id,
                "confidence_score": 1.0,
                "is_primary": primary,
            }
        )
    if kept and not any(c.is_primary for c in kept):
        kept[0].is_primary = True  # the best remaining citation becomes the primary one
    del record.citations[:]
    record.citations.extend(kept)
    if not kept and not record.abstained and record.support != citations_pb2.SUPPORT_TIER_UNSUPPORTED:
        # A tier rests on a quote: with none left, the claim is abstained.
        record.abstained = True
        record.support = citations_pb2.SUPPORT_TIER_UNSPECIFIED
        record.verification_reasoning = clean_text(
            f"Abstained: the correction pass removed its only citation. {record.verification_reasoning}"
        )[:MAX_REASONING_CHARS]
        writes.abstained_claims.append((record.id, record.verification_reasoning))
    record.corrections.append(correction)
    writes.corrections.append(
        {
            "id": correction.id,
            "claim_id": record.id,
            "original_evidence_span_id": original.evidence_span.id if original is not None else None,
            "corrected_evidence_span_id": corrected.id if corrected is not None else None,
            "correction_type": CORRECTION_NAMES[kind],
            "reasoning": correction.reasoning,
        }
    )
    return correction, writes, record.abstained and bool(writes.abstained_claims)


def _demoted(link: citations_pb2.CitationLink) -> citations_pb2.CitationLink:
    copy = citations_pb2.CitationLink()
    copy.CopyFrom(link)
    copy.is_primary = False
    return copy


def _numeric_payload(record: citations_pb2.ClaimRecord) -> citations_pb2.NumericClaimDetectedPayload:
    detail = record.numeric_detail
    payload = citations_pb2.NumericClaimDetectedPayload(
        claim_id=record.id,
        raw_value=detail.number.raw_value,
        unit=detail.number.unit,
        derivation_type=detail.derivation_type,
        qa_verified=any(q.match for q in detail.qa_verification),
        entity_reference=detail.entity_reference,
    )
    if detail.number.HasField("value"):
        payload.normalized_value = detail.number.value
    return payload


def _numeric_row(record: citations_pb2.ClaimRecord) -> dict[str, Any]:
    detail = record.numeric_detail
    return {
        "claim_id": record.id,
        "raw_value": detail.number.raw_value,
        "normalized_value": detail.number.value if detail.number.HasField("value") else None,
        "unit": detail.number.unit or None,
        "entity_reference": detail.entity_reference or None,
        "derivation_type": "computed" if detail.derivation_type == citations_pb2.DERIVATION_TYPE_COMPUTED else "direct",
        "computation_details": dict(detail.computation_details) or None,
        "assumptions": dict(detail.number.assumptions) or None,
        "qa_verification": [qa_json(q) for q in detail.qa_verification] or None,
    }


def qa_json(qa: citations_pb2.QAVerification) -> dict[str, Any]:
    """The QAVerificationResult shape: question, both answers, match, and the normalised comparison."""
    return {
        "question": qa.question,
        "claim_answer": qa.claim_answer,
        "evidence_answer": qa.evidence_answer,
        "match": qa.match,
        "normalized_comparison": {
            "claim": MessageToDict(qa.claim_normalised) if qa.HasField("claim_normalised") else None,
            "evidence": MessageToDict(qa.evidence_normalised) if qa.HasField("evidence_normalised") else None,
            "tolerance": qa.tolerance,
            "explanation": qa.explanation,
        },
    }


# --- the summary -------------------------------------------------------------------------------------------


def summarise(records: list[citations_pb2.ClaimRecord]) -> citations_pb2.VerificationSummary:
    """Counts per tier; abstained claims count as unsupported for the rate and the warning (conservative:
    a claim the evidence could not judge is not supported by it)."""
    tiers = Counter(TIER_NAMES.get(r.support) for r in records if not r.abstained)
    abstained = sum(1 for r in records if r.abstained)
    total = len(records)
    unsupported_rate = (tiers[UNSUPPORTED] + abstained) / total if total else 0.0
    contradicted_rate = tiers[CONTRADICTED] / total if total else 0.0
    return citations_pb2.VerificationSummary(
        total_claims=total,
        supported=tiers[SUPPORTED],
        partial=tiers[PARTIAL],
        unsupported=tiers[UNSUPPORTED],
        contradicted=tiers[CONTRADICTED],
        abstained_count=abstained,
        unsupported_rate=unsupported_rate,
        contradicted_rate=contradicted_rate,
        warning=unsupported_rate > UNSUPPORTED_WARNING_RATE or contradicted_rate > CONTRADICTED_WARNING_RATE,
        citation_corrections=sum(len(r.corrections) for r in records),
    )


def _summary_row(summary: citations_pb2.VerificationSummary) -> dict[str, Any]:
    return {
        "total_claims": summary.total_claims,
        "supported": summary.supported,
        "partial": summary.partial,
        "unsupported": summary.unsupported,
        "contradicted": summary.contradicted,
        "abstained_count": summary.abstained_count,
        "citation_corrections": summary.citation_corrections,
        "unsupported_rate": summary.unsupported_rate,
        "contradicted_rate": summary.contradicted_rate,
        "warning": summary.warning,
    }


def summary_json(summary: citations_pb2.VerificationSummary) -> dict[str, Any]:
    """The summary as stored in the report row and the citations row (with VerificationSummary's field names)."""
    row = _summary_row(summary)
    return {
        "totalClaims": row["total_claims"],
        "supportedCount": row["supported"],
        "partialCount": row["partial"],
        "unsupportedCount": row["unsupported"],
        "contradictedCount": row["contradicted"],
        "abstainedCount": row["abstained_count"],
        "unsupportedRate": row["unsupported_rate"],
        "contradictedRate": row["contradicted_rate"],
        "warning": row["warning"],
        "citationCorrections": row["citation_corrections"],
    }


# --- the report and the result -------------------------------------------------------------------------------


def report_data(run: FactCheckRun, parsed: dict[str, Any]) -> None:
    """The report row gains the verification summary (the fields a run without citations stores are unchanged)."""
    if enabled(run) and run.citation_state is not None and run.citation_state.summary is not None:
        parsed["verificationSummary"] = summary_json(run.citation_state.summary)


def fill_result(result: factcheck_pb2.FactCheckResult, stages) -> None:
    """FactCheckResult.citations from the run's citations row (absent for runs without the option)."""
    stage = next((s for s in stages if s.stage_type == STAGE_CITATIONS[0]), None)
    if stage is not None:
        result.citations.CopyFrom(ParseDict(stored_data(stage).get("result", {}), citations_pb2.CitationsResult()))
