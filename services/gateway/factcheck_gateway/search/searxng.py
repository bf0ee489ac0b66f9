"""A SearxNG instance's JSON API (https://docs.searxng.org/dev/search_api.html): the web provider for
deployments that run one (self-hosted metasearch). The instance must allow `format=json`
(search.formats in its settings.yml).

    GET {FACTCHECK_SEARXNG_URL}/search?q=...&format=json  →  {"results": [{"url", "title", "content",
                                                              "publishedDate", "engine", ...}, ...]}

The answer is untrusted input: an item is kept only when it is an object whose `url` is an http(s)
URL and whose `title`, `content` and `publishedDate` are text (or absent), with a title or a
snippet to read; snippets are the evidence text. Any other item is dropped unread and counted
(`SearchPage.dropped`), never turned into text: `{"a":1}` is not a title. A repeated URL is
skipped as a duplicate, not counted.
"""

from __future__ import annotations

import httpx

from factcheck.text.text_safety import clean_text, excerpt
from factcheck_gateway.search.provider import SEARXNG, SearchFailed, SearchPage, SearchResult

MAX_SNIPPET_CHARS = 2_000


class SearxngSearch:
    name = SEARXNG

    def __init__(self, base_url: str, client: httpx.AsyncClient, *, timeout_s: float, language: str = "") -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._client = client
        self._timeout_s = timeout_s
        self._language = language

    async def search(self, query: str, limit: int) -> SearchPage:
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
        dropped = 0
        for item in items:
            fields = _fields(item)
            if fields is None:
                dropped += 1
                continue
            url, title, text, published = fields
            if url in seen:
                continue
            seen.add(url)
            results.append(
                SearchResult(
                    key=f"{SEARXNG}:{url}",
                    title=excerpt(title, 200) if title else url,
                    url=url,
                    text=(text or title)[:MAX_SNIPPET_CHARS],
                    provider=SEARXNG,
                    source_id=url,
                    published_at=published[:32] if published else None,
                )
            )
            if len(results) >= limit:
                break
        return SearchPage(tuple(results), dropped)


def _text_field(item: dict, name: str) -> str | None:
    """The item's field as text ("" when absent or null); None when it is something else (a number, an
    object, a list): such an item is malformed."""
    value = item.get(name)
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _fields(item: object) -> tuple[str, str, str, str] | None:
    """(url, title, snippet, published date) of a well-formed result item, cleaned; None when malformed."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    title, content, published = (_text_field(item, name) for name in ("title", "content", "publishedDate"))
    if title is None or content is None or published is None:
        return None
    title, content = clean_text(title), clean_text(content)
    if not (title or content):
        return None
    return url, title, content, published
