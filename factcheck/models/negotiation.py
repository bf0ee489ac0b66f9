"""What an HTTP provider is asked besides the prompt, in the forms it takes (docs/models.md, "Output
limits, context windows and structured output").

`response_format` goes out in the provider's form (json_schema, llama.cpp's json_object with a schema,
json_object, none); an error answer that names a field the request sent (`response_format`,
`stream_options`, `logprobs`) is a refusal, not a failure: the request is sent again at once without it
or in the next simpler form, and the `Negotiator` remembers the provider's form for later calls (for the
process's life). Refusals are never retried with backoff.

Log-probabilities: a call with `logprobs=n` asks for the answer tokens' `n` most likely alternatives
(`logprobs: true, top_logprobs: n`); a provider that refused the field is not asked again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from factcheck.kit.settings import Settings, StructuredOutputFormat
from factcheck.models.call_state import CallStats
from factcheck.models.endpoints import Endpoint, provider_setting
from factcheck.models.errors import ModelError
from factcheck.models.output_limits import OutputLimit

log = logging.getLogger("factcheck.models")

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

_Answer = TypeVar("_Answer")


@dataclass(frozen=True)
class Extras:
    """What a call asks of an HTTP provider besides the prompt: a structured answer, a system message,
    the answer tokens' log-probabilities."""

    response_format: dict[str, Any] | None = None
    system: str | None = None
    logprobs: int | None = None


class Refused(Exception):
    """The provider refused a request field it does not take (`field`: "response_format",
    "stream_options" or "logprobs"): ask again at once without it, or in a simpler form."""

    def __init__(self, field_name: str, error: ModelError) -> None:
        super().__init__(error.message)
        self.field = field_name
        self.error = error


class Negotiator:
    """Builds each request body in the forms the providers take, and learns from their refusals.
    Share one per client: what it learns holds for every later call to the same provider."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        # What each provider was found to take: its form of response_format, and whether its
        # streams may be asked for usage (learnt from its refusals, kept for the process's life).
        self._formats: dict[str, StructuredOutputFormat] = {}
        self._stream_usage: dict[str, bool] = {}
        # Providers that refused `logprobs` (asked without it from then on).
        self._no_logprobs: set[str] = set()

    async def negotiate(
        self,
        endpoint: Endpoint,
        prompt: str,
        bound: OutputLimit,
        extras: Extras,
        stats: CallStats,
        send: Callable[[dict[str, Any]], Awaitable[_Answer]],
    ) -> _Answer:
        """One attempt: the request (`send`), sent again at once without each field the provider refuses
        (`Refused`: dropped or simplified). A refusal is no failure to wait out, so it never
        reaches the retries; one of a field the request did not send is final."""
        while True:
            payload, form = self.payload(endpoint, prompt, bound, extras)
            stats.attempts += 1
            try:
                return await send(payload)
            except Refused as refusal:
                if not self._learn_refusal(endpoint.provider, refusal.field, payload, form):
                    raise refusal.error from None

    def payload(
        self, endpoint: Endpoint, prompt: str, bound: OutputLimit, extras: Extras
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
        return provider_setting(self._settings, provider, "stream_usage")

    def _structured_output_format(self, provider: str) -> StructuredOutputFormat:
        if provider in self._formats:
            return self._formats[provider]
        return provider_setting(self._settings, provider, "structured_output_format")

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


def refused_field(body: bytes, payload: dict[str, Any]) -> str | None:
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
