"""The built-in `local/` engines: the suite's embedded default models.

Each engine module exposes `answer(inputs) -> str`: it answers from the call's structured
inputs (`factcheck.models.inputs`, which every service passes with its prompt) and never reads
the prompt's text, so a prompt's wording can change without breaking it; it replies in the
answer formats the prompts ask for (docs/modes.md#fact-check-mode), so the same parsers,
consensus and report run on its output. A call without inputs the engine answers fails
(`InputsMissing`). A module may also expose
`answer_stream(inputs) -> Iterator[str]`, its answer in pieces as it is worked out (the
extractor: claim by claim); the others stream their answer as one piece. Modules are imported
on first use, so a process pays only for the engines it calls. A process registers them explicitly
(`register_builtin_engines`, where it is composed): importing this package registers nothing.

| model id | module | answers |
|---|---|---|
| local/generator | generator | GenerateInputs, from their passages |
| local/extractor | extractor | ExtractInputs |
| local/checker | checker | VerifyInputs, against their passages; CouncilCheckInputs (council_checker), AssessInputs (investigator) and ReviewInputs (citation_review); every claim judged by `judges.default_judge`, the embedded entailment model (`nli_judge`) |
| local/checker-lexical | checker_lexical | the same inputs, every claim judged by the lexical judge (`judge`), the engine before the model |
| local/checker-overlap | checker_overlap | the same inputs, every claim judged by word overlap with its best passage (VERIFIED or UNVERIFIABLE): the baseline |
| local/checker-nli | checker_nli | an alias of local/checker (the model's opt-in name before it became the default) |
| local/reporter | reporter | ReportInputs, TitleInputs (the reporter model writes titles) and SynthesisInputs (synthesis) |
| local/title | reporter | TitleInputs |
| local/entailment | entailment | the four entailment agents' inputs (extractor, reliability, judge, auditor), in their JSON (its judge: `judges.default_judge`) |
| local/investigator | investigator | AssessInputs of the verification loop (local/checker answers them too), with `judges.default_judge` |

`onnx/<name>` (onnx_checker): the engine family of grounding cross-encoders, each from the folder
FACTCHECK_ONNX_MODELS gives its name; VerifyInputs only.

Which judge decides whether passages state a claim is chosen in one place, `judges.py`. The
entailment model is loaded on the first claim that has a passage to read, so a process that
never judges one does not import onnxruntime.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

from factcheck.models.inputs import ModelInputs
from factcheck.models.local import (
    CHECKER,
    ONNX_PREFIX,
    LocalEngine,
    LocalStreamEngine,
    register_engine_family,
    register_local_engine,
)

ENGINE_MODULES = {
    "generator": "generator",
    "extractor": "extractor",
    "checker": "checker",
    "checker-lexical": "checker_lexical",
    "checker-overlap": "checker_overlap",
    "checker-nli": "checker_nli",
    "reporter": "reporter",
    "title": "reporter",
    "entailment": "entailment",
    "investigator": "investigator",
}


def _lazy_engine(module_name: str) -> LocalEngine:
    def engine(prompt: str, inputs: ModelInputs | None) -> str:
        module = importlib.import_module(f"{__name__}.{module_name}")
        return module.answer(inputs)

    return engine


def _lazy_stream(module_name: str) -> LocalStreamEngine:
    def stream(prompt: str, inputs: ModelInputs | None) -> Iterator[str]:
        module = importlib.import_module(f"{__name__}.{module_name}")
        if hasattr(module, "answer_stream"):
            yield from module.answer_stream(inputs)
        else:
            yield module.answer(inputs)

    return stream


# The engines that answer a checker's claims (VerifyInputs): the only ones a run or an evaluation takes as checkers.
CHECKER_ENGINES = frozenset({"checker", "checker-lexical", "checker-overlap", "checker-nli"})

# The engines whose verdicts the entailment model decides (judges.DEFAULT_JUDGES): a new model changes them.
MODEL_JUDGED_ENGINES = frozenset({"checker", "checker-nli", "entailment", "investigator"})


def model_revision() -> str:
    """The embedded entailment model's revision (`nli_model.revision`): the engine revision of the
    engines it judges for, which the checker reports with its verdicts and the verification cache
    keys by, so a retrained model (or local/checker's switch from the lexical judge to the model)
    never serves an earlier engine's verdicts."""
    from factcheck.engines import nli_model  # (hashes the model's files once; loads nothing)

    return nli_model.revision()


def register_builtin_engines() -> None:
    """Register every built-in engine (the table above) and the `onnx/` family with the model client's registry
    (factcheck.models.local). A process that answers `local/` or `onnx/` models calls it once where it is composed
    (each model service's main, the tests); importing this package registers nothing. Calling it again
    registers the same engines again (idempotent)."""
    from factcheck.engines.onnx_checker import OnnxFamily  # (imports onnxruntime only when a model is loaded)

    for name, module in ENGINE_MODULES.items():
        register_local_engine(
            name,
            _lazy_engine(module),
            stream=_lazy_stream(module),
            revision=model_revision if name in MODEL_JUDGED_ENGINES else None,
            roles=(CHECKER,) if name in CHECKER_ENGINES else (),
        )
    register_engine_family(ONNX_PREFIX, OnnxFamily())
