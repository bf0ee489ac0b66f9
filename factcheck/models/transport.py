"""HTTP to OpenAI-compatible endpoints: requests, streamed answers, rate limits and retries (docs/models.md,
"Model ids, providers and the model client").

A model id that is no in-process engine is sent unchanged (or as its provider's wire name), as the
`model` field, to `POST {base_url}/chat/completions` (`factcheck.models.endpoints`); the prompt only: a
call's structured inputs never go on the wire.

Deadline: the call's deadline bounds waiting for a concurrency slot, every attempt and every backoff
sleep. 429, 5xx and connection errors are retried (by tenacity) up to `model_max_retries` times with
full-jitter exponential backoff from `model_backoff_base_s`, honouring `Retry-After` (seconds) on
429/503, but never sleeping past the deadline. Other 4xx are not retried; a refusal of a request field
is no failure (`factcheck.models.negotiation` asks again at once).

Rate limits (off by default): per provider, each HTTP attempt takes one request from a
requests-per-minute bucket and reserves its estimated tokens from a tokens-per-minute bucket, settled
with the reported usage (`factcheck.models.limits`). A call that the limits would hold past its deadline
fails at once as rate limited.

Untrusted answers: nothing a provider sends reaches a service unchecked (`factcheck.models.provider_answers`
reads every body, event stream and count). Every transport or decoding failure becomes one `ModelError`:
connection problems, timeouts and 5xx/429 are retried; a 2xx body that cannot be read (not JSON, wrong
shape, too deep, too big, an undecodable Content-Encoding) is final, as is any other 4xx. Provider error
text is quoted only as a redacted excerpt (`call_state.Redactor`).

Streaming: every request asks `"stream": true`, so that a cancelled or timed-out call closes its
connection and the server stops generating; the provider's server-sent events (`data:
{chat.completion.chunk}` ... `data: [DONE]`) are read as they arrive (httpx-sse, within the bounds of
`provider_answers.event_data`) and each `choices[0].delta.content` is handed on to a streaming caller,
cleaned like a whole answer. Once a piece of the answer has been handed on, nothing is retried (a retry
would write a different answer), so a failure after the first piece is final. A provider that ignores
`stream` and answers a plain completion is read whole, its whole text one piece. An event that is not
JSON or not a chunk, an `error` event, a stream that ends before `[DONE]` or a finish reason, and more
than `MAX_RESPONSE_BYTES` are malformed answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Any, TypeVar

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from factcheck.core.domain import TokenUsage
from factcheck.kit.observability import metrics
from factcheck.kit.settings import Settings
from factcheck.models import provider_answers
from factcheck.models.call_state import CallStats, ProviderSemaphores, Redactor, Streamed
from factcheck.models.endpoints import Endpoint
from factcheck.models.errors import (
    ModelError,
    ModelMalformedResponseError,
    ModelNotConfiguredError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.models.limits import LimitExceeded, ProviderLimits, RateLimits, estimate_tokens
from factcheck.models.negotiation import Refused, refused_field
from factcheck.models.provider_answers import MAX_JSON_DEPTH, MAX_RESPONSE_BYTES
from factcheck.text.text_safety import clean_text, excerpt

# A black-holed connect should not eat a long deadline: cap it so the attempt can be retried.
_CONNECT_TIMEOUT_S = 10.0
# Exponential backoff stops growing here; the deadline bounds it anyway.
_MAX_BACKOFF_S = 30.0
# Bodies larger than this are parsed in a worker thread, so that the event loop stays responsive.
_THREAD_PARSE_BYTES = 1024 * 1024

_Answer = TypeVar("_Answer")


class RetryableFailure(Exception):
    """One attempt failed in a way worth retrying; `error` is raised if we give up."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


def deadline_exceeded(model_id: str, timeout_s: float) -> ModelTimeoutError:
    return ModelTimeoutError(model_id, f"no answer within the {timeout_s:g}s deadline")


class Transport:
    """The HTTP side of the model client: one connection pool, the providers' rate limits, retries.

    `transport` replaces httpx's network transport (e.g. `httpx.MockTransport`); by default real HTTP
    is used.
    """

    def __init__(
        self,
        settings: Settings,
        semaphores: ProviderSemaphores,
        redactor: Redactor,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self._settings = settings
        # Semaphores bound concurrency, not the pool, so the pool itself is unlimited.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self._http = httpx.AsyncClient(transport=transport, limits=limits, timeout=None)
        self._semaphores = semaphores
        self._limits = RateLimits(settings)
        self._redactor = redactor

    async def aclose(self) -> None:
        """Close the shared HTTP connection pool."""
        await self._http.aclose()

    async def with_retries(
        self,
        attempt: Callable[[], Awaitable[_Answer]],
        model_id: str,
        deadline: float,
        timeout_s: float,
        streamed: Streamed | None = None,
    ) -> _Answer:
        """`attempt`, and again after each retryable failure with backoff, until success or the deadline
        (streamed to a caller: only until the first piece of the answer was handed on).

        Retries are tenacity's: a `RetryableFailure` (429, 5xx, a connection that failed or broke
        before the first piece was handed on) is tried again after the provider's `Retry-After`
        when it gave one, else after full jitter (uniform(0, base * 2^(n-1)), at most
        `_MAX_BACKOFF_S`), at most `model_max_retries` times, and never when the wait would end at
        or past the deadline: then the call fails with the last error (a timeout when the deadline
        has already passed). Anything else ends the call at once.
        """
        max_retries = self._settings.model_max_retries

        def give_up(state: RetryCallState) -> None:
            """Out of attempts, or the next wait would cross the deadline."""
            failure = state.outcome.exception() if state.outcome is not None else None
            assert isinstance(failure, RetryableFailure)
            if state.attempt_number > max_retries:
                raise failure.error
            raise self._give_up_at_deadline(model_id, failure.error, deadline, timeout_s)

        retrying = AsyncRetrying(
            retry=retry_if_exception(
                lambda error: isinstance(error, RetryableFailure) and not (streamed is not None and streamed.started)
            ),
            wait=self._backoff(),
            stop=stop_after_attempt(max_retries + 1) | stop_before_delay(deadline - asyncio.get_running_loop().time()),
            retry_error_callback=give_up,
        )
        try:
            answer: _Answer = await retrying(attempt)
        except RetryableFailure as failure:  # not to be retried: a piece of the answer was handed on
            raise failure.error from None
        return answer

    async def send(
        self,
        endpoint: Endpoint,
        model_id: str,
        payload: dict[str, Any],
        deadline: float,
        timeout_s: float,
        stats: CallStats,
        streamed: Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """One HTTP request within the provider's rate limits (when it has any). Raises RetryableFailure
        to retry, `negotiation.Refused` to ask again without a field. Usage is None when the provider
        reported none."""
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        limits = self._limits.for_provider(endpoint.provider)
        if limits is None:
            return await self._request(endpoint, model_id, payload, headers, deadline, timeout_s, stats, streamed)
        estimate = estimate_tokens("".join(message["content"] for message in payload["messages"]))
        await self._admit(limits, endpoint.provider, model_id, estimate, deadline)
        used: int | None = None
        try:
            text, usage = await self._request(
                endpoint, model_id, payload, headers, deadline, timeout_s, stats, streamed
            )
            used = usage.total_tokens if usage is not None else estimate + estimate_tokens(text)
            return text, usage
        finally:
            limits.settle(estimate, used)

    async def _admit(
        self, limits: ProviderLimits, provider: str, model_id: str, estimate: int, deadline: float
    ) -> None:
        """Wait for the provider's request and token buckets, or fail as rate limited."""
        try:
            waited = await limits.admit(estimate, deadline)
        except LimitExceeded as exc:
            raise ModelRateLimitedError(
                model_id,
                f"the client-side limit of {exc.limit} for provider {provider!r} would hold this call "
                f"{exc.wait_s:.1f}s, past its deadline",
            ) from None
        if waited:
            metrics.record_limit_wait(provider, waited)

    async def _request(
        self,
        endpoint: Endpoint,
        model_id: str,
        payload: dict[str, Any],
        headers: dict[str, str],
        deadline: float,
        timeout_s: float,
        stats: CallStats,
        streamed: Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """One HTTP request, bounded by the call's deadline. Raises RetryableFailure to retry,
        `negotiation.Refused` to ask again without a field.

        A 2xx `text/event-stream` answer is read event by event (`_read_events`); any other
        answer is read whole (a provider that ignores "stream"). Usage is None when the
        provider reported none.
        """
        loop = asyncio.get_running_loop()
        remaining = max(deadline - loop.time(), 0.001)
        # httpx's own timeout is a backstop; the asyncio deadline is what normally fires.
        timeout = httpx.Timeout(remaining + 1.0, connect=min(remaining, _CONNECT_TIMEOUT_S))
        stats.received, stats.reported, stats.reached, stats.top_logprobs = [], None, False, None
        try:
            async with asyncio.timeout_at(deadline):
                async with self._semaphores.of(endpoint.provider, endpoint.max_concurrency):
                    stats.reached = True  # from here on the provider may be working on it
                    async with self._http.stream(
                        "POST", endpoint.url, json=payload, headers=headers, timeout=timeout
                    ) as response:
                        if provider_answers.is_event_stream(response):
                            return await self._read_events(endpoint, model_id, response, stats, streamed)
                        body = await provider_answers.read_body(response)
        except TimeoutError:
            raise deadline_exceeded(model_id, timeout_s) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            stats.reached = False
            raise ModelNotConfiguredError(
                model_id, f"invalid base URL for provider {endpoint.provider!r}: {self._redactor.excerpt(str(exc))}"
            ) from None
        except httpx.TimeoutException as exc:
            if loop.time() >= deadline:
                raise deadline_exceeded(model_id, timeout_s) from None
            stats.reached = not isinstance(exc, httpx.ConnectTimeout)
            message = f"request to provider {endpoint.provider!r} timed out ({type(exc).__name__})"
            error = ModelProviderError(model_id, message)
            raise RetryableFailure(error) from None
        except httpx.TransportError as exc:
            stats.reached = not isinstance(exc, httpx.ConnectError)
            detail = self._redactor.excerpt(f"{type(exc).__name__}: {exc}")
            error = ModelProviderError(model_id, f"cannot reach provider {endpoint.provider!r}: {detail}")
            raise RetryableFailure(error) from None
        except httpx.HTTPError as exc:  # anything else httpx may raise (e.g. too many redirects)
            detail = self._redactor.excerpt(f"{type(exc).__name__}: {exc}")
            error = ModelProviderError(model_id, f"request to provider {endpoint.provider!r} failed: {detail}")
            raise RetryableFailure(error) from None
        if not 200 <= response.status_code < 300:
            stats.reached = False  # an error answer: nothing generated
        if body.problem is None and len(body.data) > _THREAD_PARSE_BYTES:
            answer = await asyncio.to_thread(self._interpret, endpoint, model_id, response, body, payload)
        else:
            answer = self._interpret(endpoint, model_id, response, body, payload)
        text, usage, finish, stats.top_logprobs = answer
        stats.received, stats.finish_reason = [text], finish
        if streamed is not None:  # a provider that ignored "stream": its whole answer is one piece
            streamed(text)
        return text, usage

    async def _read_events(
        self,
        endpoint: Endpoint,
        model_id: str,
        response: httpx.Response,
        stats: CallStats,
        streamed: Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """A 2xx server-sent-events answer: each chunk's text handed on as it arrives (kept in
        `stats.received`, with any usage reported so far in `stats.reported`).

        A connection that breaks before the first piece is handed on is retried like any
        other; after it, the failure is final (`with_retries`).
        """
        parts = stats.received
        started = streamed is not None and streamed.started
        finished = False
        try:
            async with aclosing(provider_answers.event_data(response)) as events:
                async for event in events:
                    if event == "[DONE]":
                        return "".join(parts), stats.reported
                    piece, chunk_usage, finish, alternatives = self._parse_chunk(endpoint, model_id, event)
                    stats.reported = chunk_usage or stats.reported
                    if stats.top_logprobs is None and alternatives is not None:
                        stats.top_logprobs = alternatives
                    if finish:
                        finished, stats.finish_reason = True, finish
                    if piece:
                        parts.append(piece)
                        if streamed is not None:
                            streamed(piece)
                            started = True
        except provider_answers.StreamTooLarge:
            raise ModelMalformedResponseError(
                model_id,
                f"provider {endpoint.provider!r} streamed more than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB",
            ) from None
        except httpx.DecodingError:
            encoding = excerpt(response.headers.get("content-encoding", "none"), 40)
            raise ModelMalformedResponseError(
                model_id,
                f"provider {endpoint.provider!r} answered a stream that cannot be decoded "
                f"(Content-Encoding: {encoding})",
            ) from None
        except httpx.TransportError as exc:
            if not started:
                raise
            detail = self._redactor.excerpt(f"{type(exc).__name__}: {exc}")
            raise ModelProviderError(
                model_id,
                f"the stream from provider {endpoint.provider!r} broke after {len(''.join(parts))} "
                f"characters: {detail}",
            ) from None
        if finished:  # a provider that ends its stream without [DONE]
            return "".join(parts), stats.reported
        message = f"the stream from provider {endpoint.provider!r} ended before the answer was complete"
        if started:
            raise ModelProviderError(model_id, message)
        raise RetryableFailure(ModelProviderError(model_id, message))

    def _parse_chunk(
        self, endpoint: Endpoint, model_id: str, event: str
    ) -> tuple[str, TokenUsage | None, str, tuple[tuple[str, float], ...] | None]:
        """(text, usage if reported, the finish reason or "", the first token's alternatives if it carries
        them) of one `chat.completion.chunk`."""
        if provider_answers.json_too_deep(event):
            raise ModelMalformedResponseError(model_id, f"a streamed chunk nests deeper than {MAX_JSON_DEPTH} levels")
        try:
            data = provider_answers.load_json(event)
        except ValueError:
            raise ModelMalformedResponseError(
                model_id, f"a streamed chunk is not JSON: {self._redactor.excerpt(event)}"
            ) from None
        if not isinstance(data, dict):
            raise ModelMalformedResponseError(model_id, "a streamed chunk is not a JSON object")
        if "error" in data:
            message = self._redactor.excerpt(provider_answers.error_message_of(data) or event)
            raise ModelProviderError(model_id, f"provider {endpoint.provider!r} sent an error in its stream: {message}")
        usage = provider_answers.parse_usage(data["usage"]) if isinstance(data.get("usage"), dict) else None
        choices = data.get("choices")
        if not isinstance(choices, list):
            raise ModelMalformedResponseError(model_id, "a streamed chunk has no choices")
        if not choices:  # e.g. the closing chunk that only reports usage
            return "", usage, "", None
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict):
            raise ModelMalformedResponseError(model_id, "a streamed chunk has no choices[0].delta")
        content = delta.get("content")
        text = "" if content is None else provider_answers.content_text(content)
        if text is None:
            raise ModelMalformedResponseError(model_id, "choices[0].delta.content of a streamed chunk is not text")
        alternatives = provider_answers.first_token_logprobs(choice)
        return clean_text(text), usage, provider_answers.finish_reason_of(choice), alternatives

    def _interpret(
        self,
        endpoint: Endpoint,
        model_id: str,
        response: httpx.Response,
        body: provider_answers.Body,
        payload: dict[str, Any],
    ) -> tuple[str, TokenUsage | None, str, tuple[tuple[str, float], ...] | None]:
        """Map an HTTP answer to a result (text, usage, finish reason, the first token's alternatives), a
        refusal of a request field, a retryable failure or a final error."""
        status = response.status_code
        if 200 <= status < 300:
            if body.problem is not None:
                raise ModelMalformedResponseError(model_id, f"provider {endpoint.provider!r} answered {body.problem}")
            return self._parse_completion(model_id, body.data)
        # An error status keeps its meaning whatever the body: quote its head, or say why there is none.
        detail = self._provider_message(body.data) if body.data or body.problem is None else f"({body.problem})"
        retry_after = provider_answers.retry_after_s(response) if status in (429, 503) else None
        if status == 429:
            message = f"rate limited by provider {endpoint.provider!r} (HTTP 429): {detail}"
            error: ModelError = ModelRateLimitedError(model_id, message, retry_after_s=retry_after)
            raise RetryableFailure(error, retry_after)
        error = ModelProviderError(
            model_id, f"provider {endpoint.provider!r} answered HTTP {status}: {detail}", status_code=status
        )
        if refused := refused_field(body.data, payload):
            raise Refused(refused, error)
        if status >= 500:
            raise RetryableFailure(error, retry_after)
        raise error

    def _parse_completion(
        self, model_id: str, body: bytes
    ) -> tuple[str, TokenUsage | None, str, tuple[tuple[str, float], ...] | None]:
        """Read `choices[0].message.content`, `usage` (None when absent), the finish reason and the first
        token's alternatives (None when absent) from a chat completion body."""
        text = provider_answers.decode_body(body)
        if provider_answers.json_too_deep(text):
            raise ModelMalformedResponseError(model_id, f"response JSON nests deeper than {MAX_JSON_DEPTH} levels")
        try:
            data = provider_answers.load_json(text)
        except ValueError:
            raise ModelMalformedResponseError(
                model_id, f"response is not JSON: {self._redactor.excerpt(text)}"
            ) from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ModelMalformedResponseError(model_id, "response has no choices")
        message = choices[0].get("message")
        content = provider_answers.content_text(message.get("content")) if isinstance(message, dict) else None
        if content is None:
            raise ModelMalformedResponseError(model_id, "choices[0].message.content is missing or not text")
        usage = data.get("usage")
        reported = provider_answers.parse_usage(usage) if isinstance(usage, dict) else None
        alternatives = provider_answers.first_token_logprobs(choices[0])
        return clean_text(content), reported, provider_answers.finish_reason_of(choices[0]), alternatives

    def _backoff(self) -> Callable[[RetryCallState], float]:
        """The wait before a retry: the provider's Retry-After when it gave one, else full jitter,
        uniform(0, base * 2^(n-1)) before the n-th retry, its ceiling at most `_MAX_BACKOFF_S`."""
        jitter = wait_random_exponential(multiplier=self._settings.model_backoff_base_s, max=_MAX_BACKOFF_S)

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome is not None else None
            if isinstance(failure, RetryableFailure) and failure.retry_after_s is not None:
                return failure.retry_after_s
            return jitter(state)

        return wait

    def _give_up_at_deadline(self, model_id: str, last: ModelError, deadline: float, timeout_s: float) -> ModelError:
        """The next wait would cross the deadline: a timeout if it already passed, else the last error."""
        if asyncio.get_running_loop().time() >= deadline:
            return deadline_exceeded(model_id, timeout_s)
        return last

    def _provider_message(self, body: bytes) -> str:
        """A short, redacted, single-line excerpt of the provider's error message."""
        text = provider_answers.decode_body(body)
        try:
            data = None if provider_answers.json_too_deep(text) else provider_answers.load_json(text)
        except ValueError:
            data = None
        return self._redactor.excerpt(provider_answers.error_message_of(data) or text) or "(empty body)"
