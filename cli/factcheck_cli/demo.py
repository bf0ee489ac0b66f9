"""`factcheck demo`: the whole suite offline in one command.

Starts the four services on their embedded defaults (SQLite, the built-in `local/`
models), loads examples/knowledge into the knowledge store, checks examples/sample.txt
with live progress, prints the report, writes it as HTML; then has the built-in
fact-checker rank the answers in examples/council-answers.json (council mode), prints
the ranking, writes it as HTML, and stops the suite. The examples are package data
(cli/factcheck_cli/examples/), so the demo runs from an installed wheel as from a checkout.
"""

from __future__ import annotations

import argparse
import sys
import threading
import uuid
from pathlib import Path

import grpc

import factcheck_cli.check as check
import factcheck_cli.client as client
import factcheck_cli.council as council
import factcheck_cli.kb as kb
import factcheck_cli.serve as serve
from factcheck.kit.channels import open_gateway_channel
from factcheck.kit.settings import DEFAULT_PORTS, Settings
from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_cli.arguments import BASE_PORT, bounded, int_between

EXAMPLES = Path(__file__).resolve().parent / "examples"
DESCRIPTION = (
    "Run the whole suite offline in one command: start the four services on the built-in local/ models, load "
    "the example knowledge folder, check the sample text with live progress, print the report and write it as "
    "HTML, then rank three example answers to one question in council mode and write that ranking as HTML too. "
    "The suite is stopped at the end."
)
COUNCIL_QUESTION = "When was the Eiffel Tower completed, and how tall is it?"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "demo",
        help="start the suite, load the example knowledge, check the sample text and rank the example answers (offline)",
        description=DESCRIPTION,
    )
    parser.add_argument(
        "--base-port",
        type=int_between(BASE_PORT),
        default=DEFAULT_PORTS["gateway"],
        help=f"gateway port, {bounded(BASE_PORT)}; the other services take the next three (default 50051)",
    )
    parser.add_argument(
        "--examples",
        type=Path,
        default=EXAMPLES,
        help="folder with knowledge/, sample.txt and council-answers.json (default: the examples installed with "
        "factcheck)",
    )
    parser.add_argument("--html", type=Path, default=Path("factcheck-demo.html"), help="where to write the HTML report")
    parser.add_argument(
        "--council-html",
        type=Path,
        default=Path("factcheck-council-demo.html"),
        help="where to write the council example's HTML ranking",
    )
    parser.set_defaults(
        run=run, json=False, no_gateway="does not apply: `factcheck demo` starts its own suite (--base-port says where)"
    )


def run(args: argparse.Namespace) -> int:
    sample, answers = args.examples / "sample.txt", args.examples / "council-answers.json"
    for needed in (sample, answers):
        if not needed.is_file():
            print(f"factcheck demo: {needed} not found; pass --examples with a folder that has it", file=sys.stderr)
            return client.EXIT_USAGE
    print("Starting the suite (gateway, extractor, checker, reporter) on local models ...", flush=True)
    try:
        services = serve.start_services("127.0.0.1", args.base_port, threading.Event(), echo=False)
    except RuntimeError as error:
        print(f"factcheck demo: {error}.", file=sys.stderr)
        return client.EXIT_GATEWAY_ERROR
    target = f"127.0.0.1:{args.base_port}"
    try:
        with open_gateway_channel(Settings(), target) as channel:
            print(f"\nLoading {args.examples / 'knowledge'} into the knowledge store:", flush=True)
            # The examples' own documents: a newer release's edited example replaces the one an older demo stored.
            kb.add_paths(channel, [args.examples / "knowledge"], replace=True)
            print(f"\nChecking {sample}:\n", flush=True)
            code = _check(args, channel, sample.read_text(encoding="utf-8"))
            if code != client.EXIT_OK:
                return code
            print(f"\nCouncil: ranking the answers in {answers} to one question:\n", flush=True)
            return _council(args, channel, answers)
    except grpc.RpcError as error:
        print(f"factcheck demo: {client.describe_rpc_error(error, target)}", file=sys.stderr)
        return client.EXIT_GATEWAY_ERROR
    except check.UsageError as error:
        print(f"factcheck demo: {error}", file=sys.stderr)
        return client.EXIT_USAGE
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


def _council(args: argparse.Namespace, channel: grpc.Channel, answers: Path) -> int:
    """The council example: the supplied answers ranked by the gateway's default (local/) fact-checker."""
    request = factcheck_pb2.RunRequest(
        question=COUNCIL_QUESTION,
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(responses=council.read_responses(str(answers))),
        request_id=str(uuid.uuid4()),
    )
    shown = argparse.Namespace(**{**vars(args), "html": args.council_html})
    ending = check.show_run(shown, channel, lambda follower: follower.run(request))
    code = check.conclude(shown, client.Gateway(channel), ending)
    if code == client.EXIT_OK:
        print(f"\nHTML ranking: {args.council_html.resolve()}   Stored as: factcheck show {ending.message_id}")
    return code
