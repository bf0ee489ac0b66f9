"""Search providers of the verification loop behind one interface.

`knowledge` (the offline default): the knowledge store and the request's sources, through the
gateway's Retriever. `searxng`: a self-hosted SearxNG metasearch instance's JSON API
(FACTCHECK_SEARXNG_URL). Results are cached per run and query (`SearchCache`).
"""

from factcheck_gateway.search.cache import SearchCache
from factcheck_gateway.search.provider import SearchFailed, SearchProvider, SearchResult

__all__ = ["SearchCache", "SearchFailed", "SearchProvider", "SearchResult"]
