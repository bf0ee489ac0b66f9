"""The MiniCheck dialect: a grounding model on an OpenAI-compatible server (the scripted one,
tests/fake_model_server.py `minicheck`), asked through the one model client for one answer token with its
log-probabilities, by the real CheckerService.Verify.

The checker's probability is what the log-probabilities imply (the sum over the alternatives that read
"yes"), its verdict the threshold's; a server that sends none (or refuses the field) leaves the answer
token, and the evidence says so. Every call is the model's own prompt, one token, ledgered; a failed or
unreadable chunk is told; a model whose every call fails fails the request; a dialect the suite does not
speak is refused naming the setting.
"""

from __future__ import annotations

import asyncio
import math
from contextlib import AsyncExitStack

import grpc
import pytest

from factcheck.kit.settings import Settings
from factcheck.models import calls
from factcheck.models.availability import check_servable, grounding_kind
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2
from factcheck_checker.minicheck import SYSTEM_PROMPT
from factcheck_gateway.request_validation import ValidationError, check_checker_model, check_model
from factcheck_gateway.verification_cache.cached import verify_prompt_label
from tests import fake_model_server
from tests.fake_model_server import (
    Behaviour,
    FakeModelServer,
    fail,
    hold_until_closed,
    minicheck,
    minicheck_alternatives,
    refuse_logprobs,
    reply,
)
from tests.inprocess import serve_checker

MODEL = "vllm/minicheck-7b"
WIRE = "minicheck-7b"  # the name the server sees (strip_prefix)
TOWER = "The Eiffel Tower in Paris was completed in 1889. It is 330 metres tall."
MOON = "The Moon is made of rock and dust."


def _settings(server: FakeModelServer, **overrides) -> Settings:
    values = dict(
        model_base_url=None,
        model_providers={"vllm": {"base_url": server.base_url, "strip_prefix": True, "context_window": 4096}},
        model_dialects={MODEL: "minicheck"},
        model_max_retries=1,
        model_backoff_base_s=0.01,
        stage_timeout_ms=20_000,
    )
    return Settings(**{**values, **overrides})


@pytest.fixture
def server():
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
async def checker_for(server):
    """A CheckerService on a real gRPC server, with the settings given."""
    async with AsyncExitStack() as stack:

        async def start(settings: Settings) -> checker_pb2_grpc.CheckerServiceStub:
            return await stack.enter_async_context(serve_checker(settings))

        yield start


def _request(
    claims: dict[str, str], passages: dict[str, str], listing: dict[str, list[str]]
) -> checker_pb2.VerifyRequest:
    return checker_pb2.VerifyRequest(
        model=MODEL,
        content="c",
        claims=[
            common_pb2.Claim(id=cid, claim=text, context="c", type=common_pb2.CLAIM_TYPE_TECHNICAL)
            for cid, text in claims.items()
        ],
        passages=[
            common_pb2.Passage(id=pid, source_id=f"s-{pid}", source_title=f"Source {pid}", text=text)
            for pid, text in passages.items()
        ],
        evidence=[common_pb2.ClaimEvidence(claim_id=cid, passage_ids=pids) for cid, pids in listing.items()],
    )


def _implied(p_yes: float, top: int = 5) -> float:
    """P(support) as the log-probabilities the scripted server sends imply it (MiniCheck's sum)."""
    return sum(math.exp(lp) for token, lp in minicheck_alternatives(p_yes)[:top] if token.lower() == "yes")


# --- the model client ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_the_client_asks_for_log_probabilities_and_returns_the_first_token_s(server, stream):
    server.script(WIRE, minicheck(lambda document, claim: 0.8, stream=stream))
    async with ModelClient(_settings(server)) as client:
        completion = await client.complete(MODEL, "Document: d\nClaim: c", system="Be brief.", timeout_s=10, logprobs=5)
    assert completion.text == "Yes"
    assert completion.top_logprobs == tuple(minicheck_alternatives(0.8))
    [request] = server.requests
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Document: d\nClaim: c"},
    ]
    assert (request.body["logprobs"], request.body["top_logprobs"], request.body["model"]) == (True, 5, "minicheck-7b")


async def test_a_server_that_refuses_logprobs_is_asked_again_without_them_from_then_on(server):
    server.script(WIRE, refuse_logprobs(minicheck()))
    async with ModelClient(_settings(server)) as client:
        first = await client.complete(MODEL, "Document: d\nClaim: c", timeout_s=10, logprobs=5)
        second = await client.complete(MODEL, "Document: d\nClaim: c", timeout_s=10, logprobs=5)
    assert first.top_logprobs is None and second.top_logprobs is None and first.text in ("Yes", "No")
    assert ["logprobs" in r.body for r in server.requests] == [True, False, False]


def test_a_dialect_the_suite_does_not_speak_is_refused_naming_the_setting(server):
    settings = _settings(server, model_dialects={MODEL: "minichek"})
    with pytest.raises(ModelNotConfiguredError, match=r"FACTCHECK_MODEL_DIALECTS gives it the dialect 'minichek'"):
        check_servable(MODEL, settings)
    provider = _settings(server, model_dialects={})
    provider.model_providers["vllm"].dialect = "yesno"
    with pytest.raises(ModelNotConfiguredError, match=r"FACTCHECK_MODEL_PROVIDERS\['vllm'\].dialect gives it"):
        check_servable(MODEL, provider)
    with pytest.raises(ValidationError, match=r"mode_config.checker_models\[0\]: model 'vllm/minicheck-7b'"):
        check_checker_model("mode_config.checker_models[0]", MODEL, settings)


def test_a_grounding_model_is_a_checker_and_nothing_else(server):
    settings = _settings(server)
    assert grounding_kind(MODEL, settings) == "minicheck" and grounding_kind("vllm/other", settings) is None
    check_checker_model("config.checker_models[0]", MODEL, settings)
    with pytest.raises(ValidationError, match="mode_config.reporter_model: vllm/minicheck-7b is a grounding model"):
        check_model("mode_config.reporter_model", MODEL, settings)


def test_the_verification_cache_keys_a_dialect_by_its_own_prompt_version():
    assert verify_prompt_label("minicheck@1 bespokelabs/Bespoke-MiniCheck-7B") == "minicheck@1"
    assert verify_prompt_label("") == verify_prompt_label("ab12" * 16) == "verify@1"
    assert verify_prompt_label("minicheck@9 x") == "verify@1"  # a version this gateway does not know


# --- Verify through the checker service ---------------------------------------------------------------------


async def test_the_probability_and_the_verdict_are_what_the_log_probabilities_imply(server, checker_for):
    chances = {"The Eiffel Tower is 330 metres tall.": 0.87, "The Eiffel Tower is 500 metres tall.": 0.31}
    server.script(WIRE, minicheck(lambda document, claim: chances[claim]))
    checker = await checker_for(_settings(server))
    claims = {"claim_1": "The Eiffel Tower is 330 metres tall.", "claim_2": "The Eiffel Tower is 500 metres tall."}
    call = checker.Verify(_request(claims, {"P1": TOWER}, {"claim_1": ["P1"], "claim_2": ["P1"]}))
    response = await call
    got = {v.claim_id: v for v in response.verifications}
    supported, unsupported = _implied(0.87), _implied(0.31)
    assert supported == pytest.approx(0.87) and unsupported == pytest.approx(0.31)
    assert (
        got["claim_1"].verdict == common_pb2.VERDICT_VERIFIED
        and got["claim_1"].confidence == common_pb2.CONFIDENCE_HIGH
    )
    assert f"P(supported) {supported:.3f}, threshold 0.50; the best of 1 chunk" in got["claim_1"].evidence
    assert [(c.passage_id, c.quote) for c in got["claim_1"].citations] == [("P1", TOWER)]
    assert got["claim_2"].verdict == common_pb2.VERDICT_UNVERIFIABLE
    assert f"reads P(supported) {unsupported:.3f}, below {MODEL}'s threshold 0.50" in got["claim_2"].evidence
    assert response.engine_revision == "minicheck@1 minicheck-7b" and response.dropped_citations == 0

    # The model's own prompt, one token each, never the verify template.
    prompts = sorted(request.body["messages"][1]["content"] for request in server.requests)
    assert prompts == sorted(f"Document: {TOWER}\nClaim: {claim}" for claim in claims.values())
    for request in server.requests:
        assert request.kind == "minicheck" and request.body["max_tokens"] == 1
        assert request.body["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    ledgered = calls.calls_from_metadata(await call.trailing_metadata()) or []
    assert [(c.model, c.prompt_version, c.completion_tokens, c.usage_estimated) for c in ledgered] == [
        (MODEL, "minicheck@1", 1, False)
    ] * 2
    assert response.usage.completion_tokens == 2


async def test_a_long_document_is_read_in_chunks_and_the_best_chunk_decides(server, checker_for):
    filler = " ".join(f"The city had {n} inhabitants in the year {1700 + n}." for n in range(120))
    document = filler + " The Eiffel Tower is 330 metres tall. " + filler
    server.script(WIRE, minicheck(lambda chunk, claim: 0.93 if "330 metres" in chunk else 0.04))
    checker = await checker_for(
        _settings(server, model_providers={"vllm": {"base_url": server.base_url, "context_window": 1200}})
    )
    response = await checker.Verify(
        _request({"claim_1": "The tower is 330 metres tall."}, {"P1": document}, {"claim_1": ["P1"]})
    )
    [verification] = response.verifications
    chunks = [
        r.body["messages"][1]["content"].split("\nClaim: ")[0].removeprefix("Document: ") for r in server.requests
    ]
    assert len(chunks) >= 4 and all(chunk in document for chunk in chunks)
    assert max(len(chunk) for chunk in chunks) <= 4 * (1200 - 300)
    assert verification.verdict == common_pb2.VERDICT_VERIFIED
    assert f"the best of {len(chunks)} chunks" in verification.evidence
    [citation] = verification.citations
    assert "The Eiffel Tower is 330 metres tall." in citation.quote and citation.quote in document


@pytest.mark.parametrize(
    "behaviour",
    [minicheck(lambda d, c: 0.9, with_logprobs=False), refuse_logprobs(minicheck(lambda d, c: 0.9))],
    ids=["no-logprobs", "refused"],
)
async def test_without_log_probabilities_the_answer_token_decides_and_the_evidence_says_so(
    server, checker_for, behaviour
):
    server.script(WIRE, behaviour)
    checker = await checker_for(_settings(server))
    response = await checker.Verify(_request({"claim_1": "The tower is tall."}, {"P1": TOWER}, {"claim_1": ["P1"]}))
    [verification] = response.verifications
    assert verification.verdict == common_pb2.VERDICT_VERIFIED
    assert "P(supported) 1.000" in verification.evidence
    assert (
        "read from the answer token, Yes 1 and No 0: the server returned no log-probabilities" in verification.evidence
    )


async def test_an_answer_that_is_not_yes_or_no_is_a_chunk_not_read(server, checker_for):
    server.script(WIRE, reply("Maybe"))
    checker = await checker_for(_settings(server))
    response = await checker.Verify(_request({"claim_1": "The tower is tall."}, {"P1": TOWER}, {"claim_1": ["P1"]}))
    [verification] = response.verifications
    assert (
        verification.verdict == common_pb2.VERDICT_UNVERIFIABLE and verification.confidence == common_pb2.CONFIDENCE_LOW
    )
    assert verification.evidence == "Not checked: an answer that is neither Yes nor No ('Maybe')"


async def test_a_failed_chunk_is_told_and_a_model_whose_every_call_fails_fails_the_request(server, checker_for):
    checker = await checker_for(_settings(server))
    supported, failing = minicheck(lambda d, c: 0.9), fail(400)
    # Calls about P1 are answered (supported), calls about P2 fail for good (a 400 is not retried).
    server.script(WIRE, Behaviour("by passage", lambda r, stop: (failing if MOON in r.prompt else supported)(r, stop)))
    passages = {"P1": TOWER, "P2": MOON}
    wanted = {"claim_1": ["P1", "P2"], "claim_2": ["P2"]}
    claims = {"claim_1": "The tower is tall.", "claim_2": "The Moon is rock."}
    response = await checker.Verify(_request(claims, passages, wanted))
    got = {v.claim_id: v for v in response.verifications}
    assert got["claim_1"].verdict == common_pb2.VERDICT_VERIFIED  # MiniCheck never disputes: P2 could only add support
    assert got["claim_2"].verdict == common_pb2.VERDICT_UNVERIFIABLE
    assert got["claim_2"].evidence.startswith("Not checked: the call failed: provider 'vllm' answered HTTP 400")

    server.script(WIRE, fail(400))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await checker.Verify(_request(claims, passages, wanted))
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE and "HTTP 400" in (caught.value.details() or "")


async def test_a_verify_that_runs_out_of_time_closes_every_call(server, checker_for):
    server.script(WIRE, hold_until_closed(20))
    checker = await checker_for(_settings(server))
    before = len(fake_model_server.CLOSED_BY_CLIENT)
    request = _request({"claim_1": "The tower is tall."}, {"P1": TOWER, "P2": MOON}, {"claim_1": ["P1", "P2"]})
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await checker.Verify(request, timeout=1.5)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    for _ in range(100):
        if len(fake_model_server.CLOSED_BY_CLIENT) - before >= 2:
            break
        await asyncio.sleep(0.05)
    assert fake_model_server.CLOSED_BY_CLIENT[before:] == ["minicheck-7b", "minicheck-7b"]


async def test_a_claim_without_passages_is_not_checked_and_sends_nothing(server, checker_for):
    checker = await checker_for(_settings(server))
    response = await checker.Verify(_request({"claim_1": "The tower is tall."}, {}, {}))
    [verification] = response.verifications
    assert verification.verdict == common_pb2.VERDICT_UNVERIFIABLE and server.requests == []
    assert "judges claims only against the passages it is given" in verification.evidence


async def test_an_unknown_dialect_is_failed_precondition_at_the_checker(server, checker_for):
    checker = await checker_for(_settings(server, model_dialects={MODEL: "yesno"}))
    for call in (
        checker.GetEngineRevision(checker_pb2.GetEngineRevisionRequest(model=MODEL)),
        checker.Verify(_request({"claim_1": "x y z"}, {"P1": TOWER}, {"claim_1": ["P1"]})),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "FACTCHECK_MODEL_DIALECTS gives it the dialect 'yesno'" in (caught.value.details() or "")
