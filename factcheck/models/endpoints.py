"""Where a model id's HTTP calls go, and with which per-provider settings (docs/models.md, "Model ids,
providers and the model client").

The base URL and key come from the provider override for the id's prefix (the part before '/') when
one exists, else from `FACTCHECK_MODEL_BASE_URL` / `FACTCHECK_MODEL_API_KEY`. An override without a key
sends no key: the default key is never sent to another provider's endpoint. Every other per-provider
setting is the override's value when it sets one, else the global `FACTCHECK_MODEL_<NAME>`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from factcheck.kit.settings import MaxTokensField, Settings, wire_model_name
from factcheck.models.availability import no_endpoint_message, provider_of
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.local import is_in_process

CHAT_PATH = "/chat/completions"


@dataclass(frozen=True)
class Endpoint:
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


def provider_setting(settings: Settings, provider: str, name: str) -> Any:
    """A provider's own value of setting `name` (its FACTCHECK_MODEL_PROVIDERS entry), else the
    global FACTCHECK_MODEL_<NAME>."""
    override = settings.model_providers.get(provider) if provider else None
    value = getattr(override, name) if override is not None else None
    return value if value is not None else getattr(settings, f"model_{name}")


def context_window(settings: Settings, model_id: str) -> int | None:
    """The context window (tokens) of `model_id`'s provider, when the settings give one (never for an
    in-process engine)."""
    if is_in_process(model_id):
        return None
    return provider_setting(settings, provider_of(model_id), "context_window")


def endpoint_for(settings: Settings, model_id: str) -> Endpoint:
    """The provider override for the id's prefix, else the default endpoint. ModelNotConfiguredError,
    saying which setting to fix, when neither has a base URL."""
    provider = provider_of(model_id)
    override = settings.model_providers.get(provider) if provider else None
    base_url: str | None
    max_output_tokens = settings.model_max_output_tokens
    max_tokens_field = settings.model_max_tokens_field
    if override is not None:
        base_url, key = override.base_url, override.api_key
        max_concurrency = override.max_concurrency or settings.model_max_concurrency
        wire_model = override.wire_model(model_id)
        max_output_tokens = override.max_output_tokens or max_output_tokens
        max_tokens_field = override.max_tokens_field or max_tokens_field
    else:
        base_url, key = settings.model_base_url, settings.model_api_key
        max_concurrency = settings.model_max_concurrency
        wire_model = wire_model_name(
            model_id, strip_prefix=settings.model_strip_prefix, model_names=settings.model_names
        )
    if not base_url:
        raise ModelNotConfiguredError(model_id, no_endpoint_message(provider))
    secret = key.get_secret_value() if key is not None else None
    url = base_url.rstrip("/") + CHAT_PATH
    return Endpoint(
        provider=provider,
        url=url,
        api_key=secret or None,
        max_concurrency=max_concurrency,
        wire_model=wire_model,
        max_output_tokens=max_output_tokens,
        max_tokens_field=max_tokens_field,
        context_window=context_window(settings, model_id),
    )
