"""FactCheckService: Run (streamed pipeline), GetResult and ListResults."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator

import grpc

from factcheck.errors import NotFound, Reason, Unavailable
from factcheck.observability.context import bind_message_id
from factcheck.settings import Settings
from factcheck.text_safety import excerpt
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from services.gateway.database_gate import DatabaseGate
from services.gateway.events import EventStream
from services.gateway.knowledge.retrieval import Retriever
from services.gateway.pipeline import Downstream, Run, run_pipeline
from services.gateway.results import load_fact_check_result, message_summary
from services.gateway.run_limit import RunLimit
from services.gateway.store.store import StageStore
from services.gateway.store_calls import DATABASE_RETRY_AFTER_S, call_store, page_size, page_token, resource_id
from services.gateway.validation import validate_run_request

log = logging.getLogger("factcheck.gateway")

DATABASE_UNAVAILABLE = "The results database is unavailable, so nothing was run. Try again shortly."
RESULTS_UNAVAILABLE = "The results database is unavailable. Try again shortly."


class FactCheckService(factcheck_pb2_grpc.FactCheckServiceServicer):
    def __init__(
        self,
        settings: Settings,
        store: StageStore,
        downstream: Downstream,
        retriever: Retriever,
        database: DatabaseGate,
    ) -> None:
        self._settings = settings
        self._database = database
        self._store = store
        self._downstream = downstream
        self._retriever = retriever
        # Runs outlive their RPC (a caller that disconnects does not stop its run); keep them referenced.
        self._runs: set[asyncio.Task] = set()
        self.run_limit = RunLimit(settings.max_concurrent_runs)

    async def Run(
        self, request: factcheck_pb2.RunRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[factcheck_pb2.RunResponse]:
        # Concurrent-run limit: RESOURCE_EXHAUSTED beyond FACTCHECK_MAX_CONCURRENT_RUNS (run_limit.py).
        slot = await self.run_limit.admit(context)

        plan = validate_run_request(request, self._settings)

        if not self._database.ready:
            raise Unavailable(
                DATABASE_UNAVAILABLE, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=DATABASE_RETRY_AFTER_S
            )
        message_id = str(uuid.uuid4())
        bind_message_id(message_id)  # log lines of this call and of its run carry it
        conversation_id = plan.conversation_id or str(uuid.uuid4())
        await call_store(
            DATABASE_UNAVAILABLE,
            self._store.create_message,
            message_id,
            conversation_id,
            plan.question,
            plan.request_config(),
        )

        events = EventStream(message_id)
        run = Run(
            plan=plan,
            message_id=message_id,
            conversation_id=conversation_id,
            store=self._store,
            downstream=self._downstream,
            events=events,
            deadline=time.monotonic() + self._settings.global_timeout_s,
            retriever=self._retriever,
        )
        task = asyncio.create_task(run_pipeline(run), name=f"run-{message_id}")
        self._runs.add(task)
        task.add_done_callback(self._runs.discard)
        slot.hold_until_done(task)
        async for event in events:
            yield factcheck_pb2.RunResponse(event=event)

    async def GetResult(
        self, request: factcheck_pb2.GetResultRequest, context: grpc.aio.ServicerContext
    ) -> factcheck_pb2.GetResultResponse:
        message_id = resource_id("message_id", request.message_id)
        result = await call_store(RESULTS_UNAVAILABLE, load_fact_check_result, self._store, message_id)
        if result is None:
            raise NotFound(
                f"No fact-check with message_id '{excerpt(message_id)}'",
                reason=Reason.RESULT_NOT_FOUND,
                resource_type="factcheck.v1.FactCheckResult",
                resource_name=message_id,
            )
        return factcheck_pb2.GetResultResponse(result=result)

    async def ListResults(
        self, request: factcheck_pb2.ListResultsRequest, context: grpc.aio.ServicerContext
    ) -> factcheck_pb2.ListResultsResponse:
        records, next_token = await call_store(
            RESULTS_UNAVAILABLE,
            self._store.list_messages,
            page_size(request.page_size),
            page_token(request.page_token),
        )
        return factcheck_pb2.ListResultsResponse(
            results=[message_summary(record) for record in records], next_page_token=next_token or ""
        )

    async def drain(self, timeout_s: float) -> None:
        """Give in-flight runs up to timeout_s to finish (graceful shutdown)."""
        if self._runs:
            log.info("waiting up to %.1fs for %d in-flight runs", timeout_s, len(self._runs))
            await asyncio.wait(set(self._runs), timeout=timeout_s)
