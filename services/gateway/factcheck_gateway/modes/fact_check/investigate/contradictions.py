"""Resolving the contradictions between a run's claims once they are investigated: the
loser's resolution depends on the contradiction's context.

Two claims contradict each other when flags.contradictions paired them (same subject, different
figures or one negated). When the investigation CONFIRMED one and not the other, the confirmed one
wins and the other loses:
- temporal (both true at their own dates): the loser's own investigation found a newer state
  (SUPERSEDED), or both claims are dated and the winner's date is the later one; the loser becomes
  SUPERSEDED;
- factual, and whenever it is unclear: the loser becomes REFUTED (refuted is the default).
Both confirmed, with the dates of a temporal pair: the later one wins the same way. Both confirmed
otherwise, or neither confirmed: nothing is resolved. Each resolution is linked both ways (each claim
names the other and its side) and the loser's decision keeps the status it had before
(`resolvedFrom`). Each pair is resolved on its own (a claim may be in several contradictions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factcheck.text.numbers import find_dates
from factcheck_gateway.modes.fact_check.investigate.decide import CONFIRMED, REFUTED, SUPERSEDED

TEMPORAL, FACTUAL = "TEMPORAL", "FACTUAL"
WINNER, LOSER = "WINNER", "LOSER"
RULE_RESOLVED = "contradiction resolved"


def _latest_year(text: str) -> int | None:
    years = [d.year for d in find_dates(text)]
    return max(years) if years else None


def _kind(winner: Mapping[str, Any], loser: Mapping[str, Any]) -> tuple[str, str]:
    """(kind, why) of a winner/loser pair."""
    if loser["decision"]["status"] == SUPERSEDED:
        return TEMPORAL, "its own evidence reports a newer state"
    won, lost = _latest_year(winner["claim"]), _latest_year(loser["claim"])
    if won is not None and lost is not None and won > lost:
        return TEMPORAL, f"it states the {lost} state and the confirmed claim the later {won} one"
    return FACTUAL, "both state the same thing differently and only one was confirmed"


def _order(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(winner, loser), or None when the pair is not resolved."""
    a_confirmed, b_confirmed = a["decision"]["status"] == CONFIRMED, b["decision"]["status"] == CONFIRMED
    if a_confirmed != b_confirmed:
        return (a, b) if a_confirmed else (b, a)
    if a_confirmed and b_confirmed:
        years = _latest_year(a["claim"]), _latest_year(b["claim"])
        if years[0] is not None and years[1] is not None and years[0] != years[1]:
            return (a, b) if years[0] > years[1] else (b, a)
    return None


def resolve(claims: list[dict[str, Any]]) -> list[str]:
    """Resolve every contradicting pair among the investigated `claims` (claim_json dicts, changed in
    place); the ids of the claims whose status changed."""
    by_id = {c["claimId"]: c for c in claims}
    changed: list[str] = []
    done: set[frozenset[str]] = set()
    for claim in claims:
        for other_id in claim.get("contradicts", []):
            pair = frozenset((claim["claimId"], other_id))
            other = by_id.get(other_id)
            if other is None or pair in done:
                continue
            done.add(pair)
            ordered = _order(claim, other)
            if ordered is None:
                continue
            winner, loser = ordered
            kind, why = _kind(winner, loser)
            status = SUPERSEDED if kind == TEMPORAL else REFUTED
            decision = loser["decision"]
            reasoning = (
                f"{kind.lower()} contradiction with {winner['claimId']} (CONFIRMED): {why}; {loser['claimId']} "
                f"is {status}"
            )
            winner.setdefault("contradictionLinks", []).append(
                {"claimId": loser["claimId"], "role": WINNER, "kind": kind, "reasoning": reasoning}
            )
            loser.setdefault("contradictionLinks", []).append(
                {"claimId": winner["claimId"], "role": LOSER, "kind": kind, "reasoning": reasoning}
            )
            if decision["status"] != status:
                decision["resolvedFrom"] = {"status": decision["status"], "rule": decision["rule"]}
                decision["status"], decision["rule"] = status, RULE_RESOLVED
                decision["reasoning"] = f"{reasoning[0].upper()}{reasoning[1:]}. Before: {decision['reasoning']}"
                changed.append(loser["claimId"])
    return changed
