"""What the terminal and HTML reports of a council run show, computed once from its CouncilResult.

Both renderers walk the same ranking, fact-checker columns and findings, so a response is
ranked, rated and de-anonymised the same way whichever report a person reads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from factcheck.core.council_taxonomy import ERROR_TYPE_NAMES, RATING_NAMES
from factcheck.text.wording import counted
from factcheck.v1 import council_pb2, factcheck_pb2

NONE = "—"
# A claim whose type the checker left unset (or a newer server's type this client does not know).
UNCLASSIFIED = "Unclassified"
MODE_NAMES: dict[int, str] = {
    factcheck_pb2.MODE_FACT_CHECK: "fact-check",
    factcheck_pb2.MODE_COUNCIL: "council",
    factcheck_pb2.MODE_ENTAILMENT: "entailment",
}


def rating_name(value: int) -> str:
    return RATING_NAMES.get(value, NONE)


def error_type_name(value: int) -> str:
    return ERROR_TYPE_NAMES.get(value, UNCLASSIFIED)


def error_type_order(name: str) -> int:
    """The taxonomy's position of a type name (unclassified last)."""
    names = list(ERROR_TYPE_NAMES.values())
    return names.index(name) if name in names else len(names)


def mode_name(mode: int) -> str:
    """ "fact-check", "council" or "entailment"; runs stored before modes existed are fact-checks."""
    return MODE_NAMES.get(mode, "fact-check" if mode == factcheck_pb2.MODE_UNSPECIFIED else NONE)


def score_text(value: float | None) -> str:
    return NONE if value is None else f"{value:.2f}"


def average_of(ranked: council_pb2.RankedResponse) -> float | None:
    return ranked.average_score if ranked.HasField("average_score") else None


def kendall_w_of(aggregate: council_pb2.CouncilAggregate) -> float | None:
    return aggregate.kendall_w if aggregate.HasField("kendall_w") else None


def self_preference_of(aggregate: council_pb2.CouncilAggregate) -> float | None:
    return aggregate.self_preference if aggregate.HasField("self_preference") else None


def agreement_text(aggregate: council_pb2.CouncilAggregate) -> str:
    """Kendall's W with what it means, or why there is none."""
    w = kendall_w_of(aggregate)
    if w is None:
        return "n/a (fewer than two fact-checkers counted)"
    strength = "strong" if w >= 0.7 else "moderate" if w >= 0.3 else "weak"
    return f"{w:.2f} ({strength} agreement)"


def self_preference_text(aggregate: council_pb2.CouncilAggregate) -> str:
    """How much higher (or lower) models rated their own answers than the others rated them."""
    preference = self_preference_of(aggregate)
    if preference is None:
        return "n/a (no model rated its own answer)"
    counted = "left out of the averages" if aggregate.exclude_self_ratings else "counted in the averages"
    if abs(preference) < 0.005:
        return f"+0.00 (models rated their own answers as the others did; self-ratings {counted})"
    direction = "higher" if preference > 0 else "lower"
    return f"{preference:+.2f} (models rated their own answers {abs(preference):.2f} {direction} than the others did; self-ratings {counted})"


@dataclass(frozen=True)
class CheckerColumn:
    """One fact-checker that rated responses: a column of the ranking table."""

    index: int
    model: str
    header: str


def checker_columns(aggregate: council_pb2.CouncilAggregate) -> list[CheckerColumn]:
    """The fact-checkers whose ratings the ranking holds, in fact_checker_models order; a model that
    checks twice is told apart by its position."""
    seen: dict[int, str] = {}
    for ranked in aggregate.ranking:
        for rating in ranked.ratings:
            seen.setdefault(rating.checker_index, rating.fact_checker_model)
    repeated = {model for model, count in Counter(seen.values()).items() if count > 1}
    return [
        CheckerColumn(index, model, f"{model} #{index + 1}" if model in repeated else model)
        for index, model in sorted(seen.items())
    ]


def rating_by(ranked: council_pb2.RankedResponse, column: CheckerColumn) -> council_pb2.CheckerRating | None:
    return next((rating for rating in ranked.ratings if rating.checker_index == column.index), None)


def label_models(result: council_pb2.CouncilResult) -> dict[str, str]:
    """Label -> the model (or name) behind it: the aggregate's mapping, else the stored responses."""
    models = {response.label: response.model for response in result.responses}
    models.update(result.aggregate.label_to_model)
    for ranked in result.aggregate.ranking:
        if ranked.model:
            models[ranked.label] = ranked.model
    return models


def response_name(label: str, models: dict[str, str]) -> str:
    """ "Response A (openai/gpt-4o)", or the label alone when the mapping does not name it."""
    model = models.get(label)
    return f"{label} ({model})" if model else label


@dataclass(frozen=True)
class Finding:
    """An inaccurate claim in one response, as one or more fact-checkers reported it."""

    label: str
    claim: str
    error_type: str
    correction: str
    found_by: tuple[str, ...]


def _claim_key(label: str, claim: str, error_type: str) -> tuple[str, str, str]:
    return label, " ".join(claim.casefold().split()), error_type


def findings(result: council_pb2.CouncilResult) -> list[Finding]:
    """Every inaccurate claim the fact-checkers listed, the same claim of the same response and type
    once (with every checker that found it, and the first correction given), in label order."""
    merged: dict[tuple[str, str, str], Finding] = {}
    for check in sorted(result.fact_checks, key=lambda check: check.checker_index):
        for claim in check.inaccurate_claims:
            error_type = error_type_name(claim.error_type)
            key = _claim_key(claim.label, claim.claim, error_type)
            known = merged.get(key)
            if known is None:
                merged[key] = Finding(claim.label, claim.claim, error_type, claim.correction, (check.model,))
            elif check.model not in known.found_by:
                merged[key] = Finding(
                    known.label,
                    known.claim,
                    known.error_type,
                    known.correction or claim.correction,
                    (*known.found_by, check.model),
                )
    return sorted(merged.values(), key=lambda finding: finding.label)


def by_error_type(found: list[Finding]) -> list[tuple[str, list[Finding]]]:
    """The findings grouped by error type, the most frequent type first (ties in taxonomy order)."""
    groups: dict[str, list[Finding]] = {}
    for finding in found:
        groups.setdefault(finding.error_type, []).append(finding)
    return sorted(groups.items(), key=lambda group: (-len(group[1]), error_type_order(group[0])))


def error_type_counts(ranked: council_pb2.RankedResponse) -> list[tuple[str, int]]:
    """A response's inaccurate claims per error type (the aggregate's counts), in taxonomy order."""
    counts: Counter[str] = Counter()
    for item in ranked.error_types:
        counts[error_type_name(item.error_type)] += item.count
    return sorted(
        ((name, count) for name, count in counts.items() if count), key=lambda item: error_type_order(item[0])
    )


def failed_responses(result: council_pb2.CouncilResult) -> list[council_pb2.CouncilResponse]:
    return [response for response in result.responses if response.HasField("error")]


def council_models_text(config: council_pb2.CouncilRunConfig) -> str:
    """Where the responses came from: the answering models, or the caller."""
    if config.responses_supplied:
        return f"{counted(config.response_count, 'supplied response')}"
    return ", ".join(config.council_models) or NONE
