"""The gateway as the CLI sees it: one channel per command, and gRPC errors as plain messages and exit codes."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Callable

import grpc

from factcheck.channels import open_gateway_channel
from factcheck.settings import Settings
from factcheck.v1 import factcheck_pb2_grpc

EXIT_OK = 0
# The run ended with an `error` event (e.g. every checker failed); `cancel`: the run had already finished.
EXIT_RUN_FAILED = 1
# argparse uses 2 for usage errors; bad input files and missing content use it too.
EXIT_USAGE = 2
# The gateway could not be reached (or reached again, within the reconnect timeout), or refused the call.
EXIT_GATEWAY_ERROR = 3
# The run was cancelled (`factcheck cancel`, or any other client's Cancel): it ended with a `cancelled` event.
EXIT_CANCELLED = 4
EXIT_INTERRUPTED = 130
# The reader of stdout went away (e.g. `| head`), as a shell reports a SIGPIPE.
EXIT_BROKEN_PIPE = 141

# Unary calls (GetResult, ListResults) are quick; a gateway that takes longer is stuck.
UNARY_TIMEOUT_S = 30.0

Gateway = factcheck_pb2_grpc.FactCheckServiceStub


def gateway_target() -> str:
    """FACTCHECK_GATEWAY_TARGET, read when a command runs so the environment of that run counts."""
    return Settings().gateway_target


def describe_rpc_error(error: grpc.RpcError, target: str) -> str:
    """One or two lines a person can act on, instead of a gRPC traceback."""
    code, details = error.code(), error.details() or ""
    if code == grpc.StatusCode.UNAVAILABLE:
        return (
            f"gateway unavailable at {target}: {details}\n"
            "Start the suite with `factcheck serve`, or set FACTCHECK_GATEWAY_TARGET to where it runs."
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
            return EXIT_GATEWAY_ERROR
        except KeyboardInterrupt:
            print("factcheck: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            # Python would complain again when it flushes stdout at exit; point stdout at nothing instead.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_BROKEN_PIPE

    return wrapper


def gateway_command(run: Callable[[argparse.Namespace, Gateway], int]) -> Callable[[argparse.Namespace], int]:
    """channel_command for subcommands that use FactCheckService."""

    @functools.wraps(run)
    def with_stub(args: argparse.Namespace, channel: grpc.Channel) -> int:
        return run(args, Gateway(channel))

    return channel_command(with_stub)
