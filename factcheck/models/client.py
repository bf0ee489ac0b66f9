"""The one model client: every model call of every service goes through `ModelClient.complete`,
or `ModelClient.stream` for an answer wanted while it is being written (docs/models.md).

`ModelClient` composes the modules beside it, each with one job:
- `local_dispatch`: `local/` and `onnx/` ids run an in-process engine (registered in
  `factcheck.models.local`) in a worker thread, with the call's structured inputs.
- `endpoints`: any other id goes to an OpenAI-compatible endpoint: the provider override for the id's
  prefix, else the default one.
- `prompt_fitting`: the call's output limit, lowered to the room its prompt leaves in the provider's
  context window (a prompt that leaves none is refused without a request).
- `negotiation`: the request body in the forms the provider takes (structured output, usage in streams,
  log-probabilities), and the refusals learnt from its error answers.
- `transport`: HTTP: the connection pool, streamed answers, rate limits, retries with backoff.
- `call_state`: what these share for one call (its record, its streamed pieces, the per-provider
  concurrency, the redaction of keys).

Deadline: `timeout_s` bounds the whole call (waiting for a concurrency slot, every attempt and every
backoff sleep).

Observability: every call is counted in the Prometheus metrics (model, outcome, latency, tokens), is a
"model.complete" span of the current trace (OpenTelemetry's API: a span that records nothing unless
tracing is on), one log line and one record of the calling RPC's model-calls trailer (`calls`).

Secrets: the API keys never appear in logs or error messages (provider excerpts are redacted); prompts
are never logged, only their length.

Usage: a provider that reports none gets an estimate (about four characters a token), and so does a call
that ended without an answer after reaching the provider (cancelled, timed out, broken): its prompt and
the text received so far. The call's record says it is estimated (`ModelCall.usage_estimated`).

Log-probabilities: the first answer token's alternatives come back as `Completion.top_logprobs`, None
when the provider sent none. A grounding dialect (`factcheck.models.dialects`) reads its verdict from them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from factcheck.core.domain import Completion, TokenUsage
from factcheck.core.prompt_versions import prompt_version_of
from factcheck.kit.observability import metrics
from factcheck.kit.settings import Settings
from factcheck.models import calls, endpoints, prompt_fitting
from factcheck.models.availability import provider_of
from factcheck.models.call_state import (
    CallStats,
    Emit,
    ProviderSemaphores,
    Redactor,
    Streamed,
    estimate_remote_usage,
)
from factcheck.models.dialects import GROUNDING_DIALECTS, dialect_of, dialect_revision
from factcheck.models.errors import ModelError
from factcheck.models.inputs import ModelInputs
from factcheck.models.local import is_in_process
from factcheck.models.local_dispatch import LocalDispatch
from factcheck.models.negotiation import Extras, Negotiator
from factcheck.models.output_limits import OutputLimit
from factcheck.models.transport import Transport
from factcheck.v1 import usage_pb2

log = logging.getLogger("factcheck.models")
# The API's tracer: its spans record nothing until tracing.setup installs the SDK.
_tracer = trace.get_tracer("factcheck.models")


class ModelClient:
    """Answers prompts with local engines or OpenAI-compatible endpoints. Share one per process.

    `transport` replaces httpx's network transport (e.g. `httpx.MockTransport`); by
    default real HTTP is used.
    """

    def __init__(self, settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._settings = settings
        semaphores = ProviderSemaphores()
        redactor = Redactor(settings)
        self._local = LocalDispatch(settings, semaphores, redactor)
        self._negotiator = Negotiator(settings)
        self._transport = Transport(settings, semaphores, redactor, transport=transport)

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the shared HTTP connection pool."""
        await self._transport.aclose()

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
        extras = Extras(response_format, system, logprobs)
        return await self._call(model_id, prompt, timeout_s, None, extras, limit, inputs)

    def supports_structured_outputs(self, model_id: str) -> bool:
        """Whether calls to `model_id` send `response_format`: the provider override's
        `structured_outputs`, else FACTCHECK_MODEL_STRUCTURED_OUTPUTS. Never for in-process engines,
        which answer from the call's inputs."""
        if is_in_process(model_id):
            return False
        return endpoints.provider_setting(self._settings, provider_of(model_id), "structured_outputs")

    def engine_revision(self, model_id: str) -> str:
        """What else `model_id`'s answers depend on besides its inputs: a `local/` engine's registered
        revision (the embedded entailment model's, for the engines it judges for); an `onnx/` model's
        files' hash (the model is loaded and checked first: blocking, call it from a worker thread when
        it may not be loaded yet); a grounding dialect's prompt version and served model name; "" for every
        other engine and HTTP model (its id is all there is to know). ModelNotConfiguredError, saying
        which setting to fix, for a model that cannot be used."""
        if (revision := self._local.revision(model_id)) is not None:
            return revision
        dialect = self.dialect(model_id)
        if dialect in GROUNDING_DIALECTS:
            return dialect_revision(dialect, endpoints.endpoint_for(self._settings, model_id).wire_model)
        return ""

    def dialect(self, model_id: str) -> str:
        """The dialect `model_id` is spoken to in (`factcheck.models.dialects`): "chat" for in-process
        engines and most models. ModelNotConfiguredError for a dialect this suite does not speak."""
        if is_in_process(model_id):
            return "chat"
        return dialect_of(model_id, self._settings)

    def context_window(self, model_id: str) -> int | None:
        """The context window (tokens) of `model_id`'s provider, when the settings give one."""
        return endpoints.context_window(self._settings, model_id)

    def output_tokens(self, model_id: str, limit: OutputLimit | None) -> int:
        """The output limit a call of `model_id` with `limit` asks for (settings applied)."""
        ceiling = endpoints.provider_setting(self._settings, provider_of(model_id), "max_output_tokens")
        return prompt_fitting.resolve_limit(self._settings, limit, ceiling).max_tokens

    def prompt_budget(self, model_id: str, limit: OutputLimit | None) -> int | None:
        """The most prompt tokens (by `limits.estimate_tokens`) a call of `model_id` should send, so
        that its context window keeps room for the answer: `limit`'s tokens, or a third of the
        window when that is less (the client lowers the answer's limit to the room left). None
        when no context window is configured."""
        window = self.context_window(model_id)
        if window is None:
            return None
        return prompt_fitting.prompt_budget(window, self.output_tokens(model_id, limit))

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
        return CompletionStream(lambda emit: self._call(model_id, prompt, timeout_s, emit, Extras(), limit, inputs))

    async def _call(
        self,
        model_id: str,
        prompt: str,
        timeout_s: float,
        emit: Emit | None,
        extras: Extras,
        limit: OutputLimit | None = None,
        inputs: ModelInputs | None = None,
    ) -> Completion:
        """One model call, streamed to `emit` when it is given: deadline, retries, metrics, log and span."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout_s
        stats = CallStats()
        streamed = Streamed(emit) if emit is not None else None
        with _tracer.start_as_current_span(
            "model.complete",
            attributes={"gen_ai.request.model": model_id},
            # A failed call's status is its ModelError's message, set below; a cancelled call is no error.
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                if is_in_process(model_id):
                    text, usage = await self._local.complete(model_id, prompt, inputs, deadline, stats, streamed)
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

    async def _complete_remote(
        self,
        model_id: str,
        prompt: str,
        deadline: float,
        timeout_s: float,
        stats: CallStats,
        streamed: Streamed | None = None,
        extras: Extras | None = None,
        limit: OutputLimit | None = None,
    ) -> tuple[str, TokenUsage]:
        """An HTTP provider's answer: its endpoint, the output limit fitted to its context window, then
        attempts (each negotiated: sent again at once without a refused field) retried until success
        or the deadline. A provider that reports no usage gets an estimate, marked as one."""
        endpoint = endpoints.endpoint_for(self._settings, model_id)
        extras = extras or Extras()
        ceiling = prompt_fitting.resolve_limit(self._settings, limit, endpoint.max_output_tokens)
        bound = prompt_fitting.fit_context_window(endpoint, model_id, (extras.system or "") + prompt, ceiling)

        async def send(payload: dict[str, Any]) -> tuple[str, TokenUsage | None]:
            return await self._transport.send(endpoint, model_id, payload, deadline, timeout_s, stats, streamed)

        async def attempt() -> tuple[str, TokenUsage | None]:
            return await self._negotiator.negotiate(endpoint, prompt, bound, extras, stats, send)

        text, usage = await self._transport.with_retries(attempt, model_id, deadline, timeout_s, streamed)
        if usage is None:
            stats.estimated = True
            usage = estimate_remote_usage(prompt, text)
        return text, usage


class CompletionStream:
    """A model answer as it is written (`ModelClient.stream`): iterate for its pieces; then
    `completion` is the whole answer, as `ModelClient.complete` returns it.

    The call runs in a task of its own (its span, deadline and retries stay inside it),
    started on entering the `async with` block and cancelled on leaving it unfinished.
    """

    def __init__(self, call: Callable[[Emit], Awaitable[Completion]]) -> None:
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


def _usage_so_far(prompt: str, stats: CallStats) -> None:
    """The usage of a call that ended without an answer (failed, timed out, cancelled): what the
    provider reported so far, else an estimate of the prompt and the text received, when the
    request reached the provider; nothing (no usage) when it never did."""
    if stats.usage is not None or not stats.reached:
        return
    if stats.reported is not None:
        stats.usage = stats.reported
        return
    stats.estimated = True
    stats.usage = estimate_remote_usage(prompt, "".join(stats.received))


def _outcome_of(error: ModelError) -> str:
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}({status})" if status is not None else type(error).__name__


def _observe_call(span: trace.Span, model_id: str, stats: CallStats, elapsed_s: float) -> None:
    """The call in the metrics and on its span: outcome, latency, tokens."""
    metrics.record_model_call(model_id, stats.outcome, elapsed_s, stats.usage)
    span.set_attribute("factcheck.outcome", stats.outcome)
    span.set_attribute("factcheck.attempts", stats.attempts)
    if stats.usage is not None:
        span.set_attribute("gen_ai.usage.input_tokens", stats.usage.prompt_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", stats.usage.completion_tokens)


def _report_call(model_id: str, prompt: str, stats: CallStats, latency_ms: int) -> None:
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


def _log_call(model_id: str, prompt: str, stats: CallStats, latency_ms: int) -> None:
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
