"""The corroboration rule decides conflicts: one source of authority >= 0.85 stands on its
own, lower-authority sources count only as two or more independent outlets, copies and sources citing each
other count once, and a conflict goes to the stronger side by that rule, never by summed scores."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck_gateway.modes.fact_check.investigate import authority, decide
from factcheck_gateway.modes.fact_check.investigate.decide import REFUTES, SUPPORTS, Assessed

CONFIRMED, REFUTED, UNVERIFIABLE = decide.CONFIRMED, decide.REFUTED, decide.UNVERIFIABLE
STORY = "The mayor announced that the new bridge across the river will open to traffic next spring."


def source(n: int, stance: str, value: float, *, text: str | None = None, domain: str = "") -> Assessed:
    return Assessed(
        f"E{n}",
        stance,
        False,
        value,
        f"owner{n}",
        text or f"independent report number {n} with its own words " * 2,
        f"Source {n}",
        None,
        domain or f"site{n}.example",
    )


def side(stance: str, values: list[float], start: int) -> list[Assessed]:
    return [source(start + i, stance, v) for i, v in enumerate(values)]


def status(results: list[Assessed]) -> str | None:
    decision = decide.decide(results, 0.3, exhausted=False)
    return decision.status if decision else None


@pytest.mark.parametrize(
    "supporting, refuting, expected",
    [
        # the reported cases: one .gov or one wire report against a crowd of posts
        ([0.3, 0.3, 0.3], [0.85], REFUTED),
        ([0.3, 0.3, 0.3], [0.9], REFUTED),
        ([0.3, 0.3, 0.3, 0.3], [0.9], REFUTED),  # a fourth post changes nothing
        ([0.5] * 5, [0.9], REFUTED),  # five blog posts are worth less than one AP report
        ([0.9], [0.3] * 10, CONFIRMED),
        # 0.85 exactly is high authority; just below it is not
        ([0.85], [], CONFIRMED),
        ([0.8499], [], None),
        ([0.85], [0.8499, 0.7], CONFIRMED),
        ([0.8499, 0.7], [0.85], REFUTED),
        # ties: equal standing settles nothing
        ([0.9], [0.9], UNVERIFIABLE),
        ([0.85], [0.9], UNVERIFIABLE),  # both high, one each: no sum of scores breaks it
        ([0.5, 0.5], [0.5, 0.5], UNVERIFIABLE),
        ([0.3, 0.3], [0.3, 0.3], UNVERIFIABLE),
        # mixed tiers on both sides: tier by tier, highest first
        ([0.9, 0.5], [0.85], CONFIRMED),
        ([0.9], [0.85, 0.5, 0.5], REFUTED),
        ([0.85, 0.85], [0.9, 0.7], CONFIRMED),  # two independent high sources against one
        ([0.5, 0.5], [0.3, 0.3, 0.3, 0.3, 0.3], CONFIRMED),  # news outlets over social posts
        ([0.7, 0.3], [0.5, 0.5], REFUTED),  # two at news authority over one
        ([0.3, 0.3], [0.4], CONFIRMED),  # one low source does not meet the bar
    ],
)
def test_conflicts_are_decided_by_the_rule_not_by_summed_scores(supporting, refuting, expected):
    results = side(SUPPORTS, supporting, 1) + side(REFUTES, refuting, 100)
    assert status(results) == expected


def test_syndicated_copies_count_once():
    copies = [source(i, SUPPORTS, 0.5, text=STORY + f" Published by outlet {i}.") for i in range(5)]
    assert status(copies) is None  # five copies of one story: one outlet, below the bar
    assert status([*copies, source(9, REFUTES, 0.85)]) == REFUTED
    independent = [source(1, SUPPORTS, 0.5), source(2, SUPPORTS, 0.5)]
    assert status(independent) == CONFIRMED


def test_blogs_citing_each_other_count_once():
    blogs = [
        source(
            i,
            SUPPORTS,
            0.5,
            domain=f"blog{i}.example",
            text=f"As blog{(i + 1) % 5}.example reported, the bridge is unsafe; post {i} adds its own view " * 2,
        )
        for i in range(5)
    ]
    assert len(decide.counted(blogs, SUPPORTS)) == 1
    assert status(blogs) is None
    assert status([*blogs, source(9, REFUTES, 0.9)]) == REFUTED
    assert authority.cites("Read it at https://www.blog3.example/post", "blog3.example")
    assert not authority.cites("A post about blog3.examples", "blog3.example")


def test_the_reasoning_names_the_rule_that_decided():
    decision = decide.decide(side(SUPPORTS, [0.3, 0.3, 0.3], 1) + side(REFUTES, [0.85], 100), 0.3, exhausted=False)
    assert decision is not None and decision.status == REFUTED
    assert "stands on its own" in decision.reasoning and "outweighs" not in decision.reasoning


tiers = st.sampled_from([0.3, 0.5, 0.7, 0.8499, 0.85, 0.9])


@settings(max_examples=200, deadline=None)
@given(st.lists(tiers, max_size=6), st.lists(tiers, max_size=6))
def test_the_outcome_follows_the_rule_for_any_mix(supporting, refuting):
    results = side(SUPPORTS, supporting, 1) + side(REFUTES, refuting, 100)
    outcome = status(results)
    high = (any(v >= 0.85 for v in supporting), any(v >= 0.85 for v in refuting))
    meets = (high[0] or len(supporting) >= 2, high[1] or len(refuting) >= 2)
    if not any(meets):
        assert outcome is None
    elif meets[0] and not meets[1]:
        assert outcome == CONFIRMED
    elif meets[1] and not meets[0]:
        assert outcome == REFUTED
    elif high[0] != high[1]:  # a high-authority source beats any number of lower ones
        assert outcome == (CONFIRMED if high[0] else REFUTED)
    # Adding lower-authority sources to the side without a high-authority one never changes the outcome.
    if high[1] and not high[0]:
        more = results + side(SUPPORTS, [0.5, 0.7, 0.3], 50)
        assert status(more) == outcome
    if high[0] and not high[1]:
        more = results + side(REFUTES, [0.5, 0.7, 0.3], 150)
        assert status(more) == outcome
