"""The gateway's modes, by their `Mode` enum value.

Each mode is one package that declares its plan, steps and result in its mode.py (`base.Mode`); adding a
mode means adding its package and one line here, never touching another mode.
"""

from __future__ import annotations

from factcheck_gateway.modes.base import Mode, Plan
from factcheck_gateway.modes.council.mode import COUNCIL
from factcheck_gateway.modes.entailment.mode import ENTAILMENT
from factcheck_gateway.modes.fact_check.mode import FACT_CHECK

MODES: dict[int, Mode] = {mode.value: mode for mode in (FACT_CHECK, COUNCIL, ENTAILMENT)}
MODES_BY_NAME: dict[str, Mode] = {mode.name: mode for mode in MODES.values()}


def mode_named(name: str | None) -> Mode:
    """A stored run's mode from request_config["mode"]; runs stored before modes existed are fact-checks."""
    return MODES_BY_NAME.get(name or FACT_CHECK.name, FACT_CHECK)


__all__ = ["MODES", "MODES_BY_NAME", "Mode", "Plan", "mode_named"]
