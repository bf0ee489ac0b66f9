"""Errors raised by the model client.

Every failure of a model call is a `ModelError`, so a service can catch one type and
turn it into the run's error event or fallback (docs/api.md#what-happens-when-things-fail).
The subclasses say *why* the call failed, because callers react differently: a timeout or rate limit may deserve a
different message than a misconfigured endpoint or a provider that answered garbage.

Messages are built only from the model id, HTTP status and short, redacted excerpts
of provider answers: they never contain the API key, the endpoint URL or the prompt.

Every message is safe to put in a gRPC status or a log line as it is: one line of
well-formed text (no lone surrogates, no control characters), at most
`MESSAGE_LIMIT` characters plus the model id (itself cut to `MODEL_LIMIT`), whatever a
provider answered. `ModelError` enforces this itself, so no caller has to remember to.
"""

from __future__ import annotations

from factcheck.text.text_safety import excerpt

# Bounds of what a ModelError's text may quote, in characters: str(error) is at most about
# 440 characters (under 1 KB of UTF-8 unless the text is mostly 3- and 4-byte characters).
MESSAGE_LIMIT = 320
MODEL_LIMIT = 100


class ModelError(Exception):
    """A model call failed. `model` is the model id as requested; `message` the reason (one safe line)."""

    def __init__(self, model: str, message: str) -> None:
        safe_message = excerpt(message, MESSAGE_LIMIT)
        super().__init__(f"model {excerpt(model, MODEL_LIMIT)!r}: {safe_message}")
        self.model = model
        self.message = safe_message


class ModelTimeoutError(ModelError):
    """The call's deadline passed (including any retries and waiting for a free slot)."""


class ModelRateLimitedError(ModelError):
    """The provider kept answering 429 until the retries or the deadline ran out."""

    def __init__(self, model: str, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(model, message)
        self.status_code = 429
        self.retry_after_s = retry_after_s


class ModelProviderError(ModelError):
    """The provider failed: a non-retryable 4xx, a 5xx or a connection error after retries.

    `status_code` is the HTTP status, or None when no HTTP answer was received
    (connection refused, reset, a local engine that raised).
    """

    def __init__(self, model: str, message: str, *, status_code: int | None = None) -> None:
        super().__init__(model, message)
        self.status_code = status_code


class ModelMalformedResponseError(ModelError):
    """The provider answered 200, but not with a chat completion we can read."""


class ModelNotConfiguredError(ModelError):
    """No endpoint is configured for a non-local model, or the local engine is unknown."""


class ModelPromptTooLongError(ModelError):
    """The prompt cannot fit the model's context window (FACTCHECK_MODEL_CONTEXT_WINDOW) with room
    for an answer: refused before it was sent."""
