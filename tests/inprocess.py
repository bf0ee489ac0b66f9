"""Every factcheck service on one in-process grpc.aio server, built as the real servers are
(`factcheck.serving.server.new_server`: options, interceptors, health), for tests that need every RPC
on a given database without starting processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.engines import register_builtin_engines
from factcheck.kit.health_servicer import HealthServicer
from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import add_port, new_server
from factcheck.v1 import (
    checker_pb2_grpc,
    citations_pb2_grpc,
    evaluation_pb2_grpc,
    extractor_pb2_grpc,
    factcheck_pb2_grpc,
    investigation_pb2_grpc,
    knowledge_pb2_grpc,
    reporter_pb2_grpc,
    usage_pb2_grpc,
)
from factcheck_checker.checker_service import CheckerService
from factcheck_extractor.extractor_service import ExtractorService
from factcheck_gateway.claims.claim_store import ClaimsStore
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.knowledge.passage_store import KnowledgeStore
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.main import start_fact_check_service
from factcheck_gateway.reviews.review_store import ReviewStore
from factcheck_gateway.runs.database_gate import DatabaseGate
from factcheck_gateway.runs.run import Downstream
from factcheck_gateway.servicers.claims import ClaimsService
from factcheck_gateway.servicers.evaluations import EvaluationService
from factcheck_gateway.servicers.fact_check import FactCheckService
from factcheck_gateway.servicers.knowledge import KnowledgeService
from factcheck_gateway.servicers.reviews import ReviewService
from factcheck_gateway.servicers.usage import UsageService
from factcheck_gateway.store.stage_store import StageStore
from factcheck_reporter.reporter_service import ReporterService

SERVICE_NAMES = (
    "factcheck.v1.FactCheckService",
    "factcheck.v1.KnowledgeService",
    "factcheck.v1.ReviewService",
    "factcheck.v1.ClaimsService",
    "factcheck.v1.UsageService",
    "factcheck.v1.EvaluationService",
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
async def serve_checker(settings: Settings) -> AsyncIterator[checker_pb2_grpc.CheckerServiceStub]:
    """The CheckerService alone on a loopback port, built as the real server is (its engines registered), and a
    stub to it."""
    register_builtin_engines()
    client = ModelClient(settings)
    server = new_server(settings)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield checker_pb2_grpc.CheckerServiceStub(channel)
    finally:
        await server.stop(None)
        await client.aclose()


@asynccontextmanager
async def serve_everything(settings: Settings, *, authenticate: bool = False) -> AsyncIterator[InProcess]:
    """Gateway, knowledge, extractor, checker, reporter and health on one loopback port; the
    gateway's downstream calls go to the same server. The built-in engines are registered here, as each model
    service's main registers them."""
    register_builtin_engines()
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
    evaluations = EvaluationService(EvaluationStore(store.engine), metadata_free.checker, settings)
    evaluation_pb2_grpc.add_EvaluationServiceServicer_to_server(evaluations, server)
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
        await evaluations.stop()
        await gateway.drain(5)
        await registry.stop()
        if notifications is not None:
            await notifications.stop()
        await channel.close()
        await client.aclose()
        store.close()
