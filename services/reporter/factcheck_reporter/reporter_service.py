"""ReporterService: the fact-check report (fact-check mode's report phase), a title, and the council
chairman's synthesis."""

from __future__ import annotations

import logging

import grpc

from factcheck.core.council_taxonomy import is_response_label
from factcheck.core.domain import ClaimConsensus, VerdictSummary, is_known_enum
from factcheck.core.title_subject import title_question
from factcheck.kit.errors import check_argument, check_question
from factcheck.kit.rpc import call_timeout_s, check_model_id
from factcheck.kit.settings import Settings
from factcheck.models import output_limits
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelError
from factcheck.text.text_safety import excerpt
from factcheck.v1 import common_pb2, council_pb2, reporter_pb2, reporter_pb2_grpc
from factcheck_reporter.report import (
    FEW_CLAIMS_NOTE,
    NO_CLAIMS_NOTE,
    NO_CLAIMS_REPORT,
    average_agreement_rate,
    build_fallback_report,
    clean_title,
    parse_reliability_score,
    report_problem,
)
from factcheck_reporter.report_prompts import (
    REPORT_INSTRUCTIONS,
    build_report_prompt,
    build_synthesis_prompt,
    build_title_prompt,
    report_inputs,
    synthesis_inputs,
    title_inputs,
)

log = logging.getLogger("factcheck.reporter")

# Up to this many claims, the report notes "Limited number of verifiable claims."
FEW_CLAIMS_MAX = 2
# Bounds on a synthesis request: 8 fact-checkers may list a few dozen claims each.
MAX_RESPONSE_CHARS = 50_000
MAX_SYNTHESIS_CLAIMS = 400
MAX_CLAIM_CHARS = 5_000


class ReporterService(reporter_pb2_grpc.ReporterServiceServicer):
    def __init__(self, client: ModelClient, settings: Settings) -> None:
        self._client = client
        self._timeout_s = settings.stage_timeout_ms / 1000

    async def Report(
        self, request: reporter_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> reporter_pb2.ReportResponse:
        check_model_id("model", request.model)
        for index, item in enumerate(request.consensus):
            field = f"consensus[{index}]"
            check_argument(item.claim_id, f"{field}.claim_id", f"{field}.claim_id is required")
            check_argument(
                is_known_enum(common_pb2.Verdict, item.consensus_verdict),
                f"{field}.consensus_verdict",
                f"{field}.consensus_verdict must be VERIFIED, DISPUTED or UNVERIFIABLE",
            )
            check_argument(
                is_known_enum(common_pb2.ClaimType, item.type),
                f"{field}.type",
                f"{field}.type is not a known claim type",
            )
            for verdict in item.verdicts:
                check_argument(
                    is_known_enum(common_pb2.Verdict, verdict.verdict)
                    and is_known_enum(common_pb2.Confidence, verdict.confidence),
                    f"{field}.verdicts",
                    f"{field}.verdicts need a known verdict and confidence",
                )

        if not request.consensus:
            # No verifiable claims → no model call, score null, the no-claims note.
            return reporter_pb2.ReportResponse(
                model=request.model,
                report_text=NO_CLAIMS_REPORT,
                summary=VerdictSummary().to_proto(),
                note=NO_CLAIMS_NOTE,
            )

        consensus = [ClaimConsensus.from_proto(item) for item in request.consensus]
        summary = VerdictSummary.count(item.consensus_verdict for item in consensus)
        checker_count = request.checker_count or max(len(item.verdicts) for item in consensus)
        response = reporter_pb2.ReportResponse(
            model=request.model,
            summary=summary.to_proto(),
            average_agreement_rate=average_agreement_rate(consensus),
        )
        if len(consensus) <= FEW_CLAIMS_MAX:
            response.note = FEW_CLAIMS_NOTE

        prompt = build_report_prompt(
            request.content,
            consensus,
            total_claims=request.total_claims or len(consensus),
            checker_count=checker_count,
            extractor_model=request.extractor_model or "unknown",
            checker_models=list(request.checker_models),
            reporter_model=request.model,
        )
        try:
            completion = await self._client.complete(
                request.model,
                prompt,
                timeout_s=call_timeout_s(context, self._timeout_s),
                limit=output_limits.report(len(consensus), request.content),
                inputs=report_inputs(
                    request.content,
                    consensus,
                    checker_count=checker_count,
                    extractor_model=request.extractor_model or "unknown",
                    checker_models=list(request.checker_models),
                    reporter_model=request.model,
                ),
            )
        except ModelError as error:
            # Reporter failure → the raw consensus table, fallback = true.
            log.warning("report model failed, writing the fallback table: %s", error)
            response.report_text = build_fallback_report(consensus)
            response.fallback = True
            response.fallback_reason = f"the report model failed: {excerpt(error.message, 200)}"
            return response

        response.response_time_ms = completion.latency_ms
        response.usage.CopyFrom(completion.usage.to_proto())
        untrusted = _untrusted_text(request)
        score = parse_reliability_score(completion.text, untrusted)
        ids = [item.claim_id for item in consensus]
        problem = report_problem(completion.text, score, ids, REPORT_INSTRUCTIONS, untrusted)
        if problem is not None:
            # An answer that is not a report is not shown as one: the fallback table, saying why.
            log.warning("report model's answer not used (%s); writing the fallback table", problem)
            response.report_text = build_fallback_report(consensus, reason=problem)
            response.fallback = True
            response.fallback_reason = f"the report model's answer could not be read: {problem}"
            return response
        response.report_text = completion.text
        if score is not None:
            response.reliability_score = score
        return response

    async def Title(
        self, request: reporter_pb2.TitleRequest, context: grpc.aio.ServicerContext
    ) -> reporter_pb2.TitleResponse:
        check_model_id("model", request.model)
        check_argument(
            request.question.strip() or request.content.strip(), "question", "question or content is required"
        )
        # A bare instruction ("Fact-check this content") says nothing of the subject: title the content.
        question = title_question(request.question)
        fallback_title = clean_title(question or request.content, fallback="Fact-check")
        response = reporter_pb2.TitleResponse(model=request.model)
        try:
            completion = await self._client.complete(
                request.model,
                build_title_prompt(question, request.content),
                timeout_s=call_timeout_s(context, self._timeout_s),
                limit=output_limits.title(),
                inputs=title_inputs(question, request.content),
            )
        except ModelError as error:
            # A title is cosmetic: a failed title call must not fail the run.
            log.warning("title model failed, titling from the question: %s", error)
            response.title = fallback_title
            return response
        response.title = clean_title(completion.text, fallback=fallback_title)
        response.response_time_ms = completion.latency_ms
        response.usage.CopyFrom(completion.usage.to_proto())
        return response

    async def Synthesize(
        self, request: council_pb2.SynthesizeRequest, context: grpc.aio.ServicerContext
    ) -> council_pb2.SynthesizeResponse:
        check_model_id("model", request.model)
        _check_synthesis_request(request)
        completion = await self._client.complete(
            request.model,
            build_synthesis_prompt(
                request.question,
                request.best_response,
                list(request.inaccurate_claims),
                request.aggregate if request.HasField("aggregate") else None,
            ),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.synthesize(request.best_response.text),
            inputs=synthesis_inputs(request.question, request.best_response, list(request.inaccurate_claims)),
        )
        return council_pb2.SynthesizeResponse(
            model=request.model,
            text=completion.text,
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
        )


def _check_synthesis_request(request: council_pb2.SynthesizeRequest) -> None:
    check_question(request.question)
    best = request.best_response
    check_argument(
        is_response_label(best.label),
        "best_response.label",
        f"best_response.label must be \"Response <letter>\" (got '{excerpt(best.label, 40)}')",
    )
    check_argument(best.text.strip(), "best_response.text", "best_response.text is required")
    check_argument(
        len(best.text) <= MAX_RESPONSE_CHARS,
        "best_response.text",
        f"best_response.text must be at most {MAX_RESPONSE_CHARS} characters",
    )
    check_argument(
        len(request.inaccurate_claims) <= MAX_SYNTHESIS_CLAIMS,
        "inaccurate_claims",
        f"inaccurate_claims may list at most {MAX_SYNTHESIS_CLAIMS} claims",
    )
    for index, claim in enumerate(request.inaccurate_claims):
        field = f"inaccurate_claims[{index}]"
        check_argument(is_response_label(claim.label), f"{field}.label", f'{field}.label must be "Response <letter>"')
        check_argument(claim.claim.strip(), f"{field}.claim", f"{field}.claim is required")
        check_argument(
            is_known_enum(council_pb2.ErrorType, claim.error_type),
            f"{field}.error_type",
            f"{field}.error_type must be a known error type",
        )
        check_argument(
            len(claim.claim) <= MAX_CLAIM_CHARS and len(claim.correction) <= MAX_CLAIM_CHARS,
            field,
            f"{field}.claim and .correction must be at most {MAX_CLAIM_CHARS} characters",
        )


def _untrusted_text(request: reporter_pb2.ReportRequest) -> str:
    """Every free text of the request (content, claims, checker evidence): a score line that only
    repeats it is not the report's score."""
    parts = [request.content]
    for item in request.consensus:
        parts += [item.claim, item.context, item.correction]
        parts += [text for verdict in item.verdicts for text in (verdict.evidence, verdict.correction)]
        parts += [text for citation in item.citations for text in (citation.quote, citation.source_title)]
    return "\n".join(parts)
