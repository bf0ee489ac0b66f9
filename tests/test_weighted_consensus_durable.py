"""A weighted run whose gateway is killed after its consensus is resumed with the weights it stored, not
with a newer evaluation's. The services run as processes (test_durable_runs.py's fixtures), on SQLite and
on PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
import uuid

import grpc
import pytest

from factcheck.v1 import common_pb2, evaluation_pb2, factcheck_pb2
from factcheck_gateway.store.stage_store import ANY_TENANT
from tests.conftest import kinds
from tests.fake_model_server import Behaviour, HttpAnswer, RecordedRequest, classify, default_reply, verdicts
from tests.test_durable_runs import (  # noqa: F401  (module fixtures, used by name)
    backend,
    connect,
    database_url,
    read_until,
    start_gateway,
    store,
    wait_for_status,
    watch_all,
    workers,
)
from tests.test_weighted_consensus_runs import CHECKERS, RELIABLE, WEAK, claim_1, request, store_evaluation

pytestmark = pytest.mark.e2e


def first_report_held(seconds: float, held: threading.Event) -> Behaviour:
    """The reporter's first report waits `seconds` (its gateway is killed meanwhile; `held` is set once it
    arrived); everything else, the title and the resumed run's report included, is answered at once."""
    answer = default_reply()

    def action(request: RecordedRequest, stop: threading.Event) -> HttpAnswer | None:
        if classify(request.prompt) == "report" and not held.is_set():
            held.set()
            if stop.wait(seconds):
                return None
        return answer(request, stop)

    return Behaviour(f"first_report_held({seconds})", action)


async def test_a_resumed_weighted_run_keeps_the_weights_it_stored(
    start_gateway,  # noqa: F811
    fake_models,
    store,  # noqa: F811
    database_url,  # noqa: F811
):
    first = start_gateway()  # it migrates the database
    used, newer = f"eval-{uuid.uuid4().hex[:8]}", f"eval-{uuid.uuid4().hex[:8]}"
    store_evaluation(database_url, used, {"fake/checker-a": RELIABLE, "fake/checker-b": WEAK, "fake/checker-c": WEAK})
    fake_models.script("fake/checker-a", verdicts({"claim_1": "DISPUTED"}, correction="Signed in 2016."))
    for model in CHECKERS[1:]:
        fake_models.script(model, verdicts())
    report_arrived = threading.Event()
    fake_models.script("fake/reporter", first_report_held(120, report_arrived))

    async with connect(first) as stub:
        before_kill = await read_until(
            stub.Run(request(evaluation_pb2.CONSENSUS_WEIGHTED), timeout=60), "all_checkers_complete"
        )
    message_id = before_kill[0].message_id
    complete = before_kill[-1].all_checkers_complete
    assert complete.consensus_weighting.evaluation_id == used
    assert claim_1(complete.consensus).consensus_verdict == common_pb2.VERDICT_DISPUTED

    # Killed only once its report call is held by the model server: killed before, the resumed run's report
    # would be the first to arrive, and be the one held (a loaded machine did that).
    assert await asyncio.to_thread(report_arrived.wait, 30), "the first gateway's report call never arrived"
    first.process.kill()  # SIGKILL after the consensus, while the report is being written
    first.process.wait()
    # A newer evaluation that would turn claim 1 around (the two verifying checkers measured reliable).
    store_evaluation(
        database_url, newer, {"fake/checker-a": WEAK, "fake/checker-b": RELIABLE, "fake/checker-c": RELIABLE}
    )

    second = start_gateway()
    async with connect(second) as stub:
        try:
            watched = await watch_all(stub, message_id)
        except grpc.aio.AioRpcError as error:
            logs = "\n".join(["-- first gateway:", *first.output[-40:], "-- second gateway:", *second.output[-60:]])
            raise AssertionError(f"Watch of the resumed run failed: {error.code().name}\n{logs}") from error
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert await wait_for_status(store, message_id) == "COMPLETE"
    assert store.get_message(message_id, tenant_id=ANY_TENANT).resume_count == 1
    assert kinds(watched)[-4:] == ["report_start", "report_complete", "title_complete", "complete"]
    report = next(e.report_complete for e in watched if e.WhichOneof("event") == "report_complete")
    assert f"Consensus: weighted by evaluation {used}" in report.report_text
    assert result.verification.consensus_weighting == complete.consensus_weighting
    assert claim_1(result.verification.consensus).consensus_verdict == common_pb2.VERDICT_DISPUTED
    assert [r for r in store.get_stages(message_id) if r.stage_type == "consensus"][0].parsed_data["weights"][
        "evaluationId"
    ] == used
