"""Registry of in-process engines answering model ids `local/<name>`.

Local engines let the whole suite run with no network and no API key. An engine is a
plain synchronous function (prompt, inputs) -> text, `inputs` being the call's structured
inputs (`factcheck.models.inputs`, None when the caller passed none); the model client runs it
in a worker thread because engines are CPU-bound and must not block the event loop. An engine
may also stream: a function (prompt, inputs) -> iterator of text pieces whose concatenation is
its answer (`ModelClient.stream` pulls each piece in a worker thread). An engine registered
without one streams its whole answer as a single piece.

An engine whose answers depend on more than its inputs (a model file) registers a `revision`
function: what the checker reports as the engine revision behind its verdicts, so that a cache
keyed by it never serves an earlier engine's answers.

An engine also names the roles it can fill (`roles`; CHECKER: it answers a checker's claims), so a
request that names an engine for a role it cannot fill (local/reporter as a checker) is refused
before it runs, and the refusal lists only the engines that can.

Engines are registered with `register_local_engine` where a process is composed: a model service's main
registers the built-in ones (`factcheck_engines.register_builtin_engines`) before it serves, and this module
never imports an engine. A process that registered none (the gateway) answers no `local/` model: which ones a
checker serves, the gateway asks it (CheckerService.GetServableModels).

An engine family answers a whole prefix of model ids in-process, each name configured by the settings
rather than registered: `onnx/<name>` is a grounding cross-encoder from a folder of the checker's
(FACTCHECK_ONNX_MODELS; engines/factcheck_engines/onnx_checker.py). A family is registered the same way
(`register_engine_family`) and gives each name's engine and revision for the settings it is asked with.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterable, Iterator, Mapping, Protocol

from factcheck.kit.settings import Settings
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.inputs import ModelInputs

LocalEngine = Callable[[str, ModelInputs | None], str]
LocalStreamEngine = Callable[[str, ModelInputs | None], Iterator[str]]
EngineRevision = Callable[[], str]

LOCAL_PREFIX = "local/"
ONNX_PREFIX = "onnx/"
# Model ids answered in this process, by a registered engine or an engine family: never sent over HTTP.
IN_PROCESS_PREFIXES = (LOCAL_PREFIX, ONNX_PREFIX)
# The role of an engine that verifies claims (CheckerService.Verify), as a run's or an evaluation's checker.
CHECKER = "checker"


class EngineFamily(Protocol):
    """The engines of one prefix (`onnx/`): each name's engine and revision under the given settings, or
    ModelNotConfiguredError saying which setting to fix."""

    def engine(self, name: str, settings: Settings) -> LocalEngine: ...

    def revision(self, name: str, settings: Settings) -> str: ...


_engines: dict[str, LocalEngine] = {}
_streams: dict[str, LocalStreamEngine] = {}
_revisions: dict[str, EngineRevision] = {}
_families: dict[str, EngineFamily] = {}
_roles: dict[str, frozenset[str]] = {}
_lock = threading.Lock()


def register_local_engine(
    name: str,
    engine: LocalEngine,
    *,
    stream: LocalStreamEngine | None = None,
    revision: EngineRevision | None = None,
    roles: Iterable[str] = (),
) -> None:
    """Make `engine` answer the model id `local/<name>` (and `stream`, if given, stream its answer;
    `revision`, if given, name what else its answers depend on; `roles`, the roles it can fill, e.g.
    CHECKER); replaces any engine of that name."""
    if not name or "/" in name:
        raise ValueError(f"invalid local engine name {name!r}")
    with _lock:
        _engines[name] = engine
        _streams.pop(name, None)
        _revisions.pop(name, None)
        _roles[name] = frozenset(roles)
        if stream is not None:
            _streams[name] = stream
        if revision is not None:
            _revisions[name] = revision


def register_engine_family(prefix: str, family: EngineFamily) -> None:
    """Make `family` answer every model id under `prefix` (one of IN_PROCESS_PREFIXES but local/)."""
    if prefix not in IN_PROCESS_PREFIXES or prefix == LOCAL_PREFIX:
        raise ValueError(f"{prefix!r} is not an engine family's prefix")
    with _lock:
        _families[prefix] = family


def is_in_process(model_id: str) -> bool:
    """Whether `model_id` is answered in this process (local/ or an engine family's prefix)."""
    return model_id.startswith(IN_PROCESS_PREFIXES)


def engine_family(model_id: str) -> tuple[EngineFamily, str]:
    """The family answering `model_id` and the name within it; ModelNotConfiguredError when this
    installation has none (an install without the engines)."""
    prefix = next((p for p in IN_PROCESS_PREFIXES if p != LOCAL_PREFIX and model_id.startswith(p)), None)
    if prefix is None:
        raise ModelNotConfiguredError(model_id, "not the id of an engine family")
    with _lock:
        family = _families.get(prefix)
    if family is None:
        raise ModelNotConfiguredError(model_id, f"this installation has no {prefix} engines")
    return family, model_id[len(prefix) :]


def unregister_local_engine(name: str) -> None:
    """Remove an engine (mainly for tests); unknown names are ignored."""
    with _lock:
        _engines.pop(name, None)
        _streams.pop(name, None)
        _revisions.pop(name, None)
        _roles.pop(name, None)


def local_engine_roles() -> dict[str, frozenset[str]]:
    """Every registered engine's name and the roles it can fill."""
    with _lock:
        return _engine_roles()


def _engine_roles() -> dict[str, frozenset[str]]:
    # (with _lock held)
    return {name: _roles.get(name, frozenset()) for name in sorted(_engines)}


def engine_family_prefixes() -> list[str]:
    """The prefixes with a registered engine family (`onnx/`), sorted."""
    with _lock:
        return sorted(_families)


def get_local_engine(name: str, role: str | None = None) -> LocalEngine:
    """The engine for `local/<name>` (one that can fill `role`, when given), or ModelNotConfiguredError
    naming the available ones (those that can fill `role`)."""
    with _lock:  # the engine and the names it is judged among, as one snapshot
        engine = _engines.get(name)
        engines = _engine_roles()
    refusal = local_engine_refusal(name, role, engines)
    if refusal is not None:
        raise refusal
    assert engine is not None  # (a name without an engine is refused above: the same snapshot)
    return engine


def local_engine_refusal(
    name: str, role: str | None, engines: Mapping[str, frozenset[str]]
) -> ModelNotConfiguredError | None:
    """Why `local/<name>` cannot fill `role` (any role, when None) among `engines` (name -> roles): an unknown
    engine (naming the available ones, those that can fill `role`), or one that cannot fill it (naming the ones
    that can); None when it can. The one wording of both refusals, for this process's engines and for those a
    checker says it serves (factcheck.models.availability.ServableModels)."""

    def names(wanted: str | None) -> str:
        return ", ".join(sorted(n for n, roles in engines.items() if wanted is None or wanted in roles)) or "none"

    if name not in engines:
        return ModelNotConfiguredError(
            f"{LOCAL_PREFIX}{name}", f"unknown local engine {name!r} (available: {names(role)})"
        )
    if role is not None and role not in engines[name]:
        return ModelNotConfiguredError(
            f"{LOCAL_PREFIX}{name}", f"local engine {name!r} is not a {role} (the {role} engines: {names(role)})"
        )
    return None


def get_local_stream_engine(name: str) -> LocalStreamEngine:
    """The streaming form of the engine for `local/<name>` (its whole answer as one piece if it
    has none); ModelNotConfiguredError like `get_local_engine`."""
    engine = get_local_engine(name)
    with _lock:
        stream = _streams.get(name)
    if stream is not None:
        return stream

    def whole_answer(prompt: str, inputs: ModelInputs | None) -> Iterator[str]:
        yield engine(prompt, inputs)

    return whole_answer


def local_engine_revision(name: str) -> str:
    """The revision of the engine for `local/<name>` ("" when its answers depend on its inputs only);
    ModelNotConfiguredError like `get_local_engine`."""
    get_local_engine(name)
    with _lock:
        revision = _revisions.get(name)
    return revision() if revision is not None else ""
