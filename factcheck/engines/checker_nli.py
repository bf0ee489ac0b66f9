"""`local/checker-nli`: the verification prompt judged by the embedded entailment model (`nli_judge`).

Needs the runtime packages of the `nli` extra (onnxruntime, tokenizers, numpy); the model file
ships in the package (factcheck/engines/data/nli/). Loaded on the first claim, not on import.
"""

from __future__ import annotations

from factcheck.engines import checker, nli_judge


def answer(prompt: str) -> str:
    return checker.answer(prompt, nli_judge.judge, "local/checker-nli")
