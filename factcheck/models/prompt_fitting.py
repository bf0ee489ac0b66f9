"""A call's output limit, and its prompt fitted to the provider's context window (docs/models.md,
"Output limits, context windows and structured output").

Every call sends an output limit: the caller's `output_limits.OutputLimit`, scaled and capped by the
settings. With a context window configured, a prompt is estimated (`limits.estimate_tokens`) before it
is sent: the output limit is lowered to the room left, and a prompt that leaves none is refused
(`ModelPromptTooLongError`) without a request. `prompt_budget` tells a caller beforehand how much
prompt fits, so that it can cut its input instead.
"""

from __future__ import annotations

import dataclasses

from factcheck.kit.settings import Settings
from factcheck.models import output_limits
from factcheck.models.endpoints import Endpoint
from factcheck.models.errors import ModelPromptTooLongError
from factcheck.models.limits import estimate_tokens
from factcheck.models.output_limits import OutputLimit

# Tokens a chat template adds around the prompt (role markers), and the least room an answer needs.
TEMPLATE_TOKENS = 16
MIN_ANSWER_TOKENS = 16


def resolve_limit(settings: Settings, limit: OutputLimit | None, ceiling: int) -> OutputLimit:
    """The caller's limit as the settings scale, replace and cap it (at most `ceiling` tokens)."""
    return output_limits.resolve(
        limit,
        overrides=settings.model_output_tokens,
        scale=settings.model_output_tokens_scale,
        ceiling=ceiling,
    )


def prompt_budget(window: int, output_tokens: int) -> int:
    """The most prompt tokens a call should send so that a `window`-token context keeps room for its
    answer: `output_tokens`, or a third of the window when that is less."""
    answer = min(output_tokens, window // 3)
    return max(window - answer - TEMPLATE_TOKENS, 0)


def fit_context_window(endpoint: Endpoint, model_id: str, prompt: str, bound: OutputLimit) -> OutputLimit:
    """The output limit lowered to the room the prompt leaves in the context window; a prompt
    that leaves too little is refused here rather than by the server."""
    window = endpoint.context_window
    if window is None:
        return bound
    prompt_tokens = estimate_tokens(prompt) + TEMPLATE_TOKENS
    room = window - prompt_tokens
    if room < min(MIN_ANSWER_TOKENS, bound.max_tokens):
        raise ModelPromptTooLongError(
            model_id,
            f"the prompt (about {prompt_tokens} tokens) leaves no room for an answer in the "
            f"{window}-token context window of provider {endpoint.provider!r}: shorten the input, "
            "or use a model with a larger context window",
        )
    return dataclasses.replace(bound, max_tokens=room) if room < bound.max_tokens else bound
