"""Peak memory of each service after a run on the built-in local/ models (the embedded default).

Starts the four services with no model configured, loads the demo's examples/knowledge, checks
its examples/sample.txt (cli/factcheck_cli/examples/), then reads each process's peak resident memory (VmHWM).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import grpc

from bench.pipeline import peak_memory_mb
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc, knowledge_pb2, knowledge_pb2_grpc
from factcheck_cli.demo import EXAMPLES
from factcheck_cli.documents import document_files, read_document
from tests.processes import start_suite


async def _run_sample(target: str) -> str:
    async with grpc.aio.insecure_channel(target) as channel:
        documents = [read_document(path, folder) for path, folder in document_files([EXAMPLES / "knowledge"])]
        await knowledge_pb2_grpc.KnowledgeServiceStub(channel).AddDocuments(
            knowledge_pb2.AddDocumentsRequest(documents=documents)
        )
        request = factcheck_pb2.RunRequest(
            question="sample",
            mode=factcheck_pb2.MODE_FACT_CHECK,
            mode_config=factcheck_pb2.FactCheckConfig(content_to_check=(EXAMPLES / "sample.txt").read_text()),
        )
        events = [r.event async for r in factcheck_pb2_grpc.FactCheckServiceStub(channel).Run(request, timeout=120)]
        return events[-1].WhichOneof("event")


def service_peak_memory() -> dict[str, float]:
    """Peak MB per service process after one local run (database in a temporary folder)."""
    database = Path(tempfile.mkdtemp()) / "engines.db"
    suite = start_suite({"FACTCHECK_DATABASE_URL": f"sqlite:///{database}"})
    try:
        ended = asyncio.run(_run_sample(suite.gateway_target))
        if ended != "complete":
            raise RuntimeError(f"the local run ended with {ended}")
        return {name: peak_memory_mb(service.process.pid) for name, service in suite.services.items()}
    finally:
        suite.stop()


if __name__ == "__main__":
    for name, megabytes in service_peak_memory().items():
        print(f"{name:<10} {megabytes:.0f} MB peak")
