"""Group commit: one writer stores what every running run has to store, many runs per transaction.

Runs hand their commits (`NewRun`: a new run's row; `RunCommit`: events with the stage row,
title or final state they report) to `StoreWriter.commit` and await it (or `submit` them without
waiting for their previous one). The writer takes everything queued, commits
it in one transaction on its own thread (one thread, so the gateway's event loop and its
database work do not fight over the GIL through a pool of threads), and answers each
commit. A commit is only answered once it is durable; a run's commits are applied in the
order given. When the database fails, every commit of the batch gets the error (the run
retries); when one commit breaks a constraint (a bug), the batch is retried commit by
commit so that the others still land.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from factcheck_gateway.store.records import NewRun, RunCommit
from factcheck_gateway.store.stage_store import StageStore

log = logging.getLogger("factcheck.gateway.store")

# At most this many commits in one transaction: bounded work per transaction under load.
MAX_BATCH = 256


@dataclass
class _Queued:
    commit: RunCommit | NewRun
    answer: asyncio.Future


class StoreWriter:
    def __init__(self, store: StageStore, max_batch: int = MAX_BATCH) -> None:
        self._store = store
        self._max_batch = max_batch
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="store-writer")
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._write_forever(), name="store-writer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        self._thread.shutdown(wait=False)

    async def commit(self, commit: RunCommit | NewRun) -> None:
        """Return once `commit` is durable; LeaseLost, or the database's error, otherwise."""
        outcome = await self.submit(commit)
        if outcome is not None:
            raise outcome

    def submit(self, commit: RunCommit | NewRun) -> asyncio.Future[Exception | None]:
        """Queue `commit` now; the future answers with its outcome (None once durable, else the
        LeaseLost or database error it met), never with an exception of its own.

        A run may submit its next commit before the previous one is answered: commits are applied
        in the order submitted, a run's consecutive ones in one batch share one fenced UPDATE, and
        one submitted after a commit that failed fails its own fence (it does not continue the
        stored sequence) and stores nothing, so the run can retry both in order.
        """
        if self._task is None:
            raise RuntimeError("StoreWriter.start() was not called")
        answer = asyncio.get_running_loop().create_future()
        self._queue.put_nowait(_Queued(commit, answer))
        return answer

    async def _write_forever(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            while len(batch) < self._max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            pending = [queued for queued in batch if not queued.answer.done()]  # a cancelled waiter is gone
            if not pending:
                continue
            try:
                outcomes = await loop.run_in_executor(self._thread, self._commit_batch, [q.commit for q in pending])
            except Exception as error:  # the database failed: every commit of the batch is retried by its run
                outcomes = [error] * len(pending)
            for queued, outcome in zip(pending, outcomes):
                if not queued.answer.done():
                    queued.answer.set_result(outcome)

    def _commit_batch(self, commits: list[RunCommit | NewRun]) -> list[Exception | None]:
        try:
            return list(self._store.commit_runs(commits))
        except IntegrityError:
            if len(commits) == 1:
                raise
            log.exception("a batch of %d commits broke a constraint; committing them one by one", len(commits))
            outcomes: list[Exception | None] = []
            for commit in commits:
                try:
                    outcomes.append(self._store.commit_runs([commit])[0])
                except IntegrityError as error:
                    outcomes.append(error)
            return outcomes
