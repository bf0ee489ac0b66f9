"""`local/checker-lexical`: the verification prompt judged by the lexical judge (`judge.judge`).

The engine `local/checker` was before the embedded entailment model; kept so that a deployment
can pin it (it needs no onnxruntime and is ~10x faster, see bench/checker_accuracy.py).
"""

from __future__ import annotations

from factcheck.engines import checker
from factcheck.engines.judge import judge


def answer(prompt: str) -> str:
    return checker.answer(prompt, judge, "local/checker-lexical")
