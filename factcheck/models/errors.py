"""Errors raised by the model client.

Every failure of a model call is a `ModelError`, so a service can catch one type and
turn it into the spec's error event or fallback. The subclasses say *why* the call
failed, because callers react differently: a timeout or rate limit may deserve a
different message than a misconfigured endpoint or a provider that answered garbage.

Messages are built only from the model id, HTTP status and short, redacted excerpts
of provider answers: they never contain the API key, the endpoint URL or the prompt.
"""

from __future__ import annotations


class ModelError(Exception):
    """A model call failed. `model` is the model id as requested; `message` the reason."""

    def __init__(self, model: str, message: str) -> None:
        super().__init__(f"model {model!r}: {message}")
        self.model = model
        self.message = message


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
