"""A run killed during its investigation is resumed by another gateway (processes; SQLite and PostgreSQL):
claims resolved before the kill keep their stored events (each claim is reported once), the rest are
investigated again, and the run completes with one investigate row."""

from __future__ import annotations

import asyncio
import time

import pytest

from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_gateway.store.stage_store import ANY_TENANT
from tests import test_durable_runs as durable
from tests.conftest import kinds
from tests.fake_model_server import default_reply, delay, verdicts
from tests.test_durable_runs import assert_gap_free, connect, read_until, stage_types, watch_all

# The durable-run tests' fixtures (processes on SQLite and PostgreSQL, short leases), shared.
backend, database_url, workers = durable.backend, durable.database_url, durable.workers
start_gateway, store = durable.start_gateway, durable.store

pytestmark = pytest.mark.e2e

CONTENT = (
    "The Loch Ness monster was sighted 12 times in 1934. "
    "The Golden Gate Bridge carried 112,000 vehicles per day in 2019."
)
BRIDGE = common_pb2.Source(
    id="ap-bridge",
    title="AP: Golden Gate Bridge traffic",
    url="https://apnews.com/article/golden-gate-bridge-traffic",
    text="The Golden Gate Bridge carried 112,000 vehicles per day in 2019, a bridge district spokesperson said.",
)


async def test_a_run_killed_mid_investigation_is_resumed_without_repeating_resolved_claims(
    backend, start_gateway, fake_models, store
):
    fake_models.script("fake/checker-a", verdicts(default="UNVERIFIABLE"))
    fake_models.script("fake/checker-b", verdicts(default="UNVERIFIABLE"))
    # The bridge claim's first assessment never comes (its gateway dies first); the resumed call gets one.
    fake_models.script("fake/investigator", delay(120), default_reply())
    request = factcheck_pb2.RunRequest(
        question="Fact-check this paragraph",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=CONTENT, sources=[BRIDGE], investigate=True, investigator_model="fake/investigator"
        ),
    )
    first = start_gateway()
    second = start_gateway() if backend == "postgresql" else None
    async with connect(first) as stub:
        before_kill = await read_until(stub.Run(request, timeout=60), "claim_investigated")
    message_id = before_kill[0].message_id
    assert before_kill[-1].claim_investigated.claim_id == "claim_1"  # no results: resolved at once
    # Killed only once the bridge claim's assessment is held by the model server.
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/investigator", 1)
    first.process.kill()
    first.process.wait()
    if second is None:
        second = start_gateway()

    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)
    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill
    resolved = [e.claim_investigated.claim_id for e in watched if e.HasField("claim_investigated")]
    assert sorted(resolved) == ["claim_1", "claim_2"]  # each claim once
    assert kinds(watched)[-1] == "complete" and kinds(watched).count("investigation_start") == 1
    deadline = time.monotonic() + 10
    while store.get_message(message_id, tenant_id=ANY_TENANT).status == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stage_types(store, message_id) == ["extract", "retrieve", "verify_0", "verify_1", "investigate", "report"]
    assert len(fake_models.requests_for("fake/investigator")) == 2
