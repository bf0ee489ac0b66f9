"""Reading what a provider sends back: nothing it sends reaches a service unchecked.

The body is read up to `MAX_RESPONSE_BYTES` (a bigger answer is malformed; an error status keeps its
meaning with the head of its body), decoded as the JSON it should be (a BOM or UTF-16/32 is detected,
invalid bytes become U+FFFD), and rejected before `json.loads` when it nests deeper than `MAX_JSON_DEPTH`
(a cheap linear scan, so 100,000 "[" cannot recurse). Integers longer than 18 digits parse as nothing, so a
token count outside 0..2^31-1 is ignored like any other invalid count, and `Retry-After` is used only when
finite (capped at an hour). Server-sent events are read as they arrive (`event_data`, with httpx-sse), within
the same byte bound and always as UTF-8. The answer text
itself is cleaned by the model client (`text_safety.clean_text`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import httpx
from httpx_sse import EventSource

from factcheck.core.domain import TokenUsage
from factcheck.text.text_safety import excerpt

# A chat completion nests about six levels; anything near Python's recursion limit is hostile.
MAX_JSON_DEPTH = 64
# Bodies beyond this are not read further: ten-megabyte answers pass, memory stays bounded, and
# what a service builds from one answer stays within the 32 MiB gRPC message limit.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
# Token counts travel as int32.
MAX_TOKEN_COUNT = 2**31 - 1
# A Retry-After beyond this is a provider bug; any call's deadline is shorter anyway.
_MAX_RETRY_AFTER_S = 3600.0


def retry_after_s(response: httpx.Response) -> float | None:
    """The `Retry-After` header in its seconds form; the HTTP-date form is ignored."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, _MAX_RETRY_AFTER_S)


def error_message_of(data: Any) -> str | None:
    """The message of the usual error shapes: {"error": {"message"}}, {"error": "..."}, {"message"}, {"detail"}."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(error, str):
        return error
    for key in ("message", "detail"):
        if isinstance(data.get(key), str):
            return data[key]
    return None


def content_text(content: Any) -> str | None:
    """Message content as text: a string, or the joined "text" of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)]
        if parts or not content:
            return "".join(parts)
    return None


def parse_usage(usage: Any) -> TokenUsage:
    """Token counts as reported; missing or invalid counts (not an integer in 0..2^31-1) are 0,
    a missing total is the sum (capped)."""
    if not isinstance(usage, dict):
        return TokenUsage()

    def count(key: str) -> int | None:
        value = usage.get(key)
        valid = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKEN_COUNT
        return value if valid else None

    prompt = count("prompt_tokens") or 0
    completion = count("completion_tokens") or 0
    total = count("total_tokens")
    if total is None:
        total = min(prompt + completion, MAX_TOKEN_COUNT)
    # OpenAI reports prompt-cache hits as prompt_tokens_details.cached_tokens.
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not (isinstance(cached, int) and not isinstance(cached, bool) and 0 <= cached <= prompt):
        cached = 0
    return TokenUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total, cached_tokens=cached)


@dataclass(frozen=True)
class Body:
    """What was read of a response body; `problem` says why it is unusable (then `data` is its head)."""

    data: bytes
    problem: str | None = None


async def read_body(response: httpx.Response) -> Body:
    """The decoded body, at most MAX_RESPONSE_BYTES of it; a bad Content-Encoding is a problem, not an error."""
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                head = b"".join(chunks)[:4096]
                return Body(head, f"a body larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB")
    except httpx.DecodingError:
        encoding = excerpt(response.headers.get("content-encoding", "none"), 40)
        return Body(b"", f"a body that cannot be decoded (Content-Encoding: {encoding})")
    return Body(b"".join(chunks))


def is_event_stream(response: httpx.Response) -> bool:
    """A successful answer in server-sent events (anything else is read as a whole body)."""
    content_type = response.headers.get("content-type", "")
    return 200 <= response.status_code < 300 and content_type.split(";")[0].strip().lower() == "text/event-stream"


class StreamTooLarge(Exception):
    """An event stream went on past `MAX_RESPONSE_BYTES`."""


async def event_data(response: httpx.Response, limit: int = MAX_RESPONSE_BYTES) -> AsyncGenerator[str, None]:
    """The `data` of each event of a 2xx `text/event-stream` answer, as the events arrive.

    The events are httpx-sse's (lines split at CRLF, CR or LF only, the `data:` lines of one event
    joined with LF, comments and other fields ignored). It reads a copy of `response` whose bytes
    are the body as decoded (Content-Encoding undone), counted as they pass: more than `limit` of
    them raise `StreamTooLarge`, however they are split into lines and events, so an endless line
    costs no more memory than an endless stream. That copy's charset is UTF-8 whatever the provider
    declared (server-sent events are UTF-8), decoded incrementally with invalid bytes as U+FFFD.
    An event without data (only `event:`, `id:` or `retry:` fields, or an empty `data:`) is skipped.
    Errors of the body (a broken connection, an undecodable Content-Encoding) pass through.
    """

    async def counted() -> AsyncIterator[bytes]:
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                raise StreamTooLarge(f"an event stream of more than {limit} bytes")
            yield chunk

    bounded = httpx.Response(
        response.status_code, headers={"content-type": "text/event-stream; charset=utf-8"}, content=counted()
    )
    async with aclosing(EventSource(bounded).aiter_sse()) as events:
        async for event in events:
            if event.data:
                yield event.data


def decode_body(body: bytes) -> str:
    """JSON text as RFC 8259 reads it: UTF-8 (or UTF-16/32, detected), invalid bytes as U+FFFD."""
    return body.decode(json.detect_encoding(body), errors="replace")


def load_json(text: str) -> Any:
    """`json.loads`, tolerant of raw control characters in strings; over-long integers parse as None.

    Call only after `json_too_deep(text)` said no. Raises ValueError when the text is not JSON.
    """
    return json.loads(text, strict=False, parse_int=bounded_int)


def bounded_int(digits: str) -> int | None:
    # int() of thousands of digits is slow (and refused past 4300); no count needs more than 18.
    return int(digits) if len(digits.lstrip("-")) <= 18 else None


# A backslash escape, and a string literal once escapes are gone.
_JSON_ESCAPE = re.compile(r"\\.", re.S)
_JSON_STRING = re.compile(r'"[^"]*"')
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_BRACKET_STEP = [0] * 256
_BRACKET_STEP[ord("[")] = 1
_BRACKET_STEP[ord("]")] = -1
_DEPTH_CHUNK = 1 << 20


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON `text` nests more than `limit` arrays/objects deep, found in linear time.

    Escapes are dropped first so that no string literal can contain a quote, then string
    literals (so their brackets do not count), then everything but brackets; the depth
    is the highest running sum of +1 per opening and -1 per closing bracket. Text that is
    not JSON may be misjudged, but never so that `json.loads` could recurse deeper than
    `limit` before it fails.
    """
    if text.count("[") + text.count("{") <= limit:  # the usual case: too few brackets to nest deep
        return False
    structure = _JSON_STRING.sub("", _JSON_ESCAPE.sub("", text)).encode("utf-8", "replace")
    brackets = structure.translate(_AS_SQUARE, _NOT_BRACKET)
    # Dropping the innermost empty pairs lowers the depth by at most one and makes wide, flat
    # arrays tiny, so the running sum is usually taken over a few brackets only.
    depth = max_depth(brackets.replace(b"[]", b""), limit)
    if depth != limit:
        return depth > limit
    return max_depth(brackets, limit) > limit


def max_depth(brackets: bytes, limit: int) -> int:
    """The highest running sum of the brackets, or the first one above `limit` (computed in C, by chunks)."""
    depth = peak = 0
    for start in range(0, len(brackets), _DEPTH_CHUNK):
        steps = map(_BRACKET_STEP.__getitem__, brackets[start : start + _DEPTH_CHUNK])
        running = list(accumulate(steps, initial=depth))
        peak = max(peak, max(running))
        if peak > limit:
            return peak
        depth = running[-1]
    return peak


def finish_reason_of(choice: Any) -> str:
    """A choice's finish reason: a short word, or "" when absent or odd."""
    reason = choice.get("finish_reason") if isinstance(choice, dict) else None
    return excerpt(reason, 32) if isinstance(reason, str) and reason else ""


# The alternatives of an answer token kept, at most (OpenAI allows 20 top_logprobs).
MAX_TOP_LOGPROBS = 20
_TOKEN_CHARS = 64


def first_token_logprobs(choice: Any) -> tuple[tuple[str, float], ...] | None:
    """The first answer token's alternatives, (token, log-probability) most likely first, from a choice's
    `logprobs.content[0]` (a chat completion or a stream's chunk): its `top_logprobs`, else the token's own
    log-probability. None when the choice has none, or only unreadable ones."""
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    first = content[0] if isinstance(content, list) and content else None
    if not isinstance(first, dict):
        return None
    candidates = first.get("top_logprobs")
    readable = [
        alternative
        for alternative in (
            _logprob(c) for c in (candidates if isinstance(candidates, list) else [])[:MAX_TOP_LOGPROBS]
        )
        if alternative is not None
    ]
    if not readable and (own := _logprob(first)) is not None:
        readable = [own]
    return tuple(sorted(readable, key=lambda alternative: -alternative[1])) or None


def _logprob(entry: Any) -> tuple[str, float] | None:
    token = entry.get("token") if isinstance(entry, dict) else None
    value = entry.get("logprob") if isinstance(entry, dict) else None
    if not isinstance(token, str) or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or value > 0:
        return None
    return excerpt(token, _TOKEN_CHARS) if len(token) > _TOKEN_CHARS else token, float(value)
