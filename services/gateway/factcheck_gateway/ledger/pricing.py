"""Prices of model calls, from FACTCHECK_MODEL_PRICES (dollars per million tokens).

A model's price is its own entry, else its provider's (the part of the id before '/');
in-process models (`local/` engines and `onnx/` grounding models, which run on the checker's own CPU and
report 0 tokens) are free, and no entry prices them: their cost is the checker's machine, whose time each
call's latency_ms records. A model with neither has no price: its calls are ledgered with
cost 0 and NULL prices, so an operator sees what is unpriced instead of a made-up figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.kit.settings import ModelPrice, Settings
from factcheck.models.local import is_in_process

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    cached_input: float

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int) -> float:
        cached = min(max(cached_tokens, 0), prompt_tokens)
        return (
            (prompt_tokens - cached) * self.input + cached * self.cached_input + completion_tokens * self.output
        ) / PER_MILLION


FREE = Price(0.0, 0.0, 0.0)


def _price(entry: ModelPrice) -> Price:
    return Price(entry.input, entry.output, entry.input if entry.cached_input is None else entry.cached_input)


class Pricing:
    def __init__(self, prices: dict[str, ModelPrice]) -> None:
        self._prices = {name.rstrip("/"): _price(entry) for name, entry in prices.items()}

    @classmethod
    def from_settings(cls, settings: Settings) -> Pricing:
        return cls(settings.model_prices)

    def price_of(self, model: str) -> Price | None:
        """The model's price, None when it has none."""
        if is_in_process(model):
            return FREE
        if (price := self._prices.get(model)) is not None:
            return price
        return self._prices.get(model.split("/", 1)[0])
