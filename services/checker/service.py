"""CheckerService: one model verifies every claim (spec phase 2, one checker)."""

from __future__ import annotations

import grpc

from factcheck.domain import ExtractedClaim, VerdictSummary, is_known_enum
from factcheck.errors import check_argument
from factcheck.models.client import ModelClient
from factcheck.rpc import call_timeout_s, check_model_id
from factcheck.settings import Settings
from factcheck.text_safety import excerpt
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2, entailment_pb2
from services.checker.citations import resolve_citations
from services.checker.entailment.agents import check_agent_request, run_agent
from services.checker.entailment.strategy import verify_with_agents
from services.checker.prompts import build_verification_prompt
from services.checker.verifications import parse_verifications


class CheckerService(checker_pb2_grpc.CheckerServiceServicer):
    def __init__(self, client: ModelClient, settings: Settings) -> None:
        self._client = client
        self._timeout_s = settings.stage_timeout_ms / 1000

    async def Verify(
        self, request: checker_pb2.VerifyRequest, context: grpc.aio.ServicerContext
    ) -> checker_pb2.VerifyResponse:
        check_model_id("model", request.model)
        check_argument(len(request.claims) > 0, "claims", "claims must not be empty")
        ids = [claim.id for claim in request.claims]
        check_argument(all(ids), "claims", "every claim needs an id")
        check_argument(len(set(ids)) == len(ids), "claims", "claim ids must be unique")
        check_argument(all(claim.claim.strip() for claim in request.claims), "claims", "every claim needs its text")
        for index, claim in enumerate(request.claims):
            check_argument(
                is_known_enum(common_pb2.ClaimType, claim.type),
                f"claims[{index}].type",
                f"claims[{index}].type must be one of STATISTIC, DATE, ATTRIBUTION, TECHNICAL, COMPARISON, CAUSAL",
            )

        passages = {passage.id: passage for passage in request.passages}
        check_argument(all(passages), "passages", "every passage needs an id")
        check_argument(len(passages) == len(request.passages), "passages", "passage ids must be unique")
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
        if request.strategy == entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS and request.passages:
            return await verify_with_agents(
                self._client, request, claim_passages, call_timeout_s(context, self._timeout_s)
            )
        claims = [ExtractedClaim.from_proto(claim) for claim in request.claims]
        completion = await self._client.complete(
            request.model,
            build_verification_prompt(claims, request.content, list(request.passages), claim_passages),
            timeout_s=call_timeout_s(context, self._timeout_s),
        )
        verifications, dropped = resolve_citations(
            parse_verifications(completion.text, request.model, ids, _untrusted_text(request)), passages
        )
        return checker_pb2.VerifyResponse(
            model=request.model,
            raw_text=completion.text,
            verifications=[v.to_proto() for v in verifications],
            summary=VerdictSummary.count(v.verdict for v in verifications).to_proto(),
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
            dropped_citations=dropped,
        )

    async def RunEntailmentAgent(
        self, request: entailment_pb2.RunEntailmentAgentRequest, context: grpc.aio.ServicerContext
    ) -> entailment_pb2.RunEntailmentAgentResponse:
        check_agent_request(request)
        return await run_agent(self._client, request, call_timeout_s(context, self._timeout_s))


def _untrusted_text(request: checker_pb2.VerifyRequest) -> str:
    """Everything the caller put in the prompt: a checker line that only repeats it is not a verdict."""
    parts = [request.content]
    parts += [text for claim in request.claims for text in (claim.claim, claim.context)]
    parts += [text for passage in request.passages for text in (passage.source_title, passage.text)]
    return "\n".join(parts)
