"""Run budgets: how much a run may spend (request `budget`, else the tenant's defaults from settings)."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from factcheck.kit.settings import Settings
from factcheck.v1 import evaluation_pb2, factcheck_pb2
from factcheck_gateway.ledger.totals import UsageTotals


class BudgetExceeded(grpc.aio.AioRpcError):
    """A model call refused because the run's budget is spent (RESOURCE_EXHAUSTED, the reason as details).

    It is a failed call like any other to the mode's steps (a checker fails, extraction fails, the
    title falls back), so no mode needs to know about budgets; `execute` then ends the run PARTIAL
    with the reason (the run's ledger remembers it) instead of going on or failing.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(), details=reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


@dataclass(frozen=True)
class Budget:
    max_cost_usd: float | None = None
    max_tokens: int | None = None

    def exceeded_by(self, spent: UsageTotals) -> str | None:
        """Why `spent` leaves no room for another call, or None."""
        if self.max_cost_usd is not None and spent.cost_usd >= self.max_cost_usd:
            return (
                f"The run's budget of ${self.max_cost_usd:.4f} (max_cost_usd) is spent "
                f"(${spent.cost_usd:.4f} used), so it stopped calling models; what it stored is kept."
            )
        if self.max_tokens is not None and spent.total_tokens >= self.max_tokens:
            return (
                f"The run's budget of {self.max_tokens} tokens (max_tokens) is spent "
                f"({spent.total_tokens} used), so it stopped calling models; what it stored is kept."
            )
        return None


UNLIMITED = Budget()


# What carries a budget: a run's request, an evaluation's config, a resume of an evaluation.
BudgetCarrier = factcheck_pb2.RunRequest | evaluation_pb2.EvaluationConfig | evaluation_pb2.ResumeEvaluationRequest


def run_budget(request: BudgetCarrier, settings: Settings, tenant_id: str) -> Budget:
    """The run's budget: the request's fields, else the tenant's defaults, else the gateway's."""
    tenant = settings.tenant_budgets.get(tenant_id)
    max_cost = tenant.max_cost_usd if tenant is not None and tenant.max_cost_usd is not None else None
    max_tokens = tenant.max_tokens if tenant is not None and tenant.max_tokens is not None else None
    if max_cost is None:
        max_cost = settings.run_max_cost_usd
    if max_tokens is None:
        max_tokens = settings.run_max_tokens
    if request.HasField("budget"):
        if request.budget.HasField("max_cost_usd"):
            max_cost = request.budget.max_cost_usd
        if request.budget.HasField("max_tokens"):
            max_tokens = request.budget.max_tokens
    return Budget(max_cost, max_tokens)
