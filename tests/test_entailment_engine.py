"""local/entailment, the offline agents: each reads its own prompt (built by the checker's prompt
builders) and answers JSON that passes the agent's strict validation and rules."""

from __future__ import annotations

import json

import pytest

from factcheck.engines import entailment as engine
from factcheck.services.checker.entailment.prompts import (
    auditor_prompt,
    extractor_prompt,
    judge_prompt,
    reliability_prompt,
)
from factcheck.services.checker.entailment.rules import agent_output
from factcheck.v1 import entailment_pb2 as pb

EXCERPT = (
    "The museum opened in 1887 in the old customs house.\nIt holds about 4,000 paintings. Parking is free on Sundays."
)


def _answer(agent: pb.EntailmentAgent, prompt: str, given) -> dict:
    text = engine.answer(prompt)
    agent_output(agent, text, given)  # valid for the agent's schema and rules
    return json.loads(text)


def test_the_extractor_quotes_the_relevant_sentences_verbatim():
    given = pb.ExtractorInput(claim="The museum opened in 1887.", source_excerpt=EXCERPT)
    data = _answer(pb.ENTAILMENT_AGENT_EXTRACTOR, extractor_prompt(given), given)
    assert data["statements"] == [{"id": 1, "text": "The museum opened in 1887 in the old customs house."}]


def test_the_extractor_finds_nothing_in_an_unrelated_source():
    given = pb.ExtractorInput(claim="Volcanoes erupt lava.", source_excerpt=EXCERPT)
    assert _answer(pb.ENTAILMENT_AGENT_EXTRACTOR, extractor_prompt(given), given)["statements"] == []


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
    assert _answer(pb.ENTAILMENT_AGENT_RELIABILITY, reliability_prompt(given), given)["reliability"] == rating


def test_the_judge_answers_in_the_seeds_json_citing_its_statement():
    statements = [pb.ExtractedStatement(id=1, text="The museum opened in 1887 in the old customs house.")]
    given = pb.JudgeInput(claim="The museum opened in 1887.", statements=statements)
    data = _answer(pb.ENTAILMENT_AGENT_JUDGE, judge_prompt(given), given)
    assert data["verdict"] == "SUPPORTED" and data["reasoning"][0].startswith("Statement 1 ")
    assert 0 <= data["confidence"] <= 100


def test_the_judge_with_no_statements_is_not_enough_info():
    given = pb.JudgeInput(claim="The museum opened in 1887.")
    data = _answer(pb.ENTAILMENT_AGENT_JUDGE, judge_prompt(given), given)
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
    data = _answer(pb.ENTAILMENT_AGENT_AUDITOR, auditor_prompt(given), given)
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
    assert _answer(pb.ENTAILMENT_AGENT_AUDITOR, auditor_prompt(given), given)["final_verdict"] == "UNCHANGED"


def test_the_engine_refuses_other_prompts():
    with pytest.raises(ValueError):
        engine.answer("You are a fact-checker.")
