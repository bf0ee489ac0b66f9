"""Claim-level citations, read as their data model defines them: the unit is the counted noun, only a figure
the text derives is COMPUTED, ordinals and plain facts are not LOW, ListClaims routes by confidence level,
and the built-in engines quote the minimal span and find a figure that is there.

Tables for each class, then one offline run through the real services (local/ engines, in-process gateway,
SQLite and PostgreSQL) that checks the same things where a caller sees them.
"""

from __future__ import annotations

import math

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck.core.claim_profile import HIGH, LOW, MEDIUM, confidence_level, profile
from factcheck.core.numeric_qa import answer_from_text
from factcheck.text.numbers import find_derivation, find_quantities, main_figure, normalise_figure
from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck_engines.judge import PassageText
from factcheck_engines.judges import default_judge
from tests.inprocess import serve_everything
from tests.test_citations_offline import offline_settings

# --- units: what a figure counts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, value, unit",
    [
        # adjectives before the counted noun
        ("The city has 14 public libraries.", 14, "library"),
        ("The museum holds 4,000 maritime objects.", 4000, "object"),
        ("There are about 30 public parks.", 30, "park"),
        ("It hired 20 trained doctors.", 20, "doctor"),
        ("The fleet has 3 new electric ferries.", 3, "ferry"),
        # compound nouns and hyphenated modifiers
        ("The line runs 3 high-speed trains.", 3, "train"),
        ("The firm has 250 full-time employees.", 250, "employee"),
        ("Acme Corp employs 4,500 people.", 4500, "people"),
        ("The airline carried 3.2 million passengers in its first year.", 3.2e6, "passenger"),
        ("14 libraries opened in 2020.", 14, "library"),  # the verb after the noun is not counted
        # hyphenated units
        ("They built a 5-kilometre trail.", 5000, "m"),
        ("It is a 12-storey tower.", 12, "storey"),
        ("It signed a 3-year contract.", 3, "year"),
        ("The 12 km-long tunnel opened.", 12_000, "m"),
        ("They shipped 5 metric tons of rice.", 5000, "kg"),
        # per cent
        ("Turnout was 45 per cent.", 45, "%"),
        ("Turnout was 45 percent.", 45, "%"),
        ("Turnout was 45%.", 45, "%"),
        # currencies before and after
        ("It cost $1.2 billion.", 1.2e9, "USD"),
        ("It cost 30 euros.", 30, "EUR"),
        ("It cost €4.2 billion.", 4.2e9, "EUR"),
        ("It cost 3 billion dollars.", 3e9, "USD"),
        ("It cost £300k.", 3e5, "GBP"),
        # ranges
        ("The plan adds between 10 and 20 new schools.", 15, "school"),
        ("The plan adds 10-20 new schools.", 15, "school"),
        ("Estimates run from 2 to 3 million people.", 2.5e6, "people"),
        # fractions of a whole: a share
        ("A third of residents voted.", 100 / 3, "%"),
        ("Two thirds of voters agreed.", 200 / 3, "%"),
        ("Half of the staff left.", 50, "%"),
    ],
)
def test_the_unit_is_the_counted_noun(text, value, unit):
    figure = normalise_figure(text)
    assert figure is not None, text
    assert math.isclose(figure.value, value, rel_tol=1e-9) and figure.unit == unit, (figure.raw, figure.unit)


ADJECTIVES = [
    "public",
    "maritime",
    "new",
    "full-time",
    "high-speed",
    "historic",
    "small",
    "trained",
    "local",
    "electric",
]
NOUNS = {"libraries": "library", "objects": "object", "parks": "park", "employees": "employee", "trains": "train"}
NOUNS |= {"ferries": "ferry", "schools": "school", "people": "people", "bridges": "bridge", "passengers": "passenger"}
FIGURES = {"14": 14, "4,000": 4000, "about 30": 30, "3.2 million": 3.2e6, "twenty": 20, "more than 250": 250}
TAILS = ["", " in 2020", " opened last year", ", the city says", " were counted"]


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(FIGURES)),
    st.lists(st.sampled_from(ADJECTIVES), max_size=2, unique=True),
    st.sampled_from(sorted(NOUNS)),
    st.sampled_from(TAILS),
)
def test_any_adjectives_before_the_counted_noun_leave_the_noun_as_the_unit(figure, adjectives, noun, tail):
    text = f"The region has {figure} {' '.join([*adjectives, noun])}{tail}."
    found = normalise_figure(text)
    assert found is not None and found.unit == NOUNS[noun], (text, found)
    assert math.isclose(found.value, FIGURES[figure]) and found.raw.endswith(noun)


def test_the_raw_figure_spans_the_noun_phrase_it_counts():
    (quantity,) = find_quantities("The city has 14 public libraries.")
    assert quantity.text == "14 public libraries"
    fraction = normalise_figure("About a quarter of homes")
    assert fraction is not None and fraction.raw == "About a quarter" and "fraction" in fraction.assumptions


# --- derivation: only a figure the text derives is COMPUTED -------------------------------------------------


@pytest.mark.parametrize(
    "claim, asserted, operation",
    [
        # stated outright, whatever else the claim says about it
        ("Revenue grew 12% to $1.2 billion.", "$1.2 billion", None),
        ("Membership rose from 8 million to 10 million.", "10 million", None),
        ("Membership rose from 8 to 10 million.", "10 million", None),
        ("The city has 14 public libraries.", "14 public libraries", None),
        ("Revenue was $7m, $2m more than the $5m of 2019.", "$7m", None),
        ("45% of voters backed it.", "45%", None),
        # derived from another figure
        ("Revenue grew 12%.", "12%", "percent_change"),
        ("Output fell by 25 percent.", "25 percent", "percent_change"),
        ("Sales doubled between 2010 and 2015.", None, "multiply"),
        ("Health took 25% of the $4bn budget.", "25%", "percent_of"),
        ("Sales were up 3 from 12 last year.", "3", "difference"),
        ("Lyon has 3 parks and Nice has 4, 7 parks in total.", "7 parks", "sum"),
    ],
)
def test_only_a_derived_figure_is_computed(claim, asserted, operation):
    figure = main_figure(claim)
    assert (figure.raw if figure else None) == asserted
    derivation = find_derivation(claim)
    assert (derivation.operation if derivation else None) == operation
    numeric = profile(claim).numeric
    assert numeric is not None and (numeric.derivation is not None) == (operation is not None)


def test_the_entity_of_a_stated_result_is_not_built_from_the_growth_phrase():
    numeric = profile("Revenue grew 12% to $1.2 billion.").numeric
    assert numeric is not None and numeric.entity == "Revenue" and numeric.derivation is None


# --- confidence: LOW is hedged, comparative or synthetic; ordinals and plain facts are not ------------------


@pytest.mark.parametrize(
    "claim, level",
    [
        ("The airline carried 3.2 million passengers in its first year.", HIGH),
        ("The second bridge opened in 1890.", MEDIUM),
        ("The third edition was printed in Leipzig.", MEDIUM),
        ("Armstrong was the first person to walk on the Moon.", MEDIUM),
        ("Acme Corp employs 4,500 people.", HIGH),
        ("Paris is the capital of France.", MEDIUM),
        ("The airline may have carried 3.2 million passengers.", LOW),  # hedged
        ("It carried more passengers than any other airline.", LOW),  # comparative
        ("It is the largest airline in Europe.", LOW),  # superlative
        ("Overall, the airline carried 9 million passengers.", LOW),  # synthetic
        ("On average, flights were 80% full.", LOW),  # synthetic
    ],
)
def test_confidence_levels_follow_seed_3(claim, level):
    assert confidence_level(claim) == level


# --- the built-in engines: minimal span, a figure that is there ----------------------------------------------

ACME = "Acme Corp employs 4,500 people."


@pytest.mark.parametrize(
    "passage, answer",
    [
        ("The company employs 4,500 people in Denver.", "4,500 people"),
        ("Acme Corp is a maker of anvils. The company employs 4,500 people in Denver.", "4,500 people"),
        ("Acme Corp employs 4,500 people.", "4,500 people"),
        ("It employs 4,500 people.", "4,500 people"),
        ("Globex employs 4,000 people.", None),  # another named subject
        ("The company has 4,500 shareholders.", None),  # another counted noun
        ("The company was founded 45 years ago.", None),
    ],
)
def test_numeric_qa_finds_a_figure_that_is_there(passage, answer):
    assert answer_from_text(ACME, "Acme Corp", passage) == answer


@pytest.mark.parametrize(
    "passage, answer",
    [
        ("France lies in Europe. In 2021 its population was 82 million.", "82 million"),
        ("France lies in Europe. The population was 82 million in 2021.", "82 million"),
        ("In 2021 the population of Chile was 82 million. France is a republic.", None),  # another subject
        ("France lies in Europe. In 2021 it had 82 million tourists.", None),  # counts something else
        ("France lies in Europe. In 2019 its population was 80 million.", None),  # another year
    ],
)
def test_a_bare_count_answers_from_a_sentence_that_refers_back_and_names_the_measure(passage, answer):
    claim = "The population of France was 82 million in 2021."
    assert answer_from_text(claim, "The population of France (2021)", passage) == answer


def test_the_span_is_the_sentence_that_states_the_claim():
    passage = "Acme Corp is a maker of anvils. The company employs 4,500 people in Denver. Denver has many parks."
    judgement = default_judge(ACME, [PassageText("P1", passage, "Acme Corp profile")])
    assert judgement.quote == "The company employs 4,500 people in Denver."


# --- through the services ---------------------------------------------------------------------------------------

SOURCES = [
    common_pb2.Source(
        id="acme",
        title="Acme Corp profile",
        url="https://example.org/acme",
        text="Acme Corp is a maker of anvils. The company employs 4,500 people in Denver. Denver has many parks.",
    ),
    common_pb2.Source(
        id="city",
        title="City facts",
        url="https://example.org/city",
        text="The city of Brora has 14 public libraries and a harbour museum.",
    ),
]
CONTENT = (
    "Acme Corp employs 4,500 people. "
    "The city of Brora has 14 public libraries. "
    "The airline carried 3.2 million passengers in its first year. "
    "Brora's revenue grew 12% to $1.2 billion. "
    "Acme Corp is the largest anvil maker in Denver."
)


def run_request() -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Check these facts",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=CONTENT, sources=SOURCES, citations=True, use_knowledge_store=False
        ),
    )


async def test_units_derivation_confidence_routing_spans_and_qa_through_the_services(database_url):
    async with (
        serve_everything(offline_settings(database_url)) as running,
        grpc.aio.insecure_channel(running.target) as channel,
    ):
        runs = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        claims = citations_pb2_grpc.ClaimsServiceStub(channel)
        events = [r.event async for r in runs.Run(run_request(), timeout=60)]
        message_id = events[0].message_id
        listed = (await claims.ListClaims(citations_pb2.ListClaimsRequest(message_id=message_id))).claims
        by_level = {
            level: (
                await claims.ListClaims(citations_pb2.ListClaimsRequest(message_id=message_id, confidence_level=level))
            ).claims
            for level in (
                citations_pb2.CONFIDENCE_LEVEL_HIGH,
                citations_pb2.CONFIDENCE_LEVEL_MEDIUM,
                citations_pb2.CONFIDENCE_LEVEL_LOW,
            )
        }
        acme_id = next(c.id for c in listed if c.claim_text.startswith("Acme Corp employs"))
        acme = (await claims.GetClaim(citations_pb2.GetClaimRequest(claim_id=acme_id))).claim
        for bad in (7, -1):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await claims.ListClaims(citations_pb2.ListClaimsRequest(confidence_level=bad))  # type: ignore[arg-type]
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "confidence_level" in (raised.value.details() or "")

    text = {c.claim_text: c for c in listed}
    assert len(text) == 5
    units = {t: c.numeric_detail.number.unit for t, c in text.items() if c.HasField("numeric_detail")}
    assert units["The city of Brora has 14 public libraries."] == "library"
    assert units["The airline carried 3.2 million passengers in its first year."] == "passenger"
    assert units["Acme Corp employs 4,500 people."] == "people"
    revenue = text["Brora's revenue grew 12% to $1.2 billion."].numeric_detail
    assert (
        revenue.number.raw_value == "$1.2 billion" and revenue.derivation_type == citations_pb2.DERIVATION_TYPE_DIRECT
    )
    assert "grew" not in revenue.entity_reference

    # Routing: every claim is listed under exactly its own level, and the first-year claim is not LOW.
    levels = {c.id: level for level, found in by_level.items() for c in found}
    assert len(levels) == 5 and all(levels[c.id] == c.confidence_level for c in listed)
    first_year = text["The airline carried 3.2 million passengers in its first year."]
    assert first_year.confidence_level == citations_pb2.CONFIDENCE_LEVEL_HIGH
    assert (
        text["Acme Corp is the largest anvil maker in Denver."].confidence_level == citations_pb2.CONFIDENCE_LEVEL_LOW
    )

    # local/checker: the span is the one sentence that states the claim, and QA finds the figure in it.
    [qa] = acme.numeric_detail.qa_verification
    assert (qa.evidence_answer, qa.match) == ("4,500 people", True)
    quotes = [link.evidence_span.quote_text for link in acme.citations]
    assert quotes and quotes[0] == "The company employs 4,500 people in Denver."
