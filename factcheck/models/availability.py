"""Whether a model id can be served at all: a registered `local/` engine, an `onnx/` name with a
folder configured, or a provider with an endpoint configured (and a dialect this suite speaks). The model
client refuses a call to one that cannot (ModelNotConfiguredError); the gateway asks the same question when
it validates a request, so such a run is refused before it starts instead of failing at its first call.

Which `local/` engines and `onnx/` names exist is the serving process's to say (`ServableModels`): in a model
service, its own registry and settings (`ServableModels.here`); in the gateway, which registers no engine, what
the checker answers (CheckerService.GetServableModels), so validation matches what is deployed. HTTP models are
judged by the settings passed (deployments give every service the same model settings).

Grounding models (`onnx/` ones and those of a grounding dialect, `minicheck`) only verify claims against
passages: `grounding_kind` names them, so that the gateway accepts them as checkers and nowhere else.
An `onnx/` model's folder is on the checker's disk: whether it holds a usable model (files, card, outputs)
only the checker can say (CheckerService.GetEngineRevision, which the gateway asks before a run).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from factcheck.kit.settings import Settings
from factcheck.models.dialects import GROUNDING_DIALECTS, dialect_of
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.local import (
    LOCAL_PREFIX,
    ONNX_PREFIX,
    engine_family_prefixes,
    local_engine_refusal,
    local_engine_roles,
)


@dataclass(frozen=True)
class ServableModels:
    """The in-process engines and models one process can serve: its `local/` engines (name -> the roles each can
    fill), its engine families' prefixes, and the `onnx/` names its settings give a folder. `known` is False for
    an answer that could not be had (the checker could not be reached): then no `local/` or `onnx/` name is
    refused here, and the run's first call to it says what is wrong."""

    local_engines: Mapping[str, frozenset[str]] = field(default_factory=dict)
    engine_families: frozenset[str] = frozenset()
    onnx_models: frozenset[str] = frozenset()
    known: bool = True

    @classmethod
    def here(cls, settings: Settings) -> ServableModels:
        """What this process serves: the engines registered in it and the onnx/ names of `settings`."""
        return cls(
            local_engines=local_engine_roles(),
            engine_families=frozenset(engine_family_prefixes()),
            onnx_models=frozenset(settings.onnx_models),
        )


# What a process says when it could not learn what is served (ServableModels.known).
UNKNOWN = ServableModels(known=False)


def provider_of(model_id: str) -> str:
    """The provider prefix of a model id (the part before '/'), or "" for an id without one."""
    return model_id.split("/", 1)[0] if "/" in model_id else ""


def no_endpoint_message(provider: str) -> str:
    return (
        f"no endpoint configured for provider {provider!r}: set FACTCHECK_MODEL_BASE_URL "
        f"(or add {provider!r} to FACTCHECK_MODEL_PROVIDERS), or use a local/ model"
    )


def check_servable(
    model_id: str, settings: Settings, role: str | None = None, served: ServableModels | None = None
) -> None:
    """ModelNotConfiguredError, saying why, for a model no call could reach: an unknown local engine
    (naming the available ones), a local engine that cannot fill `role` (e.g. local/reporter as a
    checker: naming the ones that can), an onnx/ name without a folder, a provider with no endpoint (naming
    the settings that give one), or a dialect this suite does not speak. An HTTP model is taken to fill any
    role. `served` says which local/ engines and onnx/ names exist (default: this process's)."""
    if model_id.startswith((LOCAL_PREFIX, ONNX_PREFIX)):
        served = served if served is not None else ServableModels.here(settings)
        if not served.known:
            return
        if model_id.startswith(LOCAL_PREFIX):
            refusal = local_engine_refusal(model_id[len(LOCAL_PREFIX) :], role, served.local_engines)
            if refusal is not None:
                raise refusal
        else:
            _onnx_name(model_id, served.onnx_models)
        return
    provider = provider_of(model_id)
    override = settings.model_providers.get(provider) if provider else None
    base_url = override.base_url if override is not None else settings.model_base_url
    if not base_url:
        raise ModelNotConfiguredError(model_id, no_endpoint_message(provider))
    dialect_of(model_id, settings)


def onnx_folder_setting(model_id: str, settings: Settings) -> str:
    """The name of an onnx/ model id, when FACTCHECK_ONNX_MODELS gives it a folder; ModelNotConfiguredError
    naming the setting otherwise."""
    return _onnx_name(model_id, settings.onnx_models)


def _onnx_name(model_id: str, configured_names: Collection[str]) -> str:
    name = model_id[len(ONNX_PREFIX) :]
    if name not in configured_names:
        configured = ", ".join(sorted(configured_names)) or "none"
        raise ModelNotConfiguredError(
            model_id,
            f"no folder is configured for {model_id}: add {name[:64]!r} and its folder to FACTCHECK_ONNX_MODELS "
            f"(configured: {configured})",
        )
    return name


def grounding_kind(model_id: str, settings: Settings) -> str | None:
    """The grounding kind of a grounding model: "onnx", or its dialect ("minicheck"); None for any other model
    (an unknown dialect is None here: check_servable refuses it)."""
    if model_id.startswith(ONNX_PREFIX):
        return "onnx"
    if model_id.startswith(LOCAL_PREFIX):
        return None
    try:
        dialect = dialect_of(model_id, settings)
    except ModelNotConfiguredError:
        return None
    return dialect if dialect in GROUNDING_DIALECTS else None
