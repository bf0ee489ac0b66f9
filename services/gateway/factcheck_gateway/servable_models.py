"""What the checker can serve, asked of it: the gateway registers no engine, so which `local/` engines and
`onnx/` names a request may name is the checker's answer (CheckerService.GetServableModels), not the gateway's
install. The answer is kept SERVABLE_MODELS_TTL_S seconds, so a burst of runs asks once and a redeployed checker
is seen within seconds.

A checker that cannot be reached (or does not know the RPC) gives no answer: validation then refuses no
`local/` or `onnx/` name (`availability.UNKNOWN`), the run starts, and its first call to the checker fails as
any checker failure does; the failure is not kept, so the next request asks again. HTTP models are judged by the
gateway's own settings either way (docs/api.md, "Which models a checker serves").
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import grpc

from factcheck.kit.settings import Settings
from factcheck.models.availability import UNKNOWN, ServableModels
from factcheck.v1 import checker_pb2, checker_pb2_grpc

log = logging.getLogger("factcheck.gateway")

# How long an answer is kept, in seconds.
SERVABLE_MODELS_TTL_S = 5.0
# The longest the gateway waits for an answer before it validates without one.
SERVABLE_MODELS_TIMEOUT_S = 5.0


def servable_models_from_proto(response: checker_pb2.GetServableModelsResponse) -> ServableModels:
    return ServableModels(
        local_engines={engine.name: frozenset(engine.roles) for engine in response.local_engines},
        engine_families=frozenset(response.engine_families),
        onnx_models=frozenset(response.onnx_models),
    )


class ServableModelsCache:
    """The checker's latest answer, asked again once it is `ttl_s` seconds old."""

    def __init__(
        self,
        checker: checker_pb2_grpc.CheckerServiceStub,
        settings: Settings,
        *,
        ttl_s: float = SERVABLE_MODELS_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._checker = checker
        self._timeout_s = min(SERVABLE_MODELS_TIMEOUT_S, settings.stage_timeout_ms / 1000)
        self._ttl_s = ttl_s
        self._clock = clock
        self._answer: ServableModels | None = None
        self._asked_at = 0.0
        self._lock = asyncio.Lock()

    async def get(self) -> ServableModels:
        """What the checker serves (UNKNOWN when it could not say)."""
        if (answer := self._fresh_answer()) is not None:
            return answer
        async with self._lock:  # one question at a time: the others wait for its answer
            if (answer := self._fresh_answer()) is not None:
                return answer
            try:
                response = await self._checker.GetServableModels(
                    checker_pb2.GetServableModelsRequest(), timeout=self._timeout_s
                )
            except grpc.aio.AioRpcError as error:
                log.warning("could not ask the checker which models it serves: %s", error.code().name)
                return UNKNOWN
            self._answer = servable_models_from_proto(response)
            self._asked_at = self._clock()
            return self._answer

    def _fresh_answer(self) -> ServableModels | None:
        """The answer kept, while it is younger than `ttl_s`."""
        if self._answer is not None and self._clock() - self._asked_at < self._ttl_s:
            return self._answer
        return None
