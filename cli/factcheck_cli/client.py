"""The gateway as the CLI sees it: one channel per command, and gRPC errors as plain messages and exit codes."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Callable

import grpc
from rich.text import Text

import factcheck_cli.ids as ids
from factcheck.kit.channels import open_gateway_channel
from factcheck.kit.settings import Settings
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_cli.arguments import PAGE_SIZE, bounded, int_between

# Every command's exit codes (docs/cli.md, "Exit codes", lists the same).
EXIT_OK = 0
# The run ended with an `error` event (e.g. every checker failed); `cancel`: the run had already finished.
EXIT_RUN_FAILED = 1
# argparse uses 2 for usage errors; bad input (no content, an unreadable or binary file) and a request
# the gateway refuses as invalid (INVALID_ARGUMENT) use it too: the caller must change the command.
EXIT_USAGE = 2
# The gateway could not be reached (or reached again, within the reconnect timeout), did not answer in
# time, or refused the call for another reason (authentication, busy, an internal error).
EXIT_GATEWAY_ERROR = 3
# The run was cancelled (`factcheck cancel`, or any other client's Cancel): it ended with a `cancelled` event.
EXIT_CANCELLED = 4
# The id (a run's, a document's) is unknown to the gateway, or belongs to another tenant: NOT_FOUND.
EXIT_NOT_FOUND = 5
# The run completed, but checked nothing: the content it generated for the question held no verifiable claim
# (the built-in generator answers only from the knowledge store, and it had nothing on the question).
EXIT_NOTHING_CHECKED = 6
EXIT_INTERRUPTED = 130
# The reader of stdout went away (e.g. `| head`), as a shell reports a SIGPIPE.
EXIT_BROKEN_PIPE = 141

# Unary calls (GetResult, ListResults) are quick; a gateway that takes longer is stuck.
UNARY_TIMEOUT_S = 30.0
MAX_PAGE_SIZE = PAGE_SIZE[1]

Gateway = factcheck_pb2_grpc.FactCheckServiceStub


def add_page_options(parser: argparse.ArgumentParser, items: str) -> None:
    """--page-size and --page-token, as every listing takes them (0, the default, asks for the gateway's 20)."""
    parser.add_argument(
        "--page-size",
        type=int_between(PAGE_SIZE),
        default=0,
        metavar="N",
        help=f"{items} per page, {bounded(PAGE_SIZE)} (default 20)",
    )
    parser.add_argument(
        "--page-token", default="", metavar="TOKEN", help="the token the previous page printed, for the next page"
    )


def next_page_command(command: str, token: str, args: argparse.Namespace, *options: str) -> Text:
    """ "Next page: factcheck list --status failed --page-size 5 --page-token …": the listing's command
    again with `options` (its filters), the page size and --wide as given; one line, to copy whole."""
    given = [*options, *([f"--page-size {args.page_size}"] if args.page_size else [])]
    given += ["--wide"] if getattr(args, "wide", False) else []
    return Text(" ".join(["Next page:", command, *given, "--page-token", token]))


def run_id(gateway: Gateway, value: str) -> str:
    """The run id `value` stands for: itself, or the one run whose id starts with it (ids are shown
    shortened); raises ids.AmbiguousId or ids.UnknownId, which `channel_command` reports."""

    def page(token: str) -> tuple[list[str], str]:
        request = factcheck_pb2.ListResultsRequest(page_size=MAX_PAGE_SIZE, page_token=token)
        listed = gateway.ListResults(request, timeout=UNARY_TIMEOUT_S)
        return [result.message_id for result in listed.results], listed.next_page_token

    return ids.expand(value, page, "run")


def gateway_target() -> str:
    """FACTCHECK_GATEWAY_TARGET, read when a command runs so the environment of that run counts."""
    return Settings().gateway_target


def describe_rpc_error(error: grpc.RpcError, target: str) -> str:
    """One or two lines a person can act on, instead of a gRPC traceback."""
    code, details = error.code(), error.details() or ""
    if code == grpc.StatusCode.UNAVAILABLE:
        return (
            f"gateway unavailable at {target}: {details}\n"
            "Start the suite with `factcheck serve`, or point the command at where it runs: "
            "set FACTCHECK_GATEWAY_TARGET, or pass --gateway HOST:PORT."
        )
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return f"invalid request: {details}"
    if code == grpc.StatusCode.NOT_FOUND:
        return f"not found: {details}"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return f"the gateway at {target} did not answer in time"
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return (
            f"the gateway at {target} refused the call: {details}\n"
            "Set FACTCHECK_GATEWAY_TOKEN to a token the gateway accepts (its FACTCHECK_AUTH_TOKENS)."
        )
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return f"the gateway is busy: {details}"
    return f"gateway error {code.name} from {target}: {details}"


def exit_code_of(error: grpc.RpcError) -> int:
    """The exit code for a call the gateway answered with an error (or could not be reached for)."""
    if error.code() == grpc.StatusCode.NOT_FOUND:
        return EXIT_NOT_FOUND
    if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
        return EXIT_USAGE
    return EXIT_GATEWAY_ERROR


def quiet_broken_pipe() -> int:
    """The reader of stdout went away (`| head`): no message, and no second error when Python flushes
    stdout at exit (it is pointed at nothing instead)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_BROKEN_PIPE


def channel_command(run: Callable[[argparse.Namespace, grpc.Channel], int]) -> Callable[[argparse.Namespace], int]:
    """Give a subcommand a channel to the gateway; end it on a gRPC error, Ctrl-C or a closed pipe without a traceback."""

    @functools.wraps(run)
    def wrapper(args: argparse.Namespace) -> int:
        target = gateway_target()
        try:
            with open_gateway_channel(Settings(), target) as channel:
                return run(args, channel)
        except grpc.RpcError as error:
            print(f"factcheck: {describe_rpc_error(error, target)}", file=sys.stderr)
            return exit_code_of(error)
        except ids.AmbiguousId as error:
            print(f"factcheck: {error}", file=sys.stderr)
            return EXIT_USAGE
        except ids.UnknownId as error:
            print(f"factcheck: not found: {error}", file=sys.stderr)
            return EXIT_NOT_FOUND
        except KeyboardInterrupt:
            print("factcheck: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            return quiet_broken_pipe()

    return wrapper


def gateway_command(run: Callable[[argparse.Namespace, Gateway], int]) -> Callable[[argparse.Namespace], int]:
    """channel_command for subcommands that use FactCheckService."""

    @functools.wraps(run)
    def with_stub(args: argparse.Namespace, channel: grpc.Channel) -> int:
        return run(args, Gateway(channel))

    return channel_command(with_stub)
