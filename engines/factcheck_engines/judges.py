"""Which judge the built-in engines ask "do these passages state this claim?" (one place).

`default_judge` is the embedded entailment model (`nli_judge.judge`): `local/checker`
(and its alias `local/checker-nli`) on the verification, council, evidence-assessment and
citation-review prompts, `local/investigator` and `local/entailment`'s judge all use it.
`lexical_judge` (`judge.judge`, the engine before the model) is what `local/checker-lexical`
pins on every prompt it answers.

Both take (claim, passages) and return a `Judgement`, held to what the passages state of the claim's specifics
(grounded.py: every built-in checker's verdict is); the model is loaded on the first claim
that has a passage to read, not on import, so a process that checks nothing never loads
onnxruntime. `DEFAULT_JUDGES` and `LEXICAL_JUDGES` pair each with its form for a whole prompt's
claims (the model judges FACTCHECK_NLI_THREADS claims side by side: `nli_judge.judge_claims`).
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Callable, ParamSpec, Sequence

from factcheck_engines import judge as lexical
from factcheck_engines import nli_judge
from factcheck_engines.grounded import grounded
from factcheck_engines.judge import Judgement, PassageText, unjudged
from factcheck_engines.nli_model import EntailmentModel, EntailmentModelUnavailable

log = logging.getLogger("factcheck_engines")
P = ParamSpec("P")

ClaimJudge = Callable[[str, Sequence[PassageText]], Judgement]
# Judges every (claim, its passages) of a prompt, answers in order.
ClaimsJudge = Callable[[Sequence[tuple[str, Sequence[PassageText]]]], list[Judgement]]


def isolated(judge: Callable[P, Judgement]) -> Callable[P, Judgement]:
    """`judge`, except that a claim it fails on gets `unjudged` (UNVERIFIABLE, saying why) instead of
    failing the prompt and every other claim's verdict with it. A model that cannot be loaded at all
    is no one claim's failure: that still fails the call."""

    @functools.wraps(judge)
    def judge_one(*args: P.args, **kwargs: P.kwargs) -> Judgement:
        try:
            return judge(*args, **kwargs)
        except EntailmentModelUnavailable:
            raise
        except Exception as error:
            log.warning("the judge failed on one claim: %r", error, exc_info=error)
            return unjudged(error)

    return judge_one


def _grounded_model_judge(
    claim: str, passages: Sequence[PassageText], model: EntailmentModel | None = None
) -> Judgement:
    return grounded(nli_judge.judge(claim, passages, model), claim, passages)


@isolated
def default_judge(claim: str, passages: Sequence[PassageText]) -> Judgement:
    """The embedded entailment model's verdict on `claim` given `passages` (nli_judge.py), grounded."""
    return _grounded_model_judge(claim, passages)


@isolated
def lexical_judge(claim: str, passages: Sequence[PassageText]) -> Judgement:
    """The lexical judge's verdict (judge.py), grounded: `local/checker-lexical`."""
    return grounded(lexical.judge(claim, passages), claim, passages)


def default_judge_claims(items: Sequence[tuple[str, Sequence[PassageText]]]) -> list[Judgement]:
    """The model's verdicts, FACTCHECK_NLI_THREADS claims side by side, each claim isolated and grounded."""
    return nli_judge.judge_claims(items, judge_one=isolated(_grounded_model_judge))


def lexical_judge_claims(items: Sequence[tuple[str, Sequence[PassageText]]]) -> list[Judgement]:
    """The lexical judge on each claim in turn (it holds the GIL: threads would not help)."""
    return [lexical_judge(claim, passages) for claim, passages in items]


@dataclass(frozen=True)
class Judges:
    """An engine's judge for one claim (`one`) and for a prompt's claims (`many`)."""

    one: ClaimJudge
    many: ClaimsJudge


DEFAULT_JUDGES = Judges(default_judge, default_judge_claims)
LEXICAL_JUDGES = Judges(lexical_judge, lexical_judge_claims)
