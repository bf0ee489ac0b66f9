"""Grounded verdicts where a passage tells of two events, and figures and dates written another way, through the
built-in checkers' judges (local/checker's model judge and local/checker-lexical's lexical one).

- A claim whose specifics are each stated, but in sentences about different events ("Chemistry" with 1911,
  "1903" with Physics), is not VERIFIED: its event's sentence gives another value, and the verdict is never HIGH.
- A correction comes from the sentence that holds the claim's other specifics (the 1911 sentence for "... in
  Medicine in 1911"), never from another event's, and is not HIGH when the sentences give different values.
- "1642 m" is 1,642 metres, and "9 Nov 1989" is 9 November 1989.
"""

from __future__ import annotations

import pytest

from factcheck.text.numbers import find_dates, find_quantities
from factcheck_engines.grounded import grounded
from factcheck_engines.judge import (
    CONFLICT_DATE,
    CONFLICT_NEGATION,
    CONFLICT_QUANTIFIER,
    CONFLICT_VERIFIER,
    DISPUTED,
    UNVERIFIABLE,
    VERIFIED,
    Judgement,
    PassageText,
)
from factcheck_engines.judges import default_judge, lexical_judge

JUDGES = pytest.mark.parametrize(
    "judge", [default_judge, lexical_judge], ids=["local/checker", "local/checker-lexical"]
)

CURIE = "Marie Curie shared the 1903 Nobel Prize in Physics. In 1911 she won the Nobel Prize in Chemistry."
PHYSICS_1903 = "Marie Curie shared the 1903 Nobel Prize in Physics."
CHEMISTRY_1911 = "In 1911 she won the Nobel Prize in Chemistry."


def curie(judge, claim: str):
    return judge(claim, [PassageText("P1", CURIE, "")])


@JUDGES
def test_specifics_stated_in_two_events_sentences_are_not_verified(judge) -> None:
    judgement = curie(judge, "Marie Curie won the Nobel Prize in Chemistry in 1903.")
    assert judgement.verdict != VERIFIED
    assert judgement.confidence != "HIGH"
    # The Chemistry prize's sentence gives its year.
    assert judgement.correction == "Marie Curie won the Nobel Prize in Chemistry in 1911 (not 1903) [P1]"
    assert judgement.quote == CHEMISTRY_1911


@JUDGES
def test_the_correction_comes_from_the_sentence_holding_the_other_specifics(judge) -> None:
    judgement = curie(judge, "Marie Curie won the Nobel Prize in Medicine in 1911.")
    assert judgement.verdict == DISPUTED
    # The 1903 sentence says Physics, the 1911 one Chemistry: the sentences disagree.
    assert judgement.confidence != "HIGH"
    assert judgement.correction == "Marie Curie won the Nobel Prize in Chemistry (not Medicine) in 1911 [P1]"
    assert judgement.quote == CHEMISTRY_1911


@JUDGES
@pytest.mark.parametrize(
    ("claim", "correction"),
    [
        (
            "Marie Curie won the Nobel Prize in Chemistry in 1912.",
            "Marie Curie won the Nobel Prize in Chemistry in 1911 (not 1912) [P1]",
        ),
        (
            "Marie Curie won the 1912 Nobel Prize in Chemistry.",
            "Marie Curie won the 1911 (not 1912) Nobel Prize in Chemistry [P1]",
        ),
    ],
)
def test_a_year_is_corrected_from_its_own_events_sentence(judge, claim: str, correction: str) -> None:
    judgement = curie(judge, claim)
    assert judgement.verdict == DISPUTED
    assert judgement.correction == correction
    assert judgement.quote == CHEMISTRY_1911


@JUDGES
def test_a_claim_one_sentence_states_whole_is_still_verified(judge) -> None:
    judgement = curie(judge, "Marie Curie won the Nobel Prize in Chemistry in 1911.")
    assert judgement.verdict == VERIFIED
    assert judgement.quote == CHEMISTRY_1911
    physics = curie(judge, "Marie Curie shared the 1903 Nobel Prize in Physics.")
    assert physics.verdict == VERIFIED
    assert physics.quote == PHYSICS_1903


@pytest.mark.parametrize(
    ("short", "full"),
    [
        ("1642 m", "1,642 metres"),
        ("1642 m deep", "1642 meters deep"),
        ("1900 km", "1,900 kilometres"),
        ("1500 kg", "1.5 tonnes"),
        ("2000 g", "2 kilograms"),
        ("350 cm", "3.5 metres"),
        ("1200 km²", "1,200 square kilometres"),
        ("1200 km2", "1,200 sq km"),
        ("1200 mi", "1,200 miles"),
        ("2000 ft", "2,000 feet"),
        ("1999%", "1,999 percent"),
    ],
)
def test_a_unit_abbreviation_after_a_figure_is_its_unit(short: str, full: str) -> None:
    [abbreviated] = find_quantities(short)
    [written] = find_quantities(full)
    assert (abbreviated.unit, abbreviated.low) == (written.unit, pytest.approx(written.low))
    assert not find_dates(short)


@pytest.mark.parametrize("text", ["In 1989 M. Curie moved.", "In 1990 degrees were awarded.", "in 1990 the"])
def test_a_year_before_a_capital_or_another_word_stays_a_year(text: str) -> None:
    assert [d.year for d in find_dates(text)] == [int(text.split()[1])]
    assert not find_quantities(text)


@JUDGES
def test_a_figure_in_metres_is_stated_by_the_same_figure_in_m(judge) -> None:
    judgement = judge("Lake Baikal is 1,642 metres deep.", [PassageText("P1", "Lake Baikal is 1642 m deep.", "")])
    assert judgement.verdict == VERIFIED
    assert judgement.partial is None


@JUDGES
def test_a_month_abbreviation_is_the_month(judge) -> None:
    passage = PassageText("P1", "The Berlin Wall opened on 9 November 1989.", "")
    judgement = judge("The Berlin Wall opened on 9 Nov 1989.", [passage])
    assert judgement.verdict == VERIFIED
    assert judgement.correction is None


# --- a judge's DISPUTED where every specific is stated --------------------------------------------------------

TOWER = [PassageText("P1", "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.", "Eiffel Tower")]


def _disputed(conflict: str | None) -> Judgement:
    return Judgement(DISPUTED, "HIGH", "It was built in 1900.", "P1", "completed in 1889", 0.95, conflict)


def test_a_judges_reading_alone_disputes_nothing_the_claim_names():
    """The verifier's reading with no conflict its rules name is no contradiction of a claim whose every specific the
    sentence states: UNVERIFIABLE, never DISPUTED (a supported claim read wrong by a small model)."""
    for conflict in (None, CONFLICT_VERIFIER):
        judged = grounded(_disputed(conflict), "The Eiffel Tower in Paris was completed in 1889.", TOWER)
        assert (judged.verdict, judged.correction) == (UNVERIFIABLE, None), judged
        assert judged.quote and "completed in 1889" in judged.quote


def test_a_named_conflict_or_an_unstated_denial_keeps_the_dispute_without_a_correction():
    claim = "The Eiffel Tower in Paris was completed in 1889."
    for conflict in (CONFLICT_NEGATION, CONFLICT_QUANTIFIER, CONFLICT_DATE):
        judged = grounded(_disputed(conflict), claim, TOWER)
        assert (judged.verdict, judged.confidence, judged.correction) == (DISPUTED, "MEDIUM", None), judged
    # The claim denies what the sentence states: the judge's dispute stands, whatever it named.
    denied = grounded(_disputed(CONFLICT_VERIFIER), "The Eiffel Tower in Paris was not completed in 1889.", TOWER)
    assert (denied.verdict, denied.correction) == (DISPUTED, None), denied
