"""`factcheck-gateway`: serve FactCheckService; `factcheck-gateway migrate` only upgrades the database."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging

import grpc

from factcheck.server import CHANNEL_OPTIONS, configure_logging, run_server, service_full_name
from factcheck.settings import Settings, get_settings
from factcheck.v1 import (
    checker_pb2_grpc,
    extractor_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
    reporter_pb2_grpc,
)
from services.gateway.knowledge.rerank import make_reranker
from services.gateway.knowledge.retrieval import Retriever
from services.gateway.knowledge.service import KnowledgeService
from services.gateway.knowledge.store import KnowledgeStore
from services.gateway.pipeline import Downstream
from services.gateway.service import FactCheckService
from services.gateway.store.migrate import upgrade_database
from services.gateway.store.store import StageStore

log = logging.getLogger("factcheck.gateway")

# Several checker replicas behind one DNS name: spread calls over all of them.
ROUND_ROBIN = ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))


def open_channels(settings: Settings) -> tuple[list[grpc.aio.Channel], Downstream]:
    options = list(CHANNEL_OPTIONS)
    extractor = grpc.aio.insecure_channel(settings.extractor_target, options=options)
    checker = grpc.aio.insecure_channel(settings.checker_target, options=[*options, ROUND_ROBIN])
    reporter = grpc.aio.insecure_channel(settings.reporter_target, options=options)
    downstream = Downstream(
        extractor=extractor_pb2_grpc.ExtractorServiceStub(extractor),
        checker=checker_pb2_grpc.CheckerServiceStub(checker),
        reporter=reporter_pb2_grpc.ReporterServiceStub(reporter),
    )
    return [extractor, checker, reporter], downstream


async def serve(settings: Settings) -> None:
    upgrade_database(settings.database_url)
    store = StageStore(settings.database_url)
    knowledge = KnowledgeStore(store.engine)
    retriever = Retriever(knowledge, make_reranker(settings.evidence_rerank))
    channels, downstream = open_channels(settings)
    service = FactCheckService(settings, store, downstream, retriever)

    def register(server: grpc.aio.Server) -> list[str]:
        factcheck_pb2_grpc.add_FactCheckServiceServicer_to_server(service, server)
        knowledge_pb2_grpc.add_KnowledgeServiceServicer_to_server(KnowledgeService(knowledge, retriever), server)
        return [
            service_full_name(factcheck_pb2, "FactCheckService"),
            service_full_name(knowledge_pb2, "KnowledgeService"),
        ]

    async def on_stop() -> None:
        await service.drain(settings.shutdown_grace_s)
        for channel in channels:
            await channel.close()
        store.close()

    await run_server("factcheck-gateway", settings, register, on_stop=on_stop)


def main() -> None:
    parser = argparse.ArgumentParser(prog="factcheck-gateway", description="The factcheck gateway (FactCheckService).")
    parser.add_argument("command", nargs="?", choices=["serve", "migrate"], default="serve")
    args = parser.parse_args()
    settings = get_settings()
    configure_logging(settings)
    if args.command == "migrate":
        upgrade_database(settings.database_url)
        print("database is at the latest schema")
        return
    asyncio.run(serve(settings))


if __name__ == "__main__":
    main()
