"""What the modules serving one model call share (`factcheck.models.client` composes them): the call's
record (`CallStats`), the hand-off of a streamed answer's pieces (`Streamed`), the per-provider concurrency
limit, the redaction of API keys from quoted text, and the usage estimate of a provider that reports none.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from factcheck.core.domain import TokenUsage
from factcheck.kit.settings import Settings
from factcheck.models.limits import estimate_tokens
from factcheck.models.prompt_fitting import TEMPLATE_TOKENS
from factcheck.text.text_safety import excerpt

# Provider text quoted in an error message, in characters.
EXCERPT_CHARS = 160

# Receives each piece of a streamed answer as it is read.
Emit = Callable[[str], None]


@dataclass
class CallStats:
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


class Streamed:
    """Forwards a streamed answer's pieces and remembers whether any was handed on."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self.started = False

    def __call__(self, piece: str) -> None:
        if piece:
            self.started = True
            self._emit(piece)


class ProviderSemaphores:
    """One semaphore per provider prefix: caps the calls in flight to a provider (`model_max_concurrency`,
    or the override's `max_concurrency`), local engines and HTTP endpoints alike."""

    def __init__(self) -> None:
        self._semaphores: dict[str, asyncio.Semaphore] = {}

    def of(self, provider: str, max_concurrency: int) -> asyncio.Semaphore:
        """The semaphore of a provider prefix, created on first use."""
        semaphore = self._semaphores.get(provider)
        if semaphore is None:
            semaphore = self._semaphores[provider] = asyncio.Semaphore(max_concurrency)
        return semaphore


class Redactor:
    """Quotes untrusted text for messages and logs without the configured API keys."""

    def __init__(self, settings: Settings) -> None:
        self._secrets = _configured_secrets(settings)

    def excerpt(self, text: str) -> str:
        """Key-redacted `text_safety.excerpt`: one clean line, safe for messages and logs.

        Redaction runs on a bounded head of the text (more than the excerpt can show), so
        quoting a huge body costs no more than quoting a short one.
        """
        head = text[: EXCERPT_CHARS * 8 + 1024]
        for secret in self._secrets:
            head = head.replace(secret, "***")
        return excerpt(head + ("…" if len(head) < len(text) else ""), EXCERPT_CHARS)


def _configured_secrets(settings: Settings) -> list[str]:
    """Every API key in the settings, longest first so overlapping keys redact fully."""
    keys = [settings.model_api_key] + [override.api_key for override in settings.model_providers.values()]
    secrets = {key.get_secret_value() for key in keys if key is not None and key.get_secret_value()}
    return sorted(secrets, key=len, reverse=True)


def estimate_remote_usage(prompt: str, text: str) -> TokenUsage:
    """A provider that reports no usage: about four characters a token (`limits.estimate_tokens`)."""
    prompt_tokens = estimate_tokens(prompt) + TEMPLATE_TOKENS
    completion_tokens = math.ceil(len(text) / 4)
    return TokenUsage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
