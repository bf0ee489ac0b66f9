"""ExtractorService.ExtractStream over a real gRPC channel, against the fake model server streaming
its answer as server-sent events at a fixed token rate (and against the local extractor)."""

from __future__ import annotations

import time

import grpc
import pytest

from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import new_server
from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from factcheck_extractor.extractor_service import ExtractorService
from tests.fake_model_server import FakeModelServer, chunk_event, extraction_text, fail, hang, plain, reply, sse

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude. "
    "The Eiffel Tower is about 330 metres tall."
)


@pytest.fixture
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
async def extractor(fake_models):
    settings = Settings(
        model_base_url=fake_models.base_url, model_backoff_base_s=0.01, model_max_retries=1, stage_timeout_ms=10_000
    )
    client = ModelClient(settings)
    server = new_server(settings)
    extractor_pb2_grpc.add_ExtractorServiceServicer_to_server(ExtractorService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield extractor_pb2_grpc.ExtractorServiceStub(channel)
    await server.stop(None)
    await client.aclose()


async def stream(extractor, model: str, content: str = CONTENT, **fields):
    """[(message, seconds since the call started)] of one ExtractStream call."""
    started = time.monotonic()
    call = extractor.ExtractStream(extractor_pb2.ExtractStreamRequest(model=model, content=content, **fields))
    return [(message, time.monotonic() - started) async for message in call]


def without_timing(response: extractor_pb2.ExtractResponse) -> extractor_pb2.ExtractResponse:
    copy = extractor_pb2.ExtractResponse()
    copy.CopyFrom(response)
    copy.ClearField("response_time_ms")
    copy.ClearField("usage")
    return copy


async def test_claims_arrive_while_the_model_writes_and_the_result_equals_extract(extractor, fake_models):
    fake_models.set_token_rate("fake/extractor", 150)  # about 0.8 s for the answer
    messages = await stream(extractor, "fake/extractor")
    *early, (last, finished_at) = messages
    assert [len(m.claims) for m, _ in early] == [1, 1, 1, 1] and not any(m.HasField("result") for m, _ in early)
    assert list(last.claims) == [] and last.HasField("result")
    assert [m.content for m, _ in messages] == [CONTENT, "", "", "", ""]
    # The first claim came out long before the answer was done (its summary still being written).
    assert early[0][1] < finished_at / 2
    streamed = [claim for message, _ in early for claim in message.claims]
    assert [c.id for c in streamed] == ["claim_1", "claim_2", "claim_3", "claim_4"]
    assert list(last.result.claims) == streamed
    assert CONTENT[streamed[3].start_offset : streamed[3].end_offset] == "The Eiffel Tower is about 330 metres tall."

    fake_models.set_token_rate("fake/extractor", 0)
    whole = await extractor.Extract(extractor_pb2.ExtractRequest(model="fake/extractor", content=CONTENT))
    assert without_timing(last.result) == without_timing(whole)
    assert last.result.raw_text == extraction_text(CONTENT) and last.result.usage.completion_tokens > 0
    # Both stream on the wire (so that a cancelled call stops the server); only ExtractStream hands pieces on.
    assert [r.body.get("stream") for r in fake_models.requests] == [True, True]


async def test_a_provider_that_does_not_stream_gives_every_claim_at_once(extractor, fake_models):
    fake_models.script("fake/plain", plain())
    [(claims, _), (last, _)] = await stream(extractor, "fake/plain")
    assert [c.id for c in claims.claims] == ["claim_1", "claim_2", "claim_3", "claim_4"]
    assert list(last.result.claims) == list(claims.claims) and last.result.total_claims == 4


async def test_truncated_content_streams_the_claims_of_the_shown_part(extractor, fake_models):
    content = CONTENT + " " + "Filler words without any end" * 30
    messages = await stream(extractor, "fake/extractor", content, max_content_length=len(CONTENT))
    result = messages[-1][0].result
    assert result.content_truncated and result.content.endswith("Claims beyond this point were not analyzed.]")
    assert messages[0][0].content == result.content
    assert [c.claim for m, _ in messages for c in m.claims] == [c.claim for c in result.claims]
    assert len(result.claims) == 4


async def test_a_loose_format_yields_its_claims_with_the_result(extractor, fake_models):
    fake_models.script("fake/loose", reply("Claim 1 - The Eiffel Tower is about 330 metres tall.\n"))
    [(last, _)] = await stream(extractor, "fake/loose")
    assert [c.claim for c in last.claims] == ["The Eiffel Tower is about 330 metres tall."]
    assert last.content == CONTENT


async def test_the_local_extractor_streams_claim_by_claim(extractor):
    messages = await stream(extractor, "local/extractor")
    assert [len(m.claims) for m, _ in messages[:-1]] == [1, 1, 1, 1]
    result = messages[-1][0].result
    assert [c.id for m, _ in messages for c in m.claims] == [c.id for c in result.claims]


async def test_a_model_failure_after_some_claims_ends_the_stream_with_its_status(extractor, fake_models):
    block = "CLAIM 1: The Eiffel Tower is about 330 metres tall.\nContext: x\nType: STATISTIC\n"
    fake_models.script("fake/broken", sse(chunk_event("fake/broken", block), ending="close"))
    call = extractor.ExtractStream(extractor_pb2.ExtractStreamRequest(model="fake/broken", content=CONTENT))
    received = []
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for message in call:
            received.append(message)
    assert [[c.id for c in m.claims] for m in received] == [["claim_1"]]
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE and "broke after" in (raised.value.details() or "")


@pytest.mark.parametrize(
    "behaviour, code",
    [(fail(500), grpc.StatusCode.UNAVAILABLE), (fail(429), grpc.StatusCode.RESOURCE_EXHAUSTED)],
)
async def test_model_failures_before_any_claim_map_to_grpc_codes(extractor, fake_models, behaviour, code):
    fake_models.script("fake/broken", behaviour)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stream(extractor, "fake/broken")
    assert raised.value.code() == code and "fake/broken" in (raised.value.details() or "")


async def test_the_callers_deadline_bounds_the_stream(extractor, fake_models):
    fake_models.script("fake/slow", hang())
    request = extractor_pb2.ExtractStreamRequest(model="fake/slow", content=CONTENT)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for _ in extractor.ExtractStream(request, timeout=1.0):
            pass
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


@pytest.mark.parametrize(
    "request_message, expected",
    [
        (extractor_pb2.ExtractStreamRequest(model="fake/ext", content="  "), "content is required"),
        (extractor_pb2.ExtractStreamRequest(model="no-provider", content="x"), "provider/name"),
        (extractor_pb2.ExtractStreamRequest(model="fake/ext", content="x", max_content_length=-1), "negative"),
    ],
)
async def test_bad_requests_are_invalid_arguments(extractor, request_message, expected):
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for _ in extractor.ExtractStream(request_message):
            pass
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT and expected in (raised.value.details() or "")
