"""A SearxNG instance's JSON API (https://docs.searxng.org/dev/search_api.html): the web provider for
deployments that run one (self-hosted metasearch). The instance must allow `format=json`
(search.formats in its settings.yml).

    GET {FACTCHECK_SEARXNG_URL}/search?q=...&format=json  →  {"results": [{"url", "title", "content",
                                                              "publishedDate", "engine", ...}, ...]}

Only http(s) results with a title or a snippet are kept; snippets are the evidence text.
"""

from __future__ import annotations

import httpx

from factcheck.services.gateway.search.provider import SEARXNG, SearchFailed, SearchResult
from factcheck.text_safety import clean_text, excerpt

MAX_SNIPPET_CHARS = 2_000


class SearxngSearch:
    name = SEARXNG

    def __init__(self, base_url: str, client: httpx.AsyncClient, *, timeout_s: float, language: str = "") -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._client = client
        self._timeout_s = timeout_s
        self._language = language

    async def search(self, query: str, limit: int) -> list[SearchResult]:
        params = {"q": query, "format": "json"}
        if self._language:
            params["language"] = self._language
        try:
            response = await self._client.get(self._url, params=params, timeout=self._timeout_s)
        except httpx.HTTPError as error:
            raise SearchFailed(f"searxng unreachable: {type(error).__name__}") from error
        if response.status_code != 200:
            raise SearchFailed(f"searxng answered HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError as error:
            raise SearchFailed("searxng answered something other than JSON (is format=json enabled?)") from error
        items = data.get("results") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise SearchFailed("searxng answer has no results list")
        results: list[SearchResult] = []
        seen: set[str] = set()
        for item in items:
            if not isinstance(item, dict):
                continue
            url = item.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")) or url in seen:
                continue
            title = clean_text(str(item.get("title") or ""))
            text = clean_text(str(item.get("content") or ""))
            if not (title or text):
                continue
            seen.add(url)
            published = item.get("publishedDate")
            results.append(
                SearchResult(
                    key=f"{SEARXNG}:{url}",
                    title=excerpt(title, 200) if title else url,
                    url=url,
                    text=(text or title)[:MAX_SNIPPET_CHARS],
                    provider=SEARXNG,
                    source_id=url,
                    published_at=published[:32] if isinstance(published, str) and published else None,
                )
            )
            if len(results) >= limit:
                break
        return results
