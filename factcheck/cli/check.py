"""`factcheck check`: run a fact-check on the gateway, show its progress, then its report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from factcheck.cli import client, html, render
from factcheck.v1 import factcheck_pb2

# The spec's `question` is required; with content and no question it describes the content.
DEFAULT_QUESTION = "Fact-check this content"
STDIN = "-"


class UsageError(Exception):
    """Input the command cannot use (no content, unreadable file); shown as a one-line message."""


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "check",
        help="fact-check text, a file, or a generated answer to a question",
        description=(
            "Fact-check CONTENT (an argument, -f FILE, or '-' for stdin), or have the generator answer "
            "--question first. Progress is shown while the run streams, then the report. "
            "The gateway is FACTCHECK_GATEWAY_TARGET (default localhost:50051)."
        ),
    )
    parser.add_argument("content", nargs="?", help="the text to check; '-' reads it from stdin")
    parser.add_argument("-f", "--file", metavar="FILE", help="read the text to check from FILE ('-' for stdin)")
    parser.add_argument(
        "-q", "--question", help="a question for the generator to answer and check, or a description of the content"
    )
    parser.add_argument(
        "--generator",
        metavar="MODEL",
        help="generator model (provider/name); needed with --question once any other model option is given",
    )
    parser.add_argument("--extractor", metavar="MODEL", help="claim extractor model")
    parser.add_argument(
        "--checker", metavar="MODEL", action="append", default=[], help="checker model; repeat for 1-4 checkers"
    )
    parser.add_argument("--reporter", metavar="MODEL", help="reporter model (also writes the title)")
    parser.add_argument("--timeout-ms", type=int, metavar="MS", help="per-stage timeout, 30000-180000")
    parser.add_argument("--max-content-length", type=int, metavar="CHARS", help="truncate the content, 500-50000")
    parser.add_argument("--conversation-id", metavar="ID", help="conversation the run belongs to")
    parser.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    parser.add_argument("--html", metavar="OUT", type=Path, help="also write the report as a self-contained HTML page")
    parser.set_defaults(run=client.gateway_command(run))


def read_content(args: argparse.Namespace) -> str | None:
    """The text to check from the argument, -f FILE or stdin; None when only a question is given."""
    if args.content is not None and args.file is not None:
        raise UsageError("give the content as an argument or with -f, not both")
    source = args.file if args.file is not None else args.content
    if source is None:
        if args.question is None:
            raise UsageError("nothing to check: give the content, -f FILE, '-' for stdin, or --question")
        return None
    if args.file is None and source != STDIN:
        return source
    if source == STDIN:
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise UsageError(f"cannot read {source}: {error.strerror}") from error


def build_request(args: argparse.Namespace, content: str | None) -> factcheck_pb2.RunRequest:
    """The RunRequest for the options given; the gateway fills in defaults and validates."""
    config = factcheck_pb2.FactCheckConfig(checker_models=args.checker)
    for field, value in (
        ("content_to_check", content),
        ("generator_model", args.generator),
        ("extractor_model", args.extractor),
        ("reporter_model", args.reporter),
        ("timeout_ms", args.timeout_ms),
        ("max_content_length", args.max_content_length),
    ):
        if value is not None:
            setattr(config, field, value)
    request = factcheck_pb2.RunRequest(question=args.question or DEFAULT_QUESTION, mode=factcheck_pb2.MODE_FACT_CHECK)
    # Without any option the gateway's default generator answers the question; a present but
    # sourceless mode_config is refused, as the spec's validation says.
    if config.ListFields():
        request.mode_config.CopyFrom(config)
    if args.conversation_id is not None:
        request.conversation_id = args.conversation_id
    return request


def stream_run(gateway: client.Gateway, request: factcheck_pb2.RunRequest, show: Callable[[object], None]):
    """Run the request, showing each event as it arrives; the last event (None if the stream was empty)."""
    last = None
    try:
        for response in gateway.Run(request):
            last = response.event
            show(last)
    except KeyboardInterrupt:
        if last is not None:  # the gateway finishes and stores the run anyway
            print(f"\nThe run goes on without you: factcheck show {last.message_id}", file=sys.stderr)
        raise
    return last


def print_json(event: factcheck_pb2.FactCheckEvent) -> None:
    print(render.proto_json(event), flush=True)


def run(args: argparse.Namespace, gateway: client.Gateway) -> int:
    try:
        content = read_content(args)
    except UsageError as error:
        print(f"factcheck check: {error}", file=sys.stderr)
        return client.EXIT_USAGE
    request = build_request(args, content)
    if args.json:
        last = stream_run(gateway, request, print_json)
    else:
        with render.Progress(render.make_console()) as progress:
            last = stream_run(gateway, request, progress.show)
    kind = last.WhichOneof("event") if last is not None else None
    if kind != "complete":
        report_failure(last)
        return client.EXIT_RUN_FAILED
    if not args.json or args.html is not None:
        present_result(args, gateway, last.message_id)
    return client.EXIT_OK


def report_failure(last: factcheck_pb2.FactCheckEvent | None) -> None:
    """The error event's message, plainly, and where the stages that did run can be read."""
    kind = last.WhichOneof("event") if last is not None else None
    message = last.error.message if kind == "error" else "the run ended before it completed"
    print(f"factcheck: {message}", file=sys.stderr)
    if last is not None:
        print(f"What was done is stored: factcheck show {last.message_id}", file=sys.stderr)


def present_result(args: argparse.Namespace, gateway: client.Gateway, message_id: str) -> None:
    """The stored result (as `show` would print it) and the HTML page, both from GetResult."""
    request = factcheck_pb2.GetResultRequest(message_id=message_id)
    result = gateway.GetResult(request, timeout=client.UNARY_TIMEOUT_S).result
    if not args.json:
        render.render_result(render.make_console(), result)
    if args.html is not None:
        html.write_report(args.html, result)
