"""`factcheck watch ID` and `factcheck cancel ID`: runs started elsewhere, followed or stopped."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grpc

import factcheck_cli.check as check
import factcheck_cli.client as client
import factcheck_cli.view as view
from factcheck.v1 import factcheck_pb2
from factcheck_cli.arguments import non_negative_int


def add_parsers(commands) -> None:
    watch = commands.add_parser(
        "watch",
        help="follow a run started elsewhere, then show its report",
        description=(
            "Follow a run (the id `factcheck check` and `factcheck list` print) with the same live progress "
            "as `check`, from where it is or from its start; a finished run is replayed. Then print its report."
        ),
        epilog=check.RUN_EXIT_CODES.replace(
            "nothing to check, a binary or unreadable file, or an invalid request", "bad arguments"
        ),
    )
    watch.add_argument("id", help="the run's message id (or its start, as `factcheck list` shows it)")
    watch.add_argument(
        "--after-seq",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="show only the events after event N (the `seq` of the last one you saw); default: all",
    )
    watch.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    watch.add_argument("--html", metavar="OUT", type=Path, help="also write the report as a self-contained HTML page")
    check.add_reconnect_option(watch)
    watch.set_defaults(run=client.channel_command(run_watch))

    cancel = commands.add_parser(
        "cancel",
        help="stop a running run",
        description="Stop a running run: what it stored so far stays, its status becomes CANCELLED.",
        epilog="exit codes: 0 cancelled, 1 the run had already finished, 3 the gateway is unreachable, 5 unknown id",
    )
    cancel.add_argument("id", help="the run's message id (or its start, as `factcheck list` shows it)")
    cancel.set_defaults(run=client.gateway_command(run_cancel))


def run_watch(args: argparse.Namespace, channel: grpc.Channel) -> int:
    args.id = client.run_id(client.Gateway(channel), args.id)
    return check.follow_run(args, channel, lambda follower: follower.watch(args.id, args.after_seq))


def run_cancel(args: argparse.Namespace, gateway: client.Gateway) -> int:
    args.id = client.run_id(gateway, args.id)
    try:
        response = gateway.Cancel(factcheck_pb2.CancelRequest(message_id=args.id), timeout=client.UNARY_TIMEOUT_S)
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
        status = _status_of(gateway, args.id)
        print(f"factcheck: run {args.id} already finished{status}; there is nothing to cancel.", file=sys.stderr)
        return client.EXIT_RUN_FAILED
    status = view.status_name(response.status)
    if response.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED:
        print(f"Run {args.id}: {status}. What it did before is stored: factcheck show {args.id}")
        return client.EXIT_OK
    if response.status == factcheck_pb2.MESSAGE_STATUS_RUNNING:
        # The gateway executing it has been told; it stops within moments (or recovery ends it).
        print(f"Run {args.id}: cancellation requested; it is still stopping ({status}).")
        return client.EXIT_OK
    print(f"factcheck: run {args.id} finished ({status}) before it could be cancelled.", file=sys.stderr)
    return client.EXIT_RUN_FAILED


def _status_of(gateway: client.Gateway, message_id: str) -> str:
    """ " (COMPLETE)", or nothing when the status cannot be read."""
    try:
        result = gateway.GetResult(
            factcheck_pb2.GetResultRequest(message_id=message_id), timeout=client.UNARY_TIMEOUT_S
        )
    except grpc.RpcError:
        return ""
    return f" ({view.status_name(result.result.status)})"
