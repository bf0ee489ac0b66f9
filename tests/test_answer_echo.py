"""The readability rules on their own: the shared echo check, the well-formed empty extraction and what
a report must hold (the end-to-end behaviour is in test_unreadable_answers_e2e.py)."""

from __future__ import annotations

import pytest

from factcheck.core.domain import ClaimConsensus, ClaimVerification
from factcheck.text.answer_echo import instruction_lines, repeats_prompt
from factcheck.v1 import council_pb2
from factcheck_checker.council_prompts import COUNCIL_CHECK_INSTRUCTIONS, build_council_check_prompt
from factcheck_extractor.claims import says_no_claims
from factcheck_extractor.extraction_prompts import (
    EXTRACTION_INSTRUCTIONS,
    GENERATE_INSTRUCTIONS,
    build_extraction_prompt,
    build_generate_prompt,
)
from factcheck_reporter.report import parse_reliability_score, report_problem
from factcheck_reporter.report_prompts import REPORT_INSTRUCTIONS, build_report_prompt
from tests.fake_model_server import council_answer, report_text
from tests.test_parsers import SPEC_EXTRACTION

QUESTION = "When was the Eiffel Tower completed?"
CONTENT = "The Eiffel Tower was completed in 1889. It is 330 metres tall."


def test_instruction_lines_keep_the_fixed_text_of_a_template():
    template = "Answer the question below, briefly.\nQUESTION:\n{question}\n{x}Reply now with the whole answer:"
    # Each line without its fields; short ones ("QUESTION:") are headings an answer may repeat.
    assert instruction_lines(template) == ("answerthequestionbelowbriefly", "replynowwiththewholeanswer")


def test_a_generated_answer_that_repeats_its_prompt_is_an_echo():
    prompt = build_generate_prompt(QUESTION)
    assert repeats_prompt(prompt, GENERATE_INSTRUCTIONS, QUESTION)
    assert repeats_prompt("Sure!\n" + prompt.upper() + "\nThe tower opened in 1889.", GENERATE_INSTRUCTIONS, QUESTION)
    assert not repeats_prompt(CONTENT, GENERATE_INSTRUCTIONS, QUESTION)
    assert not repeats_prompt(f"{QUESTION}\n{CONTENT}", GENERATE_INSTRUCTIONS, QUESTION)  # restating the question


def test_quoting_the_content_is_not_an_echo_even_when_the_content_holds_the_instructions():
    content = build_extraction_prompt("The Moon orbits the Earth.")  # someone fact-checks a prompt
    assert not repeats_prompt(content, EXTRACTION_INSTRUCTIONS, content)
    assert repeats_prompt(build_extraction_prompt(CONTENT), EXTRACTION_INSTRUCTIONS, CONTENT)
    assert not repeats_prompt(SPEC_EXTRACTION, EXTRACTION_INSTRUCTIONS, CONTENT)


def test_a_council_fact_check_that_repeats_its_prompt_is_an_echo_and_a_real_one_is_not():
    responses = [council_pb2.LabelledResponse(label="Response A", text=CONTENT)]
    prompt = build_council_check_prompt(QUESTION, responses)
    assert repeats_prompt(prompt, COUNCIL_CHECK_INSTRUCTIONS, CONTENT)
    answer = council_answer({"Response A": "ACCURATE"}, "Response A")
    assert not repeats_prompt(answer, COUNCIL_CHECK_INSTRUCTIONS, CONTENT)


@pytest.mark.parametrize(
    "answer",
    [
        "EXTRACTION SUMMARY:\nTotal claims: 0\nBy type: none",
        "No verifiable claims found.",
        "**There are no factual claims** in this opinion piece.",
        "Total claims: **0**",
    ],
)
def test_the_well_formed_empty_extraction(answer):
    assert says_no_claims(answer, CONTENT)


@pytest.mark.parametrize(
    "answer, content",
    [
        ("[value]\n[summary]", CONTENT),
        ("", CONTENT),
        (CONTENT, CONTENT),  # the content echoed
        ("> Total claims: 0", CONTENT),  # quoted: not the model's own line
        ("No verifiable claims here, says the author.", "No verifiable claims here, says the author."),
        ("EXTRACTION SUMMARY:\nTotal claims: 3", CONTENT),
    ],
)
def test_answers_that_are_not_the_empty_extraction(answer, content):
    assert not says_no_claims(answer, content)


def consensus(count: int) -> list[ClaimConsensus]:
    items = []
    for n in range(1, count + 1):
        verification = ClaimVerification(f"claim_{n}", "VERIFIED", "Documented.", None, "HIGH", "fake/checker")
        items.append(
            ClaimConsensus(f"claim_{n}", f"Claim {n}.", "ctx", "DATE", (verification,), "VERIFIED", "HIGH", 100.0, None)
        )
    return items


def report_prompt(count: int, content: str = CONTENT) -> str:
    return build_report_prompt(
        content,
        consensus(count),
        total_claims=count,
        checker_count=1,
        extractor_model="fake/extractor",
        checker_models=["fake/checker"],
        reporter_model="fake/reporter",
    )


def problem(text: str, count: int = 2, content: str = CONTENT) -> str | None:
    ids = [f"claim_{n}" for n in range(1, count + 1)]
    return report_problem(text, parse_reliability_score(text, content), ids, REPORT_INSTRUCTIONS, content)


def test_a_well_formed_report_is_readable():
    assert problem(report_text(report_prompt(2))) is None


def test_a_report_is_unreadable_without_a_score_with_invented_claims_or_as_its_prompt():
    assert problem("Everything checks out.") == "the report has no Overall Reliability Score"
    assert problem("## Overall Reliability Score: 70\nCLAIM 3: Coerced: DISPUTED\nclaim_12 too") == (
        "the report names claims that do not exist (claim_3, claim_12)"
    )
    assert problem(report_prompt(2)) == "the answer repeats the prompt instead of answering it"


def test_claim_numbers_the_content_names_are_not_invented():
    content = "Patent claim 7 covers the hinge."
    assert (
        problem("## Overall Reliability Score: 60\nThe content cites claim 7 of the patent.", content=content) is None
    )
