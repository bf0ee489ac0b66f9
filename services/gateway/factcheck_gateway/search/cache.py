"""Search results cached per run and query: a query two claims (or two variants) share is sent once."""

from __future__ import annotations

import asyncio

from factcheck_gateway.search.provider import SearchPage, SearchProvider


class SearchCache:
    def __init__(self, limit: asyncio.Semaphore) -> None:
        self._limit = limit  # shared by every claim of the run: the providers' rate limit
        self._answers: dict[tuple[str, str, int], asyncio.Future] = {}
        self.calls = 0  # searches actually sent
        self.hits = 0

    async def search(self, provider: SearchProvider, query: str, limit: int) -> SearchPage:
        key = (provider.name, query, limit)
        if key in self._answers:
            self.hits += 1
            return await asyncio.shield(self._answers[key])
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._answers[key] = future
        try:
            async with self._limit:
                self.calls += 1
                answer = await provider.search(query, limit)
        except BaseException as error:
            del self._answers[key]  # a failed search is not cached: the retry asks again
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: no "never retrieved" warning when nobody else waits
            raise
        future.set_result(answer)
        return answer
