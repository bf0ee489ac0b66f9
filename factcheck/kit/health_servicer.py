"""The `grpc.health.v1.Health` servicer every factcheck server registers: grpc's asyncio
reference servicer (Check, Watch, graceful shutdown) plus `List`, which that one leaves out."""

from __future__ import annotations

from typing import Any

from grpc_health.v1 import health_pb2
from grpc_health.v1._async import HealthServicer as _ReferenceHealthServicer


class HealthServicer(_ReferenceHealthServicer):
    async def List(self, request: Any, context: Any) -> Any:
        """Every service this server reports on ("" is the whole server) with its status now."""
        # (types-grpcio-health-checking predates List and the reference servicer's status table.)
        response = health_pb2.HealthListResponse()  # type: ignore[attr-defined]
        for service, status in self._server_status.items():  # type: ignore[attr-defined]
            response.statuses[service].status = status
        return response
