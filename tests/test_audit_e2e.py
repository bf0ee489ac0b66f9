"""The audit of every checker's answer, through the services (processes, SQLite and PostgreSQL): a scripted
checker that fabricates quotes and vouches for details its passages do not state on some claims and answers
faithfully on others; the built-in checker on the same claims; the verification cache; the Claims API; a
gateway started afresh on the same database, with the audit turned off."""

from __future__ import annotations

import grpc
import pytest

from factcheck.core.audit import AUDITED, DISABLED, FABRICATED_QUOTE, NO_PASSAGES, UNSUPPORTED_DETAIL
from factcheck.core.domain import ClaimVerification
from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck_engines.reporter import reliability_score
from tests import conftest
from tests.conftest import content_request, kinds, payload, run_events, suite_environment
from tests.fake_model_server import ClaimAnswer, answers_by_claim
from tests.processes import start_service

pytestmark = pytest.mark.e2e
# The session's shared suite (conftest.py), with its fake model server.
fake_models = conftest.shared_fake_models

CHECKER = "fake/auditee"
CONTENT = (
    "Apollo 11 landed on the Moon in 1972. Apollo 11 was the first crewed mission to land on Mars. "
    "The Eiffel Tower was completed in 1889. The Eiffel Tower is 330 metres tall. "
    "Neil Armstrong was the first person to walk on the Moon. Buzz Aldrin was the first person to walk on the Moon."
)
APOLLO = common_pb2.Source(
    id="apollo-11",
    title="Apollo 11",
    text=(
        "Apollo 11 was the first crewed mission to land on the Moon. The lunar module Eagle landed on 20 July 1969. "
        "Neil Armstrong was the first person to walk on the Moon, followed by Buzz Aldrin."
    ),
)
EIFFEL = common_pb2.Source(
    id="eiffel-tower",
    title="The Eiffel Tower",
    text=(
        "The Eiffel Tower is a wrought-iron lattice tower in Paris. It was completed in 1889 as the entrance arch "
        "to the World's Fair of that year. The tower is 330 metres tall."
    ),
)
# What the scripted checker says of each claim (by a piece of its text), and what the audit must find in it.
ANSWERS = {
    # Vouches for a year no passage gives; its quote is real.
    "in 1972": ClaimAnswer(quote="The lunar module Eagle landed on 20 July 1969."),
    # Quotes words no passage holds, and vouches for Mars.
    "Mars": ClaimAnswer(quote="Apollo 11 was the first crewed mission to land on Mars"),
    # Faithful: a real quote (with a curly apostrophe where the passage has a straight one).
    "completed in 1889": ClaimAnswer(quote="It was completed in 1889 as the entrance arch to the World\u2019s Fair"),
    # Quotes, in its Evidence line, words the passage does not hold.
    "330 metres": ClaimAnswer(evidence='The source says "the tower stands 330 metres high".'),
    # Faithful.
    "Neil Armstrong": ClaimAnswer(quote="Neil Armstrong was the first person to walk on the Moon"),
    # Faithful, and DISPUTED: never held to the claim's details.
    "Buzz Aldrin": ClaimAnswer(
        "DISPUTED",
        quote="Neil Armstrong was the first person to walk on the Moon, followed by Buzz Aldrin",
        correction="Neil Armstrong was the first; Buzz Aldrin followed him.",
    ),
}
EXPECTED_FLAGS = [
    [(UNSUPPORTED_DETAIL, "unsupported detail: 1972")],
    [
        (FABRICATED_QUOTE, 'quote not in {P}: "Apollo 11 was the first crewed mission to land on Mars"'),
        (UNSUPPORTED_DETAIL, "unsupported detail: Mars"),
    ],
    [],
    [(FABRICATED_QUOTE, 'quote in the evidence not in the passages: "the tower stands 330 metres high"')],
    [],
    [],
]
# As the consensus counts them: a flagged VERIFIED is UNVERIFIABLE.
COUNTED = ["UNVERIFIABLE", "UNVERIFIABLE", "VERIFIED", "UNVERIFIABLE", "VERIFIED", "DISPUTED"]
GIVEN = ["VERIFIED", "VERIFIED", "VERIFIED", "VERIFIED", "VERIFIED", "DISPUTED"]


def audit_request(**config) -> factcheck_pb2.RunRequest:
    defaults = dict(checker_models=[CHECKER], reporter_model="local/reporter", sources=[APOLLO, EIFFEL])
    return content_request(CONTENT, use_knowledge_store=False, **{**defaults, **config})


def flags_of(verifications) -> list[list[tuple[int, str]]]:
    return [[(flag.kind, flag.detail) for flag in v.audit_flags] for v in verifications]


def expected_flags(events) -> list[list[tuple[int, str]]]:
    """EXPECTED_FLAGS with the label of each claim's first passage, as retrieved for this run."""
    first = {item.claim_id: item.passage_ids[0] for item in payload(events, "evidence_retrieved").claims}
    return [
        [(_kind(kind), detail.format(P=first[f"claim_{n}"])) for kind, detail in claim]
        for n, claim in enumerate(EXPECTED_FLAGS, start=1)
    ]


def _kind(name: str) -> int:
    return common_pb2.AuditFlagKind.Value(f"AUDIT_FLAG_KIND_{name}")


def _status(name: str) -> int:
    return common_pb2.AuditStatus.Value(f"AUDIT_STATUS_{name}")


def _verdict(name: str) -> int:
    return common_pb2.Verdict.Value(f"VERDICT_{name}")


async def test_every_bad_answer_is_flagged_no_faithful_one_and_a_flagged_verified_counts_as_unverifiable(
    gateway, gateway_channel, fake_models, store, shared_suite
):
    fake_models.script(CHECKER, answers_by_claim(ANSWERS))

    # --- a scripted checker: every bad answer flagged, no faithful one --------------------------------------------
    events = await run_events(gateway, audit_request(use_cache=True))
    assert kinds(events)[-1] == "complete"
    message_id = events[0].message_id
    expected = expected_flags(events)
    [checker] = [e.checker_complete for e in events if e.WhichOneof("event") == "checker_complete"]
    assert [v.verdict for v in checker.verifications] == [_verdict(v) for v in GIVEN]
    assert flags_of(checker.verifications) == expected
    assert all(v.audit_status == _status(AUDITED) for v in checker.verifications)
    assert all(flag.checker_model == CHECKER for v in checker.verifications for flag in v.audit_flags)

    # --- the consensus counts a flagged VERIFIED as UNVERIFIABLE, and says why --------------------------------------
    consensus = payload(events, "all_checkers_complete").consensus
    assert [c.consensus_verdict for c in consensus] == [_verdict(v) for v in COUNTED]
    assert consensus[0].audit_note == f"{CHECKER}'s VERIFIED counted as UNVERIFIABLE: unsupported detail: 1972."
    assert all(bool(c.audit_note) == bool(flags) for c, flags in zip(consensus, expected))
    assert consensus[0].consensus_confidence == common_pb2.CONFIDENCE_LOW
    # The reporter's input shows each checker's verdict as it counted, and its score rests on those.
    report_prompts = [r for r in fake_models.requests if r.kind == "report"]
    assert not report_prompts  # (local/reporter: no model call; its summary and score are the service's own)
    report = payload(events, "report_complete")
    assert (report.summary.verified, report.summary.unverifiable, report.summary.disputed) == (2, 3, 1)
    assert report.reliability_score == reliability_score((verdict, 100.0) for verdict in COUNTED)
    assert report.reliability_score < reliability_score((verdict, 100.0) for verdict in GIVEN)

    # --- stored with the verification, and returned by GetResult ---------------------------------------------------
    rows = {row.stage_type: row for row in store.get_stages(message_id)}
    stored = [ClaimVerification.from_json(v) for v in rows["verify_0"].parsed_data["verifications"]]
    assert [[(_kind(f.kind), f.detail) for f in v.audit_flags] for v in stored] == expected
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert flags_of(result.verification.checkers[0].verifications) == expected
    assert list(result.verification.consensus) == list(consensus)

    # --- a cached answer is audited the same way ------------------------------------------------------------------
    cached_events = await run_events(gateway, audit_request(use_cache=True))
    [cached] = [e.checker_complete for e in cached_events if e.WhichOneof("event") == "checker_complete"]
    assert all(v.cached for v in cached.verifications)
    assert flags_of(cached.verifications) == expected_flags(cached_events)
    assert [c.consensus_verdict for c in payload(cached_events, "all_checkers_complete").consensus] == [
        _verdict(v) for v in COUNTED
    ]

    # --- a pipelined run's batches are audited as they arrive ---------------------------------------------------------
    pipelined = await run_events(gateway, audit_request(pipelined=True))
    batches = [e.checker_batch_complete for e in pipelined if e.WhichOneof("event") == "checker_batch_complete"]
    batches.sort(key=lambda batch: batch.batch)  # (reported as each batch completes)
    assert flags_of([v for batch in batches for v in batch.verifications]) == expected_flags(pipelined)
    [whole] = [e.checker_complete for e in pipelined if e.WhichOneof("event") == "checker_complete"]
    assert flags_of(whole.verifications) == expected_flags(pipelined)

    # --- the built-in checker on the same claims: faithful, so nothing flagged ----------------------------------------
    builtin = await run_events(gateway, audit_request(checker_models=["local/checker"]))
    [local] = [e.checker_complete for e in builtin if e.WhichOneof("event") == "checker_complete"]
    assert all(v.audit_status == _status(AUDITED) for v in local.verifications)
    assert sum(v.verdict == common_pb2.VERDICT_VERIFIED for v in local.verifications) >= 3  # (it vouched for some)
    assert flags_of(local.verifications) == [[]] * len(ANSWERS), flags_of(local.verifications)

    # --- the Claims API returns them (runs with claim-level citations) ------------------------------------------------
    cited = await run_events(gateway, audit_request(citations=True))
    claims_api = citations_pb2_grpc.ClaimsServiceStub(gateway_channel)
    listed = await claims_api.ListClaims(citations_pb2.ListClaimsRequest(message_id=cited[0].message_id))
    by_key = {claim.claim_key: claim for claim in listed.claims}
    assert [flags_of([by_key[f"claim_{n}"]])[0] for n in range(1, 7)] == expected_flags(cited)
    one = await claims_api.GetClaim(citations_pb2.GetClaimRequest(claim_id=by_key["claim_1"].id))
    assert [(f.kind, f.detail, f.checker_model) for f in one.claim.audit_flags] == [
        (_kind(UNSUPPORTED_DETAIL), "unsupported detail: 1972", CHECKER)
    ]

    # --- without passages (the checker's own knowledge) nothing is audited, and the answers say so --------------------
    bare = await run_events(gateway, audit_request(sources=[]))
    [unaudited] = [e.checker_complete for e in bare if e.WhichOneof("event") == "checker_complete"]
    assert all(v.audit_status == _status(NO_PASSAGES) and not v.audit_flags for v in unaudited.verifications)
    # Taken as given: the same VERIFIED answers count as VERIFIED, with nothing to hold them to.
    assert [c.consensus_verdict for c in payload(bare, "all_checkers_complete").consensus] == [
        _verdict(v) for v in GIVEN
    ]

    # --- a gateway started afresh on the same database, with the audit off -------------------------------------------
    suite, database_url = shared_suite
    environment = {
        **suite_environment(fake_models, database_url),
        "FACTCHECK_EXTRACTOR_TARGET": suite.services["extractor"].target,
        "FACTCHECK_CHECKER_TARGET": suite.services["checker"].target,
        "FACTCHECK_REPORTER_TARGET": suite.services["reporter"].target,
        "FACTCHECK_AUDIT": "false",
    }
    restarted = start_service("gateway", environment)
    try:
        async with grpc.aio.insecure_channel(restarted.target) as channel:
            fresh = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            # The flags are stored: a gateway that never saw the run (and audits nothing) returns them.
            again = (await fresh.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
            assert flags_of(again.verification.checkers[0].verifications) == expected
            assert list(again.verification.consensus) == list(consensus)
            # Its own runs are not audited, say so, and count every VERIFIED as given.
            off = await run_events(fresh, audit_request())
            [taken] = [e.checker_complete for e in off if e.WhichOneof("event") == "checker_complete"]
            assert all(v.audit_status == _status(DISABLED) and not v.audit_flags for v in taken.verifications)
            assert [c.consensus_verdict for c in payload(off, "all_checkers_complete").consensus] == [
                _verdict(v) for v in GIVEN
            ]
    finally:
        restarted.stop()
