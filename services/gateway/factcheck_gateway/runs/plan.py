"""What a run needs from its mode's plan: the fields every plan has, whatever its mode.

Each mode's plan (modes/*/plan.py) is a frozen dataclass with these fields and its own; the run
machinery reads only these, so it knows no mode.
"""

from __future__ import annotations

from typing import Protocol


class Plan(Protocol):
    """A validated request of some mode, with every default applied; what its run executes."""

    # Read-only properties: the plans are frozen dataclasses (mode_name a class variable).
    @property
    def mode_name(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def conversation_id(self) -> str | None: ...
    @property
    def tenant_id(self) -> str: ...
    @property
    def timeout_ms(self) -> int: ...
    @property
    def reporter_model(self) -> str:  # writes every run's title
        ...

    def request_config(self) -> dict:
        """The run's configuration as stored in messages.request_config (with "mode": mode_name)."""
        ...
