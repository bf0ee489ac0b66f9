"""FactCheckConfig.consensus through the real services (one in-process gRPC server, the scripted model
server), on SQLite and PostgreSQL: the weights of the tenant's newest complete evaluation decide a claim the
majority decides otherwise; they are reported in all_checkers_complete and stored, so GetResult shows the
same weights after a newer evaluation; without an evaluation the majority is used, and the run says why.
A run may name its evaluation; without one, an evaluation on too few answers per label is passed over;
the weights read readable answers only."""

from __future__ import annotations

import uuid

import grpc
import pytest
from sqlalchemy import insert

from factcheck.core.weighting_text import describe_weighting
from factcheck.evaluation.sets import LABELS
from factcheck.v1 import common_pb2, evaluation_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.consensus import weights as consensus_weights
from factcheck_gateway.consensus.weighted import fit_weights
from factcheck_gateway.consensus.weights import NOT_REACHED, STAGE_CONSENSUS, Weighting, for_run, stored_weighting
from factcheck_gateway.evaluations.reliability import ReliabilityLookup
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.evaluations.tables import EvaluationItemRow
from factcheck_gateway.store.records import StageRecord
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import content_request, kinds, payload
from tests.fake_model_server import verdicts
from tests.inprocess import inprocess_settings, serve_everything

CHECKERS = ["fake/checker-a", "fake/checker-b", "fake/checker-c"]
RELIABLE = ((90, 5, 5), (5, 90, 5), (5, 5, 90))
WEAK = ((40, 30, 30), (30, 40, 30), (30, 30, 40))


def store_evaluation(
    database_url: str,
    evaluation_id: str,
    confusions: dict[str, tuple],
    status: str = "COMPLETE",
    tenant_id: str = "default",
    unreadable: int = 0,
) -> None:
    """An evaluation as EvaluationService stores one: its row (checkerModels in its config), one item row per
    answer (each checker's confusion counts spelled out as items of one set, and `unreadable` answers on
    VERIFIED items per checker, stored as a run would read them: UNVERIFIABLE), then its status."""
    store = StageStore(database_url)
    try:
        evaluations = EvaluationStore(store.engine)
        total = sum(n for counts in confusions.values() for row in counts for n in row)
        config = {"checkerModels": list(confusions), "sets": ["factcheck-bench"]}
        evaluations.create(evaluation_id, tenant_id, "test-owner", config, {}, total)
        rows = []
        for model, counts in confusions.items():
            for label, row in zip(LABELS, counts):
                for verdict, count in zip(LABELS, row):
                    rows += [
                        {
                            "id": str(uuid.uuid4()),
                            "evaluation_id": evaluation_id,
                            "checker_model": model,
                            "set_name": "factcheck-bench",
                            "item_id": f"{label}-{verdict}-{n}",
                            "label": label,
                            "verdict": verdict,
                            "confidence": "HIGH",
                            "unreadable": False,
                            "failed": False,
                        }
                        for n in range(count)
                    ]
        rows += [
            {
                "id": str(uuid.uuid4()),
                "evaluation_id": evaluation_id,
                "checker_model": model,
                "set_name": "factcheck-bench",
                "item_id": f"unreadable-{n}",
                "label": "VERIFIED",
                "verdict": "UNVERIFIABLE",
                "confidence": "LOW",
                "unreadable": True,
                "failed": False,
            }
            for model in confusions
            for n in range(unreadable)
        ]
        # A failed call is not scored: one per checker, to show it is left out.
        rows += [
            {
                "id": str(uuid.uuid4()),
                "evaluation_id": evaluation_id,
                "checker_model": model,
                "set_name": "factcheck-bench",
                "item_id": "failed",
                "label": "VERIFIED",
                "verdict": None,
                "confidence": None,
                "unreadable": False,
                "failed": True,
            }
            for model in confusions
        ]
        with store.engine.begin() as connection:  # (every row names the same columns: an executemany's are the first's)
            connection.execute(insert(EvaluationItemRow), rows)
        assert evaluations.finish(evaluation_id, "test-owner", status, None, evaluation_pb2.EvaluationEvent)
    finally:
        store.close()


class Lookups:
    """Every lookup a run makes (the real one, through EvaluationStore)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []

    def __call__(self, engine, tenant_id, checker_models, min_per_label):
        self.asked.append((tenant_id, list(checker_models)))
        return ReliabilityLookup(engine).newest(tenant_id, checker_models, min_per_label)


@pytest.fixture
def lookups(monkeypatch) -> Lookups:
    spy = Lookups()
    monkeypatch.setattr(consensus_weights, "newest_confusions", spy)
    return spy


def script_checkers(fake_models) -> None:
    """checker-a (reliable) disputes claim 1; checker-b and checker-c (weak) verify everything."""
    fake_models.reset()
    fake_models.script("fake/checker-a", verdicts({"claim_1": "DISPUTED"}, correction="Signed in 2016."))
    for model in CHECKERS[1:]:
        fake_models.script(model, verdicts())


def request(consensus: int = evaluation_pb2.CONSENSUS_UNSPECIFIED, **config) -> factcheck_pb2.RunRequest:
    return content_request(checker_models=CHECKERS, consensus=consensus, **config)


async def run_and_get(settings, *requests):
    """Each request's events and its GetResult, one after the other."""
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        out = []
        for item in requests:
            events = [r.event async for r in stub.Run(item, timeout=60)]
            result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
            out.append((events, result))
        return out


async def get_result(settings, message_id: str) -> factcheck_pb2.FactCheckResult:
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        return (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result


def claim_1(consensus) -> common_pb2.ClaimConsensus:
    return next(c for c in consensus if c.claim_id == "claim_1")


async def test_weights_from_the_newest_evaluation_decide_and_are_kept(database_url, fake_models, lookups):
    script_checkers(fake_models)
    old = {"fake/checker-a": WEAK, "fake/checker-b": RELIABLE, "fake/checker-c": RELIABLE}
    store_evaluation(database_url, "eval-0", old)  # older: not the one used
    store_evaluation(
        database_url, "eval-1", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK}
    )
    store_evaluation(database_url, "eval-running", old, status="CANCELLED")  # newer, but not complete
    store_evaluation(database_url, "eval-other", old, tenant_id="someone-else")  # another tenant's
    settings = inprocess_settings(fake_models.base_url, database_url)
    ((majority_events, majority_result), (events, result)) = await run_and_get(
        settings, request(), request(evaluation_pb2.CONSENSUS_WEIGHTED)
    )

    # Left unset: the majority with its tie rules, no weighting reported, the evaluations never asked.
    assert claim_1(payload(majority_events, "all_checkers_complete").consensus).consensus_verdict == (
        common_pb2.VERDICT_VERIFIED
    )
    assert not payload(majority_events, "all_checkers_complete").HasField("consensus_weighting")
    assert not majority_result.verification.HasField("consensus_weighting")
    # The run's config gives the consensus it uses, its default applied (as factcheck.proto documents it).
    assert payload(majority_events, "factcheck_start").config.consensus == evaluation_pb2.CONSENSUS_MAJORITY
    assert lookups.asked == [("default", CHECKERS)]  # only the weighted run looked

    # Weighted: the reliable checker's dispute outvotes the two weak verifications.
    assert kinds(events) == kinds(majority_events)
    assert payload(events, "factcheck_start").config.consensus == evaluation_pb2.CONSENSUS_WEIGHTED
    complete = payload(events, "all_checkers_complete")
    first = claim_1(complete.consensus)
    assert first.consensus_verdict == common_pb2.VERDICT_DISPUTED
    assert first.correction == "Signed in 2016."
    assert first.agreement_rate == pytest.approx(100 / 3)
    assert first.weighted_probability == pytest.approx(91 * 31 * 31 / (91 * 31 * 31 + 6 * 41 * 41 + 6 * 31 * 31))
    assert all(c.HasField("weighted_probability") for c in complete.consensus)
    weighting = complete.consensus_weighting
    assert (weighting.requested, weighting.used, weighting.evaluation_id, weighting.note) == (
        evaluation_pb2.CONSENSUS_WEIGHTED,
        evaluation_pb2.CONSENSUS_WEIGHTED,
        "eval-1",
        "",
    )
    assert [c.checker_model for c in weighting.checkers] == CHECKERS
    assert weighting.checkers[0].items == 300
    assert list(weighting.checkers[0].verdict_given_label)[:3] == pytest.approx([91 / 103, 6 / 103, 6 / 103])
    assert describe_weighting(weighting).startswith("weighted by evaluation eval-1 (weights: fake/checker-a: ")
    # The report says which weights were used.
    report = payload(events, "report_complete").report_text
    assert "Consensus: weighted by evaluation eval-1" in report

    # GetResult recomputes the consensus with the stored weights, and carries them.
    verification = result.verification
    assert verification.consensus_weighting == weighting
    assert list(verification.consensus) == list(complete.consensus)
    assert "Consensus: weighted by evaluation eval-1" in result.report.report_text

    # A newer evaluation (the weak checkers now measured reliable, checker-a weak) changes nothing stored.
    store_evaluation(database_url, "eval-2", old)
    again = (await get_result(settings, events[0].message_id)).verification
    assert again.consensus_weighting.evaluation_id == "eval-1"
    assert claim_1(again.consensus).consensus_verdict == common_pb2.VERDICT_DISPUTED
    assert list(again.consensus) == list(complete.consensus)

    store = StageStore(database_url)
    try:
        rows = {row.stage_type: row for row in store.get_stages(events[0].message_id)}
        majority_rows = {row.stage_type for row in store.get_stages(majority_events[0].message_id)}
    finally:
        store.close()
    assert rows[STAGE_CONSENSUS[0]].parsed_data["weights"]["evaluationId"] == "eval-1"
    assert STAGE_CONSENSUS[0] not in majority_rows


async def test_without_an_evaluation_the_majority_is_used_and_the_run_says_why(database_url, fake_models, lookups):
    script_checkers(fake_models)
    # An evaluation that measured only two of the three checkers does not count.
    store_evaluation(database_url, "eval-1", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK})
    settings = inprocess_settings(fake_models.base_url, database_url)
    ((events, result),) = await run_and_get(settings, request(evaluation_pb2.CONSENSUS_WEIGHTED))
    complete = payload(events, "all_checkers_complete")
    assert claim_1(complete.consensus).consensus_verdict == common_pb2.VERDICT_VERIFIED
    assert not claim_1(complete.consensus).HasField("weighted_probability")
    weighting = complete.consensus_weighting
    assert (weighting.requested, weighting.used, weighting.evaluation_id) == (
        evaluation_pb2.CONSENSUS_WEIGHTED,
        evaluation_pb2.CONSENSUS_MAJORITY,
        "",
    )
    assert weighting.note == (
        "no complete evaluation of this tenant measured fake/checker-a, fake/checker-b, fake/checker-c on at "
        "least 20 readable answers of each label; the majority was used"
    )
    assert weighting.fallback == evaluation_pb2.CONSENSUS_FALLBACK_NO_EVALUATION
    assert result.verification.consensus_weighting == weighting
    assert describe_weighting(weighting) == f"majority ({weighting.note})"
    # A later evaluation does not change the stored run.
    store_evaluation(database_url, "eval-2", {m: RELIABLE for m in CHECKERS})
    again = (await get_result(settings, events[0].message_id)).verification
    assert again.consensus_weighting == weighting
    assert claim_1(again.consensus).consensus_verdict == common_pb2.VERDICT_VERIFIED


async def test_the_majority_asked_for_by_name(database_url, fake_models, lookups):
    script_checkers(fake_models)
    store_evaluation(
        database_url, "eval-1", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK}
    )
    settings = inprocess_settings(fake_models.base_url, database_url)
    ((events, result),) = await run_and_get(settings, request(evaluation_pb2.CONSENSUS_MAJORITY))
    complete = payload(events, "all_checkers_complete")
    assert claim_1(complete.consensus).consensus_verdict == common_pb2.VERDICT_VERIFIED
    assert complete.consensus_weighting == evaluation_pb2.ConsensusWeighting(
        requested=evaluation_pb2.CONSENSUS_MAJORITY, used=evaluation_pb2.CONSENSUS_MAJORITY
    )
    assert result.verification.consensus_weighting == complete.consensus_weighting
    assert payload(events, "factcheck_start").config.consensus == evaluation_pb2.CONSENSUS_MAJORITY
    assert lookups.asked == []
    assert "Consensus:" not in payload(events, "report_complete").report_text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_an_unknown_consensus_is_refused(database_url, fake_models):
    settings = inprocess_settings(fake_models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            _ = [r async for r in stub.Run(request(7), timeout=30)]
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "mode_config.consensus" in (raised.value.details() or "")


async def test_the_weights_read_readable_answers_only(database_url, fake_models, lookups):
    script_checkers(fake_models)
    # Thirty unreadable answers on VERIFIED items per checker: stored as UNVERIFIABLE, they are not verdicts.
    store_evaluation(
        database_url,
        "eval-1",
        {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK},
        unreadable=30,
    )
    settings = inprocess_settings(fake_models.base_url, database_url)
    ((events, _),) = await run_and_get(settings, request(evaluation_pb2.CONSENSUS_WEIGHTED))
    reliable = payload(events, "all_checkers_complete").consensus_weighting.checkers[0]
    assert reliable.items == 300  # the readable answers
    assert list(reliable.verdict_given_label)[:3] == pytest.approx([91 / 103, 6 / 103, 6 / 103])


async def test_a_run_weighs_by_the_evaluation_it_names(database_url, fake_models, lookups):
    script_checkers(fake_models)
    store_evaluation(
        database_url, "eval-pinned", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK}
    )
    store_evaluation(
        database_url, "eval-newer", {"fake/checker-a": WEAK, "fake/checker-b": RELIABLE, "fake/checker-c": RELIABLE}
    )
    store_evaluation(database_url, "eval-stopped", {m: RELIABLE for m in CHECKERS}, status="CANCELLED")
    store_evaluation(database_url, "eval-two", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK})
    store_evaluation(database_url, "eval-theirs", {m: RELIABLE for m in CHECKERS}, tenant_id="someone-else")
    settings = inprocess_settings(fake_models.base_url, database_url)
    weighted = evaluation_pb2.CONSENSUS_WEIGHTED
    runs = await run_and_get(
        settings,
        request(weighted, consensus_evaluation_id="eval-pinned"),
        request(weighted, consensus_evaluation_id="no-such-evaluation"),
        request(weighted, consensus_evaluation_id="eval-stopped"),
        request(weighted, consensus_evaluation_id="eval-two"),
        request(weighted, consensus_evaluation_id="eval-theirs"),
    )
    (pinned_events, pinned_result), *fallbacks = runs
    pinned = payload(pinned_events, "all_checkers_complete")
    assert pinned.consensus_weighting.evaluation_id == "eval-pinned"  # not the newer one
    assert pinned.consensus_weighting.fallback == evaluation_pb2.CONSENSUS_FALLBACK_UNSPECIFIED
    assert claim_1(pinned.consensus).consensus_verdict == common_pb2.VERDICT_DISPUTED
    assert payload(pinned_events, "factcheck_start").config.consensus_evaluation_id == "eval-pinned"
    assert pinned_result.verification.consensus_weighting == pinned.consensus_weighting
    notes = []
    for events, result in fallbacks:
        weighting = payload(events, "all_checkers_complete").consensus_weighting
        assert weighting.used == evaluation_pb2.CONSENSUS_MAJORITY
        assert weighting.fallback == evaluation_pb2.CONSENSUS_FALLBACK_EVALUATION_UNUSABLE
        assert result.verification.consensus_weighting == weighting  # stored with the run
        notes.append(weighting.note)
    assert notes == [
        "evaluation no-such-evaluation was not found; the majority was used",
        "evaluation eval-stopped is CANCELLED, not COMPLETE; the majority was used",
        "evaluation eval-two did not measure fake/checker-c; the majority was used",
        "evaluation eval-theirs was not found; the majority was used",
    ]
    assert lookups.asked == []  # a named evaluation is never replaced by the newest


async def test_an_evaluation_on_too_few_answers_per_label_is_passed_over(database_url, fake_models, lookups):
    script_checkers(fake_models)
    store_evaluation(
        database_url, "eval-big", {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK}
    )
    small = ((5, 0, 0), (0, 5, 0), (0, 0, 5))
    store_evaluation(database_url, "eval-small", {m: small for m in CHECKERS})  # newer, five answers per label
    settings = inprocess_settings(fake_models.base_url, database_url)
    ((events, _),) = await run_and_get(settings, request(evaluation_pb2.CONSENSUS_WEIGHTED))
    assert payload(events, "all_checkers_complete").consensus_weighting.evaluation_id == "eval-big"
    lenient = inprocess_settings(fake_models.base_url, database_url, consensus_min_items_per_label=5)
    ((events, _),) = await run_and_get(lenient, request(evaluation_pb2.CONSENSUS_WEIGHTED))
    assert payload(events, "all_checkers_complete").consensus_weighting.evaluation_id == "eval-small"
    strict = inprocess_settings(fake_models.base_url, database_url, consensus_min_items_per_label=101)
    ((events, _),) = await run_and_get(strict, request(evaluation_pb2.CONSENSUS_WEIGHTED))
    weighting = payload(events, "all_checkers_complete").consensus_weighting
    assert weighting.fallback == evaluation_pb2.CONSENSUS_FALLBACK_NO_EVALUATION
    assert "on at least 101 readable answers of each label" in weighting.note


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_named_evaluation_needs_the_weighted_consensus_and_checkers_must_check(database_url, fake_models):
    settings = inprocess_settings(fake_models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        refused = []
        for bad in (
            request(evaluation_pb2.CONSENSUS_MAJORITY, consensus_evaluation_id="eval-1"),
            request(consensus_evaluation_id="eval-1"),
            request(evaluation_pb2.CONSENSUS_WEIGHTED, consensus_evaluation_id="x" * 256),
            content_request(checker_models=["local/reporter"]),
            content_request(checker_models=["local/checker", "local/title"]),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                _ = [r async for r in stub.Run(bad, timeout=30)]
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            refused.append(raised.value.details() or "")
    assert "needs mode_config.consensus = CONSENSUS_WEIGHTED" in refused[0] and "needs" in refused[1]
    assert "at most 255 characters" in refused[2]
    assert refused[3].startswith("mode_config.checker_models[0]: ") and "'reporter' is not a checker" in refused[3]
    assert refused[4].startswith("mode_config.checker_models[1]: ") and "'title' is not a checker" in refused[4]


# --- a resumed run ------------------------------------------------------------------------------------


class _Plan:
    consensus = "weighted"
    consensus_evaluation_id = None
    consensus_min_items_per_label = 20


class _Run:
    """What for_run reads of a run: its plan, the rows an earlier attempt stored, its database."""

    plan = _Plan()
    tenant_id = "default"

    def __init__(self, stored) -> None:
        self.stored = stored

    async def read(self, what, operation):
        return operation()


async def test_a_resumed_run_takes_the_weights_its_first_attempt_stored(lookups):
    first = Weighting("weighted", fit_weights("eval-1", {m: RELIABLE for m in CHECKERS}))
    row = first.stage_row()
    stored = StageRecord(
        "id",
        "message",
        row.stage_type,
        row.stage_order,
        None,
        row.role,
        None,
        row.parsed_data,
        0,
        None,  # type: ignore[arg-type]
    )
    resumed = await for_run(_Run({STAGE_CONSENSUS[0]: stored}), CHECKERS)
    assert resumed == first
    assert lookups.asked == []  # no lookup: the stored weights


# --- the command line ---------------------------------------------------------------------------------


def test_check_passes_consensus():
    from factcheck_cli import app
    from factcheck_cli.check import build_request

    parser = app.build_parser()
    weighted = build_request(parser.parse_args(["check", "text", "--consensus", "weighted"]), "text")
    assert weighted.mode_config.consensus == evaluation_pb2.CONSENSUS_WEIGHTED
    majority = build_request(parser.parse_args(["check", "text", "--consensus", "majority"]), "text")
    assert majority.mode_config.consensus == evaluation_pb2.CONSENSUS_MAJORITY
    unset = build_request(parser.parse_args(["check", "text"]), "text")
    assert unset.mode_config.consensus == evaluation_pb2.CONSENSUS_UNSPECIFIED
    with pytest.raises(SystemExit):
        parser.parse_args(["check", "text", "--consensus", "loudest"])


def test_the_reports_name_the_weights():
    import io

    from rich.console import Console

    from factcheck_cli import html, render

    weights = Weighting("weighted", fit_weights("eval-9", {"local/checker": RELIABLE, "local/checker-lexical": WEAK}))
    result = factcheck_pb2.FactCheckResult(mode=factcheck_pb2.MODE_FACT_CHECK)
    plain_footer = html.footer(result)
    result.verification.consensus_weighting.CopyFrom(weights.to_proto(["local/checker", "local/checker-lexical"]))
    output = io.StringIO()
    render.render_result(Console(file=output, width=300, color_system=None), result)
    line = "Consensus: weighted by evaluation eval-9 (weights: local/checker: VERIFIED +2.72, DISPUTED +2.72, "
    assert line in output.getvalue()
    assert "local/checker-lexical: VERIFIED +0.28" in output.getvalue()
    assert "consensus weighted by evaluation eval-9" in html.footer(result)
    assert "consensus by majority verdict (ties go to DISPUTED)" in plain_footer
    fallback = Weighting("weighted", note="no complete evaluation of this tenant measured x/y; the majority was used")
    result.verification.consensus_weighting.CopyFrom(fallback.to_proto(["x/y"]))
    output = io.StringIO()
    render.render_result(Console(file=output, width=300, color_system=None), result)
    assert "Consensus: majority (no complete evaluation of this tenant measured x/y; the majority was used)" in (
        output.getvalue()
    )
    assert html.footer(result) == plain_footer


def test_a_stored_run_without_its_consensus_row():
    assert stored_weighting("default", None) is None  # the option unset: the base's result
    assert stored_weighting("majority", None) == Weighting("majority")
    reached = stored_weighting("weighted", None)
    assert reached is not None and reached.weights is None and reached.note == NOT_REACHED
