"""Sums of ledger rows: what a run, a tenant or a group of calls used and cost."""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.v1 import usage_pb2

OUTCOME_OK = "ok"
# A verification or extraction reused from the cache: a ledger row without a model call.
OUTCOME_CACHE_HIT = "cache_hit"
# A call the run cut short before its service reported it (its usage is an estimate).
OUTCOME_CANCELLED = "cancelled"


@dataclass
class UsageTotals:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    failed_calls: int = 0
    cache_hits: int = 0
    # Calls whose token counts are estimates, not the providers' reports.
    estimated_calls: int = 0

    def add_row(self, row: dict) -> None:
        """Count one ledger row (model_calls columns)."""
        if row["outcome"] == OUTCOME_CACHE_HIT:
            self.cache_hits += 1
            return
        self.prompt_tokens += row["prompt_tokens"]
        self.completion_tokens += row["completion_tokens"]
        self.cached_tokens += row["cached_tokens"]
        self.total_tokens += row["total_tokens"]
        self.cost_usd += row["cost_usd"]
        self.calls += 1
        if row["outcome"] != OUTCOME_OK:
            self.failed_calls += 1
        if row.get("usage_estimated"):
            self.estimated_calls += 1

    def add(self, other: UsageTotals) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_proto(self) -> usage_pb2.RunUsage:
        return usage_pb2.RunUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            cached_tokens=self.cached_tokens,
            total_tokens=self.total_tokens,
            cost_usd=round(self.cost_usd, 9),
            calls=self.calls,
            failed_calls=self.failed_calls,
            cache_hits=self.cache_hits,
            estimated_calls=self.estimated_calls,
        )
