"""The recovery pass's loop, shared by runs (runs/registry.py) and evaluations (servicers/evaluations.py): once
the database is ready, a pass every FACTCHECK_RECOVERY_INTERVAL_S (or at once when woken), and a failed pass
is logged and tried again at the next turn, never ending the loop (docs/api.md, durable runs)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from sqlalchemy.exc import SQLAlchemyError

from factcheck.text.text_safety import first_line


async def recover_periodically(
    recover_once: Callable[[], Awaitable[object]],
    database_ready: Callable[[], Awaitable[None]],
    interval_s: float,
    *,
    what: str,
    log: logging.Logger,
    wake: asyncio.Event | None = None,
) -> None:
    """Run `recover_once` every `interval_s` seconds (sooner when `wake` is set) until cancelled; `what` names
    the pass in `log`'s lines ("recovery pass", "evaluation recovery pass")."""
    await database_ready()
    while True:
        try:
            await recover_once()
        except SQLAlchemyError as error:
            log.warning("%s failed: %s", what, first_line(error))
        except Exception:
            log.exception("%s failed", what)
        if wake is None:
            await asyncio.sleep(interval_s)
            continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), interval_s)
        wake.clear()
