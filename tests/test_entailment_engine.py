"""local/entailment, the offline agents: each reads its own input (the call's inputs, as the checker's
agents pass them) and answers JSON that passes the agent's strict validation and rules."""

from __future__ import annotations

import json

import pytest

from factcheck.models.inputs import InputsMissing
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.entailment.agent_prompts import agent_inputs
from factcheck_checker.entailment.rules import agent_output
from factcheck_engines import entailment as engine

EXCERPT = (
    "The museum opened in 1887 in the old customs house.\nIt holds about 4,000 paintings. Parking is free on Sundays."
)


def _answer(agent: pb.EntailmentAgent, given) -> dict:
    text = engine.answer(agent_inputs(given))
    agent_output(agent, text, given)  # valid for the agent's schema and rules
    return json.loads(text)


def test_the_extractor_quotes_the_relevant_sentences_verbatim():
    given = pb.ExtractorInput(claim="The museum opened in 1887.", source_excerpt=EXCERPT)
    data = _answer(pb.ENTAILMENT_AGENT_EXTRACTOR, given)
    assert data["statements"] == [{"id": 1, "text": "The museum opened in 1887 in the old customs house."}]


def test_the_extractor_finds_nothing_in_an_unrelated_source():
    given = pb.ExtractorInput(claim="Volcanoes erupt lava.", source_excerpt=EXCERPT)
    assert _answer(pb.ENTAILMENT_AGENT_EXTRACTOR, given)["statements"] == []


@pytest.mark.parametrize(
    "source_type, rating",
    [
        ("peer-reviewed journal article", "HIGH"),
        ("official statistics office bulletin", "HIGH"),
        ("anonymous forum post", "LOW"),
        ("personal blog", "LOW"),
        ("regional newspaper", "MEDIUM"),
        ("something else entirely", "MEDIUM"),
        ("Some title (https://x.example); caller-assigned authority 0.20 on a 0-1 scale", "LOW"),
    ],
)
def test_reliability_reads_the_source_type(source_type, rating):
    given = pb.ReliabilityInput(source_type=source_type)
    assert _answer(pb.ENTAILMENT_AGENT_RELIABILITY, given)["reliability"] == rating


def test_the_judge_answers_in_the_seeds_json_citing_its_statement():
    statements = [pb.ExtractedStatement(id=1, text="The museum opened in 1887 in the old customs house.")]
    given = pb.JudgeInput(claim="The museum opened in 1887.", statements=statements)
    data = _answer(pb.ENTAILMENT_AGENT_JUDGE, given)
    assert data["verdict"] == "SUPPORTED" and data["reasoning"][0].startswith("Statement 1 ")
    assert 0 <= data["confidence"] <= 100


def test_the_judge_with_no_statements_is_not_enough_info():
    given = pb.JudgeInput(claim="The museum opened in 1887.")
    data = _answer(pb.ENTAILMENT_AGENT_JUDGE, given)
    assert (data["verdict"], data["confidence"]) == ("NOT ENOUGH INFO", 10)


@pytest.mark.parametrize(
    "claim, excerpt, downgraded",
    [
        ("The drug cures the disease.", "The drug may cure the disease.", True),  # modal
        ("The drug cures the disease.", "Early data suggests the drug cures the disease.", True),  # hedge
        ("All patients recovered.", "Many patients recovered.", True),  # weaker quantifier
        ("The bridge is 300 metres long.", "It is 300 metres long.", True),  # unresolved reference
        ("The drug may cure the disease.", "The drug may cure the disease.", False),  # shared hedge
        ("Many patients recovered.", "All patients recovered.", False),  # stronger is fine
        ("The bridge is 300 metres long.", "The bridge was built in 1932. It is 300 metres long.", False),
        ("The drug cures the disease.", "The drug cures the disease. Weather may vary.", False),  # not material
    ],
)
def test_the_auditor_downgrades_only_for_a_material_ambiguity(claim, excerpt, downgraded):
    given = pb.AuditorInput(
        claim=claim, source_excerpt=excerpt, judge_verdict=pb.ENTAILMENT_VERDICT_SUPPORTED, judge_confidence=80
    )
    data = _answer(pb.ENTAILMENT_AGENT_AUDITOR, given)
    if downgraded:
        assert data["final_verdict"] == "NOT ENOUGH INFO" and data["confidence_adjustment"] == -15
        assert data["auditor_reasoning"]
    else:
        assert data == {
            "agent": "ADVERSARIAL_AUDITOR",
            "final_verdict": "UNCHANGED",
            "confidence_adjustment": 0,
            "auditor_reasoning": [],
        }


def test_the_auditor_leaves_not_enough_info_alone():
    given = pb.AuditorInput(
        claim="All patients recovered.",
        source_excerpt="Many patients recovered.",
        judge_verdict=pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO,
        judge_confidence=50,
    )
    assert _answer(pb.ENTAILMENT_AGENT_AUDITOR, given)["final_verdict"] == "UNCHANGED"


def test_the_engine_refuses_other_calls():
    with pytest.raises(ValueError):
        engine.answer("You are a fact-checker.")
    with pytest.raises(
        InputsMissing, match="local/entailment cannot answer a plain prompt: it can only list a response's"
    ):
        engine.answer(None)


# --- the confidence calibration anchors-------------------------------------------------------------------

TOWER = (
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is about 330 metres tall. "
    "Parking nearby is expensive."
)
EXPLICIT, STRONG, PARTIAL, WEAK = (90, 100), (70, 89), (40, 69), (0, 39)
ANCHOR_CASES = [
    # (case, claim, excerpt, verdict, band)
    ("verbatim support", "The Eiffel Tower was completed in 1889.", TOWER, "SUPPORTED", EXPLICIT),
    ("verbatim across a pronoun", "The Eiffel Tower is about 330 metres tall.", TOWER, "SUPPORTED", EXPLICIT),
    ("date contradiction", "The Eiffel Tower was completed in 1925.", TOWER, "CONTRADICTED", EXPLICIT),
    ("figure contradiction", "The Eiffel Tower is about 500 metres tall.", TOWER, "CONTRADICTED", EXPLICIT),
    ("close paraphrase", "The iron Eiffel Tower was completed in 1889.", TOWER, "SUPPORTED", STRONG),
    (
        "qualified source",
        "The drug cures the disease.",
        "Early trials suggest the drug may cure the disease.",
        "SUPPORTED",
        PARTIAL,
    ),
    (
        "another figure, perhaps another event",
        "Arsenal won the league title in 1989.",
        "Arsenal won their seventh league title in the 1952-53 season.",
        "CONTRADICTED",
        STRONG,
    ),
    ("paraphrase by another verb", "The Eiffel Tower was finished in 1889.", TOWER, "SUPPORTED", STRONG),
    (
        "the opposite polarity",
        "The bridge is not open to cars.",
        "The bridge is open to cars.",
        "CONTRADICTED",
        EXPLICIT,
    ),
    # What the engine cannot tell from a weak match: a low-band NOT ENOUGH INFO, never a verdict with a low number.
    # Another figure for "it": nothing says it is the claim's museum, so nothing contradicts the claim.
    (
        "figure, subject unresolved",
        "The museum holds 9,000 paintings.",
        "It holds 4,000 paintings.",
        "NOT ENOUGH INFO",
        WEAK,
    ),
    (
        "partial: one clause of two",
        "The Eiffel Tower was completed in 1889 and won a prize in 1900.",
        TOWER,
        "NOT ENOUGH INFO",
        WEAK,
    ),
    ("unrelated, shares a name", "The Eiffel Tower has a moon base.", TOWER, "NOT ENOUGH INFO", WEAK),
    ("unrelated", "Volcanoes erupt lava.", TOWER, "NOT ENOUGH INFO", WEAK),
]


def _judge_on_the_extracted_statements(claim: str, excerpt: str) -> dict:
    given = pb.ExtractorInput(claim=claim, source_excerpt=excerpt)
    statements = _answer(pb.ENTAILMENT_AGENT_EXTRACTOR, given)["statements"]
    judge_input = pb.JudgeInput(claim=claim, statements=[pb.ExtractedStatement(**s) for s in statements])
    return _answer(pb.ENTAILMENT_AGENT_JUDGE, judge_input)


@pytest.mark.parametrize(
    ("case", "claim", "excerpt", "verdict", "band"), ANCHOR_CASES, ids=[c[0] for c in ANCHOR_CASES]
)
def test_the_judges_confidence_lies_in_the_anchor_band_of_the_textual_evidence(case, claim, excerpt, verdict, band):
    data = _judge_on_the_extracted_statements(claim, excerpt)
    assert data["verdict"] == verdict
    assert band[0] <= data["confidence"] <= band[1], data


@pytest.mark.parametrize("calibrated", [0, 1, 26, 47, 50, 99, 100])
@pytest.mark.parametrize("band", [EXPLICIT, STRONG, PARTIAL, WEAK])
def test_the_calibration_places_a_verdict_within_its_band_never_out_of_it(calibrated, band):
    assert band[0] <= engine.within_band(calibrated, band) <= band[1]
    assert engine.within_band(0, band) == band[0] and engine.within_band(100, band) == band[1]
