"""`local/checker-nli`: an alias of `local/checker`, whose judge is the embedded entailment model.

It was the opt-in name of the model while `local/checker` was lexical; it stays so that
configurations naming it keep working. Only the engine name in its Evidence lines differs.
The model ships in the package (engines/factcheck_engines/data/nli/) and is loaded on the first claim.
"""

from __future__ import annotations

from factcheck_engines import checker
from factcheck_engines.judges import DEFAULT_JUDGES


def answer(inputs: object) -> str:
    return checker.answer(inputs, DEFAULT_JUDGES, "local/checker-nli")
