"""Answers a model wrote that cannot be read are named failures, never clean results.

The answers are the kind a small model writes (Gemma 3 270M through llama.cpp wrote each of
these): format placeholders instead of content, the content or the prompt echoed back, a report
without a score that invents claims. Every test runs through the real services (the shared suite,
processes on SQLite and PostgreSQL; the investigation in process) against the scripted fake model
server, and checks what the caller is told: the event stream, the stored result, `factcheck show`
and the HTML report.
"""

from __future__ import annotations

import io

import grpc
import pytest
from markupsafe import escape
from rich.console import Console

from factcheck.v1 import common_pb2, council_pb2, factcheck_pb2, factcheck_pb2_grpc, investigation_pb2
from factcheck_cli import html, render
from factcheck_gateway.modes.fact_check.steps import EXTRACTION_FAILED
from tests import conftest
from tests.conftest import CHECKERS, content_request, kinds, payload, run_events
from tests.fake_model_server import FakeModelServer, echo, extraction_content, reply, verdicts
from tests.inprocess import inprocess_settings, serve_everything

pytestmark = pytest.mark.e2e
# The session's shared suite (conftest.py), with its fake model server.
fake_models = conftest.shared_fake_models

# What Gemma 3 270M answered to the extraction prompt.
PLACEHOLDERS = "[value]\n[summary]"
UNREADABLE_VERIFICATION = "Checker did not address this claim (answer not in the required format)"


async def result_of(gateway, message_id: str) -> factcheck_pb2.FactCheckResult:
    return (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result


def shown(result: factcheck_pb2.FactCheckResult) -> str:
    """What `factcheck show` prints for the result."""
    output = io.StringIO()
    render.render_result(Console(file=output, width=400, color_system=None), result)
    return output.getvalue()


def causes(result: factcheck_pb2.FactCheckResult) -> dict[str, str]:
    return {failure.stage: f"{failure.code} {failure.message}" for failure in result.failures}


# --- extraction ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pipelined", [False, True], ids=["sequential", "pipelined"])
@pytest.mark.parametrize(
    "answer",
    [
        reply(PLACEHOLDERS),
        reply(extraction_content),  # the content echoed back (seen in pipelined mode)
        echo(),  # the prompt echoed back: its format example reads as a claim
    ],
    ids=["placeholders", "content-echoed", "prompt-echoed"],
)
async def test_an_unreadable_extraction_fails_the_run_with_its_cause(gateway, fake_models, answer, pipelined):
    fake_models.script("fake/extractor", answer)
    events = await run_events(gateway, content_request(pipelined=pipelined))
    assert kinds(events)[-1] == "error" and "report_complete" not in kinds(events)
    error = payload(events, "error")
    assert error.message == EXTRACTION_FAILED
    [failure] = error.failures
    assert (failure.stage, failure.model) == ("extract", "fake/extractor")
    assert "not in the claim format" in failure.message or "repeats the prompt" in failure.message

    result = await result_of(gateway, events[0].message_id)
    assert result.status == factcheck_pb2.MESSAGE_STATUS_FAILED
    assert causes(result)["extract"] == f"{failure.code} {failure.message}"
    assert failure.message in shown(result) and escape(failure.message) in html.render_page(result)
    assert "No verifiable claims" not in shown(result) + html.render_page(result)


async def test_a_well_formed_empty_extraction_is_still_no_verifiable_claims(gateway, fake_models):
    fake_models.script("fake/extractor", reply("EXTRACTION SUMMARY:\nTotal claims: 0\nBy type: none\n"))
    events = await run_events(gateway, content_request("I think autumn is the loveliest season."))
    assert kinds(events)[-1] == "complete"
    assert payload(events, "extract_complete").total_claims == 0
    assert payload(events, "report_complete").summary.note == "No verifiable claims identified"
    assert not (await result_of(gateway, events[0].message_id)).failures


# --- report ----------------------------------------------------------------------------------------------

# What the reporter answered: its prompt repeated, then claims it invented.
INVENTED = (
    "You are producing a fact-check report for the following content.\n\n"
    "CLAIM VERIFICATION RESULTS:\n"
    + "".join(f'CLAIM claim_{n}: "The tower is tall"\nCoerced: DISPUTED\n' for n in range(3, 15))
)


@pytest.mark.parametrize(
    "answer, reason",
    [
        (INVENTED, "repeats the prompt"),
        ("The content is about the Eiffel Tower. Everything looks right.", "no Overall Reliability Score"),
        (
            "# Fact-Check Report\n\n## Overall Reliability Score: 40\n\n"
            "CLAIM 3: Coerced: DISPUTED\nCLAIM 14: Coerced: DISPUTED\n",
            "claims that do not exist (claim_14)",  # the run has claims 1 to 3
        ),
    ],
    ids=["prompt-and-invented-claims", "no-score", "invented-claims"],
)
async def test_an_unreadable_report_gives_the_fallback_report_with_its_reason(gateway, fake_models, answer, reason):
    fake_models.script("fake/reporter", reply(answer))
    events = await run_events(gateway, content_request())
    assert kinds(events)[-1] == "complete"
    report = payload(events, "report_complete")
    assert report.fallback and reason in report.fallback_reason
    assert not report.HasField("reliability_score")
    assert "| claim_1 |" in report.report_text and "Coerced" not in report.report_text
    assert reason in report.report_text  # the table itself says why it stands in for the report

    result = await result_of(gateway, events[0].message_id)
    assert result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    assert result.report.fallback and result.report.fallback_reason == report.fallback_reason
    assert reason in causes(result)["report"]
    assert reason in shown(result) and escape(reason) in html.render_page(result)


async def test_a_readable_report_is_the_report(gateway, fake_models):
    events = await run_events(gateway, content_request())
    report = payload(events, "report_complete")
    assert not report.fallback and not report.fallback_reason and report.HasField("reliability_score")


# --- verification ----------------------------------------------------------------------------------------


async def test_an_unreadable_verification_is_not_addressed_for_want_of_the_format(gateway, fake_models):
    fake_models.script(CHECKERS[0], reply(PLACEHOLDERS))
    events = await run_events(gateway, content_request())
    assert kinds(events)[-1] == "complete"
    by_checker = {e.checker_complete.model: e.checker_complete for e in events if e.HasField("checker_complete")}
    unread = by_checker[CHECKERS[0]].verifications
    assert [(v.verdict, v.evidence) for v in unread] == [(common_pb2.VERDICT_UNVERIFIABLE, UNREADABLE_VERIFICATION)] * 3
    assert all(v.evidence != UNREADABLE_VERIFICATION for v in by_checker[CHECKERS[1]].verifications)

    result = await result_of(gateway, events[0].message_id)
    [stored] = [c for c in result.verification.checkers if c.model == CHECKERS[0]]
    assert {v.evidence for v in stored.verifications} == {UNREADABLE_VERIFICATION}
    assert causes(result)["verify_0"] == "UNREADABLE answer not in the required format for 3 of 3 claims"
    assert "answer not in the required format" in shown(result)


# --- council ---------------------------------------------------------------------------------------------

QUESTION = "When was the Eiffel Tower completed?"


async def test_a_council_answer_that_echoes_its_prompt_is_rejected(gateway, fake_models):
    fake_models.script("fake/alpha", reply("The Eiffel Tower was completed in 1889."))
    fake_models.script("fake/beta", echo())
    request = factcheck_pb2.RunRequest(
        question=QUESTION,
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(
            council_models=["fake/alpha", "fake/beta"], fact_checker_models=["fake/checker-x"]
        ),
    )
    events = await run_events(gateway, request)
    assert kinds(events)[-1] == "complete"
    [failed] = [e.response_failed for e in events if e.HasField("response_failed")]
    assert "repeats the prompt" in failed.message
    assert len([e for e in events if e.HasField("response_complete")]) == 1
    result = await result_of(gateway, events[0].message_id)
    assert any("repeats the prompt" in cause for cause in causes(result).values())


async def test_a_fact_checker_that_echoes_its_prompt_is_a_failed_fact_checker(gateway, fake_models):
    request = factcheck_pb2.RunRequest(
        question=QUESTION,
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(
            responses=[
                council_pb2.NamedResponse(name="one", text="The Eiffel Tower was completed in 1889."),
                council_pb2.NamedResponse(name="two", text="The Eiffel Tower was completed in 1899."),
            ],
            fact_checker_models=["fake/checker-x", "fake/echo"],
        ),
    )
    fake_models.script("fake/echo", echo())
    events = await run_events(gateway, request)
    assert kinds(events)[-1] == "complete"
    [failed] = [e.council_check_failed for e in events if e.HasField("council_check_failed")]
    assert failed.model == "fake/echo" and "repeats the prompt" in failed.message
    assert [e.council_check_complete.model for e in events if e.HasField("council_check_complete")] == [
        "fake/checker-x"
    ]


# --- investigation ---------------------------------------------------------------------------------------

INVESTIGATED = "The Golden Gate Bridge carried 112,000 vehicles per day in 2019."
BRIDGE = common_pb2.Source(
    id="ap-bridge",
    title="AP: Golden Gate Bridge traffic",
    url="https://apnews.com/article/golden-gate-bridge-traffic",
    text="The Golden Gate Bridge carried 112,000 vehicles per day in 2019, a bridge district spokesperson said.",
)


@pytest.fixture(scope="module")
def models():
    with FakeModelServer() as server:
        yield server


async def test_an_unreadable_assessment_is_not_blamed_on_the_evidence(models, database_url):
    models.reset()
    models.script("fake/checker-a", verdicts({"claim_1": "UNVERIFIABLE"}))
    models.script("fake/investigator", reply(PLACEHOLDERS))
    settings = inprocess_settings(models.base_url, database_url)
    request = factcheck_pb2.RunRequest(
        question="Fact-check this",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=INVESTIGATED,
            checker_models=["fake/checker-a"],
            investigate=True,
            investigator_model="fake/investigator",
            sources=[BRIDGE],
        ),
    )
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = await run_events(gateway, request)
        [outcome] = [e.claim_investigated for e in events if e.HasField("claim_investigated")]
        assert outcome.status == investigation_pb2.INVESTIGATION_STATUS_UNVERIFIABLE
        assert "no relevant evidence" not in outcome.reasoning
        assert "the assessment could not be read" in outcome.reasoning
        result = await result_of(gateway, events[0].message_id)
        [stored] = result.investigation.claims
        assert "the assessment could not be read" in stored.reasoning
