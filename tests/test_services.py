"""Extractor, checker and reporter over a real gRPC channel, against the fake model server."""

from __future__ import annotations

import grpc
import pytest

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import new_server
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    common_pb2,
    extractor_pb2,
    extractor_pb2_grpc,
    reporter_pb2,
    reporter_pb2_grpc,
)
from factcheck_checker.checker_service import CheckerService
from factcheck_extractor.extractor_service import ExtractorService
from factcheck_reporter.report import clean_title
from factcheck_reporter.reporter_service import ReporterService
from tests.fake_model_server import FakeModelServer, delay, fail, hang, reply, verdicts

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude."
)


@pytest.fixture
def fake_models():
    with FakeModelServer() as server:
        yield server


def _settings(**overrides) -> Settings:
    values = dict(model_backoff_base_s=0.01, model_max_retries=2, stage_timeout_ms=10_000)
    return Settings(**{**values, **overrides})


@pytest.fixture
async def channel(fake_models):
    """The three stateless services on one in-process gRPC server (a real loopback port)."""
    settings = _settings(model_base_url=fake_models.base_url)
    client = ModelClient(settings)
    server = new_server(settings)
    extractor_pb2_grpc.add_ExtractorServiceServicer_to_server(ExtractorService(client, settings), server)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    reporter_pb2_grpc.add_ReporterServiceServicer_to_server(ReporterService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield channel
    await server.stop(None)
    await client.aclose()


@pytest.fixture
def extractor(channel):
    return extractor_pb2_grpc.ExtractorServiceStub(channel)


@pytest.fixture
def checker(channel):
    return checker_pb2_grpc.CheckerServiceStub(channel)


@pytest.fixture
def reporter(channel):
    return reporter_pb2_grpc.ReporterServiceStub(channel)


async def _status_of(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return raised.value.code(), raised.value.details() or ""


# --- ExtractorService ------------------------------------------------------------------


async def test_generate_answers_with_the_spec_prompt(extractor, fake_models):
    response = await extractor.Generate(
        extractor_pb2.GenerateRequest(model="fake/gen", question="Tell me about the Eiffel Tower")
    )
    assert response.model == "fake/gen"
    assert "Eiffel Tower" in response.content
    assert response.usage.total_tokens > 0
    [request] = fake_models.requests
    assert request.kind == "generate" and request.model == "fake/gen"
    assert "QUESTION:\nTell me about the Eiffel Tower\n" in request.prompt


async def test_extract_parses_locates_and_counts_claims(extractor):
    response = await extractor.Extract(extractor_pb2.ExtractRequest(model="fake/ext", content=CONTENT))
    assert [claim.id for claim in response.claims] == ["claim_1", "claim_2", "claim_3"]
    assert response.total_claims == 3
    assert dict(response.type_breakdown) == {"STATISTIC": 1, "DATE": 1, "TECHNICAL": 1}
    first = response.claims[0]
    assert first.type == common_pb2.CLAIM_TYPE_DATE
    assert CONTENT[first.start_offset : first.end_offset] == first.claim
    assert response.content == CONTENT and not response.content_truncated
    assert response.raw_text.startswith("CLAIM 1:")


async def test_extract_truncates_long_content_with_the_spec_note(extractor, fake_models):
    long_content = "The Moon orbits the Earth. " * 100
    response = await extractor.Extract(
        extractor_pb2.ExtractRequest(model="fake/ext", content=long_content, max_content_length=500)
    )
    assert response.content_truncated
    assert response.content.startswith(long_content[:500])
    assert response.content.endswith(
        "[Content truncated to 500 characters. Claims beyond this point were not analyzed.]"
    )
    # The note is for the reader and the report: the extractor model never sees it.
    prompt = fake_models.requests[0].prompt
    assert "Content truncated" not in prompt and "CONTENT:\n" + long_content[:500] + "\n" in prompt


async def test_the_truncation_note_never_becomes_claims(extractor, fake_models):
    # The case: a 32,000-character text, cut to the default 20,000. The fake extractor
    # makes one claim per sentence of what it is shown.
    sentence = "The Moon orbits the Earth every 27 days. "
    long_content = sentence * (32_000 // len(sentence) + 1)
    response = await extractor.Extract(extractor_pb2.ExtractRequest(model="fake/ext", content=long_content))
    assert response.content_truncated and len(long_content) > 32_000
    assert response.content.endswith(
        "[Content truncated to 20000 characters. Claims beyond this point were not analyzed.]"
    )
    assert response.claims and all(
        "truncated" not in claim.claim and "not analyzed" not in claim.claim for claim in response.claims
    )
    for claim in response.claims:
        assert response.content[claim.start_offset : claim.end_offset] == claim.claim


async def test_extract_removes_exact_duplicates(extractor, fake_models):
    duplicated = (
        "CLAIM 1: Water boils at 100 C\nContext: Water boils at 100 C at sea level.\nType: STATISTIC\n\n"
        "CLAIM 2: Water boils at 100 C\nContext: again\nType: STATISTIC\n\n"
        "CLAIM 3: Ice melts at 0 C\nContext: Ice melts at 0 C.\nType: STATISTIC\n"
    )
    fake_models.script("fake/dup", reply(duplicated))
    response = await extractor.Extract(extractor_pb2.ExtractRequest(model="fake/dup", content="Water boils at 100 C."))
    assert [(c.id, c.claim) for c in response.claims] == [
        ("claim_1", "Water boils at 100 C"),
        ("claim_2", "Ice melts at 0 C"),
    ]
    assert response.claims[0].HasField("start_offset")
    assert not response.claims[1].HasField("start_offset")  # not in the content


@pytest.mark.parametrize(
    "request_message, expected",
    [
        (extractor_pb2.ExtractRequest(model="fake/ext", content="  "), "content is required"),
        (extractor_pb2.ExtractRequest(model="no-provider", content="x"), "provider/name"),
        (extractor_pb2.ExtractRequest(model="fake/ext", content="x", max_content_length=-1), "negative"),
    ],
)
async def test_extract_rejects_bad_requests(extractor, request_message, expected):
    code, details = await _status_of(extractor.Extract(request_message))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in details


async def test_generate_rejects_an_empty_question(extractor):
    code, details = await _status_of(extractor.Generate(extractor_pb2.GenerateRequest(model="fake/gen", question=" ")))
    assert (code, details) == (grpc.StatusCode.INVALID_ARGUMENT, "question is required")


async def test_rate_limits_are_retried_then_succeed(extractor, fake_models):
    fake_models.script("fake/busy", fail(429, retry_after=0.05), fail(503), reply("Generated text."))
    response = await extractor.Generate(extractor_pb2.GenerateRequest(model="fake/busy", question="q"))
    assert response.content == "Generated text."
    assert len(fake_models.requests_for("fake/busy")) == 3


@pytest.mark.parametrize(
    "behaviour, code",
    [
        (fail(500), grpc.StatusCode.UNAVAILABLE),
        (fail(429), grpc.StatusCode.RESOURCE_EXHAUSTED),
        (fail(401, body={"error": {"message": "bad key"}}), grpc.StatusCode.UNAVAILABLE),
    ],
)
async def test_model_failures_map_to_grpc_codes(extractor, fake_models, behaviour, code):
    fake_models.script("fake/broken", behaviour)
    got, details = await _status_of(extractor.Extract(extractor_pb2.ExtractRequest(model="fake/broken", content="x")))
    assert got == code
    assert "fake/broken" in details


async def test_the_callers_deadline_bounds_the_model_call(extractor, fake_models):
    fake_models.script("fake/slow", hang())
    code, _ = await _status_of(
        extractor.Extract(extractor_pb2.ExtractRequest(model="fake/slow", content="x"), timeout=1.0)
    )
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_a_model_without_an_endpoint_is_a_failed_precondition():
    settings = _settings(model_base_url=None)
    client = ModelClient(settings)
    server = new_server(settings)
    extractor_pb2_grpc.add_ExtractorServiceServicer_to_server(ExtractorService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = extractor_pb2_grpc.ExtractorServiceStub(channel)
            code, details = await _status_of(
                stub.Generate(extractor_pb2.GenerateRequest(model="openai/o3", question="q"))
            )
    finally:
        await server.stop(None)
        await client.aclose()
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "FACTCHECK_MODEL_BASE_URL" in details


# --- CheckerService --------------------------------------------------------------------


def _claims() -> list[common_pb2.Claim]:
    return [
        ExtractedClaim("claim_1", "The Paris Agreement was signed in 2015", "ctx", "DATE").to_proto(),
        ExtractedClaim("claim_2", "196 countries signed it", "ctx", "STATISTIC").to_proto(),
        ExtractedClaim("claim_3", "Water boils at lower temperatures at altitude", "ctx", "TECHNICAL").to_proto(),
    ]


async def test_verify_parses_every_claims_verdict(checker, fake_models):
    fake_models.script(
        "fake/checker",
        verdicts({"claim_2": "DISPUTED"}, correction="195 countries signed it.", confidence={"claim_2": "MEDIUM"}),
    )
    response = await checker.Verify(checker_pb2.VerifyRequest(model="fake/checker", content=CONTENT, claims=_claims()))
    got = [ClaimVerification.from_proto(v) for v in response.verifications]
    assert [(v.claim_id, v.verdict, v.confidence) for v in got] == [
        ("claim_1", "VERIFIED", "HIGH"),
        ("claim_2", "DISPUTED", "MEDIUM"),
        ("claim_3", "VERIFIED", "HIGH"),
    ]
    assert got[1].correction == "195 countries signed it."
    assert got[0].correction is None
    assert all(v.checker_model == "fake/checker" for v in got)
    assert (response.summary.verified, response.summary.disputed, response.summary.unverifiable) == (2, 1, 0)
    prompt = fake_models.requests[0].prompt
    assert "CLAIM claim_2: 196 countries signed it\nContext: ctx\nType: STATISTIC" in prompt


async def test_verify_treats_missing_verdicts_as_unverifiable(checker, fake_models):
    fake_models.script(
        "fake/partial",
        reply(
            "VERIFICATION claim_1: VERIFIED\nEvidence: ok\nCorrection: N/A\nConfidence: HIGH\n"
            "VERIFICATION claim_9: DISPUTED\nEvidence: wrong id\nCorrection: x\nConfidence: LOW\n"
        ),
    )
    response = await checker.Verify(checker_pb2.VerifyRequest(model="fake/partial", content=CONTENT, claims=_claims()))
    got = [ClaimVerification.from_proto(v) for v in response.verifications]
    assert [v.verdict for v in got] == ["VERIFIED", "UNVERIFIABLE", "UNVERIFIABLE"]
    assert got[1].evidence == "Checker did not address this claim"
    assert response.summary.unverifiable == 2


@pytest.mark.parametrize(
    "claims, expected",
    [
        ([], "claims must not be empty"),
        ([common_pb2.Claim(id="claim_1", claim="x", type=99)], "claims[0].type"),  # type: ignore[arg-type]  # an unknown number (proto3 keeps them; the .pyi admit members only)
        (
            [
                common_pb2.Claim(id="claim_1", claim="x", type=common_pb2.CLAIM_TYPE_STATISTIC),
                common_pb2.Claim(id="claim_1", claim="y", type=common_pb2.CLAIM_TYPE_STATISTIC),
            ],
            "unique",
        ),
        ([common_pb2.Claim(id="", claim="x", type=common_pb2.CLAIM_TYPE_STATISTIC)], "id"),
    ],
)
async def test_verify_rejects_bad_requests(checker, claims, expected):
    code, details = await _status_of(
        checker.Verify(checker_pb2.VerifyRequest(model="fake/c", content="c", claims=claims))
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert expected in details


# --- ReporterService -------------------------------------------------------------------


def _consensus() -> list[common_pb2.ClaimConsensus]:
    verification = ClaimVerification("claim_1", "DISPUTED", "It was 2016.", "Signed in 2016.", "HIGH", "fake/checker")
    return [
        ClaimConsensus(
            "claim_1", "Signed in 2015", "ctx", "DATE", (verification,), "DISPUTED", "HIGH", 100.0, "Signed in 2016."
        ).to_proto()
    ]


async def test_report_reads_the_score_and_counts(reporter, fake_models):
    response = await reporter.Report(
        reporter_pb2.ReportRequest(
            model="fake/rep",
            content=CONTENT,
            consensus=_consensus(),
            total_claims=1,
            checker_count=1,
            extractor_model="fake/ext",
            checker_models=["fake/checker"],
        )
    )
    assert response.reliability_score == 85
    assert not response.fallback
    assert response.summary.disputed == 1
    assert response.note == "Limited number of verifiable claims."
    assert response.average_agreement_rate == 100.0
    prompt = fake_models.requests[0].prompt
    assert 'CLAIM claim_1: "Signed in 2015"' in prompt
    assert "Consensus Correction: Signed in 2016." in prompt
    assert "- Claims extracted by: fake/ext" in prompt


async def test_report_falls_back_to_the_consensus_table_when_the_model_fails(reporter, fake_models):
    fake_models.script("fake/rep", fail(500))
    response = await reporter.Report(
        reporter_pb2.ReportRequest(model="fake/rep", content=CONTENT, consensus=_consensus(), checker_count=1)
    )
    assert response.fallback
    assert not response.HasField("reliability_score")
    assert "| claim_1 |" in response.report_text or "Signed in 2015" in response.report_text
    assert "DISPUTED" in response.report_text and "Signed in 2016." in response.report_text


async def test_report_with_no_claims_needs_no_model(reporter, fake_models):
    response = await reporter.Report(reporter_pb2.ReportRequest(model="fake/rep", content=CONTENT))
    assert response.report_text == "No verifiable factual claims were identified in this content."
    assert response.note == "No verifiable claims identified"
    assert not response.HasField("reliability_score")
    assert fake_models.requests == []


async def test_title_is_cleaned(reporter, fake_models):
    fake_models.script("fake/rep", reply('## Title: "**The Paris Agreement, checked**"\nmore text'))
    response = await reporter.Title(reporter_pb2.TitleRequest(model="fake/rep", question="q", content=CONTENT))
    assert response.title == "The Paris Agreement, checked"


async def test_title_falls_back_to_the_question_when_the_model_fails(reporter, fake_models):
    fake_models.script("fake/rep", delay(0.01, fail(500)))
    response = await reporter.Title(
        reporter_pb2.TitleRequest(model="fake/rep", question="Is the Paris Agreement from 2015?", content=CONTENT)
    )
    assert response.title == "Is the Paris Agreement from 2015?"


async def test_a_bare_instruction_is_not_titled_the_content_is(reporter, fake_models):
    """Once, "Fact-check this content" as the question gave "Fact-check: Fact-check this content"."""
    fake_models.script("fake/rep", fail(500))
    response = await reporter.Title(
        reporter_pb2.TitleRequest(model="fake/rep", question="Fact-check this content", content=CONTENT)
    )
    assert "Fact-check this content" not in response.title and response.title == clean_title(CONTENT, "-")
    fake_models.script("fake/rep", reply("The Paris Agreement"))
    await reporter.Title(
        reporter_pb2.TitleRequest(model="fake/rep", question="Fact-check this content", content=CONTENT)
    )
    [request] = fake_models.requests[-1:]
    assert "Fact-check this content" not in request.prompt and CONTENT[:40] in request.prompt


async def test_report_rejects_unknown_verdicts(reporter):
    bad = common_pb2.ClaimConsensus(
        claim_id="claim_1",
        claim="x",
        type=common_pb2.CLAIM_TYPE_STATISTIC,
        consensus_verdict=42,  # type: ignore[arg-type]  # an unknown number (proto3 keeps them; the .pyi admit members only)
    )
    code, details = await _status_of(reporter.Report(reporter_pb2.ReportRequest(model="fake/rep", consensus=[bad])))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "consensus_verdict" in details
