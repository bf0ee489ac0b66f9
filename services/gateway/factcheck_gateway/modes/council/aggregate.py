"""Council mode's aggregate (its stage after the fact-checks): the ranking of the responses,
computed from the counted fact-checks with no model. Pure and deterministic: the gateway calls it
when the last fact-check is in, and `GetResult` calls it again on the stored rows.

- Scores: ACCURATE = 5, MOSTLY ACCURATE = 4, MIXED = 3, MOSTLY INACCURATE = 2, INACCURATE = 1
  (the council's fixed mapping); a response's `average_score` is the mean of the scores it received,
  unset when it received none. A rating by the model that wrote the response (its fact-checker
  model equals the response's model or name, exactly) is a self rating: always listed, with
  `self_rating = true`, and left out of the average when `exclude_self_ratings` is set.
- Ranking: by average score (higher first; unrated responses last), then by most-reliable votes,
  then by label. Responses with equal averages share a rank (competition ranking: 1, 1, 3), so
  the tie-breaks order the list but never split a rank.
- Inaccurate claims: counted per response and per error type (types in taxonomy order, only those
  that occur), and over all responses.
- Agreement: Kendall's coefficient of concordance W over the rankings the counted fact-checkers
  imply (each checker ranks the responses by its ratings, ties at their mean rank), with the
  correction for ties: W = 12 S / (m² (n³ - n) - m Σ T), T = Σ (t³ - t) over each checker's tie
  groups. Only checkers that rated every response take part; W is unset with fewer than two of
  them, fewer than two responses, or when every one of them rated all responses alike (W is then
  0/0).
- Self-preference: for each response whose model also fact-checked, `self_score` is that model's
  rating of it (the mean, should the model have checked more than once) and `others_score` the
  mean rating the other checkers gave it; `self_preference` is the mean of self - others over the
  responses that have both. Positive: models rate their own answers higher than their peers do.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Protocol, Sequence, cast

from factcheck.core.council_taxonomy import ERROR_TYPE_NAMES, RATING_SCORES
from factcheck.v1 import council_pb2

__all__ = ["AggregateResponse", "compute_aggregate", "kendall_w", "score_of"]


@dataclass(frozen=True)
class AggregateResponse:
    """One response being ranked: its label and the model (or supplied name) behind it."""

    label: str
    model: str


class FactCheck(Protocol):
    """A counted fact-check: `council_pb2.CouncilCheck` or `CouncilCheckCompletePayload`."""

    # Read-only properties: the messages' repeated fields are their own container types.
    @property
    def model(self) -> str: ...
    @property
    def checker_index(self) -> int: ...
    @property
    def ratings(self) -> Sequence[council_pb2.ResponseRating]: ...
    @property
    def most_reliable(self) -> str: ...
    @property
    def inaccurate_claims(self) -> Sequence[council_pb2.InaccurateClaim]: ...


def score_of(rating: int) -> int | None:
    """5 for ACCURATE ... 1 for INACCURATE; None for UNSPECIFIED or an unknown value."""
    return RATING_SCORES.get(rating)


def compute_aggregate(
    responses: Sequence[AggregateResponse],
    fact_checks: Iterable[FactCheck],
    excluded: Iterable[council_pb2.CouncilCheckFailedPayload] = (),
    *,
    exclude_self_ratings: bool = False,
) -> council_pb2.CouncilAggregate:
    """The CouncilAggregate of `responses` from the counted `fact_checks` (see the module docstring)."""
    checks = sorted(fact_checks, key=lambda check: check.checker_index)
    labels = [response.label for response in responses]
    ranked = {response.label: _ranked_response(response, checks, exclude_self_ratings) for response in responses}
    all_errors: Counter[int] = Counter()
    for item in ranked.values():
        all_errors.update({count.error_type: count.count for count in item.error_types})

    def order(label: str) -> tuple:
        item = ranked[label]
        average = item.average_score if item.HasField("average_score") else None
        return (average is None, -(average or 0.0), -item.most_reliable_votes, label)

    ordered = sorted(labels, key=order)
    excluded_in_order = sorted(excluded, key=lambda item: item.checker_index)
    for item in (ranked[label] for label in ordered):
        item.rank = 1 + sum(1 for other in ranked.values() if _better_average(other, item))

    aggregate = council_pb2.CouncilAggregate(
        ranking=[ranked[label] for label in ordered],
        counted_fact_checkers=[check.model for check in checks],
        excluded_fact_checkers=excluded_in_order,
        error_types=_error_counts(all_errors),
        exclude_self_ratings=exclude_self_ratings,
        label_to_model={response.label: response.model for response in responses},
    )
    concordance = kendall_w([_checker_scores(check, labels) for check in checks])
    if concordance is not None:
        aggregate.kendall_w = concordance
    preferences = [
        item.self_score - item.others_score
        for item in aggregate.ranking
        if item.HasField("self_score") and item.HasField("others_score")
    ]
    if preferences:
        aggregate.self_preference = sum(preferences) / len(preferences)
    return aggregate


def _ranked_response(
    response: AggregateResponse, checks: Sequence[FactCheck], exclude_self_ratings: bool
) -> council_pb2.RankedResponse:
    item = council_pb2.RankedResponse(label=response.label, model=response.model)
    counted: list[int] = []
    own: list[int] = []
    others: list[int] = []
    errors: Counter[int] = Counter()
    for check in checks:
        rating = next((r.rating for r in check.ratings if r.label == response.label), None)
        score = score_of(rating) if rating is not None else None
        is_self = check.model == response.model
        if score is not None:
            item.ratings.append(
                council_pb2.CheckerRating(
                    fact_checker_model=check.model,
                    checker_index=check.checker_index,
                    rating=rating,
                    self_rating=is_self,
                )
            )
            (own if is_self else others).append(score)
            if not (is_self and exclude_self_ratings):
                counted.append(score)
        if check.most_reliable == response.label:
            item.most_reliable_votes += 1
        errors.update(claim.error_type for claim in check.inaccurate_claims if claim.label == response.label)
    if counted:
        item.average_score = sum(counted) / len(counted)
    if own:
        item.self_score = sum(own) / len(own)
        if others:
            item.others_score = sum(others) / len(others)
    item.inaccurate_claim_count = sum(errors.values())
    item.error_types.extend(_error_counts(errors))
    return item


def _better_average(other: council_pb2.RankedResponse, item: council_pb2.RankedResponse) -> bool:
    """`other` ranks strictly above `item`: a higher average, or any average against none."""
    if not other.HasField("average_score"):
        return False
    if not item.HasField("average_score"):
        return True
    return _rounded(other.average_score) > _rounded(item.average_score)


def _rounded(value: float) -> float:
    # Means of small integers: equal averages may differ in the last bits only.
    return round(value, 9)


def _error_counts(counts: Counter[int]) -> list[council_pb2.ErrorTypeCount]:
    known = [kind for kind in ERROR_TYPE_NAMES if counts.get(kind)]
    unknown = sorted(kind for kind in counts if kind not in ERROR_TYPE_NAMES and counts[kind])
    # The cast: proto3 enums are open (unknown numbers included), protoc's .pyi type the field as the enum.
    return [
        council_pb2.ErrorTypeCount(error_type=cast(council_pb2.ErrorType, kind), count=counts[kind])
        for kind in (*known, *unknown)
    ]


def _checker_scores(check: FactCheck, labels: Sequence[str]) -> list[int] | None:
    """The checker's score for every response, in label order; None unless it rated them all."""
    scores = {r.label: score_of(r.rating) for r in check.ratings}
    values = [score for label in labels if (score := scores.get(label)) is not None]
    return values if len(values) == len(labels) else None


def kendall_w(score_rows: Sequence[Sequence[float] | None]) -> float | None:
    """Kendall's W (tie-corrected) over the complete rows of scores (one row per rater, higher =
    better, the same items in the same order); None when it is undefined (see the docstring)."""
    rows = [list(row) for row in score_rows if row is not None]
    m = len(rows)
    n = len(rows[0]) if rows else 0
    if m < 2 or n < 2:
        return None
    ranks = [mid_ranks(row) for row in rows]
    totals = [sum(rank[i] for rank in ranks) for i in range(n)]
    mean = m * (n + 1) / 2
    spread = sum((total - mean) ** 2 for total in totals)
    ties = sum(t**3 - t for row in rows for t in Counter(row).values())
    denominator = m * m * (n**3 - n) - m * ties
    if denominator <= 0:
        return None
    return 12 * spread / denominator


def mid_ranks(scores: Sequence[float]) -> list[float]:
    """Rank 1 for the highest score; tied scores share the mean of their ranks."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    ranks = [0.0] * len(scores)
    position = 0
    while position < len(order):
        end = position
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[position]]:
            end += 1
        for index in order[position : end + 1]:
            ranks[index] = (position + end) / 2 + 1
        position = end + 1
    return ranks
