"""ExtractorService: Generate (question → content) and Extract / ExtractStream (content → claims)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from factcheck.core.domain import Completion, ExtractedClaim
from factcheck.kit.errors import Reason, Unavailable, answer_unreadable, check_argument
from factcheck.kit.rpc import call_timeout_s, check_model_id
from factcheck.kit.settings import Settings
from factcheck.models import output_limits
from factcheck.models.client import ModelClient
from factcheck.text.answer_echo import REPEATS_PROMPT, repeats_prompt
from factcheck.text.text_safety import excerpt
from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from factcheck_extractor.claims import (
    EMPTY_EXTRACTION,
    MAX_CONTENT_LENGTH_DEFAULT,
    UNREADABLE_EXTRACTION,
    ClaimStream,
    locate_claims,
    parse_claims,
    says_no_claims,
    truncate_content,
    type_breakdown,
    with_truncation_note,
)
from factcheck_extractor.extraction_prompts import (
    EXTRACTION_INSTRUCTIONS,
    GENERATE_INSTRUCTIONS,
    build_extraction_prompt,
    build_generate_prompt,
    build_profiled_extraction_prompt,
    extraction_inputs,
    generate_inputs,
)
from factcheck_extractor.profiles import claim_profiles


class ExtractorService(extractor_pb2_grpc.ExtractorServiceServicer):
    def __init__(self, client: ModelClient, settings: Settings) -> None:
        self._client = client
        self._timeout_s = settings.stage_timeout_ms / 1000

    async def Generate(
        self, request: extractor_pb2.GenerateRequest, context: grpc.aio.ServicerContext
    ) -> extractor_pb2.GenerateResponse:
        check_model_id("model", request.model)
        check_argument(request.question.strip(), "question", "question is required")
        completion = await self._client.complete(
            request.model,
            build_generate_prompt(request.question, list(request.passages)),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.generate(),
            inputs=generate_inputs(request.question, list(request.passages)),
        )
        content = completion.text.strip()
        if not content:
            raise Unavailable(
                f"generator model {excerpt(request.model, 100)} returned no content",
                reason=Reason.MODEL_EMPTY_RESPONSE,
                metadata={"model": request.model},
            )
        if repeats_prompt(content, GENERATE_INSTRUCTIONS, request.question):
            raise answer_unreadable(request.model, f"generator: {REPEATS_PROMPT}")
        return extractor_pb2.GenerateResponse(
            model=request.model,
            content=content,
            response_time_ms=completion.latency_ms,
            usage=completion.usage.to_proto(),
        )

    async def Extract(
        self, request: extractor_pb2.ExtractRequest, context: grpc.aio.ServicerContext
    ) -> extractor_pb2.ExtractResponse:
        shown, truncated, max_length = _checked_content(request)
        prompt = build_profiled_extraction_prompt(shown) if request.profiles else build_extraction_prompt(shown)
        completion = await self._client.complete(
            request.model,
            prompt,
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.extract(shown),
            inputs=extraction_inputs(shown, claim_detail=request.profiles),
        )
        claims = locate_claims(parse_claims(completion.text, shown), shown)
        _check_readable(request.model, completion.text, shown, claims)
        response = _extraction(request.model, shown, truncated, max_length, completion, claims)
        if request.profiles:
            response.profiles.extend(claim_profiles(claims, completion.text, shown))
        return response

    async def ExtractStream(
        self, request: extractor_pb2.ExtractStreamRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[extractor_pb2.ExtractStreamResponse]:
        """Extract over the model's streamed answer: each claim as soon as it is complete (ClaimStream),
        then the whole extraction, equal to what Extract returns for the same answer."""
        shown, truncated, max_length = _checked_content(request)
        analysed = with_truncation_note(shown, max_length) if truncated else shown
        claims = ClaimStream(shown)
        first = True
        async with self._client.stream(
            request.model,
            build_extraction_prompt(shown),
            timeout_s=call_timeout_s(context, self._timeout_s),
            limit=output_limits.extract(shown),
            inputs=extraction_inputs(shown),
        ) as answer:
            async for piece in answer:
                if found := claims.feed(piece):
                    message = extractor_pb2.ExtractStreamResponse(claims=[claim.to_proto() for claim in found])
                    if first:
                        message.content, first = analysed, False
                    yield message
        assert answer.completion is not None  # (set once the answer is read to its end)
        final = claims.finish()
        _check_readable(request.model, answer.completion.text, shown, claims.claims)
        last = extractor_pb2.ExtractStreamResponse(
            claims=[claim.to_proto() for claim in final],
            result=_extraction(request.model, shown, truncated, max_length, answer.completion, claims.claims),
        )
        if first:
            last.content = analysed
        yield last


def _check_readable(model: str, answer: str, shown: str, claims: list[ExtractedClaim]) -> None:
    """An answer that repeats the prompt, or holds no claims without saying there are none, is not an
    extraction: the stage fails (MODEL_ANSWER_UNREADABLE) rather than report "no verifiable claims"."""
    if repeats_prompt(answer, EXTRACTION_INSTRUCTIONS, shown):
        raise answer_unreadable(model, f"extractor: {REPEATS_PROMPT}")
    if not claims and not says_no_claims(answer, shown):
        raise answer_unreadable(model, UNREADABLE_EXTRACTION if answer.strip() else EMPTY_EXTRACTION)


def _checked_content(
    request: extractor_pb2.ExtractRequest | extractor_pb2.ExtractStreamRequest,
) -> tuple[str, bool, int]:
    """(the text the model is shown, whether it was truncated, the length limit) of a valid request."""
    check_model_id("model", request.model)
    check_argument(request.content.strip(), "content", "content is required")
    check_argument(request.max_content_length >= 0, "max_content_length", "max_content_length must not be negative")
    max_length = request.max_content_length or MAX_CONTENT_LENGTH_DEFAULT
    # The model sees the cut text only; the truncation note goes into the analysed content returned
    # (checkers, reporter, stored result) and never into the prompt, where it would become claims.
    shown, truncated = truncate_content(request.content, max_length)
    return shown, truncated, max_length


def _extraction(
    model: str, shown: str, truncated: bool, max_length: int, completion: Completion, claims: list[ExtractedClaim]
) -> extractor_pb2.ExtractResponse:
    return extractor_pb2.ExtractResponse(
        model=model,
        content=with_truncation_note(shown, max_length) if truncated else shown,
        content_truncated=truncated,
        raw_text=completion.text,
        claims=[claim.to_proto() for claim in claims],
        total_claims=len(claims),
        type_breakdown=type_breakdown(claims),
        response_time_ms=completion.latency_ms,
        usage=completion.usage.to_proto(),
    )
