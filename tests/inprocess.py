"""Every factcheck service on one in-process grpc.aio server, built as the real servers are
(`factcheck.server.new_server`: options, interceptors, health), for tests that need every RPC
on a given database without starting processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.health_servicer import HealthServicer
from factcheck.models.client import ModelClient
from factcheck.server import add_port, new_server
from factcheck.services.checker.service import CheckerService
from factcheck.services.extractor.service import ExtractorService
from factcheck.services.gateway.claims.service import ClaimsService
from factcheck.services.gateway.claims.store import ClaimsStore
from factcheck.services.gateway.database_gate import DatabaseGate
from factcheck.services.gateway.knowledge.retrieval import Retriever
from factcheck.services.gateway.knowledge.service import KnowledgeService
from factcheck.services.gateway.knowledge.store import KnowledgeStore
from factcheck.services.gateway.ledger.service import UsageService
from factcheck.services.gateway.main import start_fact_check_service
from factcheck.services.gateway.reviews.service import ReviewService
from factcheck.services.gateway.reviews.store import ReviewStore
from factcheck.services.gateway.run import Downstream
from factcheck.services.gateway.service import FactCheckService
from factcheck.services.gateway.store.store import StageStore
from factcheck.services.reporter.service import ReporterService
from factcheck.settings import Settings
from factcheck.v1 import (
    checker_pb2_grpc,
    citations_pb2_grpc,
    extractor_pb2_grpc,
    factcheck_pb2_grpc,
    investigation_pb2_grpc,
    knowledge_pb2_grpc,
    reporter_pb2_grpc,
    usage_pb2_grpc,
)

SERVICE_NAMES = (
    "factcheck.v1.FactCheckService",
    "factcheck.v1.KnowledgeService",
    "factcheck.v1.ReviewService",
    "factcheck.v1.ClaimsService",
    "factcheck.v1.UsageService",
    "factcheck.v1.ExtractorService",
    "factcheck.v1.CheckerService",
    "factcheck.v1.ReporterService",
)


def inprocess_settings(model_base_url: str, database_url: str, **overrides) -> Settings:
    values = dict(
        model_base_url=model_base_url,
        database_url=database_url,
        default_generator_model="fake/generator",
        default_extractor_model="fake/extractor",
        default_checker_models=["fake/checker-a", "fake/checker-b"],
        default_reporter_model="fake/reporter",
        model_max_retries=1,
        model_backoff_base_s=0.01,
        stage_timeout_ms=10_000,
    )
    return Settings(**{**values, **overrides})


@dataclass
class InProcess:
    target: str
    health: HealthServicer
    gateway: FactCheckService


@asynccontextmanager
async def serve_everything(settings: Settings, *, authenticate: bool = False) -> AsyncIterator[InProcess]:
    """Gateway, knowledge, extractor, checker, reporter and health on one loopback port; the
    gateway's downstream calls go to the same server."""
    client = ModelClient(settings)
    store = StageStore(settings.database_url)
    database = DatabaseGate(settings.database_url)
    await database.open()
    knowledge = KnowledgeStore(store.engine)
    retriever = Retriever(knowledge, None)
    server = new_server(settings, authenticate=authenticate)
    port = add_port(server, "127.0.0.1:0", settings)
    target = f"127.0.0.1:{port}"
    channel = grpc.aio.insecure_channel(target)
    metadata_free = Downstream(
        extractor=extractor_pb2_grpc.ExtractorServiceStub(channel),
        checker=checker_pb2_grpc.CheckerServiceStub(channel),
        reporter=reporter_pb2_grpc.ReporterServiceStub(channel),
    )
    gateway, registry, notifications = start_fact_check_service(settings, store, metadata_free, retriever, database)
    factcheck_pb2_grpc.add_FactCheckServiceServicer_to_server(gateway, server)
    knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeService(knowledge, retriever), server)
    investigation_pb2_grpc.add_ReviewServiceServicer_to_server(
        ReviewService(ReviewStore(store.engine), gateway.hub.notify), server
    )
    citations_pb2_grpc.add_ClaimsServiceServicer_to_server(ClaimsService(ClaimsStore(store.engine)), server)
    usage_pb2_grpc.add_UsageServiceServicer_to_server(UsageService(registry.ledger_store, settings), server)
    extractor_pb2_grpc.add_ExtractorServiceServicer_to_server(ExtractorService(client, settings), server)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    reporter_pb2_grpc.add_ReporterServiceServicer_to_server(ReporterService(client, settings), server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    await server.start()
    for name in ("", *SERVICE_NAMES):
        await health.set(name, health_pb2.HealthCheckResponse.SERVING)
    try:
        yield InProcess(target, health, gateway)
    finally:
        await server.stop(None)
        await gateway.drain(5)
        await registry.stop()
        if notifications is not None:
            await notifications.stop()
        await channel.close()
        await client.aclose()
        store.close()
