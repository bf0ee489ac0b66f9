"""The model client against real loopback HTTP (FakeModelServer), and the fake server's defaults."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import socket
import time
from typing import Any, Iterator

import pytest

from factcheck.core.domain import TokenUsage
from factcheck.kit.settings import ProviderOverride, Settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import (
    ModelError,
    ModelMalformedResponseError,
    ModelNotConfiguredError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.models.inputs import TitleInputs
from factcheck.models.local import get_local_engine, register_local_engine, unregister_local_engine
from tests.fake_model_server import (
    DEFAULT_TITLE,
    FakeModelServer,
    bad_shape,
    default_answer,
    delay,
    disconnect,
    fail,
    garbage,
    hang,
    raw_bytes,
    reply,
    verdicts,
)

SECRET = "sk-test-SECRET-0123456789"
OTHER_SECRET = "sk-other-SECRET-9876543210"
MODEL = "acme/model-1"

# Whole-answer regexes of the claim and verification formats, to check the fake server's default formats.
CLAIM_RE = re.compile(
    r"CLAIM\s+(\d+):\s*(.+)\nContext:\s*(.+)\nType:\s*(STATISTIC|DATE|ATTRIBUTION|TECHNICAL|COMPARISON|CAUSAL)", re.I
)
VERIFICATION_RE = re.compile(
    r"VERIFICATION\s+(claim_\d+):\s*(VERIFIED|DISPUTED|UNVERIFIABLE)\nEvidence:\s*([\s\S]*?)\n"
    r"Correction:\s*([\s\S]*?)\nConfidence:\s*(HIGH|MEDIUM|LOW)",
    re.I,
)


def make_settings(base_url: str | None, **overrides: Any) -> Settings:
    """Settings with fast retries; every model field explicit so the environment cannot leak in."""
    values: dict[str, Any] = {
        "model_base_url": base_url,
        "model_api_key": None,
        "model_providers": {},
        "model_max_concurrency": 16,
        "model_max_retries": 2,
        "model_backoff_base_s": 0.01,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def closed_port() -> int:
    """A loopback port with nothing listening (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def extraction_prompt(content: str) -> str:
    return (
        "You are a claim extraction engine. Analyze the following content and identify ALL verifiable "
        'factual claims. A "claim" is a discrete assertion that could theoretically be checked for accuracy.\n\n'
        f"CONTENT:\n{content}\n\n"
        "Extract each verifiable claim. Include:\n- Specific factual statements (dates, numbers, statistics)\n"
    )


def verification_prompt(claims: list[str]) -> str:
    blocks = "".join(f"CLAIM claim_{n}: {c}\nContext: {c}\nType: TECHNICAL\n\n" for n, c in enumerate(claims, 1))
    return (
        "You are a fact-checker. Verify each of the following claims extracted from a piece of content.\n\n"
        "ORIGINAL CONTENT (for context):\nSome content.\n\n"
        f"CLAIMS TO VERIFY:\n{blocks}"
        "For EACH claim, provide:\n- Verdict: VERIFIED / DISPUTED / UNVERIFIABLE\n\n"
        "Format:\n\nVERIFICATION {{id}}: {{VERDICT}}\n"
    )


# --- success and routing -------------------------------------------------------------------


async def test_success_returns_text_usage_and_latency(server: FakeModelServer) -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    server.script(MODEL, delay(0.05, reply("Hello there world", usage=usage)))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete(MODEL, "Say hello", timeout_s=5)
    assert completion.text == "Hello there world"
    assert completion.usage == TokenUsage(prompt_tokens=7, completion_tokens=3, total_tokens=10)
    assert completion.latency_ms >= 40
    assert completion.model == MODEL
    (request,) = server.requests
    # Always streamed (a cancelled call then stops the server), always bounded, usage asked for.
    assert request.body == {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Say hello"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 16384,
    }


async def test_content_parts_are_joined_and_missing_usage_is_estimated(server: FakeModelServer) -> None:
    parts = b'[{"type": "text", "text": "Hello "}, {"type": "text", "text": "world"}]'
    body = b'{"choices": [{"message": {"content": ' + parts + b"}}]}"
    server.script(MODEL, raw_bytes(body))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete(MODEL, "hi", timeout_s=5)
    assert completion.text == "Hello world"
    # No usage reported: about four characters a token, plus the chat template's few.
    assert completion.usage == TokenUsage(prompt_tokens=1 + 16, completion_tokens=3, total_tokens=20)


async def test_provider_overrides_choose_endpoint_and_key() -> None:
    with FakeModelServer() as default_server, FakeModelServer() as special_server, FakeModelServer() as keyless_server:
        settings = make_settings(
            default_server.base_url,
            model_api_key=SECRET,
            model_providers={
                "special": ProviderOverride(base_url=special_server.base_url + "/", api_key=OTHER_SECRET),
                "keyless": ProviderOverride(base_url=keyless_server.base_url),
            },
        )
        async with ModelClient(settings) as client:
            await client.complete("special/m", "a", timeout_s=5)
            await client.complete("keyless/m", "b", timeout_s=5)
            await client.complete("plain/m", "c", timeout_s=5)
        assert [r.model for r in special_server.requests] == ["special/m"]
        assert special_server.requests[0].headers["authorization"] == f"Bearer {OTHER_SECRET}"
        # An override without a key sends none: the default key never goes to another provider.
        assert [r.model for r in keyless_server.requests] == ["keyless/m"]
        assert "authorization" not in keyless_server.requests[0].headers
        assert [r.model for r in default_server.requests] == ["plain/m"]
        assert default_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_no_key_means_no_authorization_header(server: FakeModelServer) -> None:
    async with ModelClient(make_settings(server.base_url)) as client:
        await client.complete(MODEL, "hi", timeout_s=5)
    assert "authorization" not in server.requests[0].headers


async def test_key_is_never_logged_nor_in_error_messages(
    server: FakeModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="factcheck.models")
    server.script("ok/m", reply("fine"))
    # A provider that echoes the key back in its error message.
    server.script("bad/m", fail(401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    prompt = "a confidential prompt that must not be logged"
    async with ModelClient(make_settings(server.base_url, model_api_key=SECRET)) as client:
        await client.complete("ok/m", prompt, timeout_s=5)
        with pytest.raises(ModelProviderError) as caught:
            await client.complete("bad/m", prompt, timeout_s=5)
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert caught.value.status_code == 401
    assert SECRET not in str(caught.value) and "Incorrect API key provided: ***" in str(caught.value)
    assert "model=ok/m outcome=ok" in caplog.text and "attempts=1" in caplog.text
    assert SECRET not in caplog.text
    assert prompt not in caplog.text


# --- retries -------------------------------------------------------------------------------


async def test_429_retry_after_is_honoured_then_success(server: FakeModelServer) -> None:
    server.script(MODEL, fail(429, retry_after=0.3), reply("ok"))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete(MODEL, "hi", timeout_s=5)
    assert completion.text == "ok"
    first, second = server.requests
    assert second.time - first.time >= 0.28


async def test_5xx_is_retried_then_success(server: FakeModelServer) -> None:
    server.script(MODEL, fail(500), fail(502), reply("ok"))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete(MODEL, "hi", timeout_s=5)
    assert completion.text == "ok"
    assert len(server.requests) == 3


async def test_dropped_connection_is_retried(server: FakeModelServer) -> None:
    server.script(MODEL, disconnect(), reply("ok"))
    async with ModelClient(make_settings(server.base_url)) as client:
        assert (await client.complete(MODEL, "hi", timeout_s=5)).text == "ok"
    assert len(server.requests) == 2


async def test_400_is_not_retried(server: FakeModelServer) -> None:
    server.script(MODEL, fail(400, body={"error": {"message": "unknown model name"}}))
    async with ModelClient(make_settings(server.base_url)) as client:
        with pytest.raises(ModelProviderError) as caught:
            await client.complete(MODEL, "hi", timeout_s=5)
    assert caught.value.status_code == 400
    assert "unknown model name" in str(caught.value)
    assert caught.value.model == MODEL
    assert len(server.requests) == 1


async def test_5xx_retries_exhausted(server: FakeModelServer) -> None:
    server.script(MODEL, fail(503))
    async with ModelClient(make_settings(server.base_url, model_max_retries=2)) as client:
        with pytest.raises(ModelProviderError) as caught:
            await client.complete(MODEL, "hi", timeout_s=5)
    assert caught.value.status_code == 503
    assert len(server.requests) == 3


async def test_429_retries_exhausted(server: FakeModelServer) -> None:
    server.script(MODEL, fail(429, retry_after=0.01))
    async with ModelClient(make_settings(server.base_url, model_max_retries=1)) as client:
        with pytest.raises(ModelRateLimitedError):
            await client.complete(MODEL, "hi", timeout_s=5)
    assert len(server.requests) == 2


async def test_connection_refused_is_retried_then_provider_error(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="factcheck.models")
    settings = make_settings(f"http://127.0.0.1:{closed_port()}/v1", model_max_retries=2)
    async with ModelClient(settings) as client:
        with pytest.raises(ModelProviderError) as caught:
            await client.complete(MODEL, "hi", timeout_s=5)
    assert caught.value.status_code is None
    assert "attempts=3" in caplog.text


async def test_wait_past_the_deadline_gives_up_with_the_last_error(server: FakeModelServer) -> None:
    server.script(MODEL, fail(503, retry_after=30))
    started = time.monotonic()
    async with ModelClient(make_settings(server.base_url)) as client:
        with pytest.raises(ModelProviderError) as caught:
            await client.complete(MODEL, "hi", timeout_s=2)
    assert caught.value.status_code == 503
    assert time.monotonic() - started < 10  # not the 30 s Retry-After: generous, machines are noisy
    assert len(server.requests) == 1


async def test_backoff_is_full_jitter_from_the_configured_base(server: FakeModelServer) -> None:
    """Before the n-th retry the client waits uniform(0, base * 2^(n-1)): with the random generator seeded,
    the waits between the requests are exactly the draws of that formula (plus the request's own time)."""
    server.script(MODEL, fail(503), fail(500), fail(502), reply("ok"))
    base = 0.15
    saved = random.getstate()
    try:
        random.seed(20261127)
        expected = [random.uniform(0, base * 2 ** (n - 1)) for n in (1, 2, 3)]
        random.seed(20261127)
        settings = make_settings(server.base_url, model_max_retries=3, model_backoff_base_s=base)
        async with ModelClient(settings) as client:
            assert (await client.complete(MODEL, "hi", timeout_s=10)).text == "ok"
    finally:
        random.setstate(saved)
    times = [request.time for request in server.requests]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert len(gaps) == 3
    for gap, wait in zip(gaps, expected):
        assert wait - 0.01 <= gap <= wait + 0.5, (gaps, expected)


async def test_retry_after_replaces_the_jittered_backoff(server: FakeModelServer) -> None:
    # A backoff base of 20 s would wait seconds; the provider's Retry-After: 0 is taken instead.
    server.script(MODEL, fail(429, retry_after=0), fail(503, retry_after=0), reply("ok"))
    started = time.monotonic()
    async with ModelClient(make_settings(server.base_url, model_backoff_base_s=20.0)) as client:
        assert (await client.complete(MODEL, "hi", timeout_s=30)).text == "ok"
    assert len(server.requests) == 3
    assert time.monotonic() - started < 5  # not the 20 s of a jittered wait: generous, machines are noisy


async def test_a_jittered_wait_past_the_deadline_ends_the_call_at_once(server: FakeModelServer) -> None:
    """The call's budget bounds the retries as well: a wait that would end past the deadline is not
    started, the call fails with the last error."""
    server.script(MODEL, fail(502))
    saved = random.getstate()
    try:
        random.seed(3)  # the first wait, uniform(0, 30) (the ceiling is capped at 30 s), draws 7.1 s
        started = time.monotonic()
        async with ModelClient(make_settings(server.base_url, model_backoff_base_s=60.0)) as client:
            with pytest.raises(ModelProviderError) as caught:
                await client.complete(MODEL, "hi", timeout_s=3)
    finally:
        random.setstate(saved)
    assert caught.value.status_code == 502
    assert len(server.requests) == 1 and time.monotonic() - started < 2.5


# --- timeouts and malformed answers --------------------------------------------------------


async def test_hang_times_out_near_the_deadline(server: FakeModelServer) -> None:
    server.script(MODEL, hang())
    started = time.monotonic()
    async with ModelClient(make_settings(server.base_url)) as client:
        with pytest.raises(ModelTimeoutError):
            await client.complete(MODEL, "hi", timeout_s=0.4)
    assert time.monotonic() - started < 10  # near the deadline, not a hang: generous, machines are noisy


async def test_expired_deadline_is_a_timeout(server: FakeModelServer) -> None:
    async with ModelClient(make_settings(server.base_url)) as client:
        with pytest.raises(ModelTimeoutError):
            await client.complete(MODEL, "hi", timeout_s=0)


@pytest.mark.parametrize("behaviour", [garbage(), bad_shape(), raw_bytes(b'{"choices": [{"message": {}}]}')], ids=repr)
async def test_malformed_answers(server: FakeModelServer, behaviour: Any) -> None:
    server.script(MODEL, behaviour)
    async with ModelClient(make_settings(server.base_url)) as client:
        with pytest.raises(ModelMalformedResponseError):
            await client.complete(MODEL, "hi", timeout_s=5)
    assert len(server.requests) == 1


async def test_invalid_utf8_is_replaced_not_fatal(server: FakeModelServer) -> None:
    server.script(MODEL, raw_bytes(b'{"choices": [{"message": {"content": "caf\xc3\x28 \xff ok"}}]}'))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete(MODEL, "hi", timeout_s=5)
    assert "\ufffd" in completion.text and completion.text.endswith("ok")


async def test_missing_base_url_is_not_configured() -> None:
    async with ModelClient(make_settings(None)) as client:
        with pytest.raises(ModelNotConfiguredError, match="FACTCHECK_MODEL_BASE_URL"):
            await client.complete("openai/gpt-4o", "hi", timeout_s=5)


# --- concurrency ---------------------------------------------------------------------------


@pytest.mark.parametrize("use_override", [True, False], ids=["override", "default"])
async def test_concurrency_is_bounded_per_provider(server: FakeModelServer, use_override: bool) -> None:
    if use_override:
        settings = make_settings(
            None, model_providers={"slow": ProviderOverride(base_url=server.base_url, max_concurrency=2)}
        )
    else:
        settings = make_settings(server.base_url, model_max_concurrency=2)
    server.script("slow/m", delay(0.15, reply("done")))
    server.script("fast/m", delay(0.15, reply("done")))
    async with ModelClient(settings) as client:
        calls = [client.complete("slow/m", f"q{i}", timeout_s=5) for i in range(6)]
        if not use_override:  # another provider prefix has its own slots
            calls += [client.complete("fast/m", f"f{i}", timeout_s=5) for i in range(2)]
        results = await asyncio.gather(*calls)
    assert all(result.text == "done" for result in results)
    assert server.peak_in_flight("slow/m") == 2
    if not use_override:
        assert server.peak_in_flight() >= 3


# --- local engines -------------------------------------------------------------------------


@pytest.fixture
def echo_engine() -> Iterator[str]:
    register_local_engine("test-echo", lambda prompt, inputs: f"echo: {prompt}")
    yield "test-echo"
    unregister_local_engine("test-echo")


async def test_local_engine_runs_in_process(server: FakeModelServer, echo_engine: str) -> None:
    async with ModelClient(make_settings(None)) as client:
        completion = await client.complete(f"local/{echo_engine}", "two words", timeout_s=5)
    assert completion.text == "echo: two words"
    assert completion.usage == TokenUsage(prompt_tokens=2, completion_tokens=3, total_tokens=5)
    assert completion.model == "local/test-echo"
    assert server.requests == []


async def test_the_call_inputs_reach_a_local_engine_and_never_go_on_the_wire(server: FakeModelServer) -> None:
    seen: list[object] = []

    def recording_engine(prompt: str, inputs: object) -> str:
        seen.append(inputs)
        return "ok"

    register_local_engine("test-inputs", recording_engine)
    inputs = TitleInputs("the secret question", "the secret content")
    server.script(MODEL, reply("Hello"))
    try:
        async with ModelClient(make_settings(server.base_url)) as client:
            await client.complete("local/test-inputs", "Say hello", timeout_s=5, inputs=inputs)
            async with client.stream("local/test-inputs", "Say hello", timeout_s=5, inputs=inputs) as answer:
                assert [piece async for piece in answer] == ["ok"]
            await client.complete("local/test-inputs", "Say hello", timeout_s=5)
            await client.complete(MODEL, "Say hello", timeout_s=5, inputs=inputs)
    finally:
        unregister_local_engine("test-inputs")
    assert seen == [inputs, inputs, None]
    (request,) = server.requests
    assert request.body["messages"] == [{"role": "user", "content": "Say hello"}]
    assert "secret" not in json.dumps(request.body)


async def test_unknown_local_engine_names_the_available_ones(echo_engine: str) -> None:
    async with ModelClient(make_settings(None)) as client:
        with pytest.raises(ModelNotConfiguredError, match="test-echo") as caught:
            await client.complete("local/no-such-engine", "hi", timeout_s=5)
    assert caught.value.model == "local/no-such-engine"
    with pytest.raises(ModelNotConfiguredError):
        get_local_engine("no-such-engine")


async def test_slow_local_engine_times_out() -> None:
    def slow(prompt: str, inputs: object) -> str:
        time.sleep(0.5)
        return "late"

    register_local_engine("test-slow", slow)
    try:
        async with ModelClient(make_settings(None)) as client:
            with pytest.raises(ModelTimeoutError):
                await client.complete("local/test-slow", "hi", timeout_s=0.1)
    finally:
        unregister_local_engine("test-slow")


async def test_failing_local_engine_is_a_provider_error() -> None:
    def broken(prompt: str, inputs: object) -> str:
        raise RuntimeError("engine exploded")

    register_local_engine("test-broken", broken)
    try:
        async with ModelClient(make_settings(None)) as client:
            with pytest.raises(ModelProviderError, match="engine exploded"):
                await client.complete("local/test-broken", "hi", timeout_s=5)
    finally:
        unregister_local_engine("test-broken")


# --- the fake server itself ----------------------------------------------------------------


def test_default_extract_answer_has_a_claim_per_sentence() -> None:
    content = "The bridge opened in 1937. It is 2,737 metres long.\nIt is painted orange."
    text = default_answer(extraction_prompt(content))
    claims = CLAIM_RE.findall(text)
    assert [(n, claim, kind) for n, claim, _, kind in claims] == [
        ("1", "The bridge opened in 1937.", "DATE"),
        ("2", "It is 2,737 metres long.", "STATISTIC"),
        ("3", "It is painted orange.", "TECHNICAL"),
    ]
    assert "EXTRACTION SUMMARY:\nTotal claims: 3" in text


def test_default_extract_answer_without_sentences_has_no_claims() -> None:
    text = default_answer(extraction_prompt("42 ... 1999 !!"))
    assert "No verifiable claims found." in text
    assert not re.search(r"^CLAIM\s+\d+:", text, re.M)


def test_default_verify_answer_verifies_every_claim() -> None:
    text = default_answer(verification_prompt(["A is B.", "C is D.", "E is F."]))
    found = VERIFICATION_RE.findall(text)
    assert [(claim_id, verdict, correction, level) for claim_id, verdict, _, correction, level in found] == [
        ("claim_1", "VERIFIED", "N/A", "HIGH"),
        ("claim_2", "VERIFIED", "N/A", "HIGH"),
        ("claim_3", "VERIFIED", "N/A", "HIGH"),
    ]
    assert "VERIFICATION SUMMARY:\nVerified: 3\nDisputed: 0\nUnverifiable: 0" in text


def test_default_generate_report_and_title_answers() -> None:
    generated = default_answer("Answer the following question comprehensively. Include facts.\n\nQUESTION:\nWhy?")
    assert 3 <= len(re.findall(r"[.!?](\s|$)", generated)) <= 4 and re.search(r"\b\d{4}\b", generated)
    report_prompt = "You are producing a fact-check report for the following content.\n\nORIGINAL CONTENT:\nX.\n"
    report = default_answer(report_prompt)
    assert "# Fact-Check Report" in report and "## Overall Reliability Score: 85" in report
    assert default_answer("Write a short title for this.") == DEFAULT_TITLE


async def test_scripted_verdicts_and_kinds_are_recorded(server: FakeModelServer) -> None:
    server.script("checker/a", verdicts({"claim_2": "DISPUTED"}, correction="It is E.", confidence={"claim_1": "LOW"}))
    async with ModelClient(make_settings(server.base_url)) as client:
        completion = await client.complete("checker/a", verification_prompt(["A is B.", "C is D."]), timeout_s=5)
        await client.complete("other/x", "Write a short title for: something", timeout_s=5)
    found = VERIFICATION_RE.findall(completion.text)
    assert [(v[0], v[1], v[3], v[4]) for v in found] == [
        ("claim_1", "VERIFIED", "N/A", "LOW"),
        ("claim_2", "DISPUTED", "It is E.", "HIGH"),
    ]
    assert [request.kind for request in server.requests] == ["verify", "title"]


async def test_script_last_behaviour_repeats_and_reset_forgets(server: FakeModelServer) -> None:
    server.script(MODEL, reply("one"), reply("two"))
    async with ModelClient(make_settings(server.base_url)) as client:
        texts = [(await client.complete(MODEL, "hi", timeout_s=5)).text for _ in range(3)]
        server.reset()
        after_reset = (await client.complete(MODEL, "Write a short title", timeout_s=5)).text
    assert texts == ["one", "two", "two"]
    assert after_reset == DEFAULT_TITLE
    assert len(server.requests) == 1


async def test_set_latency_delays_a_kind(server: FakeModelServer) -> None:
    server.set_latency("title", 0.2)
    async with ModelClient(make_settings(server.base_url)) as client:
        slow = await client.complete(MODEL, "Write a short title", timeout_s=5)
        fast = await client.complete(MODEL, "anything else", timeout_s=5)
    assert slow.latency_ms >= 180
    assert fast.latency_ms < 180


async def test_hanging_request_does_not_block_shutdown() -> None:
    server = FakeModelServer().start()
    server.script(MODEL, hang())
    async with ModelClient(make_settings(server.base_url, model_max_retries=0)) as client:
        call = asyncio.create_task(client.complete(MODEL, "hi", timeout_s=10))
        while not server.requests:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await asyncio.to_thread(server.stop)
        assert time.monotonic() - started < 10  # a hang would never end: generous, machines are noisy
        with pytest.raises(ModelError):
            await call
