"""Model answers are untrusted: the issue's examples over real loopback HTTP, first at the model
client, then through every model-calling RPC of a real gRPC server.

Each bad answer must become well-formed text or one ModelError with a short, single-line,
encodable message; a service fed it must end the call with a proper status (or a fallback),
never UNKNOWN, and never hang until the caller's deadline.
"""

from __future__ import annotations

import gzip
import json
from typing import Any, Iterator

import grpc
import pytest

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelMalformedResponseError, ModelProviderError, ModelRateLimitedError
from factcheck.models.provider_answers import MAX_JSON_DEPTH, MAX_RESPONSE_BYTES, MAX_TOKEN_COUNT
from factcheck.serving.server import new_server
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    extractor_pb2,
    extractor_pb2_grpc,
    reporter_pb2,
    reporter_pb2_grpc,
)
from factcheck_checker.checker_service import CheckerService
from factcheck_extractor.extractor_service import ExtractorService
from factcheck_reporter.reporter_service import ReporterService
from tests.fake_model_server import Behaviour, FakeModelServer, fail, raw_bytes, raw_response, reply

MODEL = "acme/model-1"


def completion_body(content: str = '"ok"', usage: str = "{}") -> bytes:
    """A chat completion whose content and usage are given as raw JSON text (escapes and all)."""
    return ('{"choices":[{"message":{"role":"assistant","content":' + content + '}}],"usage":' + usage + "}").encode()


def make_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(
        model_base_url=base_url,
        model_api_key=None,
        model_providers={},
        model_max_retries=1,
        model_backoff_base_s=0.01,
        stage_timeout_ms=30_000,
    )
    return Settings(**{**values, **overrides})


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


async def complete(server: FakeModelServer, behaviour: Behaviour, **settings: Any):
    server.script(MODEL, behaviour)
    async with ModelClient(make_settings(server.base_url, **settings)) as client:
        return await client.complete(MODEL, "hi", timeout_s=10)


def assert_safe_message(text: str) -> None:
    """What any message quoting a provider must be: one encodable line, well under 1 KB."""
    assert len(text.encode("utf-8")) < 1024
    assert "\n" not in text and "\r" not in text
    assert not any(0xD800 <= ord(ch) <= 0xDFFF or ord(ch) < 0x20 for ch in text)


# --- the model client ----------------------------------------------------------------------------


async def test_lone_surrogates_become_replacement_characters(server: FakeModelServer) -> None:
    completion = await complete(server, raw_bytes(completion_body(r'"ok \ud800 and \udfff, \ud83d\ude00 kept"')))
    assert completion.text == "ok \ufffd and \ufffd, \U0001f600 kept"
    completion.text.encode("utf-8")  # what protobuf and the database need


async def test_control_characters_are_replaced_but_layout_is_kept(server: FakeModelServer) -> None:
    # NUL (PostgreSQL refuses it), an ANSI escape, and a raw tab and newline inside the JSON string
    # (not strictly JSON, but providers send them).
    body = completion_body('"a\\u0000b \\u001b[31mred\\u009b\tcol\nline"')
    completion = await complete(server, raw_bytes(body))
    assert completion.text == "a\ufffdb \ufffd[31mred\ufffd\tcol\nline"


@pytest.mark.parametrize(
    "usage, expected",
    [
        ('{"prompt_tokens": 1099511627777, "completion_tokens": 3, "total_tokens": 1099511627780}', (0, 3, 3)),
        ('{"prompt_tokens": 2147483647, "completion_tokens": 2147483647}', (2**31 - 1, 2**31 - 1, MAX_TOKEN_COUNT)),
        ('{"prompt_tokens": 1' + "0" * 5000 + ', "completion_tokens": -4, "total_tokens": 1e999}', (0, 0, 0)),
        ('{"prompt_tokens": 5.0, "completion_tokens": true, "total_tokens": "7"}', (0, 0, 0)),
    ],
    ids=["over-2^40", "int32-max", "5000-digits", "wrong-types"],
)
async def test_token_counts_are_range_checked(server: FakeModelServer, usage: str, expected: tuple) -> None:
    completion = await complete(server, raw_bytes(completion_body('"ok"', usage)))
    usage_counts = (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.total_tokens)
    assert usage_counts == expected
    completion.usage.to_proto()  # int32 fields: must not raise


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 100_000, completion_body("[" * 70 + '"x"' + "]" * 70)],
    ids=["array-100000", "object-100000-unclosed", "content-70-deep"],
)
async def test_deep_json_is_rejected_before_parsing(server: FakeModelServer, body: bytes) -> None:
    with pytest.raises(ModelMalformedResponseError, match=f"deeper than {MAX_JSON_DEPTH}") as raised:
        await complete(server, raw_bytes(body))
    assert len(server.requests) == 1  # final: a provider that answers this will answer it again
    assert_safe_message(str(raised.value))


async def test_brackets_inside_strings_do_not_count_as_depth(server: FakeModelServer) -> None:
    text = "[" * 5000 + '\\"{' * 500
    completion = await complete(server, raw_bytes(completion_body(json.dumps(text))))
    assert completion.text == text


async def test_gzip_header_on_a_plain_body_is_a_malformed_answer(server: FakeModelServer) -> None:
    behaviour = raw_bytes(completion_body(), headers=(("Content-Encoding", "gzip"),))
    with pytest.raises(ModelMalformedResponseError, match="cannot be decoded .Content-Encoding: gzip") as raised:
        await complete(server, behaviour)
    assert_safe_message(str(raised.value))


async def test_a_real_gzip_body_is_read(server: FakeModelServer) -> None:
    behaviour = raw_bytes(gzip.compress(completion_body('"zipped"')), headers=(("Content-Encoding", "gzip"),))
    assert (await complete(server, behaviour)).text == "zipped"


async def test_an_undecodable_error_body_keeps_its_status(server: FakeModelServer) -> None:
    behaviour = raw_bytes(b"not gzip", status=503, headers=(("Content-Encoding", "gzip"),))
    with pytest.raises(ModelProviderError, match="HTTP 503") as raised:
        await complete(server, behaviour)
    assert raised.value.status_code == 503
    assert len(server.requests) == 2  # 503 is retried, as always


async def test_utf16_and_bom_bodies_are_read(server: FakeModelServer) -> None:
    body = completion_body('"caf\\u00e9"').decode()
    assert (await complete(server, raw_bytes(body.encode("utf-16")))).text == "café"
    assert (await complete(server, raw_bytes(b"\xef\xbb\xbf" + body.encode()))).text == "café"


async def test_an_oversized_body_is_not_read_to_the_end(server: FakeModelServer) -> None:
    body = completion_body(json.dumps("x" * (MAX_RESPONSE_BYTES + 10)))
    with pytest.raises(ModelMalformedResponseError, match="larger than 16 MiB") as raised:
        await complete(server, raw_bytes(body))
    assert_safe_message(str(raised.value))


async def test_the_422_with_a_lone_surrogate_becomes_a_safe_message(server: FakeModelServer) -> None:
    body = b'{"error":{"message":"model overloaded \\ud83d\\n\\u0000\\u202e retry later"}}'
    with pytest.raises(ModelProviderError) as raised:
        await complete(server, raw_bytes(body, status=422))
    error = raised.value
    assert error.status_code == 422
    # Shown, not sent: what could not be encoded or would forge a line is a visible escape.
    assert (
        str(error)
        == "model 'acme/model-1': provider 'acme' answered HTTP 422: model overloaded \\ud83d\\n\\x00\\u202e retry later"
    )
    assert_safe_message(str(error))


@pytest.mark.parametrize(
    "body",
    [
        json.dumps({"error": {"message": "\U0001f525" * 5000}}).encode(),
        ("\u00e9\n" * 50_000).encode(),
        b"\xff\xfe\x00" * 10_000,
        b'{"error": {"message": {"nested": "' + b"x" * 10_000 + b'"}}}',
        b"[" * 50_000,
    ],
    ids=["4-byte-chars", "multiline", "binary", "message-not-text", "deep-error-body"],
)
async def test_provider_error_text_is_bounded_and_single_line(server: FakeModelServer, body: bytes) -> None:
    with pytest.raises(ModelProviderError) as raised:
        await complete(server, raw_bytes(body, status=400))
    assert_safe_message(str(raised.value))
    assert len(str(raised.value)) <= 250


@pytest.mark.parametrize("retry_after", ["inf", "nan", "1e308", "-1"])
async def test_absurd_retry_after_values_are_not_used(server: FakeModelServer, retry_after: str) -> None:
    server.script(MODEL, fail(429, retry_after=retry_after), reply("fine"))
    async with ModelClient(make_settings(server.base_url)) as client:
        try:
            completion = await client.complete(MODEL, "hi", timeout_s=10)
        except ModelRateLimitedError as error:  # 1e308 is capped, but still longer than the deadline
            assert error.retry_after_s is None or error.retry_after_s <= 3600
        else:
            assert completion.text == "fine"


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",  # promises a body, then closes
        b"HTTP/1.1 2000 OK\r\n\r\n",
        b"\x00\x01\x02garbage\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-\xff\xfe: \x80\x81\r\nContent-Length: 2\r\n\r\n{}",
    ],
    ids=["short-body", "bad-status", "not-http", "binary-header"],
)
async def test_broken_http_is_a_model_error(server: FakeModelServer, data: bytes) -> None:
    with pytest.raises((ModelProviderError, ModelMalformedResponseError)) as raised:
        await complete(server, raw_response(data))
    assert_safe_message(str(raised.value))


# --- through the services ------------------------------------------------------------------------

CONTENT = "The Paris Agreement was signed in 2015 by 196 countries."

# The examples, and a few more, each a provider answer that used to end a call with UNKNOWN
# or hang it. The call must end with a proper status (or, for Report/Title, a fallback).
BAD_ANSWERS = {
    "lone-surrogate": raw_bytes(completion_body(r'"ok \ud800"')),
    "usage-over-2^40": raw_bytes(completion_body('"ok"', '{"prompt_tokens": 1099511627777, "total_tokens": -1}')),
    "nested-100000": raw_bytes(b"[" * 100_000 + b"]" * 100_000),
    "gzip-on-plain-body": raw_bytes(completion_body(), headers=(("Content-Encoding", "gzip"),)),
    "422-lone-surrogate": raw_bytes(b'{"error":{"message":"model overloaded \\ud83d"}}', status=422),
    "nul-and-escapes": raw_bytes(completion_body('"VERIFICATION claim_1: VERIFIED\\u0000\\u001b[2J"')),
    "broken-http": raw_response(b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{"),
}


@pytest.fixture
async def stubs(server: FakeModelServer):
    settings = make_settings(server.base_url)
    client = ModelClient(settings)
    grpc_server = new_server(settings)  # with the error interceptor, as the real servers are
    extractor_pb2_grpc.add_ExtractorServiceServicer_to_server(ExtractorService(client, settings), grpc_server)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), grpc_server)
    reporter_pb2_grpc.add_ReporterServiceServicer_to_server(ReporterService(client, settings), grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield (
            extractor_pb2_grpc.ExtractorServiceStub(channel),
            checker_pb2_grpc.CheckerServiceStub(channel),
            reporter_pb2_grpc.ReporterServiceStub(channel),
        )
    await grpc_server.stop(None)
    await client.aclose()


def _consensus() -> list:
    verification = ClaimVerification("claim_1", "VERIFIED", "Documented.", None, "HIGH", "fake/checker")
    item = ClaimConsensus("claim_1", "Signed in 2015", "ctx", "DATE", (verification,), "VERIFIED", "HIGH", 100.0, None)
    return [item.to_proto()]


def rpc_calls(stubs, model: str) -> dict[str, Any]:
    extractor, checker, reporter = stubs
    claim = ExtractedClaim("claim_1", "The Paris Agreement was signed in 2015", "ctx", "DATE").to_proto()
    return {
        "Generate": lambda **kw: extractor.Generate(extractor_pb2.GenerateRequest(model=model, question="q"), **kw),
        "Extract": lambda **kw: extractor.Extract(extractor_pb2.ExtractRequest(model=model, content=CONTENT), **kw),
        "Verify": lambda **kw: checker.Verify(
            checker_pb2.VerifyRequest(model=model, content=CONTENT, claims=[claim]), **kw
        ),
        "Report": lambda **kw: reporter.Report(
            reporter_pb2.ReportRequest(model=model, content=CONTENT, consensus=_consensus(), checker_count=1), **kw
        ),
        "Title": lambda **kw: reporter.Title(reporter_pb2.TitleRequest(model=model, question="q"), **kw),
    }


@pytest.mark.parametrize("answer", BAD_ANSWERS, ids=list(BAD_ANSWERS))
async def test_every_rpc_ends_each_bad_answer_with_a_proper_status(stubs, server: FakeModelServer, answer: str):
    model = f"bad/{answer}"
    server.script(model, BAD_ANSWERS[answer])
    for name, call in rpc_calls(stubs, model).items():
        try:
            response = await call(timeout=20)
        except grpc.aio.AioRpcError as error:
            # A hang would end as DEADLINE_EXCEEDED after the 20 s deadline.
            assert error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION), (
                name,
                error.code(),
                error.details(),
            )
            assert_safe_message(error.details() or "")
            assert model in (error.details() or "")
        else:
            if name == "Report" and response.fallback:
                assert not response.HasField("reliability_score")
            for text in (getattr(response, field, "") for field in ("content", "raw_text", "report_text", "title")):
                text.encode("utf-8")
                assert "\x00" not in text and "\ud800" not in text
