"""ModelClient.stream over real loopback HTTP: server-sent events, the plain-JSON fallback, and the
same deadline, retry and error rules as `complete` (retries only before the first piece)."""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from typing import Any, Iterator

import pytest

from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import (
    ModelMalformedResponseError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.models.local import register_local_engine, unregister_local_engine
from factcheck.models.provider_answers import MAX_RESPONSE_BYTES
from factcheck.text.text_safety import clean_text
from tests.fake_model_server import (
    Behaviour,
    FakeModelServer,
    chunk_event,
    default_answer,
    disconnect,
    fail,
    plain,
    raw_response,
    reply,
    sse,
    tokens_of,
)

MODEL = "acme/model-1"
ANSWER = "The Eiffel Tower was completed in 1889.\nIt is about 330 metres tall.\n"


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def client_for(server: FakeModelServer, **overrides: Any) -> ModelClient:
    values: dict[str, Any] = {
        "model_base_url": server.base_url,
        "model_api_key": None,
        "model_providers": {},
        "model_max_retries": 2,
        "model_backoff_base_s": 0.01,
    }
    return ModelClient(Settings(**{**values, **overrides}))


async def collect(client: ModelClient, model: str = MODEL, timeout_s: float = 5.0):
    """(the pieces, with the monotonic time each arrived; the completion)."""
    pieces: list[tuple[str, float]] = []
    async with client.stream(model, "Say something", timeout_s=timeout_s) as answer:
        async for piece in answer:
            pieces.append((piece, time.monotonic()))
    return pieces, answer.completion


async def test_streams_each_token_as_it_is_written(server: FakeModelServer) -> None:
    server.script(MODEL, reply(ANSWER))
    server.set_token_rate(MODEL, 200)
    async with client_for(server) as client:
        started = time.monotonic()
        pieces, completion = await collect(client)
    assert [p for p, _ in pieces] == tokens_of(ANSWER)
    assert completion.text == ANSWER and completion.model == MODEL
    assert completion.usage.completion_tokens == len(tokens_of(ANSWER)) and completion.usage.prompt_tokens == 2
    # Written at 200 tokens/s: the first piece arrives long before the last.
    assert pieces[0][1] - started < pieces[-1][1] - started - 0.03
    assert server.requests[0].body["stream"] is True


async def test_a_provider_that_ignores_stream_answers_one_piece(server: FakeModelServer) -> None:
    server.script(MODEL, plain(reply(ANSWER)))
    async with client_for(server) as client:
        pieces, completion = await collect(client)
    assert [p for p, _ in pieces] == [ANSWER] and completion.text == ANSWER
    assert completion.usage.completion_tokens == len(ANSWER.split())


async def test_events_are_read_across_any_split_and_line_ending(server: FakeModelServer) -> None:
    """CRLF line breaks, comments, other fields, multi-byte characters split between reads."""
    events = [chunk_event(MODEL, "", role=True), chunk_event(MODEL, "Zürich "), chunk_event(MODEL, "ok")]
    body = ": keep-alive\r\n\r\n" + "".join(
        f"event: message\r\nid: {i}\r\ndata: {e}\r\n\r\n" for i, e in enumerate(events)
    )
    body += f"data: {chunk_event(MODEL, finish=True)}\r\n\r\ndata: [DONE]\r\n\r\n"
    raw = body.encode()
    # Chunks of 7 bytes split CRLFs and the two bytes of "ü".
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(raw[i : i + 7]), raw[i : i + 7]) for i in range(0, len(raw), 7))
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    server.script(MODEL, raw_response(head + chunked + b"0\r\n\r\n"))
    async with client_for(server) as client:
        pieces, completion = await collect(client)
    assert [p for p, _ in pieces] == ["Zürich ", "ok"] and completion.text == "Zürich ok"


async def test_retryable_failures_before_the_first_piece_are_retried(server: FakeModelServer) -> None:
    # A 503, a dropped connection, and a stream that breaks after an empty piece (no text yet).
    server.script(MODEL, fail(503), disconnect(), sse(chunk_event(MODEL, "", role=True), ending="close"), reply(ANSWER))
    async with client_for(server, model_max_retries=3) as client:
        pieces, completion = await collect(client)
    assert [p for p, _ in pieces] == tokens_of(ANSWER) and completion.text == ANSWER
    assert len(server.requests_for(MODEL)) == 4


async def test_a_failure_after_the_first_piece_is_final(server: FakeModelServer) -> None:
    server.script(MODEL, sse(chunk_event(MODEL, "Half an "), ending="close"), reply(ANSWER))
    async with client_for(server) as client:
        pieces: list[str] = []
        with pytest.raises(ModelProviderError, match="broke after 8 characters"):
            async with client.stream(MODEL, "Say something", timeout_s=5) as answer:
                async for piece in answer:
                    pieces.append(piece)
    assert pieces == ["Half an "] and len(server.requests_for(MODEL)) == 1


async def test_a_stream_that_stops_before_done_is_an_error(server: FakeModelServer) -> None:
    server.script(MODEL, sse(chunk_event(MODEL, "Half")))  # a clean end, but no [DONE] and no finish reason
    async with client_for(server, model_max_retries=0) as client:
        with pytest.raises(ModelProviderError, match="ended before the answer was complete"):
            await collect(client)
    server.script(MODEL, sse(chunk_event(MODEL, "Whole"), chunk_event(MODEL, finish=True)))  # no [DONE]: fine
    async with client_for(server) as client:
        _, completion = await collect(client)
    assert completion.text == "Whole"


async def test_the_deadline_bounds_a_stream_after_its_first_piece(server: FakeModelServer) -> None:
    server.script(MODEL, sse(chunk_event(MODEL, "Hello"), ending="hang"))
    async with client_for(server) as client:
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError):
            await collect(client, timeout_s=0.5)
    assert time.monotonic() - started < 2.0


async def test_errors_before_the_first_byte_keep_their_meaning(server: FakeModelServer) -> None:
    server.script(MODEL, fail(429, retry_after=0))
    async with client_for(server, model_max_retries=1) as client:
        with pytest.raises(ModelRateLimitedError):
            await collect(client)
        server.script(MODEL, fail(400))
        with pytest.raises(ModelProviderError, match="HTTP 400"):
            await collect(client)


@pytest.mark.parametrize(
    "event, message",
    [
        ("<html>502</html>", "not JSON"),
        ('{"object": "chat.completion.chunk"}', "has no choices"),
        ('{"choices": [{"index": 0}]}', "no choices\\[0\\].delta"),
        ('{"choices": [{"delta": {"content": 42}}]}', "not text"),
        ("[" * 100 + "]" * 100, "nests deeper"),
        ('{"error": {"message": "overloaded"}}', "sent an error in its stream: overloaded"),
    ],
)
async def test_garbage_chunks_are_malformed_answers(server: FakeModelServer, event: str, message: str) -> None:
    server.script(MODEL, sse(chunk_event(MODEL, "Fine so far. "), event, "[DONE]"))
    async with client_for(server) as client:
        with pytest.raises((ModelMalformedResponseError, ModelProviderError), match=message):
            await collect(client)
    assert len(server.requests_for(MODEL)) == 1


async def test_control_characters_and_lone_surrogates_are_cleaned(server: FakeModelServer) -> None:
    server.script(MODEL, sse(json.dumps({"choices": [{"delta": {"content": "a\x1b[31m\ud800b"}}]}), "[DONE]"))
    async with client_for(server) as client:
        pieces, completion = await collect(client)
    assert completion.text == "a\ufffd[31m\ufffdb" == pieces[0][0]


async def test_leaving_the_block_early_cancels_the_call(server: FakeModelServer) -> None:
    server.script(MODEL, reply(ANSWER))
    server.set_token_rate(MODEL, 20)
    async with client_for(server) as client:
        started = time.monotonic()
        async with client.stream(MODEL, "Say something", timeout_s=30) as answer:
            async for _ in answer:
                break
        assert answer.completion is None and time.monotonic() - started < 1.0
        # The client is still usable.
        server.set_token_rate(MODEL, 0)
        _, completion = await collect(client)
    assert completion.text == ANSWER


async def test_local_engines_stream_their_pieces() -> None:
    register_local_engine(
        "test-pieces", lambda prompt, inputs: "abc", stream=lambda prompt, inputs: iter(["a", "b\x00", "c"])
    )
    register_local_engine("test-whole", lambda prompt, inputs: "whole answer")
    try:
        async with ModelClient(Settings()) as client:
            pieces, completion = await collect(client, "local/test-pieces")
            whole, whole_completion = await collect(client, "local/test-whole")
    finally:
        unregister_local_engine("test-pieces")
        unregister_local_engine("test-whole")
    assert [p for p, _ in pieces] == ["a", "b\ufffd", "c"] and completion.text == "ab\ufffdc"
    assert [p for p, _ in whole] == ["whole answer"] and whole_completion.text == "whole answer"


async def test_the_local_extractor_streams_claim_by_claim() -> None:
    from factcheck_extractor.extraction_prompts import build_extraction_prompt, extraction_inputs

    content = "The Eiffel Tower was completed in 1889. It is about 330 metres tall. Paris has 2 million people."
    prompt = build_extraction_prompt(content)
    async with ModelClient(Settings()) as client:
        pieces = []
        inputs = extraction_inputs(content)
        async with client.stream("local/extractor", prompt, timeout_s=10, inputs=inputs) as answer:
            async for piece in answer:
                pieces.append(piece)
        whole = await client.complete("local/extractor", prompt, timeout_s=10, inputs=inputs)
    assert answer.completion is not None and answer.completion.text == whole.text == "".join(pieces)
    assert [p.lstrip("\n").split(":")[0] for p in pieces[:3]] == ["CLAIM 1", "CLAIM 2", "CLAIM 3"]
    assert "EXTRACTION SUMMARY" in pieces[-1]


async def test_the_fake_server_streams_the_default_answers(server: FakeModelServer) -> None:
    async with client_for(server) as client:
        async with client.stream("acme/x", "Write a short title", timeout_s=5) as answer:
            assert [piece async for piece in answer] == tokens_of(default_answer("Write a short title"))


def test_stream_must_be_entered_before_iterating() -> None:
    async def iterate() -> None:
        async with ModelClient(Settings()) as client:
            async for _ in client.stream("local/extractor", "x", timeout_s=1):
                pass

    with pytest.raises(RuntimeError, match="async with"):
        asyncio.run(iterate())


# --- bounds on an event stream --------------------------------------------------------------------------


def event_stream(body: bytes, *, headers: bytes = b"", charset: str = "") -> Behaviour:
    """A 200 event stream of exactly `body` (its bytes as sent), ended by closing the connection."""
    content_type = b"text/event-stream" + (f"; charset={charset}".encode() if charset else b"")
    return raw_response(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n" + headers + b"\r\n" + body)


async def test_a_line_that_never_ends_counts_against_the_stream_bound(server: FakeModelServer) -> None:
    # One data line longer than the bound: it fails as too big, not after reading all of it as one event.
    body = b"data: " + b"x" * (MAX_RESPONSE_BYTES + 1024) + b"\n\ndata: [DONE]\n\n"
    server.script(MODEL, event_stream(body))
    async with client_for(server, model_max_retries=0) as client:
        with pytest.raises(ModelMalformedResponseError, match="streamed more than 16 MiB"):
            await client.complete(MODEL, "Say something", timeout_s=30)


@pytest.mark.parametrize("extra", [0, 1], ids=["at-the-bound", "one-byte-over"])
async def test_the_stream_bound_counts_decoded_bytes(server: FakeModelServer, extra: int) -> None:
    """A gzip stream of a few kilobytes is bounded by what it decodes to: exactly MAX_RESPONSE_BYTES are
    read (comments, an answer, [DONE] last), one byte more is a malformed answer."""
    answer = f"data: {chunk_event(MODEL, 'ok', finish=True)}\n\ndata: [DONE]\n\n".encode()
    padding = MAX_RESPONSE_BYTES + extra - len(answer)
    comments = (b":" + b"p" * 1022 + b"\n") * (padding // 1024)
    comments += b":" + b"p" * (padding - len(comments) - 2) + b"\n"
    body = comments + answer
    assert len(body) == MAX_RESPONSE_BYTES + extra
    server.script(MODEL, event_stream(gzip.compress(body), headers=b"Content-Encoding: gzip\r\n"))
    async with client_for(server, model_max_retries=0) as client:
        if extra:
            with pytest.raises(ModelMalformedResponseError, match="streamed more than 16 MiB"):
                await client.complete(MODEL, "Say something", timeout_s=30)
        else:
            assert (await client.complete(MODEL, "Say something", timeout_s=30)).text == "ok"


@pytest.mark.parametrize("charset", ["", "latin-1", "utf-16"])
async def test_a_stream_is_utf8_split_only_at_line_breaks_and_events_without_data_are_skipped(
    server: FakeModelServer, charset: str
) -> None:
    """Whatever charset the provider declares, events are UTF-8 (invalid bytes become U+FFFD); U+2028 and
    NEL inside a chunk's JSON do not break its line; an event of an id, a retry or a name alone is no chunk."""
    text = json.dumps({"choices": [{"delta": {"content": "Zürich\u2028\u0085 ok "}}]}, ensure_ascii=False)
    invalid = b'{"choices": [{"delta": {"content": "caf\xff"}, "finish_reason": "stop"}]}'
    body = b"id: 7\n\nretry: 100\n\nevent: ping\n\ndata: " + text.encode() + b"\n\ndata: " + invalid
    body += b"\n\ndata: [DONE]\n\n"
    server.script(MODEL, event_stream(body, charset=charset))
    async with client_for(server, model_max_retries=0) as client:
        pieces, completion = await collect(client)
    assert [p for p, _ in pieces] == [clean_text("Zürich\u2028\u0085 ok "), "caf\ufffd"]
    assert completion.text == clean_text("Zürich\u2028\u0085 ok ") + "caf\ufffd"
