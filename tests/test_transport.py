"""Transport: the model name each endpoint expects, dual-stack listening,
and the retry policy on the channels to the stateless services."""

from __future__ import annotations

import asyncio
import os

import grpc
import pytest

from factcheck.kit.channels import open_channel
from factcheck.kit.settings import ProviderOverride, Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import new_server
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2
from factcheck_checker.checker_service import CheckerService
from tests.fake_model_server import FakeModelServer, fail
from tests.processes import start_service


async def test_endpoints_get_their_own_model_names_and_results_keep_the_callers():
    with FakeModelServer() as router, FakeModelServer() as openai, FakeModelServer() as ollama:
        settings = Settings(
            model_base_url=router.base_url,
            model_providers={
                "openai": ProviderOverride(base_url=openai.base_url, strip_prefix=True),
                "ollama": ProviderOverride(base_url=ollama.base_url, model_names={"ollama/llama": "llama3.1:8b"}),
            },
            model_max_retries=0,
        )
        async with ModelClient(settings) as client:
            stripped = await client.complete("openai/o3", "a", timeout_s=5)
            mapped = await client.complete("ollama/llama", "b", timeout_s=5)
            unmapped = await client.complete("ollama/qwen", "c", timeout_s=5)
            routed = await client.complete("anthropic/claude-sonnet-4", "d", timeout_s=5)
    assert [r.model for r in openai.requests] == ["o3"]
    assert [r.model for r in ollama.requests] == ["llama3.1:8b", "ollama/qwen"]
    assert [r.model for r in router.requests] == ["anthropic/claude-sonnet-4"]  # a router takes ids as they are
    assert [c.model for c in (stripped, mapped, unmapped, routed)] == [
        "openai/o3",
        "ollama/llama",
        "ollama/qwen",
        "anthropic/claude-sonnet-4",
    ]


async def test_the_default_endpoint_can_strip_and_map_too():
    with FakeModelServer() as vllm:
        settings = Settings(
            model_base_url=vllm.base_url,
            model_strip_prefix=True,
            model_names={"meta/llama-70b": "meta-llama/Llama-3.3-70B-Instruct"},
            model_max_retries=0,
        )
        async with ModelClient(settings) as client:
            await client.complete("vllm/qwen2.5-7b", "a", timeout_s=5)
            await client.complete("meta/llama-70b", "b", timeout_s=5)
    assert [r.model for r in vllm.requests] == ["qwen2.5-7b", "meta-llama/Llama-3.3-70B-Instruct"]


def test_model_names_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(
        "FACTCHECK_MODEL_PROVIDERS", '{"openai": {"base_url": "https://api.openai.com/v1", "strip_prefix": true}}'
    )
    monkeypatch.setenv("FACTCHECK_MODEL_NAMES", '{"local-llm/big": "big-model-q4"}')
    settings = Settings()
    assert settings.model_providers["openai"].wire_model("openai/o3") == "o3"
    assert settings.model_names == {"local-llm/big": "big-model-q4"}


def test_servers_listen_dual_stack_by_default():
    assert Settings(listen=None).listen_address("gateway") == "[::]:50051"


@pytest.mark.skipif(not os.path.exists("/proc/net/if_inet6"), reason="no IPv6 on this machine")
async def test_a_server_on_the_default_host_answers_over_ipv4_and_ipv6():
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    checker = start_service("checker", {"FACTCHECK_LISTEN": "[::]:0"})
    try:
        assert checker.address is not None
        port = checker.address.rsplit(":", 1)[1]
        for host in ("127.0.0.1", "[::1]"):
            async with grpc.aio.insecure_channel(f"{host}:{port}") as channel:
                # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
                answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)  # type: ignore[attr-defined]
                assert answer.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        checker.stop()


class FlakyChecker(checker_pb2_grpc.CheckerServiceServicer):
    """A replica whose first call finds it going away (UNAVAILABLE before any answer)."""

    def __init__(self) -> None:
        self.calls = 0

    async def Verify(self, request, context):
        self.calls += 1
        if self.calls == 1:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "connection reset by peer")
        return checker_pb2.VerifyResponse(model=request.model)


async def test_a_call_that_finds_its_replica_gone_is_retried():
    flaky = FlakyChecker()
    server = grpc.aio.server()
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(flaky, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with open_channel(f"127.0.0.1:{port}", Settings()) as channel:
            answer = await checker_pb2_grpc.CheckerServiceStub(channel).Verify(
                checker_pb2.VerifyRequest(model="fake/checker"), timeout=10
            )
        assert answer.model == "fake/checker" and flaky.calls == 2
    finally:
        await server.stop(None)


async def test_an_unavailable_model_is_not_retried_again_by_the_channel():
    """The checker answered UNAVAILABLE itself (the provider stayed down through its own retries):
    the channel must not call it again, or every model retry would be multiplied."""
    with FakeModelServer() as models:
        models.script("fake/down", fail(503))
        settings = Settings(model_base_url=models.base_url, model_max_retries=1, model_backoff_base_s=0.01)
        client = ModelClient(settings)
        server = new_server(settings)
        checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with open_channel(f"127.0.0.1:{port}", settings) as channel:
                request = checker_pb2.VerifyRequest(
                    model="fake/down",
                    content="x",
                    claims=[common_pb2.Claim(id="claim_1", claim="x", type=common_pb2.CLAIM_TYPE_STATISTIC)],
                )
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await checker_pb2_grpc.CheckerServiceStub(channel).Verify(request, timeout=10)
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
            await asyncio.sleep(0.2)
            assert len(models.requests_for("fake/down")) == 2  # one attempt and the model client's one retry
        finally:
            await server.stop(None)
            await client.aclose()
