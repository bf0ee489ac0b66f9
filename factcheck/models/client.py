"""The one model client: every model call of every service goes through `ModelClient.complete`,
or `ModelClient.stream` for an answer wanted while it is being written.

Routing:
- `local/<name>` runs a registered in-process engine (see `factcheck.models.local`) in a
  worker thread, with the call's structured inputs (`inputs=`, `factcheck.models.inputs`):
  the built-in engines answer from those, never from the prompt's text. Local engines
  report no token counts, so usage is *estimated* as whitespace-separated word counts of
  the prompt and the answer.
- `onnx/<name>` runs a grounding cross-encoder of the checker's (an engine family,
  `factcheck_engines.onnx_checker`) the same way; it is loaded on its first call (in the worker
  thread) and costs no tokens: its calls are ledgered with 0 tokens, not estimated.
- Any other id is sent unchanged, as the `model` field, to an OpenAI-compatible
  `POST {base_url}/chat/completions` (the prompt only: `inputs` never go on the wire). The base URL and key come from the provider
  override for the id's prefix (the part before '/') when one exists, else from
  `FACTCHECK_MODEL_BASE_URL` / `FACTCHECK_MODEL_API_KEY`. An override without a key sends
  no key: the default key is never sent to another provider's endpoint.

Deadline: `timeout_s` bounds the whole call (waiting for a concurrency slot, every
attempt and every backoff sleep). 429, 5xx and connection errors are retried (by tenacity) up to
`model_max_retries` times with full-jitter exponential backoff from `model_backoff_base_s`,
honouring `Retry-After` (seconds) on 429/503, but never sleeping past the deadline. Other 4xx
are not retried.

Concurrency: one semaphore per provider prefix caps requests in flight to a provider
(`model_max_concurrency`, or the override's `max_concurrency`).

Rate limits (off by default): per provider, each HTTP attempt takes one request from a
requests-per-minute bucket and reserves its estimated tokens from a tokens-per-minute
bucket, settled with the reported usage (see `factcheck.models.limits`). A call that the
limits would hold past its deadline fails at once as rate limited.

Observability: every call is counted in the Prometheus metrics (model, outcome, latency,
tokens) and is a "model.complete" span of the current trace (OpenTelemetry's API: a span that
records nothing unless tracing is on).

Secrets: the API keys never appear in logs or error messages (provider excerpts are
redacted); prompts are never logged, only their length.

Untrusted answers: nothing a provider sends reaches a service unchecked (`factcheck.models.provider_answers`
reads every body, event stream and count). Every transport or decoding failure becomes one `ModelError`:
connection problems, timeouts and 5xx/429 are retried; a 2xx body that cannot be read (not JSON, wrong shape, too
deep, too big, an undecodable Content-Encoding) is final, as is any other 4xx. Provider error text is quoted only
as a redacted `text_safety.excerpt`.

Bounds: every call sends an output limit (`max_tokens` and/or `max_completion_tokens`, from
the caller's `output_limits.OutputLimit`, scaled and capped by the settings) and its stop
sequences. With a context window configured, a prompt is estimated before it is sent: the
output limit is lowered to the room left, and a prompt that leaves none is refused
(`ModelPromptTooLongError`) without a request.

Negotiation: `response_format` goes out in the provider's form (json_schema, llama.cpp's
json_object with a schema, json_object, none); an error answer that names a field the
request sent (`response_format`, `stream_options`, `logprobs`) is a refusal, not a failure: the
request is sent again at once without it or in the next simpler form, and the client remembers the
provider's form for later calls. Refusals are never retried with backoff.

Log-probabilities: a call with `logprobs=n` asks for the answer tokens' `n` most likely alternatives
(`logprobs: true, top_logprobs: n`); the first token's come back as `Completion.top_logprobs`, None when
the provider sent none (or refused the field: it is not asked again). A grounding dialect
(`factcheck.models.dialects`) reads its verdict from them.

Usage: a provider that reports none gets an estimate (about four characters a token), and
so does a call that ended without an answer after reaching the provider (cancelled, timed
out, broken): its prompt and the text received so far. The call's record says it is
estimated (`ModelCall.usage_estimated`).

Streaming: every remote request asks `"stream": true` (and `stream_options.include_usage`),
so that a cancelled or timed-out call closes its connection and the server stops generating;
the provider's server-sent events (`data: {chat.completion.chunk}` ... `data: [DONE]`) are
read as they arrive (httpx-sse, within the bounds of `provider_answers.event_data`) and, for
`stream`, each `choices[0].delta.content` is handed on, cleaned like a whole answer. The same
deadline, limits, retries and errors apply, with one difference: once a piece of the
answer has been handed on, nothing is retried (a retry would write a different answer),
so a failure after the first piece is final. A provider that ignores `stream` and
answers a plain completion is read as `complete` reads it, its whole text one piece; a
local engine streams the pieces it yields. An event that is not JSON or not a chunk, an
`error` event, a stream that ends before `[DONE]` or a finish reason, and more than
`MAX_RESPONSE_BYTES` are malformed answers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from factcheck.core.domain import Completion, TokenUsage
from factcheck.core.prompt_versions import prompt_version_of
from factcheck.kit.observability import metrics
from factcheck.kit.settings import MaxTokensField, Settings, StructuredOutputFormat, wire_model_name
from factcheck.models import calls, output_limits, provider_answers
from factcheck.models.availability import no_endpoint_message, provider_of
from factcheck.models.dialects import GROUNDING_DIALECTS, dialect_of, dialect_revision
from factcheck.models.errors import (
    ModelError,
    ModelMalformedResponseError,
    ModelNotConfiguredError,
    ModelPromptTooLongError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.models.inputs import InputsMissing, ModelInputs
from factcheck.models.limits import LimitExceeded, ProviderLimits, RateLimits, estimate_tokens
from factcheck.models.local import (
    LOCAL_PREFIX,
    ONNX_PREFIX,
    LocalEngine,
    LocalStreamEngine,
    engine_family,
    get_local_engine,
    get_local_stream_engine,
    is_in_process,
    local_engine_revision,
)
from factcheck.models.output_limits import OutputLimit
from factcheck.models.provider_answers import MAX_JSON_DEPTH, MAX_RESPONSE_BYTES
from factcheck.text.text_safety import clean_text, excerpt
from factcheck.v1 import usage_pb2

log = logging.getLogger("factcheck.models")
# The API's tracer: its spans record nothing until tracing.setup installs the SDK.
_tracer = trace.get_tracer("factcheck.models")

_CHAT_PATH = "/chat/completions"
_LOCAL_PROVIDER = LOCAL_PREFIX.rstrip("/")
# A black-holed connect should not eat a long deadline: cap it so the attempt can be retried.
_CONNECT_TIMEOUT_S = 10.0
# Exponential backoff stops growing here; the deadline bounds it anyway.
_MAX_BACKOFF_S = 30.0
# Provider text quoted in an error message, in characters.
_EXCERPT_CHARS = 160

# Bodies larger than this are parsed in a worker thread, so that the event loop stays responsive.
_THREAD_PARSE_BYTES = 1024 * 1024
# The forms of `response_format`, most structured first: a refusal steps down to the next.
STRUCTURED_OUTPUT_FORMATS: tuple[StructuredOutputFormat, ...] = (
    "json_schema",
    "json_object_schema",
    "json_object",
    "none",
)
# Words by which an error answer says which request field it refuses (checked in its body's head).
_REFUSAL_MARKERS = {
    "response_format": ("response_format", "json_schema", "json_object"),
    "stream_options": ("stream_options", "include_usage"),
    "logprobs": ("logprobs", "top_logprobs"),
}
_REFUSAL_HEAD_CHARS = 4096
# Tokens a chat template adds around the prompt (role markers), and the least room an answer needs.
_TEMPLATE_TOKENS = 16
_MIN_ANSWER_TOKENS = 16


@dataclass(frozen=True)
class _Endpoint:
    """Where and how to reach the provider of one model id."""

    provider: str
    url: str
    api_key: str | None
    max_concurrency: int
    # The model name the endpoint expects (the caller's id, or its mapped name: ProviderOverride.wire_model).
    wire_model: str
    # Output limits: the most any call may ask for, and the request field(s) that carry it.
    max_output_tokens: int = 16384
    max_tokens_field: MaxTokensField = "max_tokens"
    # The context window in tokens, when it is known.
    context_window: int | None = None


@dataclass
class _CallStats:
    """What the per-call log line reports."""

    attempts: int = 0
    outcome: str = "ok"
    usage: TokenUsage | None = None
    # Whether `usage` was counted here (the provider reported none) rather than reported.
    estimated: bool = False
    # Whether the last attempt reached the provider and was not refused (so it may have used tokens),
    # and what it had answered so far: the usage of a call that ends without an answer.
    reached: bool = False
    received: list[str] = field(default_factory=list)
    reported: TokenUsage | None = None
    # The provider's finish reason of the answer ("stop", "length", ...), when it gave one.
    finish_reason: str = ""
    # The first answer token's alternatives (a call with `logprobs`), when the provider sent them.
    top_logprobs: tuple[tuple[str, float], ...] | None = None


@dataclass(frozen=True)
class _Extras:
    """What a call asks of an HTTP provider besides the prompt: a structured answer, a system message,
    the answer tokens' log-probabilities."""

    response_format: dict[str, Any] | None = None
    system: str | None = None
    logprobs: int | None = None


# What `next` returns once a local engine's stream is exhausted.
_NO_MORE = object()
# Receives each piece of a streamed answer as it is read.
_Emit = Callable[[str], None]


class _Streamed:
    """Forwards a streamed answer's pieces and remembers whether any was handed on."""

    def __init__(self, emit: _Emit) -> None:
        self._emit = emit
        self.started = False

    def __call__(self, piece: str) -> None:
        if piece:
            self.started = True
            self._emit(piece)


class _Refused(Exception):
    """The provider refused a request field it does not take (`field`: "response_format" or
    "stream_options"): ask again at once without it, or in a simpler form."""

    def __init__(self, field_name: str, error: ModelError) -> None:
        super().__init__(error.message)
        self.field = field_name
        self.error = error


class _RetryableFailure(Exception):
    """One attempt failed in a way worth retrying; `error` is raised if we give up."""

    def __init__(self, error: ModelError, retry_after_s: float | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.retry_after_s = retry_after_s


class ModelClient:
    """Answers prompts with local engines or OpenAI-compatible endpoints. Share one per process.

    `transport` replaces httpx's network transport (e.g. `httpx.MockTransport`); by
    default real HTTP is used.
    """

    def __init__(self, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._settings = settings
        # Semaphores bound concurrency, not the pool, so the pool itself is unlimited.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
        self._http = httpx.AsyncClient(transport=transport, limits=limits, timeout=None)
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._limits = RateLimits(settings)
        self._secrets = _configured_secrets(settings)
        # What each provider was found to take: its form of response_format, and whether its
        # streams may be asked for usage (learnt from its refusals, kept for the process's life).
        self._formats: dict[str, StructuredOutputFormat] = {}
        self._stream_usage: dict[str, bool] = {}
        # Providers that refused `logprobs` (asked without it from then on).
        self._no_logprobs: set[str] = set()

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the shared HTTP connection pool."""
        await self._http.aclose()

    async def complete(
        self,
        model_id: str,
        prompt: str,
        *,
        timeout_s: float,
        limit: OutputLimit | None = None,
        response_format: dict[str, Any] | None = None,
        inputs: ModelInputs | None = None,
        system: str | None = None,
        logprobs: int | None = None,
    ) -> Completion:
        """Answer `prompt` with `model_id` within `timeout_s` seconds, retries included.

        `inputs` are what the prompt was built from: a `local/` engine answers from them, an HTTP
        provider never sees them. `system` (HTTP providers) goes before the prompt as a system message:
        a model's own instructions, for a dialect that has some. `logprobs` asks for that many alternatives
        of each answer token (`Completion.top_logprobs`: the first token's, when the provider sent them).

        `limit` (from `factcheck.models.output_limits`) bounds the answer: its tokens, as the
        settings scale and cap them, go out as `max_tokens`, its stop sequences as `stop`; without
        one the call asks for at most FACTCHECK_MODEL_MAX_OUTPUT_TOKENS.
        `response_format` (an OpenAI `{"type": "json_schema", ...}` object) is sent only to an endpoint
        that `supports_structured_outputs`, in the form the provider takes (down to none at all),
        so callers validate the answer anyway.
        Raises a `ModelError` subclass on any failure. `latency_ms` covers the whole call.
        """
        if response_format is not None and not self.supports_structured_outputs(model_id):
            response_format = None
        extras = _Extras(response_format, system, logprobs)
        return await self._call(model_id, prompt, timeout_s, None, extras, limit, inputs)

    def supports_structured_outputs(self, model_id: str) -> bool:
        """Whether calls to `model_id` send `response_format`: the provider override's
        `structured_outputs`, else FACTCHECK_MODEL_STRUCTURED_OUTPUTS. Never for in-process engines,
        which answer from the call's inputs."""
        if is_in_process(model_id):
            return False
        return self._provider_setting(provider_of(model_id), "structured_outputs")

    def engine_revision(self, model_id: str) -> str:
        """What else `model_id`'s answers depend on besides its inputs: a `local/` engine's registered
        revision (the embedded entailment model's, for the engines it judges for); an `onnx/` model's
        files' hash (the model is loaded and checked first: blocking, call it from a worker thread when
        it may not be loaded yet); a grounding dialect's prompt version and served model name; "" for every
        other engine and HTTP model (its id is all there is to know). ModelNotConfiguredError, saying
        which setting to fix, for a model that cannot be used."""
        if model_id.startswith(LOCAL_PREFIX):
            return local_engine_revision(model_id[len(LOCAL_PREFIX) :])
        if model_id.startswith(ONNX_PREFIX):
            family, name = engine_family(model_id)
            return family.revision(name, self._settings)
        dialect = self.dialect(model_id)
        if dialect in GROUNDING_DIALECTS:
            return dialect_revision(dialect, self._endpoint_for(model_id).wire_model)
        return ""

    def dialect(self, model_id: str) -> str:
        """The dialect `model_id` is spoken to in (`factcheck.models.dialects`): "chat" for in-process
        engines and most models. ModelNotConfiguredError for a dialect this suite does not speak."""
        if is_in_process(model_id):
            return "chat"
        return dialect_of(model_id, self._settings)

    def context_window(self, model_id: str) -> int | None:
        """The context window (tokens) of `model_id`'s provider, when the settings give one."""
        if is_in_process(model_id):
            return None
        return self._provider_setting(provider_of(model_id), "context_window")

    def output_tokens(self, model_id: str, limit: OutputLimit | None) -> int:
        """The output limit a call of `model_id` with `limit` asks for (settings applied)."""
        ceiling = self._provider_setting(provider_of(model_id), "max_output_tokens")
        return self._resolve_limit(limit, ceiling).max_tokens

    def _provider_setting(self, provider: str, name: str) -> Any:
        """A provider's own value of setting `name` (its FACTCHECK_MODEL_PROVIDERS entry), else the
        global FACTCHECK_MODEL_<NAME>."""
        override = self._settings.model_providers.get(provider) if provider else None
        value = getattr(override, name) if override is not None else None
        return value if value is not None else getattr(self._settings, f"model_{name}")

    def prompt_budget(self, model_id: str, limit: OutputLimit | None) -> int | None:
        """The most prompt tokens (by `limits.estimate_tokens`) a call of `model_id` should send, so
        that its context window keeps room for the answer: `limit`'s tokens, or a third of the
        window when that is less (the client lowers the answer's limit to the room left). None
        when no context window is configured."""
        window = self.context_window(model_id)
        if window is None:
            return None
        answer = min(self.output_tokens(model_id, limit), window // 3)
        return max(window - answer - _TEMPLATE_TOKENS, 0)

    def _resolve_limit(self, limit: OutputLimit | None, ceiling: int) -> OutputLimit:
        return output_limits.resolve(
            limit,
            overrides=self._settings.model_output_tokens,
            scale=self._settings.model_output_tokens_scale,
            ceiling=ceiling,
        )

    def stream(
        self,
        model_id: str,
        prompt: str,
        *,
        timeout_s: float,
        limit: OutputLimit | None = None,
        inputs: ModelInputs | None = None,
    ) -> CompletionStream:
        """`complete`, with the answer's pieces as the model writes them:

            async with client.stream(model, prompt, timeout_s=30) as answer:
                async for piece in answer:
                    ...
            answer.completion  # the whole answer, as `complete` returns it

        Iterating raises the `ModelError` of a failed call. Leaving the block early cancels it.
        """
        return CompletionStream(lambda emit: self._call(model_id, prompt, timeout_s, emit, _Extras(), limit, inputs))

    async def _call(
        self,
        model_id: str,
        prompt: str,
        timeout_s: float,
        emit: _Emit | None,
        extras: _Extras,
        limit: OutputLimit | None = None,
        inputs: ModelInputs | None = None,
    ) -> Completion:
        """One model call, streamed to `emit` when it is given: deadline, retries, metrics, log and span."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout_s
        stats = _CallStats()
        streamed = _Streamed(emit) if emit is not None else None
        with _tracer.start_as_current_span(
            "model.complete",
            attributes={"gen_ai.request.model": model_id},
            # A failed call's status is its ModelError's message, set below; a cancelled call is no error.
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                if is_in_process(model_id):
                    text, usage = await self._complete_local(model_id, prompt, inputs, deadline, stats, streamed)
                else:
                    text, usage = await self._complete_remote(
                        model_id, prompt, deadline, timeout_s, stats, streamed, extras, limit
                    )
                stats.usage = usage
            except ModelError as exc:
                stats.outcome = _outcome_of(exc)
                span.set_status(Status(StatusCode.ERROR, exc.message))
                _usage_so_far(prompt, stats)
                raise
            except asyncio.CancelledError:
                stats.outcome = "cancelled"
                _usage_so_far(prompt, stats)
                raise
            finally:
                elapsed = loop.time() - started
                latency_ms = int(elapsed * 1000)
                _log_call(model_id, prompt, stats, latency_ms)
                _observe_call(span, model_id, stats, elapsed)
                _report_call(model_id, prompt, stats, latency_ms)
        return Completion(
            text=text,
            usage=usage,
            latency_ms=latency_ms,
            model=model_id,
            finish_reason=stats.finish_reason,
            top_logprobs=stats.top_logprobs,
        )

    # --- local engines -------------------------------------------------------------

    async def _complete_local(
        self,
        model_id: str,
        prompt: str,
        inputs: ModelInputs | None,
        deadline: float,
        stats: _CallStats,
        streamed: _Streamed | None = None,
    ) -> tuple[str, TokenUsage]:
        """Run the engine in a thread so CPU work does not block the loop (streamed: each piece
        is worked out in a thread, and handed on as it comes).

        On timeout the thread cannot be killed: it finishes in the background and its
        answer is dropped.

        An engine family's model (`onnx/`) is looked up, loaded on its first call, in the worker thread;
        its whole answer is one piece, and its usage is 0 tokens (not estimated).
        """
        family_model = model_id.startswith(ONNX_PREFIX)
        engine: LocalEngine | LocalStreamEngine
        if family_model:
            family, name = engine_family(model_id)
            settings = self._settings

            def family_engine(prompt: str, inputs: ModelInputs | None) -> str:
                return family.engine(name, settings)(prompt, inputs)

            engine, provider = family_engine, provider_of(model_id)
        else:
            name = model_id[len(LOCAL_PREFIX) :]
            engine = get_local_engine(name) if streamed is None else get_local_stream_engine(name)
            provider = _LOCAL_PROVIDER
        stats.attempts = 1
        try:
            async with asyncio.timeout_at(deadline):
                async with self._semaphore(provider, self._settings.model_max_concurrency):
                    if streamed is None or family_model:
                        text = await asyncio.to_thread(engine, prompt, inputs)
                        if streamed is not None and isinstance(text, str):  # a family's answer: one piece
                            streamed(clean_text(text))
                    else:
                        text = await self._stream_local(model_id, engine, prompt, inputs, streamed)
        except ModelError:
            raise
        except TimeoutError:
            raise ModelTimeoutError(model_id, "local engine did not answer before the deadline") from None
        except InputsMissing as exc:  # named for a call it cannot answer: its own words, no class name
            raise ModelProviderError(model_id, str(exc)) from exc
        except Exception as exc:  # an engine bug must surface as a model failure, not crash the service
            detail = self._excerpt(f"{type(exc).__name__}: {exc}")
            raise ModelProviderError(model_id, f"local engine failed: {detail}") from exc
        if not isinstance(text, str):
            raise ModelMalformedResponseError(model_id, f"local engine returned {type(text).__name__}, not str")
        text = clean_text(text)
        if family_model:
            return text, TokenUsage()
        stats.estimated = True
        return text, _estimate_usage(prompt, text)

    async def _stream_local(
        self, model_id: str, engine, prompt: str, inputs: ModelInputs | None, streamed: _Streamed
    ) -> str:
        """Pull a streaming engine's pieces, each in a worker thread; the whole answer, cleaned."""
        pieces = await asyncio.to_thread(engine, prompt, inputs)
        parts: list[str] = []
        while (piece := await asyncio.to_thread(next, pieces, _NO_MORE)) is not _NO_MORE:
            if not isinstance(piece, str):
                raise ModelMalformedResponseError(model_id, f"local engine yielded {type(piece).__name__}, not str")
            piece = clean_text(piece)
            parts.append(piece)
            streamed(piece)
        return "".join(parts)

    # --- remote endpoints ----------------------------------------------------------

    async def _complete_remote(
        self,
        model_id: str,
        prompt: str,
        deadline: float,
        timeout_s: float,
        stats: _CallStats,
        streamed: _Streamed | None = None,
        extras: _Extras | None = None,
        limit: OutputLimit | None = None,
    ) -> tuple[str, TokenUsage]:
        """Attempt, and retry retryable failures with backoff, until success or the deadline
        (streamed to a caller: only until the first piece of the answer was handed on).

        Retries are tenacity's: a `_RetryableFailure` (429, 5xx, a connection that failed or broke
        before the first piece was handed on) is tried again after the provider's `Retry-After`
        when it gave one, else after full jitter (uniform(0, base * 2^(n-1)), at most
        `_MAX_BACKOFF_S`), at most `model_max_retries` times, and never when the wait would end at
        or past the deadline: then the call fails with the last error (a timeout when the deadline
        has already passed). Anything else ends the call at once.

        Every request streams, so that a call that is cancelled or times out closes its
        connection and the server stops writing. A provider that reports no usage gets an
        estimate, marked as one.
        """
        endpoint = self._endpoint_for(model_id)
        extras = extras or _Extras()
        bound = self._fit_context_window(
            endpoint, model_id, (extras.system or "") + prompt, self._resolve_limit(limit, endpoint.max_output_tokens)
        )
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        max_retries = self._settings.model_max_retries

        def give_up(state: RetryCallState) -> None:
            """Out of attempts, or the next wait would cross the deadline."""
            failure = state.outcome.exception() if state.outcome is not None else None
            assert isinstance(failure, _RetryableFailure)
            if state.attempt_number > max_retries:
                raise failure.error
            raise self._give_up_at_deadline(model_id, failure.error, deadline, timeout_s)

        retrying = AsyncRetrying(
            retry=retry_if_exception(
                lambda error: isinstance(error, _RetryableFailure) and not (streamed is not None and streamed.started)
            ),
            wait=self._backoff(),
            stop=stop_after_attempt(max_retries + 1) | stop_before_delay(deadline - asyncio.get_running_loop().time()),
            retry_error_callback=give_up,
        )

        async def attempt() -> tuple[str, TokenUsage | None]:
            return await self._negotiate(
                endpoint, model_id, prompt, bound, extras, headers, deadline, timeout_s, stats, streamed
            )

        try:
            answer: tuple[str, TokenUsage | None] = await retrying(attempt)
        except _RetryableFailure as failure:  # not to be retried: a piece of the answer was handed on
            raise failure.error from None
        text, usage = answer
        if usage is None:
            stats.estimated = True
            usage = _estimate_remote_usage(prompt, text)
        return text, usage

    async def _negotiate(
        self,
        endpoint: _Endpoint,
        model_id: str,
        prompt: str,
        bound: OutputLimit,
        extras: _Extras,
        headers: dict[str, str],
        deadline: float,
        timeout_s: float,
        stats: _CallStats,
        streamed: _Streamed | None,
    ) -> tuple[str, TokenUsage | None]:
        """One attempt: the request, sent again at once without each field the provider refuses
        (`_Refused`: dropped or simplified). A refusal is no failure to wait out, so it never
        reaches the retries; one of a field the request did not send is final."""
        while True:
            payload, form = self._payload(endpoint, prompt, bound, extras)
            stats.attempts += 1
            try:
                return await self._attempt(endpoint, model_id, payload, headers, deadline, timeout_s, stats, streamed)
            except _Refused as refusal:
                if not self._learn_refusal(endpoint.provider, refusal.field, payload, form):
                    raise refusal.error from None

    def _payload(
        self, endpoint: _Endpoint, prompt: str, bound: OutputLimit, extras: _Extras
    ) -> tuple[dict[str, Any], StructuredOutputFormat | None]:
        """The request body, in the forms the provider takes (as far as the client knows yet), and
        the form of `response_format` it uses (None without one)."""
        messages = [{"role": "system", "content": extras.system}] if extras.system is not None else []
        payload: dict[str, Any] = {
            "model": endpoint.wire_model,
            "messages": [*messages, {"role": "user", "content": prompt}],
            "stream": True,
        }
        if extras.logprobs is not None and endpoint.provider not in self._no_logprobs:
            payload["logprobs"] = True
            payload["top_logprobs"] = extras.logprobs
        if self._asks_stream_usage(endpoint.provider):
            payload["stream_options"] = {"include_usage": True}
        if endpoint.max_tokens_field in ("max_tokens", "both"):
            payload["max_tokens"] = bound.max_tokens
        if endpoint.max_tokens_field in ("max_completion_tokens", "both"):
            payload["max_completion_tokens"] = bound.max_tokens
        if bound.stop:
            payload["stop"] = list(bound.stop)
        form: StructuredOutputFormat | None = None
        if extras.response_format is not None:
            form = self._structured_output_format(endpoint.provider)
            converted = _in_format(extras.response_format, form)
            if converted is not None:
                payload["response_format"] = converted
        return payload, form

    def _asks_stream_usage(self, provider: str) -> bool:
        if provider in self._stream_usage:
            return self._stream_usage[provider]
        return self._provider_setting(provider, "stream_usage")

    def _structured_output_format(self, provider: str) -> StructuredOutputFormat:
        if provider in self._formats:
            return self._formats[provider]
        return self._provider_setting(provider, "structured_output_format")

    def _learn_refusal(
        self, provider: str, field_name: str, payload: dict[str, Any], form: StructuredOutputFormat | None
    ) -> bool:
        """Remember what the provider refused, so that this and later calls ask without it;
        False when the refused field was not even sent (the refusal is then final)."""
        if field_name == "response_format" and "response_format" in payload and form is not None:
            simpler = STRUCTURED_OUTPUT_FORMATS[STRUCTURED_OUTPUT_FORMATS.index(form) + 1]
            known = self._structured_output_format(provider)
            if STRUCTURED_OUTPUT_FORMATS.index(known) < STRUCTURED_OUTPUT_FORMATS.index(simpler):
                self._formats[provider] = simpler
                log.warning("provider %s refused response_format %s: using %s from now on", provider, form, simpler)
            return True
        if field_name == "stream_options" and "stream_options" in payload:
            if self._stream_usage.get(provider, True):
                log.warning("provider %s refused stream_options: its usage is estimated from now on", provider)
            self._stream_usage[provider] = False
            return True
        if field_name == "logprobs" and "logprobs" in payload:
            if provider not in self._no_logprobs:
                log.warning("provider %s refused logprobs: its calls are asked without them from now on", provider)
            self._no_logprobs.add(provider)
            return True
        return False

    def _fit_context_window(self, endpoint: _Endpoint, model_id: str, prompt: str, bound: OutputLimit) -> OutputLimit:
        """The output limit lowered to the room the prompt leaves in the context window; a prompt
        that leaves too little is refused here rather than by the server."""
        window = endpoint.context_window
        if window is None:
            return bound
        prompt_tokens = estimate_tokens(prompt) + _TEMPLATE_TOKENS
        room = window - prompt_tokens
        if room < min(_MIN_ANSWER_TOKENS, bound.max_tokens):
            raise ModelPromptTooLongError(
                model_id,
                f"the prompt (about {prompt_tokens} tokens) leaves no room for an answer in the "
                f"{window}-token context window of provider {endpoint.provider!r}: shorten the input, "
                "or use a model with a larger context window",
            )
        return dataclasses.replace(bound, max_tokens=room) if room < bound.max_tokens else bound

    async def _attempt(
        self,
        endpoint: _Endpoint,
        model_id: str,
        payload: dict[str, Any],
        headers: dict[str, str],
        deadline: float,
        timeout_s: float,
        stats: _CallStats,
        streamed: _Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """One HTTP request within the provider's rate limits (when it has any)."""
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
        endpoint: _Endpoint,
        model_id: str,
        payload: dict[str, Any],
        headers: dict[str, str],
        deadline: float,
        timeout_s: float,
        stats: _CallStats,
        streamed: _Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """One HTTP request, bounded by the call's deadline. Raises _RetryableFailure to retry,
        _Refused to ask again without a field.

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
                async with self._semaphore(endpoint.provider, endpoint.max_concurrency):
                    stats.reached = True  # from here on the provider may be working on it
                    async with self._http.stream(
                        "POST", endpoint.url, json=payload, headers=headers, timeout=timeout
                    ) as response:
                        if provider_answers.is_event_stream(response):
                            return await self._read_events(endpoint, model_id, response, stats, streamed)
                        body = await provider_answers.read_body(response)
        except TimeoutError:
            raise _deadline_exceeded(model_id, timeout_s) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            stats.reached = False
            raise ModelNotConfiguredError(
                model_id, f"invalid base URL for provider {endpoint.provider!r}: {self._excerpt(str(exc))}"
            ) from None
        except httpx.TimeoutException as exc:
            if loop.time() >= deadline:
                raise _deadline_exceeded(model_id, timeout_s) from None
            stats.reached = not isinstance(exc, httpx.ConnectTimeout)
            message = f"request to provider {endpoint.provider!r} timed out ({type(exc).__name__})"
            error = ModelProviderError(model_id, message)
            raise _RetryableFailure(error) from None
        except httpx.TransportError as exc:
            stats.reached = not isinstance(exc, httpx.ConnectError)
            detail = self._excerpt(f"{type(exc).__name__}: {exc}")
            error = ModelProviderError(model_id, f"cannot reach provider {endpoint.provider!r}: {detail}")
            raise _RetryableFailure(error) from None
        except httpx.HTTPError as exc:  # anything else httpx may raise (e.g. too many redirects)
            detail = self._excerpt(f"{type(exc).__name__}: {exc}")
            error = ModelProviderError(model_id, f"request to provider {endpoint.provider!r} failed: {detail}")
            raise _RetryableFailure(error) from None
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
        endpoint: _Endpoint,
        model_id: str,
        response: httpx.Response,
        stats: _CallStats,
        streamed: _Streamed | None = None,
    ) -> tuple[str, TokenUsage | None]:
        """A 2xx server-sent-events answer: each chunk's text handed on as it arrives (kept in
        `stats.received`, with any usage reported so far in `stats.reported`).

        A connection that breaks before the first piece is handed on is retried like any
        other; after it, the failure is final (`_complete_remote`).
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
            detail = self._excerpt(f"{type(exc).__name__}: {exc}")
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
        raise _RetryableFailure(ModelProviderError(model_id, message))

    def _parse_chunk(
        self, endpoint: _Endpoint, model_id: str, event: str
    ) -> tuple[str, TokenUsage | None, str, tuple[tuple[str, float], ...] | None]:
        """(text, usage if reported, the finish reason or "", the first token's alternatives if it carries
        them) of one `chat.completion.chunk`."""
        if provider_answers.json_too_deep(event):
            raise ModelMalformedResponseError(model_id, f"a streamed chunk nests deeper than {MAX_JSON_DEPTH} levels")
        try:
            data = provider_answers.load_json(event)
        except ValueError:
            raise ModelMalformedResponseError(
                model_id, f"a streamed chunk is not JSON: {self._excerpt(event)}"
            ) from None
        if not isinstance(data, dict):
            raise ModelMalformedResponseError(model_id, "a streamed chunk is not a JSON object")
        if "error" in data:
            message = self._excerpt(provider_answers.error_message_of(data) or event)
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
        endpoint: _Endpoint,
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
            raise _RetryableFailure(error, retry_after)
        error = ModelProviderError(
            model_id, f"provider {endpoint.provider!r} answered HTTP {status}: {detail}", status_code=status
        )
        if refused := _refused_field(body.data, payload):
            raise _Refused(refused, error)
        if status >= 500:
            raise _RetryableFailure(error, retry_after)
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
            raise ModelMalformedResponseError(model_id, f"response is not JSON: {self._excerpt(text)}") from None
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

    # --- helpers -------------------------------------------------------------------

    def _endpoint_for(self, model_id: str) -> _Endpoint:
        """The provider override for the id's prefix, else the default endpoint."""
        provider = provider_of(model_id)
        override = self._settings.model_providers.get(provider) if provider else None
        base_url: str | None
        max_output_tokens = self._settings.model_max_output_tokens
        max_tokens_field = self._settings.model_max_tokens_field
        if override is not None:
            base_url, key = override.base_url, override.api_key
            max_concurrency = override.max_concurrency or self._settings.model_max_concurrency
            wire_model = override.wire_model(model_id)
            max_output_tokens = override.max_output_tokens or max_output_tokens
            max_tokens_field = override.max_tokens_field or max_tokens_field
        else:
            base_url, key = self._settings.model_base_url, self._settings.model_api_key
            max_concurrency = self._settings.model_max_concurrency
            wire_model = wire_model_name(
                model_id, strip_prefix=self._settings.model_strip_prefix, model_names=self._settings.model_names
            )
        if not base_url:
            raise ModelNotConfiguredError(model_id, no_endpoint_message(provider))
        secret = key.get_secret_value() if key is not None else None
        url = base_url.rstrip("/") + _CHAT_PATH
        return _Endpoint(
            provider=provider,
            url=url,
            api_key=secret or None,
            max_concurrency=max_concurrency,
            wire_model=wire_model,
            max_output_tokens=max_output_tokens,
            max_tokens_field=max_tokens_field,
            context_window=self.context_window(model_id),
        )

    def _semaphore(self, provider: str, max_concurrency: int) -> asyncio.Semaphore:
        """The semaphore of a provider prefix, created on first use."""
        semaphore = self._semaphores.get(provider)
        if semaphore is None:
            semaphore = self._semaphores[provider] = asyncio.Semaphore(max_concurrency)
        return semaphore

    def _backoff(self) -> Callable[[RetryCallState], float]:
        """The wait before a retry: the provider's Retry-After when it gave one, else full jitter,
        uniform(0, base * 2^(n-1)) before the n-th retry, its ceiling at most `_MAX_BACKOFF_S`."""
        jitter = wait_random_exponential(multiplier=self._settings.model_backoff_base_s, max=_MAX_BACKOFF_S)

        def wait(state: RetryCallState) -> float:
            failure = state.outcome.exception() if state.outcome is not None else None
            if isinstance(failure, _RetryableFailure) and failure.retry_after_s is not None:
                return failure.retry_after_s
            return jitter(state)

        return wait

    def _give_up_at_deadline(self, model_id: str, last: ModelError, deadline: float, timeout_s: float) -> ModelError:
        """The next wait would cross the deadline: a timeout if it already passed, else the last error."""
        if asyncio.get_running_loop().time() >= deadline:
            return _deadline_exceeded(model_id, timeout_s)
        return last

    def _provider_message(self, body: bytes) -> str:
        """A short, redacted, single-line excerpt of the provider's error message."""
        text = provider_answers.decode_body(body)
        try:
            data = None if provider_answers.json_too_deep(text) else provider_answers.load_json(text)
        except ValueError:
            data = None
        return self._excerpt(provider_answers.error_message_of(data) or text) or "(empty body)"

    def _excerpt(self, text: str) -> str:
        """Key-redacted `text_safety.excerpt`: one clean line, safe for messages and logs.

        Redaction runs on a bounded head of the text (more than the excerpt can show), so
        quoting a huge body costs no more than quoting a short one.
        """
        head = text[: _EXCERPT_CHARS * 8 + 1024]
        for secret in self._secrets:
            head = head.replace(secret, "***")
        return excerpt(head + ("…" if len(head) < len(text) else ""), _EXCERPT_CHARS)


class CompletionStream:
    """A model answer as it is written (`ModelClient.stream`): iterate for its pieces; then
    `completion` is the whole answer, as `ModelClient.complete` returns it.

    The call runs in a task of its own (its span, deadline and retries stay inside it),
    started on entering the `async with` block and cancelled on leaving it unfinished.
    """

    def __init__(self, call: Callable[[_Emit], Awaitable[Completion]]) -> None:
        self._call = call
        self._pieces: asyncio.Queue[str | None] = asyncio.Queue()
        self._task: asyncio.Task[Completion] | None = None
        self.completion: Completion | None = None

    async def __aenter__(self) -> CompletionStream:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        task = self._task
        if task is None:
            return
        if not task.done():
            task.cancel()
        try:
            await task
        except (asyncio.CancelledError, ModelError):
            pass  # the caller left early, or already got the error while iterating

    async def _run(self) -> Completion:
        try:
            return await self._call(self._pieces.put_nowait)
        finally:
            self._pieces.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[str]:
        if self._task is None:
            raise RuntimeError("use `async with client.stream(...)` before iterating")
        while (piece := await self._pieces.get()) is not None:
            yield piece
        self.completion = await self._task  # raises the call's ModelError


def _configured_secrets(settings: Settings) -> list[str]:
    """Every API key in the settings, longest first so overlapping keys redact fully."""
    keys = [settings.model_api_key] + [override.api_key for override in settings.model_providers.values()]
    secrets = {key.get_secret_value() for key in keys if key is not None and key.get_secret_value()}
    return sorted(secrets, key=len, reverse=True)


def _deadline_exceeded(model_id: str, timeout_s: float) -> ModelTimeoutError:
    return ModelTimeoutError(model_id, f"no answer within the {timeout_s:g}s deadline")


def _refused_field(body: bytes, payload: dict[str, Any]) -> str | None:
    """The optional request field an error answer refuses, when it names one the request sent
    (response_format first: the more specific words)."""
    head = body[:_REFUSAL_HEAD_CHARS].decode("utf-8", "replace").lower()
    for name, markers in _REFUSAL_MARKERS.items():
        if name in payload and any(marker in head for marker in markers):
            return name
    return None


def _in_format(response_format: dict[str, Any], form: StructuredOutputFormat) -> dict[str, Any] | None:
    """An OpenAI json_schema `response_format` in the provider's form (None: send none)."""
    if form == "none":
        return None
    if form == "json_schema" or response_format.get("type") != "json_schema":
        return response_format if form == "json_schema" else {"type": "json_object"}
    if form == "json_object_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return {"type": "json_object", "schema": schema} if isinstance(schema, dict) else {"type": "json_object"}
    return {"type": "json_object"}


def _estimate_remote_usage(prompt: str, text: str) -> TokenUsage:
    """A provider that reports no usage: about four characters a token (`limits.estimate_tokens`)."""
    prompt_tokens = estimate_tokens(prompt) + _TEMPLATE_TOKENS
    completion_tokens = math.ceil(len(text) / 4)
    return TokenUsage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)


def _usage_so_far(prompt: str, stats: _CallStats) -> None:
    """The usage of a call that ended without an answer (failed, timed out, cancelled): what the
    provider reported so far, else an estimate of the prompt and the text received, when the
    request reached the provider; nothing (no usage) when it never did."""
    if stats.usage is not None or not stats.reached:
        return
    if stats.reported is not None:
        stats.usage = stats.reported
        return
    stats.estimated = True
    stats.usage = _estimate_remote_usage(prompt, "".join(stats.received))


def _estimate_usage(prompt: str, text: str) -> TokenUsage:
    """Local engines have no tokenizer: estimate tokens as whitespace-separated words."""
    prompt_tokens, completion_tokens = len(prompt.split()), len(text.split())
    return TokenUsage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)


def _outcome_of(error: ModelError) -> str:
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}({status})" if status is not None else type(error).__name__


def _observe_call(span: trace.Span, model_id: str, stats: _CallStats, elapsed_s: float) -> None:
    """The call in the metrics and on its span: outcome, latency, tokens."""
    metrics.record_model_call(model_id, stats.outcome, elapsed_s, stats.usage)
    span.set_attribute("factcheck.outcome", stats.outcome)
    span.set_attribute("factcheck.attempts", stats.attempts)
    if stats.usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", stats.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", stats.usage.completion_tokens)


def _report_call(model_id: str, prompt: str, stats: _CallStats, latency_ms: int) -> None:
    """The call, for the calling RPC's model-calls trailer (the gateway's ledger): every outcome."""
    usage = stats.usage or TokenUsage()
    calls.record(
        usage_pb2.ModelCall(
            model=model_id,
            provider=model_id.split("/", 1)[0],
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_tokens=usage.cached_tokens,
            attempts=stats.attempts,
            latency_ms=latency_ms,
            outcome=stats.outcome,
            prompt_version=prompt_version_of(prompt),
            usage_estimated=stats.estimated,
        )
    )


def _log_call(model_id: str, prompt: str, stats: _CallStats, latency_ms: int) -> None:
    """One line per call: model, outcome, latency, attempts. Never the key, never the prompt."""
    level = logging.INFO if stats.outcome == "ok" else logging.WARNING
    log.log(
        level,
        "model call model=%s outcome=%s latency_ms=%d attempts=%d prompt_chars=%d finish=%s",
        model_id,
        stats.outcome,
        latency_ms,
        stats.attempts,
        len(prompt),
        stats.finish_reason or "-",
    )
