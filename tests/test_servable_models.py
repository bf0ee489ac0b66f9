"""Which engines and models a checker serves: the checker answers (CheckerService.GetServableModels) from the
engines registered in its process and its settings; the gateway validates a request's local/ and onnx/ models
against that answer, kept a few seconds, and refuses none of them when the checker cannot say."""

from __future__ import annotations

import subprocess
import sys

import grpc
import pytest

from factcheck.kit.settings import Settings
from factcheck.models.availability import UNKNOWN, ServableModels, check_servable
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.local import CHECKER
from factcheck.v1 import checker_pb2
from factcheck_checker.checker_service import CheckerService
from factcheck_gateway.request_validation import ValidationError, check_checker_model, check_model, checking_against
from factcheck_gateway.servable_models import ServableModelsCache, servable_models_from_proto

SETTINGS = Settings(
    model_base_url="http://127.0.0.1:9/v1",
    model_providers={"openai": {"base_url": "http://127.0.0.1:9/v1"}, "nowhere": {"base_url": ""}},
    onnx_models={"nli": "/models/nli"},
)
# A checker that serves two engines, one of them a checker, and no onnx/ model.
SMALL = ServableModels(local_engines={"checker": frozenset({CHECKER}), "reporter": frozenset()})


async def test_the_checker_answers_its_engines_onnx_names_providers_and_dialects():
    service = CheckerService(client=None, settings=SETTINGS)  # type: ignore[arg-type]  # (no model call)
    answer = await service.GetServableModels(checker_pb2.GetServableModelsRequest(), None)  # type: ignore[arg-type]
    engines = {engine.name: list(engine.roles) for engine in answer.local_engines}
    assert engines["checker"] == ["checker"] and engines["checker-lexical"] == ["checker"]
    assert engines["reporter"] == [] and engines["generator"] == []
    assert [engine.name for engine in answer.local_engines] == sorted(engines)
    assert list(answer.engine_families) == ["onnx/"] and list(answer.onnx_models) == ["nli"]
    assert list(answer.providers) == ["", "openai"] and list(answer.dialects) == ["chat", "minicheck"]
    # What the gateway reads back is what this process serves.
    assert servable_models_from_proto(answer) == ServableModels.here(SETTINGS)


def test_validation_names_the_engines_the_checker_serves_not_this_processs():
    with checking_against(SMALL), pytest.raises(ValidationError) as refused:
        check_checker_model("config.checker_models[0]", "local/checker-lexical", SETTINGS)
    assert str(refused.value) == (
        "config.checker_models[0]: model 'local/checker-lexical': unknown local engine 'checker-lexical' "
        "(available: checker)"
    )
    with checking_against(SMALL), pytest.raises(ValidationError) as refused:
        check_checker_model("config.checker_models[0]", "local/reporter", SETTINGS)
    assert "local engine 'reporter' is not a checker (the checker engines: checker)" in str(refused.value)
    with checking_against(SMALL), pytest.raises(ValidationError) as refused:
        check_checker_model("config.checker_models[0]", "onnx/nli", SETTINGS)
    assert "no folder is configured for onnx/nli" in str(refused.value) and "(configured: none)" in str(refused.value)
    with checking_against(SMALL):
        check_model("mode_config.reporter_model", "local/reporter", SETTINGS)
    # Outside the block, this process's engines (the tests register the built-in ones).
    check_checker_model("config.checker_models[0]", "local/checker-lexical", SETTINGS)


def test_an_unknown_answer_refuses_no_local_or_onnx_name_but_still_judges_http_models():
    with checking_against(UNKNOWN):
        check_checker_model("config.checker_models[0]", "local/anything", SETTINGS)
        check_checker_model("config.checker_models[0]", "onnx/anything", SETTINGS)
        with pytest.raises(ValidationError, match="no endpoint configured for provider 'nowhere'"):
            check_model(
                "mode_config.reporter_model", "nowhere/model", Settings(model_providers=SETTINGS.model_providers)
            )
    with pytest.raises(ModelNotConfiguredError):
        check_servable("local/anything", SETTINGS, served=SMALL)


class FakeChecker:
    """A checker stub that counts GetServableModels calls; `down` makes it unreachable."""

    def __init__(self) -> None:
        self.calls = 0
        self.down = False

    async def GetServableModels(self, request, timeout=None):
        self.calls += 1
        if self.down:
            raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "down")
        return checker_pb2.GetServableModelsResponse(
            local_engines=[checker_pb2.ServableEngine(name="checker", roles=["checker"])]
        )


async def test_the_gateway_keeps_the_answer_a_few_seconds_and_never_keeps_a_failure():
    now = [100.0]
    checker = FakeChecker()
    cache = ServableModelsCache(checker, SETTINGS, ttl_s=5.0, clock=lambda: now[0])  # type: ignore[arg-type]
    assert (await cache.get()).local_engines == {"checker": frozenset({"checker"})}
    now[0] += 4.9
    await cache.get()
    assert checker.calls == 1
    now[0] += 0.2
    checker.down = True
    assert await cache.get() is UNKNOWN
    assert await cache.get() is UNKNOWN and checker.calls == 3  # a failure is asked again
    checker.down = False
    assert (await cache.get()).known and checker.calls == 4


def test_the_gateway_process_holds_no_engine():
    """The import contract says no gateway module imports factcheck.engines; this says the process does not
    either: importing its main and servicers loads no engine module."""
    code = (
        "import sys\n"
        "import factcheck_gateway.main, factcheck_gateway.servicers.evaluations\n"
        "print(sorted(m for m in sys.modules if m.startswith('factcheck.engines')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split() == ["[]"]
