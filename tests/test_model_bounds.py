"""The model client against a server that behaves like a real one (llama.cpp, vLLM, Ollama):
bounded generation, structured output that negotiates, cancellation that stops the server,
the client's deadline before the RPC's, a ledger record of every call sent, and prompts too
long for the context window refused or shrunk before sending. Real loopback HTTP to the
scripted fake (`tests/fake_model_server.py`), real gRPC where a service is involved."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any, Iterator

import grpc
import pytest

from factcheck.kit.errors import error_info_of
from factcheck.kit.rpc import call_timeout_s
from factcheck.kit.settings import ProviderOverride, Settings
from factcheck.models import calls, output_limits
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelPromptTooLongError, ModelProviderError, ModelTimeoutError
from factcheck.models.limits import estimate_tokens
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    common_pb2,
    council_pb2,
    factcheck_pb2,
    factcheck_pb2_grpc,
    usage_pb2,
    usage_pb2_grpc,
)
from factcheck_checker.council_prompts import TRUNCATION_NOTE
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import content_request, kinds
from tests.fake_model_server import (
    Behaviour,
    FakeModelServer,
    HttpAnswer,
    RecordedRequest,
    default_reply,
    plain,
    refuse_json_schema,
    refuse_stream_options,
    reply,
)
from tests.inprocess import inprocess_settings, serve_everything
from tests.test_entailment_agents import _checker, extractor_json, extractor_request

MODEL = "acme/model-1"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
JSON_SCHEMA_FORMAT = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": SCHEMA}}
LONG_ANSWER = " ".join(f"word{n}" for n in range(400))


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def client_for(server: FakeModelServer, **overrides: Any) -> ModelClient:
    values: dict[str, Any] = {
        "model_base_url": server.base_url,
        "model_api_key": None,
        "model_providers": {},
        "model_max_retries": 4,
        "model_backoff_base_s": 0.01,
    }
    return ModelClient(Settings(**{**values, **overrides}))


def form_of(request: RecordedRequest) -> str:
    """The structured-output form a request used."""
    value = request.response_format
    if value is None:
        return "none"
    if value.get("type") == "json_object":
        return "json_object_schema" if "schema" in value else "json_object"
    return str(value.get("type"))


# --- 1. bounded generation ------------------------------------------------------------------------------


async def test_every_call_of_a_fact_check_asks_for_its_roles_output_limit(database_url, fake_models):
    fake_models.reset()
    # A model that never stops when it writes a title: the limit, not the model, ends it.
    fake_models.script("fake/reporter", _title_runs_on())
    settings = inprocess_settings(fake_models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [r.event async for r in stub.Run(content_request(), timeout=60)]
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    assert kinds(events)[-1] == "complete"

    by_kind: dict[str, list[RecordedRequest]] = {}
    for request in fake_models.requests:
        by_kind.setdefault(request.kind, []).append(request)
    assert set(by_kind) == {"extract", "verify", "title", "report"}
    for request in fake_models.requests:
        assert isinstance(request.body.get("max_tokens"), int) and request.body["max_tokens"] > 0, request.kind
    (title,) = by_kind["title"]
    assert title.body["max_tokens"] == output_limits.title().max_tokens == 32
    assert title.body["stop"] == ["\n"]
    assert len(result.title) <= 80
    claims = len(by_kind["verify"][0].prompt.split("CLAIM claim_")) - 1
    for verify in by_kind["verify"]:
        assert verify.body["max_tokens"] == output_limits.verify(claims).max_tokens <= 256 + 300 * claims
    (extract,) = by_kind["extract"]
    assert extract.body["max_tokens"] <= 8192


def _title_runs_on() -> Behaviour:
    """The default answers, but a title that runs on for 400 words (the server cuts it at max_tokens)."""
    inner = default_reply()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if request.kind == "title":
            return reply(LONG_ANSWER)(request, stop)
        return inner(request, stop)

    return Behaviour("title_runs_on", action)


async def test_output_limit_settings_scale_override_cap_and_name_the_field(server: FakeModelServer) -> None:
    providers = {
        "capped": ProviderOverride(base_url=server.base_url, max_output_tokens=100, max_tokens_field="both"),
        "reasoning": ProviderOverride(base_url=server.base_url, max_tokens_field="max_completion_tokens"),
    }
    settings = {"model_output_tokens_scale": 2.0, "model_output_tokens": {"title": 5}, "model_providers": providers}
    async with client_for(server, **settings) as client:
        await client.complete(MODEL, "Say hello", timeout_s=5, limit=output_limits.verify(1))
        await client.complete(MODEL, "Say hello", timeout_s=5, limit=output_limits.title())
        await client.complete("capped/m", "Say hello", timeout_s=5, limit=output_limits.verify(1))
        await client.complete("reasoning/m", "Say hello", timeout_s=5)
    scaled, overridden, capped, default = server.requests
    assert scaled.body["max_tokens"] == 2 * (256 + 300)
    assert overridden.body["max_tokens"] == 5 and overridden.body["stop"] == ["\n"]
    assert capped.body["max_tokens"] == capped.body["max_completion_tokens"] == 100
    assert "max_tokens" not in default.body and default.body["max_completion_tokens"] == 16384


async def test_an_answer_cut_at_its_limit_says_so(server: FakeModelServer) -> None:
    server.script(MODEL, reply(LONG_ANSWER))
    async with client_for(server) as client:
        cut = await client.complete(MODEL, "Title this", timeout_s=5, limit=output_limits.title())
        whole = await client.complete(MODEL, "Title this", timeout_s=5)
        server.script(MODEL, plain(reply(LONG_ANSWER)))
        plain_whole = await client.complete(MODEL, "Title this", timeout_s=5, limit=output_limits.title())
    assert cut.text == " ".join(LONG_ANSWER.split()[:32])
    assert cut.finish_reason == "length" and cut.cut_at_limit
    assert whole.finish_reason == "stop" and not whole.cut_at_limit
    assert plain_whole.finish_reason == "stop"  # a provider that ignores the limit (and says so)


def test_unknown_roles_in_the_output_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown roles titel"):
        Settings(model_output_tokens={"titel": 10})


# --- 4. structured output that negotiates --------------------------------------------------------------


async def test_a_llama_cpp_refusal_of_json_schema_is_learnt_once(server: FakeModelServer) -> None:
    server.script(MODEL, refuse_json_schema(reply('{"answer": "yes"}')))
    async with client_for(server, model_structured_outputs=True) as client:
        first = await client.complete(MODEL, "Answer in JSON", timeout_s=5, response_format=JSON_SCHEMA_FORMAT)
        second = await client.complete(MODEL, "Answer in JSON", timeout_s=5, response_format=JSON_SCHEMA_FORMAT)
    assert json.loads(first.text) == json.loads(second.text) == {"answer": "yes"}
    # One refusal, asked again at once in llama.cpp's form; the next call uses that form directly.
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object_schema", "json_object_schema"]
    assert server.requests[1].response_format == {"type": "json_object", "schema": SCHEMA}


def _refuses_every_response_format() -> Behaviour:
    body = json.dumps({"error": {"message": "response_format is not supported by this server"}}).encode()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if request.response_format is not None:
            return HttpAnswer(400, body)
        return reply('{"answer": "plain"}')(request, stop)

    return Behaviour("refuses_every_response_format", action)


async def test_refusals_step_down_to_plain_prompting(server: FakeModelServer) -> None:
    server.script(MODEL, _refuses_every_response_format())
    async with client_for(server, model_structured_outputs=True) as client:
        completion = await client.complete(MODEL, "Answer in JSON", timeout_s=5, response_format=JSON_SCHEMA_FORMAT)
    assert completion.text == '{"answer": "plain"}'
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object_schema", "json_object", "none"]


async def test_a_refusal_is_never_retried_with_backoff(server: FakeModelServer) -> None:
    # A 500 that names response_format cannot change by waiting: with no structured output asked,
    # the same refusal is final at once instead of five attempts.
    server.script(MODEL, refuse_json_schema())
    async with client_for(server, model_structured_outputs=True, model_structured_output_format="none") as client:
        await client.complete(MODEL, "Answer in JSON", timeout_s=5, response_format=JSON_SCHEMA_FORMAT)
    assert [form_of(r) for r in server.requests] == ["none"]


async def test_a_refused_format_is_asked_again_at_once_whatever_the_backoff(server: FakeModelServer) -> None:
    # llama.cpp refuses json_schema with an HTTP 500, a status that is otherwise retried after a backoff (here
    # seconds): the simpler form goes out at once, and the refusal uses none of the retries.
    server.script(MODEL, refuse_json_schema(reply('{"answer": "plain"}')))
    settings = {"model_structured_outputs": True, "model_backoff_base_s": 20.0, "model_max_retries": 0}
    async with client_for(server, **settings) as client:
        completion = await client.complete(MODEL, "Answer in JSON", timeout_s=30, response_format=JSON_SCHEMA_FORMAT)
    assert completion.text == '{"answer": "plain"}'
    assert [form_of(r) for r in server.requests] == ["json_schema", "json_object_schema"]
    assert server.requests[1].time - server.requests[0].time < 2.0


async def test_a_refusal_of_stream_options_is_learnt_and_usage_estimated(server: FakeModelServer) -> None:
    server.script(MODEL, refuse_stream_options(reply("Hello there")))
    async with client_for(server) as client:
        with calls.collected() as recorded:
            first = await client.complete(MODEL, "Say hello", timeout_s=5)
            await client.complete(MODEL, "Say hello", timeout_s=5)
    assert ["stream_options" in r.body for r in server.requests] == [True, False, False]
    assert first.text == "Hello there" and first.usage.completion_tokens == 3  # 11 characters
    assert [(c.outcome, c.usage_estimated) for c in recorded] == [("ok", True), ("ok", True)]


async def test_an_entailment_agent_negotiates_with_a_llama_cpp_server(fake_models):
    """Through a real checker RPC: the agent asks for its schema, the server refuses json_schema once,
    the agent's answer comes in llama.cpp's form and validates; the next agent call asks in that form."""
    fake_models.reset()
    fake_models.script("fake/extractor", refuse_json_schema(reply(extractor_json("The trial enrolled 300 adults."))))
    settings = Settings(
        model_base_url=fake_models.base_url,
        model_structured_outputs=True,
        model_max_retries=4,
        model_backoff_base_s=0.01,
        stage_timeout_ms=10_000,
    )
    client, server, target = await _checker(settings)
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = checker_pb2_grpc.CheckerServiceStub(channel)
            first = await stub.RunEntailmentAgent(extractor_request())
            second = await stub.RunEntailmentAgent(extractor_request())
    finally:
        await server.stop(None)
        await client.aclose()
    for response in (first, second):
        assert response.attempts == 1 and response.structured
        assert [s.text for s in response.output.extractor.statements] == ["The trial enrolled 300 adults."]
    assert [form_of(r) for r in fake_models.requests] == ["json_schema", "json_object_schema", "json_object_schema"]
    assert fake_models.requests[1].response_format["schema"]["additionalProperties"] is False


# --- 5. cancellation reaches the model ------------------------------------------------------------------


async def _started(server: FakeModelServer, count: int = 1) -> None:
    for _ in range(200):
        if len(server.requests) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the request never reached the server")


async def _disconnect_seen(server: FakeModelServer, within_s: float) -> float:
    """When the server saw the client go away (monotonic), waiting at most `within_s`."""
    give_up = time.monotonic() + within_s
    while time.monotonic() < give_up:
        if server.disconnects:
            return server.disconnects[0].time
        await asyncio.sleep(0.01)
    raise AssertionError(f"the server saw no disconnect within {within_s}s")


async def test_a_cancelled_call_stops_the_servers_generation(server: FakeModelServer) -> None:
    server.script(MODEL, reply(LONG_ANSWER))
    server.set_token_rate(MODEL, 20)  # 400 tokens: 20 s
    async with client_for(server) as client:
        with calls.collected() as recorded:
            call = asyncio.ensure_future(client.complete(MODEL, "Write at length " * 40, timeout_s=30))
            await _started(server)
            await asyncio.sleep(0.5)
            call.cancel()
            cancelled_at = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await call
            seen = await _disconnect_seen(server, within_s=1.0)
    assert seen - cancelled_at < 1.0
    assert server.disconnects[0].tokens_written < 40
    assert server.generated_tokens(MODEL) < 40  # of 400
    # Ledgered: cancelled, with an estimate of the prompt and of the text received so far.
    (record,) = recorded
    assert record.outcome == "cancelled" and record.usage_estimated
    assert record.prompt_tokens >= estimate_tokens("Write at length " * 40)
    assert record.completion_tokens > 0


async def test_a_timed_out_call_stops_the_servers_generation(server: FakeModelServer) -> None:
    server.script(MODEL, reply(LONG_ANSWER))
    server.set_token_rate(MODEL, 20)
    async with client_for(server) as client:
        with calls.collected() as recorded:
            started = time.monotonic()
            with pytest.raises(ModelTimeoutError, match="0.6s deadline"):
                await client.complete(MODEL, "Write at length", timeout_s=0.6)
            seen = await _disconnect_seen(server, within_s=1.0)
    assert seen - started < 0.6 + 1.0
    assert server.generated_tokens(MODEL) < 40
    (record,) = recorded
    assert record.outcome == "ModelTimeoutError" and record.usage_estimated
    assert record.prompt_tokens > 0 and record.completion_tokens > 0


async def test_a_provider_that_does_not_stream_still_answers(server: FakeModelServer) -> None:
    server.script(MODEL, plain(reply("Whole answer", usage={"prompt_tokens": 4, "completion_tokens": 2})))
    async with client_for(server) as client:
        with calls.collected() as recorded:
            completion = await client.complete(MODEL, "Say it", timeout_s=5)
    assert completion.text == "Whole answer" and completion.usage.prompt_tokens == 4
    assert not recorded[0].usage_estimated


# --- 6. the client's deadline fires before the RPC's ------------------------------------------------------


class _Context:
    def __init__(self, remaining: float | None) -> None:
        self._remaining = remaining

    def time_remaining(self) -> float | None:
        return self._remaining


@pytest.mark.parametrize("remaining, most", [(120.0, 118.0), (10.0, 9.5), (2.0, 1.75), (0.2, 0.1)])
def test_a_model_call_ends_well_before_its_rpcs_deadline(remaining: float, most: float) -> None:
    assert 0 < call_timeout_s(_Context(remaining), 30.0) <= most  # type: ignore[arg-type]


async def test_a_timed_out_model_call_reaches_the_caller_as_the_model_clients_message(database_url, fake_models):
    fake_models.reset()
    fake_models.script("fake/checker-a", reply(LONG_ANSWER))
    fake_models.set_token_rate("fake/checker-a", 5)
    settings = inprocess_settings(fake_models.base_url, database_url)
    request = checker_pb2.VerifyRequest(
        model="fake/checker-a",
        content="The Eiffel Tower was completed in 1889.",
        claims=[common_pb2.Claim(id="claim_1", claim="completed in 1889", type=common_pb2.CLAIM_TYPE_DATE)],
    )
    timeout = 2.0
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        loop = asyncio.get_running_loop()
        # The machine is busy around the deadline (a model server holding both cores): the event loop
        # stalls from 0.1 s before the RPC's deadline until after it.
        loop.call_at(loop.time() + timeout - 0.1, time.sleep, 0.3)
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await checker_pb2_grpc.CheckerServiceStub(channel).Verify(request, timeout=timeout)
    error = failure.value
    assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "fake/checker-a" in (error.details() or "") and "deadline" in (error.details() or "")
    info = error_info_of(error)
    assert info is not None and info.reason == "MODEL_TIMEOUT"


# --- 7. a complete ledger from the client's side -----------------------------------------------------------


async def test_streamed_calls_record_the_usage_the_server_reports(server: FakeModelServer) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    server.script(MODEL, reply("one two three four five", usage=usage))
    async with client_for(server) as client:
        with calls.collected() as recorded:
            async with client.stream(MODEL, "Count to five", timeout_s=5) as answer:
                pieces = [piece async for piece in answer]
    assert "".join(pieces) == "one two three four five"
    (record,) = recorded
    assert (record.prompt_tokens, record.completion_tokens, record.usage_estimated) == (11, 5, False)
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


async def test_ledger_rows_and_usage_say_which_counts_are_estimates(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, model_stream_usage=False)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [r.event async for r in stub.Run(content_request(), timeout=60)]
        usage = await usage_pb2_grpc.UsageServiceStub(channel).GetUsage(usage_pb2.GetUsageRequest())
    assert kinds(events)[-1] == "complete"
    store = StageStore(database_url)
    try:
        rows = LedgerStore(store.engine).run_calls(events[0].message_id)
    finally:
        store.close()
    # No usage asked for, none reported: every row is an estimate, and says so.
    assert rows and all(row["usage_estimated"] for row in rows)
    assert all(row["prompt_tokens"] > 0 for row in rows)
    assert usage.total.estimated_calls == usage.total.calls == len(rows)


# --- 8. prompts that cannot fit the context window ----------------------------------------------------------


async def test_a_prompt_too_long_for_the_context_window_is_refused_before_sending(server: FakeModelServer) -> None:
    async with client_for(server, model_context_window=512) as client:
        with calls.collected() as recorded:
            with pytest.raises(ModelPromptTooLongError, match="512-token context window"):
                await client.complete(MODEL, "word " * 1000, timeout_s=5)
    assert server.requests == []
    assert recorded[0].outcome == "ModelPromptTooLongError" and recorded[0].attempts == 0


async def test_a_small_room_lowers_the_output_limit_to_fit(server: FakeModelServer) -> None:
    prompt = "x" * 1600  # about 400 tokens, 416 with the chat template
    async with client_for(server, model_context_window=1000) as client:
        await client.complete(MODEL, prompt, timeout_s=5, limit=output_limits.verify(3))
    assert server.requests[0].body["max_tokens"] == 1000 - 416


async def test_council_answers_are_cut_to_fit_the_window_with_a_note(database_url, fake_models):
    fake_models.reset()
    window = 2048
    settings = inprocess_settings(fake_models.base_url, database_url, model_context_window=window)
    long_answer = "The bridge opened in 1937 and spans the strait. " * 150  # about 1,800 tokens each
    request = council_pb2.CouncilCheckRequest(
        model="fake/checker-a",
        question="When did the Golden Gate Bridge open?",
        responses=[
            council_pb2.LabelledResponse(label="Response A", text=long_answer),
            council_pb2.LabelledResponse(label="Response B", text="It opened in 1937."),
            council_pb2.LabelledResponse(label="Response C", text=long_answer),
        ],
    )
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        response = await checker_pb2_grpc.CheckerServiceStub(channel).CouncilCheck(request, timeout=30)
    assert response.ratings
    (sent,) = fake_models.requests
    assert estimate_tokens(sent.prompt) + sent.body["max_tokens"] <= window
    assert sent.prompt.count(TRUNCATION_NOTE.split("{omitted}")[0]) == 2  # A and C cut, B whole
    assert "> It opened in 1937." in sent.prompt


async def test_unfit_prompts_of_other_roles_fail_with_a_clear_error(server: FakeModelServer) -> None:
    providers = {"small": ProviderOverride(base_url=server.base_url, context_window=64)}
    async with client_for(server, model_providers=providers) as client:
        with pytest.raises(ModelPromptTooLongError) as refused:
            await client.complete("small/m", "word " * 400, timeout_s=5)
        # Another provider is not limited by this one's window.
        await client.complete(MODEL, "word " * 400, timeout_s=5)
    assert "provider 'small'" in refused.value.message and "shorten the input" in refused.value.message
    assert [r.model for r in server.requests] == [MODEL]
    assert not isinstance(refused.value, ModelProviderError)
