"""CheckerService: one model verifies every claim (fact-check mode's verify phase, one checker), and a
council fact-checker rates every anonymised response (council mode)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import grpc

from factcheck.core.council_taxonomy import MAX_RESPONSES, is_response_label
from factcheck.core.domain import ClaimVerification, ExtractedClaim, VerdictSummary, is_known_enum
from factcheck.core.model_verdicts import with_threshold_readings
from factcheck.kit.errors import answer_unreadable, check_argument, check_ids, check_question
from factcheck.kit.rpc import call_timeout_s, check_model_id
from factcheck.kit.settings import Settings
from factcheck.models import output_limits
from factcheck.models.availability import ServableModels, grounding_kind
from factcheck.models.client import ModelClient
from factcheck.models.dialects import DIALECTS, GROUNDING_DIALECTS
from factcheck.text.answer_echo import REPEATS_PROMPT, repeats_prompt
from factcheck.text.text_safety import excerpt
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    citations_pb2,
    common_pb2,
    council_pb2,
    entailment_pb2,
    investigation_pb2,
)
from factcheck_checker.assessment import (
    UNREADABLE_ASSESSMENT,
    assessment_inputs,
    build_assessment_prompt,
    parse_assessments,
)
from factcheck_checker.citations import resolve_citations
from factcheck_checker.council_prompts import (
    COUNCIL_CHECK_INSTRUCTIONS,
    build_council_check_prompt,
    council_check_inputs,
    fit_council_responses,
)
from factcheck_checker.council_summary import parse_council_check
from factcheck_checker.dialect_verify import verify_with_dialect
from factcheck_checker.entailment.agents import check_agent_request, run_agent
from factcheck_checker.entailment.strategy import verify_with_agents
from factcheck_checker.review import build_review_prompt, check_review, parse_review, review_inputs
from factcheck_checker.review import untrusted_text as review_untrusted_text
from factcheck_checker.support import claim_supports, low_confidence_ids, support_section
from factcheck_checker.verification_prompts import build_verification_prompt, verification_inputs
from factcheck_checker.verifications import parse_verifications

# Bounds on a council check (the gateway's own are tighter): one request must not swamp the model.
MAX_RESPONSE_CHARS = 50_000
MAX_COUNCIL_PASSAGES = 100
MAX_PASSAGE_CHARS = 20_000
MAX_ASSESSED_RESULTS = 50

_STANCES = {
    "SUPPORTS": investigation_pb2.EVIDENCE_STANCE_SUPPORTS,
    "REFUTES": investigation_pb2.EVIDENCE_STANCE_REFUTES,
    "IRRELEVANT": investigation_pb2.EVIDENCE_STANCE_IRRELEVANT,
}


def servable_models_proto(served: ServableModels, settings: Settings) -> checker_pb2.GetServableModelsResponse:
    """GetServableModels' answer: `served` (this process's engines and onnx/ names) and the providers with an
    endpoint and the dialects spoken under `settings`."""
    return checker_pb2.GetServableModelsResponse(
        local_engines=[
            checker_pb2.ServableEngine(name=name, roles=sorted(roles))
            for name, roles in sorted(served.local_engines.items())
        ],
        engine_families=sorted(served.engine_families),
        onnx_models=sorted(served.onnx_models),
        providers=([""] if settings.model_base_url else [])
        + sorted(name for name, override in settings.model_providers.items() if override.base_url),
        dialects=list(DIALECTS),
    )


class CheckerService(checker_pb2_grpc.CheckerServiceServicer):
    def __init__(self, client: ModelClient, settings: Settings) -> None:
        self._client = client
        self._settings = settings
        self._timeout_s = settings.stage_timeout_ms / 1000

    async def Verify(
        self, request: checker_pb2.VerifyRequest, context: grpc.aio.ServicerContext
    ) -> checker_pb2.VerifyResponse:
        check_model_id("model", request.model)
        check_argument(len(request.claims) > 0, "claims", "claims must not be empty")
        ids = [claim.id for claim in request.claims]
        check_ids("claims", ids, "claim")
        check_argument(all(claim.claim.strip() for claim in request.claims), "claims", "every claim needs its text")
        for index, claim in enumerate(request.claims):
            check_argument(
                is_known_enum(common_pb2.ClaimType, claim.type),
                f"claims[{index}].type",
                f"claims[{index}].type must be one of STATISTIC, DATE, ATTRIBUTION, TECHNICAL, COMPARISON, CAUSAL",
            )

        passages = {passage.id: passage for passage in request.passages}
        check_ids("passages", [passage.id for passage in request.passages], "passage")
        claim_passages = {item.claim_id: list(item.passage_ids) for item in request.evidence}
        unknown = sorted({pid for pids in claim_passages.values() for pid in pids} - set(passages))
        check_argument(
            not unknown,
            "evidence",
            f"evidence refers to unknown passages: {', '.join(excerpt(pid, 40) for pid in unknown[:5])}",
        )

        check_argument(
            request.strategy in entailment_pb2.CheckerStrategy.values(), "strategy", "strategy is not a known strategy"
        )
        grounding = grounding_kind(request.model, self._settings)
        check_argument(
            grounding is None or request.strategy != entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS,
            "strategy",
            f"{excerpt(request.model, 100)} is a grounding model: it reads claims against passages and cannot be "
            "the entailment agents (CHECKER_STRATEGY_ENTAILMENT_AGENTS needs a chat model)",
        )
        threshold = request.support_threshold if request.HasField("support_threshold") else None
        if threshold is not None:
            check_argument(
                grounding is not None,
                "support_threshold",
                f"{excerpt(request.model, 100)} does not read a probability against a threshold: support_threshold is "
                "for binary checkers (onnx/ models and models of a grounding dialect such as minicheck)",
            )
            check_argument(
                math.isfinite(threshold) and 0.0 <= threshold <= 1.0,
                "support_threshold",
                f"support_threshold is a probability, from 0 to 1 (got {threshold})",
            )
        if grounding in GROUNDING_DIALECTS:
            return await verify_with_dialect(
                self._client, request, claim_passages, call_timeout_s(context, self._timeout_s)
            )
        if request.strategy == entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS and request.passages:
            response = await verify_with_agents(
                self._client, request, claim_passages, call_timeout_s(context, self._timeout_s)
            )
            if request.support_tiers:
                # No Support lines in this strategy: each tier is derived from the verdict and its kept
                # citations (services/checker/factcheck_checker/support.py, rule 2).
                agents = [ClaimVerification.from_proto(v) for v in response.verifications]
                response.supports.extend(claim_supports(agents, {}))
            response.engine_revision = self._client.engine_revision(request.model)
            return response
        claims = [ExtractedClaim.from_proto(claim) for claim in request.claims]
        prompt = build_verification_prompt(claims, request.content, list(request.passages), claim_passages)
        tiers = request.support_tiers and bool(request.passages)  # tiers rest on quotes: evidence only
        low = low_confidence_ids(request.profiles) if tiers else []
        if tiers:  # part of the verify template: the prompt keeps its version (VersionedPrompt.__add__)
            prompt += support_section(low)
        inputs = verification_inputs(
            claims,
            request.content,
            list(request.passages),
            claim_passages,
            support_tiers=tiers,
            low_confidence=low,
            support_threshold=threshold,
        )
        completion = await self._client.complete(
            request.model,
            prompt,
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.verify(len(claims)),
            inputs=inputs,
        )
        words: dict[str, str] = {}
        verifications, dropped = resolve_citations(
            parse_verifications(completion.text, request.model, ids, _untrusted_text(request), supports=words),
            passages,
        )
        if grounding is not None:  # an onnx/ model: the engine's own answer, with its Threshold lines
            verifications = with_threshold_readings(verifications, completion.text)
        response = checker_pb2.VerifyResponse(
            model=request.model,
            raw_text=completion.text,
            verifications=[v.to_proto() for v in verifications],
            summary=VerdictSummary.count(v.verdict for v in verifications).to_proto(),
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
            dropped_citations=dropped,
            engine_revision=self._client.engine_revision(request.model),
        )
        if tiers:
            response.supports.extend(claim_supports(verifications, words))
        return response

    async def GetEngineRevision(
        self, request: checker_pb2.GetEngineRevisionRequest, context: grpc.aio.ServicerContext
    ) -> checker_pb2.GetEngineRevisionResponse:
        """The engine revision Verify would report for the model (VerifyResponse.engine_revision), without a call.

        An `onnx/` model is loaded and checked here (in a worker thread) if it was not yet: a folder that does
        not hold a usable model is FAILED_PRECONDITION saying why, which the gateway reports as its run's
        INVALID_ARGUMENT before the run starts."""
        check_model_id("model", request.model)
        revision = await asyncio.to_thread(self._client.engine_revision, request.model)
        return checker_pb2.GetEngineRevisionResponse(model=request.model, engine_revision=revision)

    async def GetServableModels(
        self, request: checker_pb2.GetServableModelsRequest, context: grpc.aio.ServicerContext
    ) -> checker_pb2.GetServableModelsResponse:
        """The engines registered in this process and the models its settings serve: what the gateway validates
        a request's models against (services/gateway/factcheck_gateway/servable_models.py)."""
        return servable_models_proto(ServableModels.here(self._settings), self._settings)

    async def ReviewCitations(
        self, request: citations_pb2.ReviewCitationsRequest, context: grpc.aio.ServicerContext
    ) -> citations_pb2.ReviewCitationsResponse:
        """The citation correction pass and numeric QA questions (services/checker/factcheck_checker/review.py)."""
        check_model_id("model", request.model)
        claims = {item.claim.id: item for item in request.claims}
        check_ids("claims", [item.claim.id for item in request.claims], "claim")
        pool = {span.id: span for span in request.pool}
        check_ids("pool", [span.id for span in request.pool], "pool span")
        if not claims:
            return citations_pb2.ReviewCitationsResponse(model=request.model)
        completion = await self._client.complete(
            request.model,
            build_review_prompt(list(request.claims), list(request.pool)),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.review(len(claims)),
            inputs=review_inputs(list(request.claims), list(request.pool)),
        )
        corrections, questions = parse_review(completion.text, list(claims), review_untrusted_text(request))
        corrections, questions, dropped = check_review(corrections, questions, claims, pool)
        return citations_pb2.ReviewCitationsResponse(
            model=request.model,
            raw_text=completion.text,
            corrections=corrections,
            questions=questions,
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
            dropped=dropped,
        )

    async def RunEntailmentAgent(
        self, request: entailment_pb2.RunEntailmentAgentRequest, context: grpc.aio.ServicerContext
    ) -> entailment_pb2.RunEntailmentAgentResponse:
        check_agent_request(request)
        return await run_agent(self._client, request, call_timeout_s(context, self._timeout_s))

    async def CouncilCheck(
        self, request: council_pb2.CouncilCheckRequest, context: grpc.aio.ServicerContext
    ) -> council_pb2.CouncilCheckResponse:
        check_model_id("model", request.model)
        _check_council_request(request)
        labels = [response.label for response in request.responses]
        limit = output_limits.council_check(len(request.responses))
        responses, passages = list(request.responses), list(request.passages)
        if (budget := self._client.prompt_budget(request.model, limit)) is not None:
            # A small context window: the answers are cut (with a note in the prompt), not the call refused.
            responses = fit_council_responses(request.question, responses, passages, budget)
        completion = await self._client.complete(
            request.model,
            build_council_check_prompt(request.question, responses, passages),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=limit,
            inputs=council_check_inputs(request.question, responses, passages),
        )
        untrusted = _council_untrusted_text(request)
        if repeats_prompt(completion.text, COUNCIL_CHECK_INSTRUCTIONS, untrusted):
            # Not an answer at all: the gateway reports the fact-checker as failed, with this cause.
            raise answer_unreadable(request.model, f"fact-checker: {REPEATS_PROMPT}")
        # No usable summary is an answer, not an error: the gateway excludes the checker and keeps its text.
        # A block the reply copies from a response is that response's (council_summary.py).
        parsed = parse_council_check(completion.text, labels, [response.text for response in request.responses])
        return council_pb2.CouncilCheckResponse(
            model=request.model,
            raw_text=completion.text,
            ratings=parsed.rating_protos(),
            most_reliable=parsed.most_reliable,
            inaccurate_claims=parsed.inaccurate_claims,
            warnings=parsed.warnings,
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
        )

    async def AssessEvidence(
        self, request: investigation_pb2.AssessEvidenceRequest, context: grpc.aio.ServicerContext
    ) -> investigation_pb2.AssessEvidenceResponse:
        """The verification loop: each search result judged supporting, refuting or irrelevant for one claim."""
        check_model_id("model", request.model)
        check_argument(request.claim.claim.strip(), "claim.claim", "claim.claim is required")
        count = len(request.results)
        check_argument(
            1 <= count <= MAX_ASSESSED_RESULTS,
            "results",
            f"results must list 1 to {MAX_ASSESSED_RESULTS} results (got {count})",
        )
        _check_passages("results", request.results, "result")
        # Ids are labels the gateway chose (R1, R2, ...): renumber anything else so the answer format holds.
        labels = [f"R{index + 1}" for index in range(count)]
        relabelled = []
        for label, result in zip(labels, request.results):
            copy = common_pb2.Passage()
            copy.CopyFrom(result)
            copy.id = label
            relabelled.append(copy)
        completion = await self._client.complete(
            request.model,
            build_assessment_prompt(request.claim.claim, relabelled),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.assess(count),
            inputs=assessment_inputs(request.claim.claim, relabelled),
        )
        untrusted = "\n".join([request.claim.claim, *(t for r in request.results for t in (r.source_title, r.text))])
        assessments = parse_assessments(completion.text, labels, untrusted)
        if not any(a.read for a in assessments):
            raise answer_unreadable(request.model, UNREADABLE_ASSESSMENT)
        return investigation_pb2.AssessEvidenceResponse(
            model=request.model,
            raw_text=completion.text,
            assessments=[
                investigation_pb2.EvidenceAssessment(
                    result_id=result_id, stance=_STANCES[a.stance], temporal=a.temporal, reason=a.reason
                )
                for result_id, a in zip((result.id for result in request.results), assessments)
            ],
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
        )


def _check_council_request(request: council_pb2.CouncilCheckRequest) -> None:
    check_question(request.question)
    count = len(request.responses)
    check_argument(
        1 <= count <= MAX_RESPONSES, "responses", f"responses must list 1 to {MAX_RESPONSES} responses (got {count})"
    )
    labels = [response.label for response in request.responses]
    for index, response in enumerate(request.responses):
        field = f"responses[{index}]"
        check_argument(
            is_response_label(response.label),
            f"{field}.label",
            f"{field}.label must be \"Response <letter>\" (got '{excerpt(response.label, 40)}')",
        )
        check_argument(response.text.strip(), f"{field}.text", f"{field}.text is required")
        check_argument(
            len(response.text) <= MAX_RESPONSE_CHARS,
            f"{field}.text",
            f"{field}.text must be at most {MAX_RESPONSE_CHARS} characters",
        )
    check_argument(len(set(labels)) == len(labels), "responses", "response labels must be unique")
    check_argument(
        len(request.passages) <= MAX_COUNCIL_PASSAGES,
        "passages",
        f"passages may list at most {MAX_COUNCIL_PASSAGES} passages",
    )
    _check_passages("passages", request.passages, "passage")


def _check_passages(field: str, passages: Sequence[common_pb2.Passage], noun: str) -> None:
    """Every passage has its own id and at most MAX_PASSAGE_CHARS characters of text."""
    check_ids(field, [passage.id for passage in passages], noun)
    check_argument(
        all(len(passage.text) <= MAX_PASSAGE_CHARS for passage in passages),
        field,
        f"every {noun} must be at most {MAX_PASSAGE_CHARS} characters",
    )


def _council_untrusted_text(request: council_pb2.CouncilCheckRequest) -> str:
    """The question, the responses and the passages: the content the fact-checker was shown, which an
    answer may quote without echoing the prompt."""
    parts = [request.question]
    parts += [response.text for response in request.responses]
    parts += [text for passage in request.passages for text in (passage.source_title, passage.text)]
    return "\n".join(parts)


def _untrusted_text(request: checker_pb2.VerifyRequest) -> str:
    """Everything the caller put in the prompt: a checker line that only repeats it is not a verdict."""
    parts = [request.content]
    parts += [text for claim in request.claims for text in (claim.claim, claim.context)]
    parts += [text for passage in request.passages for text in (passage.source_title, passage.text)]
    return "\n".join(parts)
