"""The built-in `local/` engines: the suite's embedded default models.

Each engine module exposes `answer(prompt: str) -> str` and replies in the spec's text
formats, so the same parsers, consensus and report run on its output. A module may also
expose `answer_stream(prompt) -> Iterator[str]`, its answer in pieces as it is worked out
(the extractor: claim by claim); the others stream their answer as one piece. Modules are
imported on first use, so a process pays only for the engines it calls.

| model id | module | answers |
|---|---|---|
| local/generator | generator | the generate prompt, from its SOURCES passages |
| local/extractor | extractor | the extraction prompt |
| local/checker | checker | the verification prompt, against its EVIDENCE passages; the council fact-check prompt (council_checker), the evidence-assessment prompt (investigator) and the citation review prompt (citation_review); every claim judged by `judges.default_judge`, the embedded entailment model (`nli_judge`) |
| local/checker-lexical | checker_lexical | the same prompts, every claim judged by the lexical judge (`judge`), the engine before the model |
| local/checker-nli | checker_nli | an alias of local/checker (the model's opt-in name before it became the default) |
| local/reporter | reporter | the report prompt, the title prompt (the reporter model writes titles) and the council synthesis prompt (synthesis) |
| local/title | reporter | the title prompt |
| local/entailment | entailment | the four entailment agents' prompts (extractor, reliability, judge, auditor), in their JSON (its judge: `judges.default_judge`) |
| local/investigator | investigator | the evidence-assessment prompt of the verification loop (local/checker answers it too), with `judges.default_judge` |

Which judge decides whether passages state a claim is chosen in one place, `judges.py`. The
entailment model is loaded on the first claim that has a passage to read, so a process that
never judges one does not import onnxruntime.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

from factcheck.models.local import LOCAL_PREFIX, LocalEngine, LocalStreamEngine, register_local_engine

ENGINE_MODULES = {
    "generator": "generator",
    "extractor": "extractor",
    "checker": "checker",
    "checker-lexical": "checker_lexical",
    "checker-nli": "checker_nli",
    "reporter": "reporter",
    "title": "reporter",
    "entailment": "entailment",
    "investigator": "investigator",
}


def _lazy_engine(module_name: str) -> LocalEngine:
    def engine(prompt: str) -> str:
        module = importlib.import_module(f"{__name__}.{module_name}")
        return module.answer(prompt)

    return engine


def _lazy_stream(module_name: str) -> LocalStreamEngine:
    def stream(prompt: str) -> Iterator[str]:
        module = importlib.import_module(f"{__name__}.{module_name}")
        if hasattr(module, "answer_stream"):
            yield from module.answer_stream(prompt)
        else:
            yield module.answer(prompt)

    return stream


# The engines whose verdicts the entailment model decides (judges.DEFAULT_JUDGES): a new model changes them.
MODEL_JUDGED_ENGINES = frozenset({"checker", "checker-nli", "entailment", "investigator"})


def engine_revision(model_id: str) -> str:
    """What else a model id's answers depend on, besides its prompt: for a `local/` engine judged by
    the entailment model, that model's revision (`nli_model.revision`); "" for every other id.

    The verification cache keys by it, so a retrained model (or local/checker's switch from the
    lexical judge to the model) never serves an earlier engine's verdicts."""
    name = model_id.removeprefix(LOCAL_PREFIX)
    if name == model_id or name not in MODEL_JUDGED_ENGINES:
        return ""
    from factcheck.engines import nli_model  # (hashes the model's files once; loads nothing)

    return nli_model.revision()


for _name, _module in ENGINE_MODULES.items():
    register_local_engine(_name, _lazy_engine(_module), stream=_lazy_stream(_module))
