"""Entailment mode's stage rows: names, orders and roles (documented in docs/modes.md).

Item i (0-49) has five rows in an order range of its own, 500 + 5i ... 500 + 5i + 4:

    entail_{i}_extractor    500 + 5i      role entailment_extractor
    entail_{i}_reliability  500 + 5i + 1  role entailment_reliability
    entail_{i}_judge        500 + 5i + 2  role entailment_judge
    entail_{i}_auditor      500 + 5i + 3  role entailment_auditor
    entail_{i}_final        500 + 5i + 4  role aggregator (the final aggregated output, or the item's error)

so the mode uses 500-749 (fact-check mode 0-99, council 100-499). An agent that failed has no row:
its cause is in the run's failures under its stage name.
"""

from __future__ import annotations

from factcheck.core.entailment_rules import AGENT_KEYS
from factcheck.v1 import entailment_pb2 as pb

STAGE_PREFIX, BASE_ORDER, ORDERS_PER_ITEM = "entail_", 500, 5
MAX_ITEMS = 50
FINAL = "final"
ROLE_AGGREGATOR = "aggregator"
_SLOTS = {
    pb.ENTAILMENT_AGENT_EXTRACTOR: 0,
    pb.ENTAILMENT_AGENT_RELIABILITY: 1,
    pb.ENTAILMENT_AGENT_JUDGE: 2,
    pb.ENTAILMENT_AGENT_AUDITOR: 3,
}
AGENT_BY_KEY = {key: agent for agent, key in AGENT_KEYS.items()}


def _check_index(index: int) -> None:
    if not 0 <= index < MAX_ITEMS:
        raise ValueError(f"item index out of range: {index}")


def agent_stage(index: int, agent: pb.EntailmentAgent) -> tuple[str, int]:
    _check_index(index)
    return f"{STAGE_PREFIX}{index}_{AGENT_KEYS[agent]}", BASE_ORDER + ORDERS_PER_ITEM * index + _SLOTS[agent]


def final_stage(index: int) -> tuple[str, int]:
    _check_index(index)
    return f"{STAGE_PREFIX}{index}_{FINAL}", BASE_ORDER + ORDERS_PER_ITEM * index + 4


def agent_role(agent: pb.EntailmentAgent) -> str:
    return f"entailment_{AGENT_KEYS[agent]}"


def parse_stage(stage_type: str) -> tuple[int, str] | None:
    """(item index, "extractor" | ... | "final") of an entailment stage name, else None."""
    if not stage_type.startswith(STAGE_PREFIX):
        return None
    index, _, kind = stage_type[len(STAGE_PREFIX) :].partition("_")
    if not index.isdigit() or (kind not in AGENT_BY_KEY and kind != FINAL):
        return None
    return int(index), kind
