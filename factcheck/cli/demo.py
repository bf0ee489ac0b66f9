"""`factcheck demo`: the whole suite offline in one command.

Starts the four services on their embedded defaults (SQLite, the built-in `local/`
models), loads examples/knowledge into the knowledge store, checks examples/sample.txt
with live progress, prints the report, writes it as HTML, and stops the suite.
"""

from __future__ import annotations

import argparse
import sys
import threading
import uuid
from pathlib import Path

import grpc

from factcheck.channels import open_gateway_channel
from factcheck.cli import check, client, kb, serve
from factcheck.settings import DEFAULT_PORTS, Settings
from factcheck.v1 import factcheck_pb2

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "demo",
        help="start the suite, load the example knowledge and check the sample text (offline, no key)",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--base-port", type=int, default=DEFAULT_PORTS["gateway"], help="gateway port (default 50051)")
    parser.add_argument("--examples", type=Path, default=EXAMPLES, help="folder with knowledge/ and sample.txt")
    parser.add_argument("--html", type=Path, default=Path("factcheck-demo.html"), help="where to write the HTML report")
    parser.set_defaults(run=run, json=False)


def run(args: argparse.Namespace) -> int:
    sample = args.examples / "sample.txt"
    if not sample.is_file():
        print(f"factcheck demo: {sample} not found (run it from a checkout, or pass --examples)", file=sys.stderr)
        return client.EXIT_USAGE
    print("Starting the suite (gateway, extractor, checker, reporter) on local models ...", flush=True)
    try:
        services = serve.start_services("127.0.0.1", args.base_port, threading.Event(), echo=False)
    except RuntimeError as error:
        print(f"factcheck demo: {error}", file=sys.stderr)
        return client.EXIT_GATEWAY_ERROR
    target = f"127.0.0.1:{args.base_port}"
    try:
        with open_gateway_channel(Settings(), target) as channel:
            print(f"\nLoading {args.examples / 'knowledge'} into the knowledge store:", flush=True)
            kb.add_paths(channel, [args.examples / "knowledge"])
            print(f"\nChecking {sample}:\n", flush=True)
            return _check(args, channel, sample.read_text(encoding="utf-8"))
    except grpc.RpcError as error:
        print(f"factcheck demo: {client.describe_rpc_error(error, target)}", file=sys.stderr)
        return client.EXIT_GATEWAY_ERROR
    except check.ConnectionLost as lost:
        check.report_lost(lost)
        return client.EXIT_GATEWAY_ERROR
    finally:
        serve.stop_services(services)


def _check(args: argparse.Namespace, channel: grpc.Channel, content: str) -> int:
    request = factcheck_pb2.RunRequest(
        question="Facts about the Eiffel Tower, the Paris Agreement, Apollo 11, water and the Great Barrier Reef",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=content),
        request_id=str(uuid.uuid4()),
    )
    ending = check.show_run(args, channel, lambda follower: follower.run(request))
    code = check.conclude(args, client.Gateway(channel), ending)
    if code == client.EXIT_OK:
        print(f"\nHTML report: {args.html.resolve()}   Stored as: factcheck show {ending.message_id}")
    return code
