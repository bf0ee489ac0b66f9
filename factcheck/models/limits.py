"""Client-side request and token limits per provider: token buckets refilled per minute.

A provider's quota (say 500 requests and 200k tokens a minute) is better respected here
than discovered through 429s. Each bucket holds at most one minute's allowance and refills
continuously. A taker that finds too little reserves its share anyway (the level goes
negative) and sleeps until the refill covers it, so waiters are served in arrival order.
One that would have to wait past its deadline takes nothing and fails at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from factcheck.kit.settings import Settings


class LimitExceeded(Exception):
    """The limit frees up too late for the caller's deadline; `wait_s` is how long it would take."""

    def __init__(self, limit: str, wait_s: float) -> None:
        super().__init__(limit)
        self.limit = limit
        self.wait_s = wait_s


class TokenBucket:
    """`per_minute` units a minute, at most a minute's worth at once. Not thread-safe (one loop)."""

    def __init__(self, per_minute: float, unit: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = per_minute
        self.unit = unit
        self._rate = per_minute / 60.0
        self._clock = clock
        self._level = per_minute
        self._updated = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._updated) * self._rate)
        self._updated = now
        return now

    def reserve(self, amount: float, deadline: float) -> float:
        """Take `amount` (capped at the capacity); returns the seconds to wait before using it.

        Raises LimitExceeded, taking nothing, when that wait would end after `deadline`.
        """
        now = self._refill()
        amount = min(amount, self.capacity)
        wait = max(0.0, (amount - self._level) / self._rate)
        if now + wait > deadline:
            raise LimitExceeded(f"{self.capacity:g} {self.unit}/min", wait)
        self._level -= amount
        return wait

    def give_back(self, amount: float) -> None:
        """Return units that were reserved but not used (a cancelled wait, fewer tokens than estimated)."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)

    def take(self, amount: float) -> None:
        """Take units already used (more tokens than estimated), even into debt."""
        self._refill()
        self._level -= amount


@dataclass
class ProviderLimits:
    """The request and token buckets of one provider (either may be off)."""

    requests: TokenBucket | None
    tokens: TokenBucket | None

    async def admit(self, estimated_tokens: int, deadline: float) -> float:
        """Wait for one request and `estimated_tokens`; returns the seconds waited.

        `deadline` is on the event loop's clock. Raises LimitExceeded, taking nothing, when
        the wait would end after it.
        """
        loop = asyncio.get_running_loop()
        deadline_mono = time.monotonic() + (deadline - loop.time())  # the buckets' clock
        request_wait = self.requests.reserve(1, deadline_mono) if self.requests else 0.0
        try:
            token_wait = self.tokens.reserve(estimated_tokens, deadline_mono) if self.tokens else 0.0
        except LimitExceeded:
            self.release(0, requests=1)
            raise
        wait = max(request_wait, token_wait)
        if wait > 0:
            try:
                await asyncio.sleep(wait)
            except asyncio.CancelledError:
                self.release(estimated_tokens, requests=1)
                raise
        return wait

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Correct the token reservation with what the provider reported (None: nothing was used)."""
        if self.tokens is None:
            return
        used = actual_tokens or 0
        if used > estimated_tokens:
            self.tokens.take(used - estimated_tokens)
        elif used < estimated_tokens:
            self.tokens.give_back(estimated_tokens - used)

    def release(self, estimated_tokens: int, *, requests: int = 0) -> None:
        if self.requests is not None and requests:
            self.requests.give_back(requests)
        if self.tokens is not None and estimated_tokens:
            self.tokens.give_back(estimated_tokens)


def estimate_tokens(prompt: str) -> int:
    """A rough prompt size before the provider says: about four characters a token."""
    return max(1, len(prompt) // 4)


class RateLimits:
    """The buckets of every provider, created on first use from the settings."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._providers: dict[str, ProviderLimits | None] = {}

    def for_provider(self, provider: str) -> ProviderLimits | None:
        """None when the provider has no limit configured."""
        if provider not in self._providers:
            override = self._settings.model_providers.get(provider)
            rpm = self._settings.model_requests_per_minute
            tpm = self._settings.model_tokens_per_minute
            if override is not None:
                rpm = override.requests_per_minute if override.requests_per_minute is not None else rpm
                tpm = override.tokens_per_minute if override.tokens_per_minute is not None else tpm
            limits = ProviderLimits(
                TokenBucket(rpm, "requests") if rpm else None, TokenBucket(tpm, "tokens") if tpm else None
            )
            self._providers[provider] = limits if (limits.requests or limits.tokens) else None
        return self._providers[provider]
