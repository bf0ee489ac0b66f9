"""Whether a model id can be served here at all: a registered `local/` engine, or a provider with an
endpoint configured. The model client refuses a call to one that cannot (ModelNotConfiguredError);
the gateway asks the same question when it validates a request, so such a run is refused before it
starts instead of failing at its first call to the model."""

from __future__ import annotations

from factcheck.kit.settings import Settings
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.local import LOCAL_PREFIX, get_local_engine


def provider_of(model_id: str) -> str:
    """The provider prefix of a model id (the part before '/'), or "" for an id without one."""
    return model_id.split("/", 1)[0] if "/" in model_id else ""


def no_endpoint_message(provider: str) -> str:
    return (
        f"no endpoint configured for provider {provider!r}: set FACTCHECK_MODEL_BASE_URL "
        f"(or add {provider!r} to FACTCHECK_MODEL_PROVIDERS), or use a local/ model"
    )


def check_servable(model_id: str, settings: Settings, role: str | None = None) -> None:
    """ModelNotConfiguredError, saying why, for a model no call could reach: an unknown local engine
    (naming the available ones), a local engine that cannot fill `role` (e.g. local/reporter as a
    checker: naming the ones that can), or a provider with no endpoint (naming the settings that give
    one). An HTTP model is taken to fill any role."""
    if model_id.startswith(LOCAL_PREFIX):
        get_local_engine(model_id[len(LOCAL_PREFIX) :], role)
        return
    provider = provider_of(model_id)
    override = settings.model_providers.get(provider) if provider else None
    base_url = override.base_url if override is not None else settings.model_base_url
    if not base_url:
        raise ModelNotConfiguredError(model_id, no_endpoint_message(provider))
