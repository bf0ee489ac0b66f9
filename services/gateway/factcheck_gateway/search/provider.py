"""What every search provider returns, and the one method it has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

KNOWLEDGE, SEARXNG = "knowledge", "searxng"
PROVIDERS = (KNOWLEDGE, SEARXNG)


class SearchFailed(Exception):
    """A provider could not answer (unreachable, bad answer): the claim's investigation is retried later."""


@dataclass(frozen=True)
class SearchResult:
    key: str  # the same result from two queries has the same key
    title: str
    url: str
    text: str
    provider: str
    source_id: str = ""
    published_at: str | None = None
    authority: float | None = None  # the document's own, when it has one


@dataclass(frozen=True)
class SearchPage:
    """One answer of a provider: the results it kept, and how many items it dropped as malformed (a field
    of the wrong type, a URL that is not http(s), nothing to read): the caller reports that count."""

    results: tuple[SearchResult, ...]
    dropped: int = 0


class SearchProvider(Protocol):
    name: str

    async def search(self, query: str, limit: int) -> SearchPage: ...
