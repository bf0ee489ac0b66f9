"""local/checker disputes a claim only on a contradiction, on a labelled sample, with the shipped model.

Each case is a claim, its passages, and which sentences of them contradict it (none for a claim
the passages support or do not address). The rules checked:
- a claim the passages support is never DISPUTED, whatever else they hold (a dateline, a caption,
  another entity's figure, a byline);
- every DISPUTED verdict quotes a sentence labelled as contradicting the claim (or part of one, or
  one with the sentence its "it" refers to), and its correction never comes from a dateline;
- the contradictions this engine is built to catch (a changed figure or year, a negation) are caught.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from factcheck_engines import nli_judge, nli_model
from factcheck_engines.judge import DISPUTED, VERIFIED, PassageText

pytestmark = pytest.mark.skipif(not nli_model.available(), reason="the nli extra is not installed")

SCHUMER = (
    "Amy Schumer to open for Madonna on Rebel Heart tour in New York\n"
    "The comedian and actress tweeted that she will perform on three September dates of Madonna's Rebel Heart tour\n"
    "Tshepo Mokoena\n"
    "Fri 19 Jun 2015 03.28 EDT\n"
    "Photograph: Mike Coppola/Getty Images\n"
    "Amy Schumer has announced on Twitter that she is due to open for Madonna, on 16 September and 17 September "
    "at Madison Square Garden, and on 19 September at Brooklyn's Barclays Centre."
)
EIFFEL = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall. "
    "It was completed in 1889 as the entrance to the World's Fair. Gustave Eiffel's company designed and built it."
)
EIFFEL_CAPTION = "Postcard of the tower, printed in 1925.\n" + EIFFEL
CITIES = (
    "Paris has a population of about 2.1 million people within its city limits. "
    "Lyon, the third-largest city of France, has a population of about 0.5 million."
)
RHINOS = (
    "Leeds Rhinos beat Wigan Warriors 22-20 at Old Trafford to win the 2015 Super League Grand Final. "
    "The club had also won the Grand Final in 2012, against Warrington."
)
CURIE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist. She was born in Warsaw in 1867. "
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel."
)
AMAZON = (
    "The Amazon River in South America is the largest river by discharge volume of water in the world. "
    "It does not flow through Chile."
)


@dataclass(frozen=True)
class Case:
    claim: str
    passages: tuple[str, ...]
    supported: bool  # the passages state the claim
    contradicting: tuple[str, ...] = ()  # the sentences that contradict it (verbatim)
    must_dispute: bool = False  # a contradiction this engine is built to catch


CASES = (
    Case(
        "Schumer performed as opening act for Madonna on three New York City dates of the Rebel Heart Tour "
        "in September 2015.",
        (SCHUMER,),
        supported=True,
    ),
    Case("The Eiffel Tower was completed in 1889.", (EIFFEL_CAPTION,), supported=True),
    Case("The Eiffel Tower is 330 metres tall.", (EIFFEL_CAPTION, CITIES), supported=True),
    Case("Paris has a population of about 2.1 million.", (CITIES,), supported=True),
    Case("Leeds Rhinos won the 2015 Super League Grand Final.", (RHINOS,), supported=True),
    Case("Marie Curie was born in Warsaw.", (CURIE, EIFFEL), supported=True),
    Case(
        "Marie Curie shared the 1903 Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
        (CURIE,),
        supported=True,
    ),
    Case(
        "The Eiffel Tower was completed in 1887 as the entrance to the World's Fair.",
        (EIFFEL,),
        supported=False,
        contradicting=("It was completed in 1889 as the entrance to the World's Fair.",),
        must_dispute=True,
    ),
    Case(
        "The Eiffel Tower is 300 metres tall.",
        (EIFFEL,),
        supported=False,
        contradicting=("It is 330 metres tall.",),
        must_dispute=True,
    ),
    Case(
        "Marie Curie was born in Warsaw in 1871.",
        (CURIE,),
        supported=False,
        contradicting=("She was born in Warsaw in 1867.",),
        must_dispute=True,
    ),
    Case(
        "The Amazon River flows through Chile.",
        (AMAZON,),
        supported=False,
        contradicting=("It does not flow through Chile.",),
        must_dispute=True,
    ),
    Case(
        "Leeds Rhinos won the 2015 Super League Grand Final against Warrington.",
        (RHINOS,),
        supported=False,
        contradicting=(
            "Leeds Rhinos beat Wigan Warriors 22-20 at Old Trafford to win the 2015 Super League Grand Final.",
        ),
    ),
    Case("Lyon is the capital of France.", (CITIES,), supported=False, contradicting=()),
)


def _judged(case: Case):
    passages = [PassageText(f"P{i}", text, "Source") for i, text in enumerate(case.passages, 1)]
    return nli_judge.judge(case.claim, passages)


@pytest.mark.parametrize("case", [c for c in CASES if c.supported], ids=lambda c: c.claim[:40])
def test_a_supported_claim_is_never_disputed(case):
    judgement = _judged(case)
    assert judgement.verdict != DISPUTED, judgement


def test_every_dispute_quotes_a_contradicting_sentence():
    disputes = [(case, j) for case in CASES if (j := _judged(case)).verdict == DISPUTED]
    assert len(disputes) >= sum(c.must_dispute for c in CASES)
    for case, judgement in disputes:
        quote = judgement.quote or ""
        # The quote is (part of) a contradicting sentence, or holds one with the sentence it refers back to.
        assert quote and any(quote in s or s in quote for s in case.contradicting), judgement
        assert judgement.correction and "19 Jun" not in judgement.correction


@pytest.mark.parametrize("case", [c for c in CASES if c.must_dispute], ids=lambda c: c.claim[:40])
def test_a_changed_figure_or_a_negation_is_disputed(case):
    judgement = _judged(case)
    assert judgement.verdict == DISPUTED, judgement


def test_the_sample_has_both_kinds_and_most_supported_claims_are_verified():
    verdicts = [(case, _judged(case).verdict) for case in CASES]
    supported = [v for c, v in verdicts if c.supported]
    assert supported and any(not c.supported for c in CASES)
    assert supported.count(VERIFIED) >= len(supported) - 2, verdicts
