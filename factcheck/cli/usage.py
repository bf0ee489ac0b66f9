"""`factcheck usage`: what the caller's tenant spent on model calls; `factcheck cache purge`: forget
the verifications and extractions it may reuse."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta

import grpc

from factcheck.cli.client import EXIT_OK, EXIT_USAGE, UNARY_TIMEOUT_S, channel_command
from factcheck.cli.terminal import proto_json
from factcheck.v1 import usage_pb2, usage_pb2_grpc

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
    usage.add_argument("--days", type=int, default=None, metavar="N", help="the last N days (default 30)")
    usage.add_argument("--since", metavar="YYYY-MM-DD", help="from this UTC date (instead of --days)")
    usage.add_argument("--until", metavar="YYYY-MM-DD", help="until this UTC date, exclusive (default: now)")
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
    if args.days is not None and args.days <= 0:
        raise ValueError("--days must be positive")
    start = _date(args.since, "--since") if args.since else end - timedelta(days=args.days or 30)
    request.start_time.FromDatetime(start)
    request.end_time.FromDatetime(end)
    return request


def _row_label(row: usage_pb2.UsageRow, keys: list[str]) -> list[str]:
    return [getattr(row, key) or "-" for key in keys]


def render(response: usage_pb2.GetUsageResponse, keys: list[str]) -> str:
    header = [*keys, "runs", "calls", "failed", "cache hits", "prompt tok", "completion tok", "cost USD"]
    lines = []
    for row in response.rows:
        usage = row.usage
        lines.append(
            [
                *_row_label(row, keys),
                str(row.runs),
                str(usage.calls),
                str(usage.failed_calls),
                str(usage.cache_hits),
                str(usage.prompt_tokens),
                str(usage.completion_tokens),
                f"{usage.cost_usd:.6f}",
            ]
        )
    total = response.total
    lines.append(
        [
            *(["total"] + [""] * (len(keys) - 1) if keys else []),
            "",
            str(total.calls),
            str(total.failed_calls),
            str(total.cache_hits),
            str(total.prompt_tokens),
            str(total.completion_tokens),
            f"{total.cost_usd:.6f}",
        ]
    )
    widths = [max(len(cell) for cell in column) for column in zip(header, *lines)]
    text_lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in [header, *lines]
    ]
    return "\n".join(text_lines)


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
        print(render(response, keys))
    return EXIT_OK


def run_purge(args: argparse.Namespace, channel: grpc.Channel) -> int:
    response = usage_pb2_grpc.UsageServiceStub(channel).PurgeCache(
        usage_pb2.PurgeCacheRequest(expired_only=args.expired), timeout=UNARY_TIMEOUT_S
    )
    print(f"purged {response.purged} cached {'expired ' if args.expired else ''}entries")
    return EXIT_OK
