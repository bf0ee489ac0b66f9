"""A scripted SearxNG-compatible search server on loopback, for tests and benchmarks.

It answers `GET /search?q=...&format=json` as SearxNG's JSON API does
({"query", "number_of_results", "results": [{"url", "title", "content", "publishedDate", "engine"}]}).
A real HTTP server on 127.0.0.1 (ephemeral port) in daemon threads.

    with FakeSearxng() as searx:
        searx.add(url="https://apnews.com/x", title="AP: ...", content="...", published="2024-01-02")
        settings = Settings(searxng_url=searx.base_url, investigate_search_providers=["searxng"])
        ...
        searx.queries  # every query received, in order

Results match a query when they share at least `min_shared` of the query's words (case-folded,
quotes and punctuation ignored), best first. `fail_with(status)` makes the next requests
answer that HTTP status (until `fail_with(None)`); `format=json` is required (403 otherwise, as
a SearxNG instance without the JSON format enabled answers).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and are as at be by for from has have in is it of on or said that the to was were with".split())


@dataclass(frozen=True)
class FakeResult:
    url: str
    title: str
    content: str
    published: str | None = None
    engine: str = "fake"


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


class FakeSearxng:
    def __init__(self, min_shared: int = 2) -> None:
        self.min_shared = min_shared
        self.results: list[FakeResult] = []
        self.raw: list[object] = []
        self.queries: list[str] = []
        self._status: int | None = None
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def add(self, url: str, title: str, content: str, published: str | None = None) -> None:
        with self._lock:
            self.results.append(FakeResult(url, title, content, published))

    def add_raw(self, item: object) -> None:
        """An item sent as it is, in every answer after the matching results: for malformed items
        (a title that is an object, a content that is a list, an item that is not an object)."""
        with self._lock:
            self.raw.append(item)

    def fail_with(self, status: int | None) -> None:
        with self._lock:
            self._status = status

    def reset(self) -> None:
        with self._lock:
            self.results.clear()
            self.raw.clear()
            self.queries.clear()
            self._status = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, query: str) -> list[object]:
        wanted = _words(query)
        scored = []
        with self._lock:
            for index, result in enumerate(self.results):
                shared = len(wanted & _words(f"{result.title} {result.content}"))
                if shared >= min(self.min_shared, len(wanted)) and shared:
                    scored.append((-shared, index, result))
            raw = list(self.raw)
        scored.sort()
        matched: list[object] = [
            {
                "url": r.url,
                "title": r.title,
                "content": r.content,
                "publishedDate": r.published,
                "engine": r.engine,
                "score": -s,
            }
            for s, _, r in scored
        ]
        return matched + raw

    def __enter__(self) -> FakeSearxng:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = parse_qs(parts.query)
                query = (params.get("q") or [""])[0]
                with fake._lock:
                    fake.queries.append(query)
                    status = fake._status
                if parts.path != "/search":
                    return self._send(404, b"not found", "text/plain")
                if status is not None:
                    return self._send(status, b"scripted failure", "text/plain")
                if (params.get("format") or [""])[0] != "json":
                    return self._send(403, b"Forbidden", "text/html")
                results = fake.answer(query)
                body = json.dumps({"query": query, "number_of_results": len(results), "results": results})
                self._send(200, body.encode(), "application/json")

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
