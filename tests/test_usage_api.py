"""GetUsage: tokens, cost and calls grouped by model, stage, mode and day, tenant-scoped;
and `factcheck usage` over it. SQLite and PostgreSQL."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from rich.console import Console

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc, usage_pb2, usage_pb2_grpc
from factcheck_cli import usage as usage_cli
from factcheck_cli.app import main as cli_main
from tests.conftest import content_request, payload, suite_environment
from tests.inprocess import inprocess_settings, serve_everything
from tests.processes import start_suite
from tests.test_council_e2e import council_request, script_answers

TOKENS = {"acme": "acme-token-0123456789", "globex": "globex-token-0123456789"}
PRICES = {"fake": {"input": 1.0, "output": 2.0}}


def auth(tenant: str):
    return (("authorization", f"Bearer {TOKENS[tenant]}"),)


@pytest.fixture(scope="module")
def tenant_suite(fake_models, suite_database):
    """The suite as processes; the gateway knows two tenants by their tokens."""
    tokens = ",".join(f"{tenant}:{token}" for tenant, token in TOKENS.items())
    gateway = {"FACTCHECK_AUTH_TOKENS": tokens, "FACTCHECK_MODEL_PRICES": json.dumps(PRICES)}
    running = start_suite(suite_environment(fake_models, suite_database), per_service={"gateway": gateway})
    yield running
    running.stop()


@pytest.mark.e2e
async def test_usage_is_grouped_and_tenant_scoped(tenant_suite, fake_models):
    fake_models.reset()
    script_answers(fake_models)
    async with grpc.aio.insecure_channel(tenant_suite.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        usage = usage_pb2_grpc.UsageServiceStub(channel)
        runs = []
        for tenant, request in (
            ("acme", content_request()),
            ("acme", council_request()),
            ("globex", content_request()),
        ):
            events = [r.event async for r in gateway.Run(request, metadata=auth(tenant), timeout=60)]
            runs.append((tenant, payload(events, "complete").usage))

        by_model = await usage.GetUsage(
            usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_MODEL]), metadata=auth("acme")
        )
        by_mode_stage = await usage.GetUsage(
            usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_MODE, usage_pb2.USAGE_GROUP_BY_STAGE]),
            metadata=auth("acme"),
        )
        by_day = await usage.GetUsage(
            usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_DAY]), metadata=auth("acme")
        )
        globex = await usage.GetUsage(usage_pb2.GetUsageRequest(), metadata=auth("globex"))
        earlier = usage_pb2.GetUsageRequest()
        earlier.end_time.FromDatetime(datetime.now(UTC) - timedelta(days=1))
        before = await usage.GetUsage(earlier, metadata=auth("acme"))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await usage.GetUsage(
                usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_DAY, usage_pb2.USAGE_GROUP_BY_DAY]),
                metadata=auth("acme"),
            )

    acme_runs = [u for tenant, u in runs if tenant == "acme"]
    acme_tokens = sum(u.total_tokens for u in acme_runs)
    acme_cost = sum(u.cost_usd for u in acme_runs)
    for response in (by_model, by_mode_stage, by_day):
        assert response.total.total_tokens == acme_tokens  # globex's run is not in acme's usage
        assert response.total.cost_usd == pytest.approx(acme_cost)
        assert sum(row.usage.total_tokens for row in response.rows) == acme_tokens
        assert sum(row.usage.calls for row in response.rows) == sum(u.calls for u in acme_runs)
    models = {row.model: row for row in by_model.rows}
    assert {"fake/extractor", "fake/checker-a", "fake/alpha"} <= set(models)
    assert all(not row.stage and not row.mode for row in by_model.rows)
    assert models["fake/extractor"].runs == 1
    pairs = {(row.mode, row.stage) for row in by_mode_stage.rows}
    assert {("fact_check", "verify"), ("fact_check", "extract"), ("council", "council_check")} <= pairs
    assert [row.day for row in by_day.rows] == [datetime.now(UTC).strftime("%Y-%m-%d")]
    assert by_day.rows[0].runs == 2
    assert globex.total.total_tokens == runs[2][1].total_tokens and len(globex.rows) == 1
    assert before.total.calls == 0 and not before.rows
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_the_cli_renders_usage_as_a_table():
    response = usage_pb2.GetUsageResponse(
        rows=[
            usage_pb2.UsageRow(
                model="openai/gpt-4o", runs=2, usage=usage_pb2.RunUsage(calls=4, prompt_tokens=100, cost_usd=0.5)
            ),
            usage_pb2.UsageRow(model="local/checker", runs=1, usage=usage_pb2.RunUsage(calls=1, prompt_tokens=7)),
        ],
        total=usage_pb2.RunUsage(calls=5, prompt_tokens=107, cost_usd=0.5),
    )
    console = Console(file=io.StringIO(), width=120)
    usage_cli.render(console, response, ["model"])
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    assert lines[0].split()[:3] == ["MODEL", "RUNS", "CALLS"]
    assert lines[1].split()[0] == "openai/gpt-4o" and lines[1].endswith("0.500000")
    assert lines[-1].split()[0] == "total" and lines[-1].split()[1] == "5"
    assert len(lines) == 4  # the header, one line per row, the total


def test_the_cli_builds_the_request_from_its_options():
    now = datetime(2026, 11, 23, tzinfo=UTC)
    args = usage_cli_args(by="day,model", since="2026-11-01", days=None, until=None)
    request = usage_cli.build_request(args, now)
    assert list(request.group_by) == [usage_pb2.USAGE_GROUP_BY_DAY, usage_pb2.USAGE_GROUP_BY_MODEL]
    assert request.start_time.ToDatetime(tzinfo=UTC) == datetime(2026, 11, 1, tzinfo=UTC)
    assert request.end_time.ToDatetime(tzinfo=UTC) == now
    with pytest.raises(ValueError, match="--by"):
        usage_cli.build_request(usage_cli_args(by="tenant", since=None, days=None, until=None), now)
    assert not usage_cli.build_request(usage_cli_args(by="none", since=None, days=7, until=None), now).group_by


def usage_cli_args(**values):
    import argparse

    return argparse.Namespace(**values)


async def test_results_of_a_run_without_calls_show_zero_usage(database_url):
    settings = inprocess_settings("http://127.0.0.1:9", database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        listed = await factcheck_pb2_grpc.FactCheckServiceStub(channel).ListResults(factcheck_pb2.ListResultsRequest())
    assert list(listed.results) == []


@pytest.mark.e2e
async def test_the_cache_is_never_shared_between_tenants(tenant_suite, fake_models, monkeypatch, capsys):
    fake_models.reset()
    request = content_request(use_cache=True)
    async with grpc.aio.insecure_channel(tenant_suite.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for tenant in ("acme", "acme", "globex"):
            events = [r.event async for r in gateway.Run(request, metadata=auth(tenant), timeout=60)]
            assert payload(events, "complete").status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    # acme's second run reused acme's verifications; globex paid for its own.
    assert len(fake_models.requests_for("fake/checker-a")) == 2
    assert len(fake_models.requests_for("fake/extractor")) == 2
    assert payload(events, "complete").usage.cache_hits == 0

    monkeypatch.setenv("FACTCHECK_GATEWAY_TARGET", tenant_suite.gateway_target)
    monkeypatch.setenv("FACTCHECK_GATEWAY_TOKEN", TOKENS["globex"])
    assert cli_main(["cache", "purge"]) == 0
    assert capsys.readouterr().out.strip() == "purged 7 cached entries"  # globex's only: acme's stay
    assert cli_main(["usage", "--by", "stage", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert {row["stage"] for row in answer["rows"]} >= {"extract", "verify", "report"}


@pytest.mark.parametrize("seconds, nanos", [(2**62, 0), (0, -5), (-62135596800, 0)])
def test_a_timestamp_out_of_range_is_invalid(seconds, nanos):
    from factcheck.kit.errors import InvalidArgument
    from factcheck_gateway.servicers.usage import usage_range

    request = usage_pb2.GetUsageRequest()
    request.end_time.seconds, request.end_time.nanos = seconds, nanos
    with pytest.raises(InvalidArgument) as raised:
        usage_range(request, datetime.now(UTC))
    assert raised.value.field == "end_time"
