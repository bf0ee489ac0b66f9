"""`factcheck usage`: what the caller's tenant spent on model calls; `factcheck cache purge`: forget
the verifications and extractions it may reuse."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import grpc
from rich.console import Console

from factcheck.v1 import usage_pb2, usage_pb2_grpc
from factcheck_cli.arguments import positive_int
from factcheck_cli.client import EXIT_OK, EXIT_USAGE, UNARY_TIMEOUT_S, channel_command
from factcheck_cli.tables import Column, add_wide_option, print_table
from factcheck_cli.terminal import make_console, proto_json

GROUPS = {
    "model": usage_pb2.USAGE_GROUP_BY_MODEL,
    "stage": usage_pb2.USAGE_GROUP_BY_STAGE,
    "mode": usage_pb2.USAGE_GROUP_BY_MODE,
    "day": usage_pb2.USAGE_GROUP_BY_DAY,
}


def add_parsers(commands) -> None:
    usage = commands.add_parser(
        "usage",
        help="tokens, cost and model calls of your runs",
        description=(
            "What your tenant's runs spent on model calls over a time range (default: the last 30 days), "
            "grouped by model, stage, mode and/or day. Costs use the prices stored with each call."
        ),
    )
    usage.add_argument(
        "--by",
        default="model",
        metavar="KEYS",
        help="comma-separated group keys among model, stage, mode, day (default: model; 'none' for the total)",
    )
    usage.add_argument("--days", type=positive_int, default=None, metavar="N", help="the last N days (default 30)")
    usage.add_argument("--since", metavar="YYYY-MM-DD", help="from this UTC date (instead of --days)")
    usage.add_argument("--until", metavar="YYYY-MM-DD", help="until this UTC date, exclusive (default: now)")
    add_wide_option(usage)
    usage.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    usage.set_defaults(run=channel_command(run_usage))

    cache = commands.add_parser("cache", help="the verification cache", description="Manage the verification cache.")
    actions = cache.add_subparsers(dest="action", required=True, metavar="ACTION")
    purge = actions.add_parser(
        "purge",
        help="delete your tenant's cached verifications and extractions",
        description="Delete your tenant's cached verifications and extractions, so the next runs call the models again.",
    )
    purge.add_argument("--expired", action="store_true", help="only the entries older than the cache's TTL")
    purge.set_defaults(run=channel_command(run_purge))


def _date(value: str, option: str) -> datetime:
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(f"{option} must be a date like 2026-11-23 (got {value!r})") from None


def build_request(args: argparse.Namespace, now: datetime) -> usage_pb2.GetUsageRequest:
    """The GetUsage request the options ask for; ValueError with a message for bad options."""
    keys = [key.strip() for key in args.by.split(",") if key.strip()]
    if keys == ["none"]:
        keys = []
    unknown = [key for key in keys if key not in GROUPS]
    if unknown:
        raise ValueError(f"--by takes model, stage, mode, day (got {', '.join(unknown)})")
    request = usage_pb2.GetUsageRequest(group_by=[GROUPS[key] for key in keys])
    end = _date(args.until, "--until") if args.until else now
    if args.since and args.days is not None:
        raise ValueError("give --since or --days, not both")
    start = _date(args.since, "--since") if args.since else end - timedelta(days=args.days or 30)
    request.start_time.FromDatetime(start)
    request.end_time.FromDatetime(end)
    return request


@dataclass(frozen=True)
class UsageLine:
    """A table row: a group's keys (or "total"), its runs ("" for the total) and what its calls used."""

    labels: list[str]
    runs: str
    usage: usage_pb2.RunUsage


def usage_lines(response: usage_pb2.GetUsageResponse, keys: list[str]) -> list[UsageLine]:
    lines = [UsageLine([getattr(row, key) or "-" for key in keys], f"{row.runs:,}", row.usage) for row in response.rows]
    total_labels = ["total"] + [""] * (len(keys) - 1) if keys else []
    return [*lines, UsageLine(total_labels, "", response.total)]


def usage_columns(keys: list[str]) -> list[Column]:
    """The group keys, then the counts; --wide adds cached and estimated figures."""

    def label(key: str, index: int) -> Column:
        return Column(key, lambda line: line.labels[index], flexible=True)

    def count(header: str, field: str, *, wide_only: bool = False) -> Column:
        return Column(header, lambda line: f"{getattr(line.usage, field):,}", justify="right", wide_only=wide_only)

    return [
        *(label(key, index) for index, key in enumerate(keys)),
        Column("runs", lambda line: line.runs, justify="right"),
        count("calls", "calls"),
        count("failed", "failed_calls"),
        count("cache hits", "cache_hits"),
        count("estimated", "estimated_calls", wide_only=True),
        count("tokens in", "prompt_tokens"),
        count("tokens out", "completion_tokens"),
        count("cached tokens", "cached_tokens", wide_only=True),
        Column("cost usd", lambda line: f"{line.usage.cost_usd:.6f}", justify="right"),
    ]


def render(console: Console, response: usage_pb2.GetUsageResponse, keys: list[str], *, wide: bool = False) -> None:
    print_table(console, usage_columns(keys), usage_lines(response, keys), wide=wide)


def run_usage(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        request = build_request(args, datetime.now(UTC))
    except ValueError as error:
        print(f"factcheck usage: {error}", file=sys.stderr)
        return EXIT_USAGE
    response = usage_pb2_grpc.UsageServiceStub(channel).GetUsage(request, timeout=UNARY_TIMEOUT_S)
    keys = [key for key, value in GROUPS.items() for wanted in request.group_by if value == wanted]
    keys.sort(key=lambda key: list(request.group_by).index(GROUPS[key]))
    if args.json:
        print(proto_json(response, with_defaults=True))
    else:
        render(make_console(), response, keys, wide=args.wide)
    return EXIT_OK


def run_purge(args: argparse.Namespace, channel: grpc.Channel) -> int:
    response = usage_pb2_grpc.UsageServiceStub(channel).PurgeCache(
        usage_pb2.PurgeCacheRequest(expired_only=args.expired), timeout=UNARY_TIMEOUT_S
    )
    print(f"purged {response.purged} cached {'expired ' if args.expired else ''}entries")
    return EXIT_OK
