"""The four services as separate processes, over real gRPC, against the fake model server.

Every test runs on SQLite and on the real PostgreSQL: one suite per backend, shared with the
other end-to-end modules (conftest.py); the fake model server is reset between tests.
"""

from __future__ import annotations

import grpc
import pytest

from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import common_pb2, factcheck_pb2
from tests import conftest
from tests.conftest import CHECKERS, CONTENT, FULL_SEQUENCE, content_request, kinds, payload, run_events
from tests.fake_model_server import fail, raw_bytes, verdicts

pytestmark = pytest.mark.e2e
# The session's shared suite (conftest.py), with its fake model server.
fake_models = conftest.shared_fake_models


async def test_user_content_runs_the_full_sequence(gateway, store):
    events = await run_events(gateway, content_request())
    assert kinds(events) == FULL_SEQUENCE
    message_id = events[0].message_id
    assert all(event.message_id == message_id for event in events)
    assert [event.seq for event in events] == list(range(1, len(events) + 1))
    assert all(event.timestamp.seconds > 0 for event in events)

    start = payload(events, "factcheck_start")
    assert start.message_id == message_id and start.conversation_id
    assert start.config.content_source == factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED
    assert not start.config.HasField("generator_model") and not start.config.HasField("bias_warning")
    assert (start.config.extractor_model, list(start.config.checker_models), start.config.reporter_model) == (
        "fake/extractor",
        CHECKERS,
        "fake/reporter",
    )
    assert (start.config.max_content_length, start.config.timeout_ms) == (20_000, 120_000)

    extracted = payload(events, "extract_complete")
    assert extracted.model == "fake/extractor" and extracted.total_claims == 3
    assert [c.id for c in extracted.claims] == ["claim_1", "claim_2", "claim_3"]
    assert dict(extracted.type_breakdown) == {"STATISTIC": 1, "DATE": 1, "TECHNICAL": 1}
    assert not extracted.content_truncated
    claim = extracted.claims[0]
    assert CONTENT[claim.start_offset : claim.end_offset] == claim.claim

    verify_start = payload(events, "verify_start")
    assert (verify_start.checker_count, verify_start.claim_count) == (2, 3)
    checkers = [e.checker_complete for e in events if e.WhichOneof("event") == "checker_complete"]
    assert sorted(c.model for c in checkers) == CHECKERS
    assert sorted(c.checker_index for c in checkers) == [0, 1]
    for checker in checkers:
        assert [v.verdict for v in checker.verifications] == [common_pb2.VERDICT_VERIFIED] * 3
        assert (checker.summary.verified, checker.summary.disputed, checker.summary.unverifiable) == (3, 0, 0)

    consensus = payload(events, "all_checkers_complete")
    assert consensus.checker_count == 2 and not consensus.failed_checkers
    assert [c.claim_id for c in consensus.consensus] == ["claim_1", "claim_2", "claim_3"]
    for item in consensus.consensus:
        assert item.consensus_verdict == common_pb2.VERDICT_VERIFIED
        assert item.agreement_rate == 100.0 and item.consensus_confidence == common_pb2.CONFIDENCE_HIGH
        assert [v.checker_model for v in item.verdicts] == CHECKERS

    report = payload(events, "report_complete")
    assert report.model == "fake/reporter" and report.reliability_score == 85 and not report.fallback
    assert (report.summary.verified, report.summary.disputed, report.summary.unverifiable) == (3, 0, 0)
    assert report.report_text.startswith("# Fact-Check Report")
    assert payload(events, "title_complete").title == "Fact-check of the supplied content"
    assert payload(events, "complete").status == factcheck_pb2.MESSAGE_STATUS_COMPLETE

    rows = store.get_stages(message_id)
    assert [(r.stage_type, r.stage_order, r.role) for r in rows] == [
        ("extract", 1, "extractor"),
        *sorted([("verify_0", 10, "checker"), ("verify_1", 11, "checker")]),
        ("report", 99, "reporter"),
    ]
    assert [r.model for r in rows] == ["fake/extractor", *CHECKERS, "fake/reporter"]
    assert rows[0].parsed_data["totalClaims"] == 3 and rows[0].content.startswith("CLAIM 1:")
    assert rows[1].parsed_data["summary"] == {"verified": 3, "disputed": 0, "unverifiable": 0}
    assert rows[3].parsed_data["reliabilityScore"] == 85 and rows[3].parsed_data["checkerCount"] == 2
    message = store.get_message(message_id, tenant_id=DEFAULT_TENANT)
    assert (message.status, message.title) == ("COMPLETE", "Fact-check of the supplied content")
    assert message.request_config["contentToCheck"] == CONTENT

    # GetResult rebuilds the same result from the rows.
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert result.message_id == message_id and result.conversation_id == start.conversation_id
    assert result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    assert result.title == "Fact-check of the supplied content"
    assert result.content.source == factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED and result.content.text == CONTENT
    assert list(result.extraction.claims) == list(extracted.claims)
    assert dict(result.extraction.type_breakdown) == dict(extracted.type_breakdown)
    assert list(result.verification.consensus) == list(consensus.consensus)
    assert sorted(c.model for c in result.verification.checkers) == CHECKERS
    streamed = {c.model: list(c.verifications) for c in checkers}
    assert {c.model: list(c.verifications) for c in result.verification.checkers} == streamed
    assert result.report.reliability_score == 85 and result.report.report_text == report.report_text


async def test_a_question_is_answered_by_the_generator_first(gateway, store, fake_models):
    request = factcheck_pb2.RunRequest(
        question="Tell me about the Eiffel Tower",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(generator_model="fake/checker-a"),
    )
    events = await run_events(gateway, request)
    assert kinds(events) == FULL_SEQUENCE[:1] + ["generate_start", "generate_complete"] + FULL_SEQUENCE[1:]
    start = payload(events, "factcheck_start")
    assert start.config.content_source == factcheck_pb2.CONTENT_SOURCE_GENERATED
    assert start.config.generator_model == "fake/checker-a"
    assert start.config.bias_warning == (
        "Generator and checker share model — results may be biased toward confirming generated content."
    )
    generated = payload(events, "generate_complete")
    assert generated.model == "fake/checker-a" and "Eiffel Tower" in generated.content
    assert not generated.fallback_to_question
    assert payload(events, "extract_complete").total_claims == 4

    rows = store.get_stages(events[0].message_id)
    assert (rows[0].stage_type, rows[0].stage_order, rows[0].content) == ("generate", 0, generated.content)
    assert rows[0].parsed_data["inputQuestion"] == "Tell me about the Eiffel Tower"
    assert rows[0].parsed_data["contentSource"] == "generated"
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    assert result.content.source == factcheck_pb2.CONTENT_SOURCE_GENERATED
    assert (result.content.model, result.content.text) == ("fake/checker-a", generated.content)


async def test_a_question_alone_uses_the_default_generator(gateway):
    request = factcheck_pb2.RunRequest(question="Tell me about the Eiffel Tower", mode=factcheck_pb2.MODE_FACT_CHECK)
    events = await run_events(gateway, request)
    assert payload(events, "factcheck_start").config.generator_model == "fake/generator"
    assert payload(events, "generate_complete").model == "fake/generator"
    assert kinds(events)[-1] == "complete"


async def test_no_claims_skips_verification(gateway, store, fake_models):
    events = await run_events(gateway, content_request("123 456. 789!"))
    assert kinds(events) == [
        "factcheck_start",
        "extract_start",
        "extract_complete",
        "report_start",
        "report_complete",
        "title_complete",
        "complete",
    ]
    assert payload(events, "extract_complete").total_claims == 0
    report = payload(events, "report_complete")
    assert not report.HasField("reliability_score")
    assert (report.summary.verified, report.summary.disputed, report.summary.unverifiable) == (0, 0, 0)
    assert report.summary.note == "No verifiable claims identified"
    # No checker, no report model call; the title call overlaps the extraction.
    assert sorted(r.kind for r in fake_models.requests) == ["extract", "title"]
    rows = store.get_stages(events[0].message_id)
    assert [r.stage_type for r in rows] == ["extract", "report"]
    assert rows[1].parsed_data["reliabilityScore"] is None
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    assert not result.report.HasField("reliability_score") and not result.verification.consensus


async def test_an_even_split_is_disputed_with_low_confidence(gateway, fake_models):
    fake_models.script("fake/checker-a", verdicts({"claim_1": "DISPUTED"}, correction="Signed in 2016."))
    events = await run_events(gateway, content_request())
    first = payload(events, "all_checkers_complete").consensus[0]
    assert first.consensus_verdict == common_pb2.VERDICT_DISPUTED
    assert first.consensus_confidence == common_pb2.CONFIDENCE_LOW
    assert first.agreement_rate == 50.0 and first.correction == "Signed in 2016."
    assert payload(events, "report_complete").summary.disputed == 1


async def test_one_failing_checker_leaves_the_others(gateway, store, fake_models):
    fake_models.script("fake/checker-b", fail(500))
    events = await run_events(gateway, content_request())
    assert kinds(events).count("checker_complete") == 1
    done = payload(events, "all_checkers_complete")
    assert done.checker_count == 1
    assert [(f.model, f.checker_index) for f in done.failed_checkers] == [("fake/checker-b", 1)]
    assert kinds(events)[-1] == "complete"
    report_row = store.get_stages(events[0].message_id)[-1]
    assert report_row.parsed_data["checkerCount"] == 1
    assert report_row.parsed_data["failedCheckers"] == ["fake/checker-b"]


async def test_all_checkers_failing_is_an_error_after_the_extraction_is_saved(gateway, store, fake_models):
    for model in CHECKERS:
        fake_models.script(model, fail(500))
    events = await run_events(gateway, content_request())
    assert kinds(events)[-1] == "error"
    assert payload(events, "error").message == "All verification checkers failed."
    assert [r.stage_type for r in store.get_stages(events[0].message_id)] == ["extract"]
    assert store.get_message(events[0].message_id, tenant_id=DEFAULT_TENANT).status == "FAILED"


async def test_extraction_failure_is_fatal_and_keeps_the_generated_content(gateway, store, fake_models):
    fake_models.script("fake/extractor", fail(500))
    request = factcheck_pb2.RunRequest(
        question="Tell me about the Eiffel Tower",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(generator_model="fake/generator"),
    )
    events = await run_events(gateway, request)
    assert kinds(events) == ["factcheck_start", "generate_start", "generate_complete", "extract_start", "error"]
    assert payload(events, "error").message == "Claim extraction failed. Cannot proceed with verification."
    assert [r.stage_type for r in store.get_stages(events[0].message_id)] == ["generate"]
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    assert result.status == factcheck_pb2.MESSAGE_STATUS_FAILED
    assert result.content.text == payload(events, "generate_complete").content


async def test_reporter_failure_gives_the_fallback_table(gateway, store, fake_models):
    fake_models.script("fake/reporter", fail(500))
    events = await run_events(gateway, content_request())
    report = payload(events, "report_complete")
    assert report.fallback and not report.HasField("reliability_score")
    assert "| claim_1 |" in report.report_text
    assert store.get_stages(events[0].message_id)[-1].parsed_data["fallback"] is True
    assert kinds(events)[-2:] == ["title_complete", "complete"]


async def test_model_text_with_nul_and_lone_surrogates_is_stored_on_every_backend(gateway, store, fake_models):
    # PostgreSQL refuses NUL in text and nothing encodes a lone surrogate: the model client
    # replaces both before any service, event or row sees the text.
    body = (
        '{"choices":[{"message":{"content":"VERIFICATION claim_1: DISPUTED\\u0000 \\ud800\\n'
        'Evidence: bad \\udfff bytes\\u001b[2J\\nCorrection: x\\nConfidence: HIGH"}}]}'
    ).encode()
    fake_models.script(CHECKERS[0], raw_bytes(body))
    events = await run_events(gateway, content_request())
    assert kinds(events)[-1] == "complete"
    checker = next(e.checker_complete for e in events if e.checker_complete.model == CHECKERS[0])
    assert checker.verifications[0].verdict == common_pb2.VERDICT_DISPUTED
    assert checker.verifications[0].evidence == "bad \ufffd bytes\ufffd[2J"
    row = next(r for r in store.get_stages(events[0].message_id) if r.model == CHECKERS[0])
    assert row.content.startswith("VERIFICATION claim_1: DISPUTED\ufffd \ufffd\n")


async def test_get_result_of_an_unknown_id_is_not_found(gateway):
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id="no-such-run"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


async def test_list_results_pages_newest_first(gateway):
    ids = []
    for _ in range(3):
        events = await run_events(gateway, content_request())
        ids.append(events[0].message_id)
    first = await gateway.ListResults(factcheck_pb2.ListResultsRequest(page_size=2))
    assert [r.message_id for r in first.results] == ids[::-1][:2]
    assert first.next_page_token
    second = await gateway.ListResults(factcheck_pb2.ListResultsRequest(page_size=2, page_token=first.next_page_token))
    assert second.results[0].message_id == ids[0]
    assert first.results[0].status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    assert first.results[0].question == "Fact-check this paragraph"
    assert first.results[0].title == "Fact-check of the supplied content"


@pytest.mark.parametrize(
    "request_message, message",
    [
        (factcheck_pb2.ListResultsRequest(page_size=-1), "page_size must not be negative (got -1)"),
        (factcheck_pb2.ListResultsRequest(page_token="not-a-token"), "page_token"),
    ],
)
async def test_list_results_rejects_bad_paging(gateway, request_message, message):
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await gateway.ListResults(request_message)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (raised.value.details() or "")


async def test_invalid_requests_fail_before_any_event(gateway, fake_models):
    request = factcheck_pb2.RunRequest(
        question="q", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=factcheck_pb2.FactCheckConfig()
    )
    call = gateway.Run(request)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        async for _ in call:
            pytest.fail("no event may be sent for an invalid request")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "Either contentToCheck or generatorModel must be provided" in (raised.value.details() or "")
    assert fake_models.requests == []
