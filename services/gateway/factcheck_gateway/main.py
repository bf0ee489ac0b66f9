"""`factcheck-gateway`: serve FactCheckService and the knowledge, claims, review, usage and evaluation APIs (`SERVICES`);
`factcheck-gateway migrate` only upgrades the database."""

from __future__ import annotations

import asyncio
import logging
from typing import cast

import grpc

from factcheck.kit.channels import open_channel
from factcheck.kit.observability import metrics, otel
from factcheck.kit.observability.interceptors import RunMetadataStub
from factcheck.kit.settings import Settings, get_settings
from factcheck.serving.server import configure_logging, run_server, service_argument_parser, service_full_name
from factcheck.v1 import (
    checker_pb2_grpc,
    citations_pb2,
    citations_pb2_grpc,
    evaluation_pb2,
    evaluation_pb2_grpc,
    extractor_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    investigation_pb2,
    investigation_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
    reporter_pb2_grpc,
    usage_pb2,
    usage_pb2_grpc,
)
from factcheck_gateway import mode_dispatch
from factcheck_gateway.claims.claim_store import ClaimsStore
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.knowledge.passage_store import KnowledgeStore
from factcheck_gateway.knowledge.rerank import make_reranker
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.reviews.review_store import ReviewStore
from factcheck_gateway.runs.concurrency_limit import RunLimit
from factcheck_gateway.runs.database_gate import DatabaseGate
from factcheck_gateway.runs.registry import RunRegistry
from factcheck_gateway.runs.run import Downstream
from factcheck_gateway.runs.watch import EventHub, PostgresNotifications
from factcheck_gateway.servicers.claims import ClaimsService
from factcheck_gateway.servicers.evaluations import EvaluationService
from factcheck_gateway.servicers.fact_check import FactCheckService
from factcheck_gateway.servicers.knowledge import KnowledgeService
from factcheck_gateway.servicers.reviews import ReviewService
from factcheck_gateway.servicers.usage import UsageService
from factcheck_gateway.store.migrate import upgrade_database
from factcheck_gateway.store.paging import configure_page_tokens
from factcheck_gateway.store.stage_store import StageStore

log = logging.getLogger("factcheck.gateway")

__all__ = ["SERVICES", "main", "open_channels", "serve"]

# The gRPC services the gateway serves (`serve` registers each; --help names them).
SERVICES = (
    service_full_name(factcheck_pb2, "FactCheckService"),
    service_full_name(knowledge_pb2, "KnowledgeService"),
    service_full_name(citations_pb2, "ClaimsService"),
    service_full_name(investigation_pb2, "ReviewService"),
    service_full_name(usage_pb2, "UsageService"),
    service_full_name(evaluation_pb2, "EvaluationService"),
)


def open_channels(settings: Settings) -> tuple[list[grpc.aio.Channel], Downstream]:
    """Channels to the three services (TLS, tracing, message limits per settings).

    Checkers are the scaled service: several replicas behind one target (a DNS name), so
    their channel balances with round_robin over every address the target resolves to.
    """
    extractor = open_channel(settings.extractor_target, settings)
    checker = open_channel(settings.checker_target, settings, round_robin=True)
    reporter = open_channel(settings.reporter_target, settings)
    # Each call carries its run's message_id, so the services' logs name the run too. (The casts: a
    # RunMetadataStub has every method of the stub it wraps.)
    downstream = Downstream(
        extractor=cast(
            extractor_pb2_grpc.ExtractorServiceStub,
            RunMetadataStub(extractor_pb2_grpc.ExtractorServiceStub(extractor)),
        ),
        checker=cast(
            checker_pb2_grpc.CheckerServiceStub, RunMetadataStub(checker_pb2_grpc.CheckerServiceStub(checker))
        ),
        reporter=cast(
            reporter_pb2_grpc.ReporterServiceStub, RunMetadataStub(reporter_pb2_grpc.ReporterServiceStub(reporter))
        ),
    )
    return [extractor, checker, reporter], downstream


def start_fact_check_service(
    settings: Settings, store: StageStore, downstream: Downstream, retriever: Retriever, database: DatabaseGate
) -> tuple[FactCheckService, RunRegistry, PostgresNotifications | None]:
    """FactCheckService with what makes runs durable running: lease heartbeats, recovery of runs
    whose gateway died, and (PostgreSQL) the notifications that wake watchers and cancel runs.
    Stop with `registry.stop()` and `notifications.stop()`."""
    hub = EventHub()
    run_limit = RunLimit(settings.max_concurrent_runs, settings.max_concurrent_runs_per_tenant)
    registry = RunRegistry(settings, store, downstream, retriever, hub, run_limit, mode_dispatch)
    service = FactCheckService(settings, store, registry, hub, run_limit, database)
    registry.start(database.wait_ready)
    notifications = None
    if PostgresNotifications.supported(settings.database_url):
        notifications = PostgresNotifications(settings.database_url, hub.notify, registry.on_cancel_notification)
        notifications.start()
    return service, registry, notifications


async def serve(settings: Settings) -> None:
    otel.setup(settings, "factcheck-gateway")  # before the channels, which carry the trace context
    database = DatabaseGate(settings.database_url)
    await database.open()
    store = StageStore(settings.database_url)
    configure_page_tokens([key.get_secret_value() for key in settings.page_token_keys], ttl_s=settings.page_token_ttl_s)
    knowledge = KnowledgeStore(store.engine)
    retriever = Retriever(knowledge, make_reranker(settings.evidence_rerank))
    channels, downstream = open_channels(settings)
    service, registry, notifications = start_fact_check_service(settings, store, downstream, retriever, database)
    metrics.track_runs_in_flight(lambda: service.run_limit.in_flight)
    evaluations = EvaluationService(
        EvaluationStore(store.engine), downstream.checker, settings, service.hub, registry.servable_models
    )
    evaluations.start(database.wait_ready)

    def register(server: grpc.aio.Server) -> list[str]:
        factcheck_pb2_grpc.add_FactCheckServiceServicer_to_server(service, server)
        knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeService(knowledge, retriever), server)
        investigation_pb2_grpc.add_ReviewServiceServicer_to_server(
            ReviewService(ReviewStore(store.engine), service.hub.notify), server
        )
        citations_pb2_grpc.add_ClaimsServiceServicer_to_server(ClaimsService(ClaimsStore(store.engine)), server)
        usage_pb2_grpc.add_UsageServiceServicer_to_server(UsageService(registry.ledger_store, settings), server)
        evaluation_pb2_grpc.add_EvaluationServiceServicer_to_server(evaluations, server)
        return list(SERVICES)

    async def on_stop() -> None:
        await evaluations.stop()
        await registry.stop()
        if notifications is not None:
            await notifications.stop()
        for channel in channels:
            await channel.close()
        store.close()

    await run_server(
        "factcheck-gateway",
        settings,
        register,
        on_drain=service.drain,  # in-flight runs finish within the same grace period as the calls
        on_stop=on_stop,
        authenticate=True,
    )


def main() -> None:
    parser = service_argument_parser(
        "factcheck-gateway",
        f"Serve the factcheck gateway ({', '.join(SERVICES)}) on FACTCHECK_LISTEN (default [::]:50051), "
        "with its database at FACTCHECK_DATABASE_URL.",
    )
    parser.add_argument(
        "command",
        nargs="?",
        choices=["serve", "migrate"],
        default="serve",
        help="serve (the default), or migrate: only upgrade the database to the latest schema",
    )
    args = parser.parse_args()
    settings = get_settings()
    configure_logging(settings, "factcheck-gateway")
    if (data_dir := settings.embedded_data_dir()) is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
    if args.command == "migrate":
        upgrade_database(settings.database_url)
        print("database is at the latest schema")
        return
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
