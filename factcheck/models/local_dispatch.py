"""Calling a registered in-process engine (docs/models.md, "Model ids, providers and the model client").
The registry itself, and which ids name an engine, are `factcheck.models.local`'s.

- `local/<name>` runs a registered engine in a worker thread, with the call's structured inputs
  (`inputs=`, `factcheck.models.inputs`): the built-in engines answer from those, never from the
  prompt's text. Local engines report no token counts, so usage is *estimated* as whitespace-separated
  word counts of the prompt and the answer. A streaming engine's pieces are handed on as it yields them.
- `onnx/<name>` runs a grounding cross-encoder of the checker's (an engine family,
  `factcheck.engines.onnx_checker`) the same way; it is loaded on its first call (in the worker
  thread) and costs no tokens: its calls are ledgered with 0 tokens, not estimated. Its whole answer
  is one piece.

An engine's failure is a `ModelError` like a provider's, never a crash of the service.
"""

from __future__ import annotations

import asyncio

from factcheck.core.domain import TokenUsage
from factcheck.kit.settings import Settings
from factcheck.models.availability import provider_of
from factcheck.models.call_state import CallStats, ProviderSemaphores, Redactor, Streamed
from factcheck.models.errors import (
    ModelError,
    ModelMalformedResponseError,
    ModelProviderError,
    ModelTimeoutError,
)
from factcheck.models.inputs import InputsMissing, ModelInputs
from factcheck.models.local import (
    LOCAL_PREFIX,
    ONNX_PREFIX,
    LocalEngine,
    LocalStreamEngine,
    engine_family,
    get_local_engine,
    get_local_stream_engine,
    local_engine_revision,
)
from factcheck.text.text_safety import clean_text

_LOCAL_PROVIDER = LOCAL_PREFIX.rstrip("/")
# What `next` returns once a local engine's stream is exhausted.
_NO_MORE = object()


class LocalDispatch:
    """Answers a call with the in-process engine its model id names."""

    def __init__(self, settings: Settings, semaphores: ProviderSemaphores, redactor: Redactor) -> None:
        self._settings = settings
        self._semaphores = semaphores
        self._redactor = redactor

    def revision(self, model_id: str) -> str | None:
        """What an in-process engine's answers depend on besides its inputs: a `local/` engine's
        registered revision, an `onnx/` model's files' hash (the model is loaded and checked first:
        blocking); None for a model id that names no in-process engine."""
        if model_id.startswith(LOCAL_PREFIX):
            return local_engine_revision(model_id[len(LOCAL_PREFIX) :])
        if model_id.startswith(ONNX_PREFIX):
            family, name = engine_family(model_id)
            return family.revision(name, self._settings)
        return None

    async def complete(
        self,
        model_id: str,
        prompt: str,
        inputs: ModelInputs | None,
        deadline: float,
        stats: CallStats,
        streamed: Streamed | None = None,
    ) -> tuple[str, TokenUsage]:
        """Run the engine in a thread so CPU work does not block the loop (streamed: each piece
        is worked out in a thread, and handed on as it comes).

        On timeout the thread cannot be killed: it finishes in the background and its
        answer is dropped.

        An engine family's model (`onnx/`) is looked up, loaded on its first call, in the worker thread;
        its whole answer is one piece, and its usage is 0 tokens (not estimated).
        """
        family_model = model_id.startswith(ONNX_PREFIX)
        engine: LocalEngine | LocalStreamEngine
        if family_model:
            family, name = engine_family(model_id)
            settings = self._settings

            def family_engine(prompt: str, inputs: ModelInputs | None) -> str:
                return family.engine(name, settings)(prompt, inputs)

            engine, provider = family_engine, provider_of(model_id)
        else:
            name = model_id[len(LOCAL_PREFIX) :]
            engine = get_local_engine(name) if streamed is None else get_local_stream_engine(name)
            provider = _LOCAL_PROVIDER
        stats.attempts = 1
        try:
            async with asyncio.timeout_at(deadline):
                async with self._semaphores.of(provider, self._settings.model_max_concurrency):
                    if streamed is None or family_model:
                        text = await asyncio.to_thread(engine, prompt, inputs)
                        if streamed is not None and isinstance(text, str):  # a family's answer: one piece
                            streamed(clean_text(text))
                    else:
                        text = await self._stream_local(model_id, engine, prompt, inputs, streamed)
        except ModelError:
            raise
        except TimeoutError:
            raise ModelTimeoutError(model_id, "local engine did not answer before the deadline") from None
        except InputsMissing as exc:  # named for a call it cannot answer: its own words, no class name
            raise ModelProviderError(model_id, str(exc)) from exc
        except Exception as exc:  # an engine bug must surface as a model failure, not crash the service
            detail = self._redactor.excerpt(f"{type(exc).__name__}: {exc}")
            raise ModelProviderError(model_id, f"local engine failed: {detail}") from exc
        if not isinstance(text, str):
            raise ModelMalformedResponseError(model_id, f"local engine returned {type(text).__name__}, not str")
        text = clean_text(text)
        if family_model:
            return text, TokenUsage()
        stats.estimated = True
        return text, _estimate_usage(prompt, text)

    async def _stream_local(
        self, model_id: str, engine, prompt: str, inputs: ModelInputs | None, streamed: Streamed
    ) -> str:
        """Pull a streaming engine's pieces, each in a worker thread; the whole answer, cleaned."""
        pieces = await asyncio.to_thread(engine, prompt, inputs)
        parts: list[str] = []
        while (piece := await asyncio.to_thread(next, pieces, _NO_MORE)) is not _NO_MORE:
            if not isinstance(piece, str):
                raise ModelMalformedResponseError(model_id, f"local engine yielded {type(piece).__name__}, not str")
            piece = clean_text(piece)
            parts.append(piece)
            streamed(piece)
        return "".join(parts)


def _estimate_usage(prompt: str, text: str) -> TokenUsage:
    """Local engines have no tokenizer: estimate tokens as whitespace-separated words."""
    prompt_tokens, completion_tokens = len(prompt.split()), len(text.split())
    return TokenUsage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
