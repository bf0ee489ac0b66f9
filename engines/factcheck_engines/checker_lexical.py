"""`local/checker-lexical`: every call `local/checker` answers, judged by the lexical judge (`judge.judge`).

The engine `local/checker` was before the embedded entailment model became its judge:
the verification, council, evidence-assessment and citation review calls all judged by word
alignment, figures, dates, names and negation. Kept so that a deployment can pin it (it loads
no model and spends a fraction of the CPU per claim: bench/checker_accuracy.py).
"""

from __future__ import annotations

from factcheck_engines import checker
from factcheck_engines.judges import LEXICAL_JUDGES


def answer(inputs: object) -> str:
    return checker.answer(inputs, LEXICAL_JUDGES, "local/checker-lexical")
