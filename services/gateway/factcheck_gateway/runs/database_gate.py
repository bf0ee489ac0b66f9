"""Whether the gateway's database is reachable and migrated; until it is, runs are refused.

The gateway starts even when its database is down (a database restarting, a pod started
before PostgreSQL): it migrates in the background, retrying with backoff, and meanwhile
answers Run with UNAVAILABLE and a message that says why, rather than crash-looping.
"""

from __future__ import annotations

import asyncio
import logging

from factcheck.text.text_safety import first_line
from factcheck_gateway.store import upgrade_database

log = logging.getLogger("factcheck.gateway.database")

FIRST_RETRY_S, MAX_RETRY_S = 1.0, 15.0


class DatabaseGate:
    def __init__(self, database_url: str) -> None:
        self._database_url = database_url
        self._ready = asyncio.Event()

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    async def wait_ready(self) -> None:
        await self._ready.wait()

    async def open(self) -> None:
        """Migrate now if the database answers, else keep trying in the background."""
        if await self._try_upgrade():
            return
        asyncio.get_running_loop().create_task(self._retry(), name="database-gate")

    async def _try_upgrade(self) -> bool:
        try:
            await asyncio.to_thread(upgrade_database, self._database_url)
        except Exception as error:  # any failure to reach or migrate the database
            log.error("the database is unreachable (%s); runs are refused until it answers", first_line(error))
            return False
        self._ready.set()
        return True

    async def _retry(self) -> None:
        delay = FIRST_RETRY_S
        while True:
            await asyncio.sleep(delay)
            if await self._try_upgrade():
                log.info("the database answers again; runs are accepted")
                return
            delay = min(delay * 2, MAX_RETRY_S)
