"""Reliability-weighted consensus (FactCheckConfig.consensus = CONSENSUS_WEIGHTED): the math.

Each checker model's confusion counts from an evaluation (rows: the label, columns: the verdict it gave,
order VERIFIED, DISPUTED, UNVERIFIABLE) become its Laplace-smoothed P(verdict | label). A claim's checkers
are then combined as in Dawid and Skene's model (its M-step done once, from labelled items, so no EM is
needed): the checkers err independently given the true label, so

    P(label | verdicts) ∝ prior(label) × Π_checkers P(verdict_i | label)

and the consensus verdict is the label with the highest posterior (combine.py applies the majority's tie
rules, docs/modes.md, and builds the ClaimConsensus). With every checker equally and symmetrically reliable this is the
majority; a checker that is right far more often than the others outvotes them.

The prior is uniform, not the evaluation's pooled label shares: the shares describe the benchmark sets'
mix (CLIMATE-FEVER is mostly NOT_ENOUGH_INFO, WiCE has no refutation), not the content a run checks, and
a prior from them would tilt every unsure claim towards the sets' commonest label. Under a uniform prior
the verdict rests on the checkers' likelihood ratios alone. bench/weighted_consensus.py measures both
(docs/benchmarks.md).

The per-verdict log-odds weight reported for each checker, ln P(v | label = v) − ln P(v | label ≠ v)
(the label ≠ v side: the prior-weighted mix of the other rows), says how much a verdict v from that
checker moves the consensus towards v: above 0 it is evidence for v, at 0 it says nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from factcheck.evaluation.sets import LABELS

VERDICTS = LABELS  # the order of confusion rows and columns
# Laplace (add-one) smoothing of every confusion cell: a checker never measured giving a verdict for a
# label gets a small probability of doing so, never zero (one surprising verdict cannot veto a label).
SMOOTHING = 1.0
UNIFORM_PRIOR = (1 / 3, 1 / 3, 1 / 3)
# The confidence read from the consensus verdict's posterior probability.
HIGH_PROBABILITY, MEDIUM_PROBABILITY = 0.9, 0.7
# Two labels whose log-posteriors differ by less than this are tied (the majority's tie rules decide).
TIE_TOLERANCE = 1e-9

Counts = Sequence[Sequence[int]]  # 3×3, rows the label, columns the verdict (VERDICTS order)


@dataclass(frozen=True)
class CheckerReliability:
    """One checker model's measured reliability, as the weighted consensus uses it."""

    checker_model: str
    items: int  # labelled items measured
    verdict_given_label: tuple[tuple[float, float, float], ...]  # 3×3 P(verdict | label), smoothed
    verdict_weights: tuple[float, float, float]  # log-odds of each verdict for itself (0 when unmeasured)
    # Verdicts the checker never gave in the evaluation: their smoothed probabilities measure nothing, so
    # such a verdict is left out of the posterior (and weighs 0) rather than read as evidence.
    unmeasured: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "checkerModel": self.checker_model,
            "items": self.items,
            "verdictGivenLabel": [list(row) for row in self.verdict_given_label],
            "verdictWeights": list(self.verdict_weights),
            "unmeasuredVerdicts": list(self.unmeasured),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckerReliability:
        rows = data["verdictGivenLabel"]
        return cls(
            checker_model=str(data["checkerModel"]),
            items=int(data["items"]),
            verdict_given_label=tuple((float(r[0]), float(r[1]), float(r[2])) for r in rows),
            verdict_weights=_triple(data["verdictWeights"]),
            unmeasured=tuple(str(v) for v in data.get("unmeasuredVerdicts", ())),
        )


@dataclass(frozen=True)
class ConsensusWeights:
    """The weights of one run: every checker model's reliability, from one evaluation."""

    evaluation_id: str
    checkers: Mapping[str, CheckerReliability]  # by checker model
    prior: tuple[float, float, float] = UNIFORM_PRIOR

    def log_posterior(self, checker_models: Sequence[str], verdicts: Sequence[str]) -> list[float]:
        """Unnormalised log P(label | verdicts): ln prior + Σ ln P(verdict_i | label), VERDICTS order;
        checker i is `checker_models[i]` (`normalised` makes it the posterior)."""
        scores = [math.log(p) for p in self.prior]
        for model, verdict in zip(checker_models, verdicts, strict=True):
            if verdict in self.checkers[model].unmeasured:
                continue  # never measured: no evidence either way
            table = self.checkers[model].verdict_given_label
            column = VERDICTS.index(verdict)
            for label in range(3):
                scores[label] += math.log(table[label][column])
        return scores

    def to_json(self) -> dict[str, Any]:
        return {
            "evaluationId": self.evaluation_id,
            "prior": list(self.prior),
            "checkers": [reliability.to_json() for reliability in self.checkers.values()],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConsensusWeights:
        checkers = [CheckerReliability.from_json(item) for item in data.get("checkers", [])]
        return cls(
            evaluation_id=str(data["evaluationId"]),
            checkers={c.checker_model: c for c in checkers},
            prior=_triple(data.get("prior", UNIFORM_PRIOR)),
        )


def normalised(log_scores: Sequence[float]) -> tuple[float, float, float]:
    """Probabilities from unnormalised log scores (a softmax, stable for large scores)."""
    top = max(log_scores)
    exp = [math.exp(score - top) for score in log_scores]
    total = sum(exp)
    return (exp[0] / total, exp[1] / total, exp[2] / total)


def smoothed_verdict_given_label(counts: Counts) -> tuple[tuple[float, float, float], ...]:
    """Laplace-smoothed P(verdict | label) from confusion counts (rows the label, columns the verdict)."""
    _check_counts(counts)
    rows = []
    for row in counts:
        total = sum(row) + 3 * SMOOTHING
        rows.append(((row[0] + SMOOTHING) / total, (row[1] + SMOOTHING) / total, (row[2] + SMOOTHING) / total))
    return tuple(rows)


def label_prior(confusions: Mapping[str, Counts]) -> tuple[float, float, float]:
    """The evaluation's pooled label shares, add-one smoothed (the alternative to the uniform prior that
    bench/weighted_consensus.py measures)."""
    totals = [SMOOTHING] * 3
    for counts in confusions.values():
        for label, row in enumerate(counts):
            totals[label] += sum(row)
    whole = sum(totals)
    return (totals[0] / whole, totals[1] / whole, totals[2] / whole)


def verdict_weights(
    table: Sequence[Sequence[float]], prior: Sequence[float] = UNIFORM_PRIOR
) -> tuple[float, float, float]:
    """Per verdict v: ln P(v | label = v) − ln P(v | label ≠ v), the other labels mixed by the prior."""
    weights = []
    for v in range(3):
        others = [label for label in range(3) if label != v]
        mass = sum(prior[label] for label in others)
        against = sum(prior[label] * table[label][v] for label in others) / mass
        weights.append(math.log(table[v][v]) - math.log(against))
    return (weights[0], weights[1], weights[2])


def reliability(checker_model: str, counts: Counts, prior: Sequence[float] = UNIFORM_PRIOR) -> CheckerReliability:
    table = smoothed_verdict_given_label(counts)
    unmeasured = tuple(v for column, v in enumerate(VERDICTS) if not any(row[column] for row in counts))
    weights = verdict_weights(table, prior)
    return CheckerReliability(
        checker_model=checker_model,
        items=sum(sum(row) for row in counts),
        verdict_given_label=table,
        verdict_weights=_triple([0.0 if v in unmeasured else w for v, w in zip(VERDICTS, weights)]),
        unmeasured=unmeasured,
    )


def fit_weights(
    evaluation_id: str, confusions: Mapping[str, Counts], prior: tuple[float, float, float] | None = None
) -> ConsensusWeights:
    """The weights of every checker model in `confusions` (uniform prior unless one is given)."""
    chosen = prior or UNIFORM_PRIOR
    return ConsensusWeights(
        evaluation_id=evaluation_id,
        checkers={model: reliability(model, counts, chosen) for model, counts in confusions.items()},
        prior=chosen,
    )


def confidence_of(probability: float) -> str:
    """The consensus confidence read from the chosen verdict's posterior: HIGH at 0.9 or more, MEDIUM at
    0.7 or more, else LOW (the levels the evaluations read stated confidences as: 0.9, 0.7, 0.5)."""
    if probability >= HIGH_PROBABILITY:
        return "HIGH"
    if probability >= MEDIUM_PROBABILITY:
        return "MEDIUM"
    return "LOW"


def leaders(log_scores: Sequence[float]) -> frozenset[str]:
    """The labels whose log-posterior is the highest (more than one: a tie)."""
    top = max(log_scores)
    return frozenset(VERDICTS[i] for i, score in enumerate(log_scores) if top - score <= TIE_TOLERANCE)


def _check_counts(counts: Counts) -> None:
    if len(counts) != 3 or any(len(row) != 3 for row in counts):
        raise ValueError("confusion counts must be 3×3 (rows the label, columns the verdict)")
    if any(n < 0 for row in counts for n in row):
        raise ValueError("confusion counts cannot be negative")


def _triple(values: Sequence[Any]) -> tuple[float, float, float]:
    return (float(values[0]), float(values[1]), float(values[2]))
