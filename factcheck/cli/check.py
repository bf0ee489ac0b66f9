"""`factcheck check`: run a fact-check on the gateway, show its progress, then its report."""

from __future__ import annotations

import argparse
import sys
import uuid
from pathlib import Path
from typing import Callable

import grpc

import factcheck.cli.client as client
import factcheck.cli.html as html
import factcheck.cli.render as render
import factcheck.cli.view as view
from factcheck.cli.arguments import (
    INVESTIGATE_BATCH_SIZE,
    MAX_CONTENT_LENGTH,
    TIMEOUT_MS,
    bounded,
    int_between,
    non_negative_float,
)
from factcheck.cli.documents import NotText, cannot_read, decode_text
from factcheck.cli.follow import RECONNECT_TIMEOUT_S, ConnectionLost, Ending, Follower, follow_hint
from factcheck.kit.settings import Settings
from factcheck.models.local import LOCAL_PREFIX
from factcheck.v1 import evaluation_pb2, factcheck_pb2

RUN_EXIT_CODES = (
    "exit codes: 0 complete, 1 the run failed, 2 nothing to check, a binary or unreadable file, or an invalid "
    "request, 3 the gateway is unreachable (also after --reconnect-timeout) or refused the call, 4 the run was "
    "cancelled, 5 unknown id, 6 complete but nothing checked (the answer generated for --question held no "
    "verifiable claim), 130 interrupted (the run goes on), 141 stdout closed (e.g. | head)"
)
# --consensus: FactCheckConfig.consensus.
CONSENSUS = {"majority": evaluation_pb2.CONSENSUS_MAJORITY, "weighted": evaluation_pb2.CONSENSUS_WEIGHTED}
# A run's `question` is required (the gateway's request validation); with content and no question it
# describes the content.
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
            "The gateway is FACTCHECK_GATEWAY_TARGET (default localhost:50051). A broken connection is "
            "resumed where it broke, without starting a second run."
        ),
        epilog=RUN_EXIT_CODES,
    )
    parser.add_argument("content", nargs="?", help="the text to check; '-' reads it from stdin")
    parser.add_argument("-f", "--file", metavar="FILE", help="read the text to check from FILE ('-' for stdin)")
    parser.add_argument(
        "-q", "--question", help="a question for the generator to answer and check, or a description of the content"
    )
    parser.add_argument(
        "--generator",
        metavar="MODEL",
        help="generator model (provider/name) for --question; default FACTCHECK_DEFAULT_GENERATOR_MODEL",
    )
    parser.add_argument("--extractor", metavar="MODEL", help="claim extractor model")
    parser.add_argument(
        "--checker", metavar="MODEL", action="append", default=[], help="checker model; repeat for 1-4 checkers"
    )
    parser.add_argument("--reporter", metavar="MODEL", help="reporter model (also writes the title)")
    add_timeout_option(parser, "per-stage timeout")
    parser.add_argument(
        "--max-content-length",
        type=int_between(MAX_CONTENT_LENGTH),
        metavar="CHARS",
        help=f"truncate the content, {bounded(MAX_CONTENT_LENGTH)}",
    )
    parser.add_argument("--conversation-id", metavar="ID", help="conversation the run belongs to")
    parser.add_argument(
        "--investigate",
        action="store_true",
        help="investigate the claims the checkers left dubious with targeted searches (shown claim by claim)",
    )
    parser.add_argument(
        "--investigate-batch-size",
        type=int_between(INVESTIGATE_BATCH_SIZE),
        metavar="N",
        help=f"claims investigated at once, {bounded(INVESTIGATE_BATCH_SIZE)}",
    )
    parser.add_argument("--investigator", metavar="MODEL", help="model that judges search results")
    parser.add_argument(
        "--citations",
        action="store_true",
        help="claim-level citations: four-tier support, corrected citations, numeric QA (needs evidence: "
        "documents in the knowledge store); read them back with `factcheck claims --run ID`",
    )
    parser.add_argument(
        "--consensus",
        choices=sorted(CONSENSUS),
        help="how the checkers' verdicts combine: majority (the default) or weighted by each checker's "
        "reliability measured by `factcheck eval`: in the evaluation --evaluation names, else in this tenant's "
        "newest complete one that measured them all on enough items of each label; without one, the majority, "
        "with a warning on stderr and the reason in the report",
    )
    parser.add_argument(
        "--evaluation",
        metavar="ID",
        help="the evaluation the weighted consensus weighs by (a complete one that measured every checker), "
        "so a newer evaluation never changes the weights; implies --consensus weighted",
    )
    parser.add_argument(
        "--thresholds-from",
        metavar="ID",
        help="the evaluation whose fitted thresholds the binary checkers (onnx/ and grounding-dialect models) "
        "use instead of their own (`factcheck eval --fit-threshold`); the report says which each used",
    )
    parser.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    parser.add_argument("--html", metavar="OUT", type=Path, help="also write the report as a self-contained HTML page")
    add_reconnect_option(parser)
    parser.set_defaults(run=client.channel_command(run))


def add_timeout_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--timeout-ms", type=int_between(TIMEOUT_MS), metavar="MS", help=f"{what}, {bounded(TIMEOUT_MS)}"
    )


def add_reconnect_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reconnect-timeout",
        type=non_negative_float,
        default=RECONNECT_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long to keep trying to resume a broken connection to the gateway (default {RECONNECT_TIMEOUT_S:.0f})",
    )


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
        if not source.strip():
            raise UsageError("nothing to check: the content is empty")
        return source
    try:
        data = sys.stdin.buffer.read() if source == STDIN else Path(source).read_bytes()
        return decode_text(data, "stdin" if source == STDIN else source)
    except NotText as error:
        raise UsageError(f"nothing to check: {error}") from error
    except OSError as error:
        raise UsageError(cannot_read(source, error)) from error


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
        ("investigate", True if getattr(args, "investigate", False) else None),
        ("investigate_batch_size", getattr(args, "investigate_batch_size", None)),
        ("investigator_model", getattr(args, "investigator", None)),
        ("citations", True if getattr(args, "citations", False) else None),
        ("consensus", CONSENSUS.get(getattr(args, "consensus", None) or "")),
        ("consensus_evaluation_id", getattr(args, "evaluation", None)),
        ("threshold_evaluation_id", getattr(args, "thresholds_from", None)),
    ):
        if value is not None:
            setattr(config, field, value)
    request = factcheck_pb2.RunRequest(question=args.question or DEFAULT_QUESTION, mode=factcheck_pb2.MODE_FACT_CHECK)
    # Without any option the gateway's default generator answers the question. A present but
    # sourceless mode_config is refused (the gateway's request validation), so with other options the
    # default generator is named here: the setting `factcheck serve` hands the gateway too.
    if config.ListFields():
        if content is None and args.generator is None:
            config.generator_model = Settings().default_generator_model
        request.mode_config.CopyFrom(config)
    if args.conversation_id is not None:
        request.conversation_id = args.conversation_id
    return request


def print_json(event: factcheck_pb2.FactCheckEvent) -> None:
    print(render.proto_json(event), flush=True)


def print_note(text: str) -> None:
    print(f"factcheck: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        content = read_content(args)
    except UsageError as error:
        print(f"factcheck check: {error}", file=sys.stderr)
        return client.EXIT_USAGE
    evaluation = getattr(args, "evaluation", None)
    if evaluation is not None:
        if args.consensus == "majority":
            print(
                "factcheck check: --evaluation names the weights of --consensus weighted, not majority", file=sys.stderr
            )
            return client.EXIT_USAGE
        args.consensus = "weighted"
    request = build_request(args, content)
    # AIP-155: a Run retried after a broken connection attaches to the run this one started.
    request.request_id = str(uuid.uuid4())
    return follow_run(args, channel, lambda follower: follower.run(request))


def follow_run(args: argparse.Namespace, channel: grpc.Channel, start: Callable[[Follower], Ending]) -> int:
    """Show a run's events to its end (progress, or --json), then its report: `check` and `watch`."""
    try:
        ending = show_run(args, channel, start)
    except ConnectionLost as lost:
        report_lost(lost)
        return client.EXIT_GATEWAY_ERROR
    return conclude(args, client.Gateway(channel), ending)


def show_run(args: argparse.Namespace, channel: grpc.Channel, start: Callable[[Follower], Ending]) -> Ending:
    reconnect_timeout_s = getattr(args, "reconnect_timeout", RECONNECT_TIMEOUT_S)
    if args.json:
        return start(Follower(channel, print_json, print_note, reconnect_timeout_s))
    with render.Progress(render.make_console()) as progress:
        return start(Follower(channel, progress.show, progress.note, reconnect_timeout_s))


def conclude(args: argparse.Namespace, gateway: client.Gateway, ending: Ending) -> int:
    """The report of a complete run; the reason of a failed or cancelled one. The exit code either way."""
    if ending.kind == "complete":
        result = present_result(args, gateway, ending.message_id)
        warn_if_majority_instead(result)
        return warn_if_nothing_checked(result)
    # The progress display showed the causes already; with --json they are only in the JSON.
    report_failure(ending, causes=args.json)
    return client.EXIT_CANCELLED if ending.kind == "cancelled" else client.EXIT_RUN_FAILED


def report_failure(ending: Ending, *, causes: bool = True) -> None:
    """Why the run did not complete, plainly, and where the stages that did run can be read."""
    if ending.kind == "cancelled":
        print(f"factcheck: the run was cancelled: {ending.message or 'no reason given'}", file=sys.stderr)
    else:
        print(f"factcheck: {ending.message or 'the run failed'}", file=sys.stderr)
        for failure in ending.failures if causes else ():
            print(f"  {render.clean(view.failure_text(failure))}", file=sys.stderr)
    print(f"What was done is stored: factcheck show {ending.message_id}", file=sys.stderr)


def report_lost(lost: ConnectionLost, what: str = "run", hint: Callable[[str], str] = follow_hint) -> None:
    """The gateway could not be reached again: how long it was tried, and how to follow the run (or
    evaluation: `what`, `hint`) once it can."""
    why = f" ({lost.error.code().name}: {lost.error.details()})" if lost.error is not None else ""
    print(
        f"factcheck: lost the connection to the gateway at {client.gateway_target()} and could not follow the "
        f"{what} again within {lost.waited_s:.0f} s{why}.",
        file=sys.stderr,
    )
    if lost.message_id is not None:
        print(f"The {what} may still be going: {hint(lost.message_id)}.", file=sys.stderr)


def present_result(args: argparse.Namespace, gateway: client.Gateway, message_id: str) -> factcheck_pb2.FactCheckResult:
    """The stored result (as `show` would print it, unless --json) and the HTML page, both from GetResult."""
    request = factcheck_pb2.GetResultRequest(message_id=message_id)
    result = gateway.GetResult(request, timeout=client.UNARY_TIMEOUT_S).result
    if not args.json:
        render.render_result(render.make_console(), result)
    if args.html is not None:
        html.write_report(args.html, result)
    return result


def warn_if_majority_instead(result: factcheck_pb2.FactCheckResult) -> None:
    """A warning on stderr when the run asked for the weighted consensus and fell back to the majority."""
    weighting = result.verification.consensus_weighting
    if weighting.fallback != evaluation_pb2.CONSENSUS_FALLBACK_UNSPECIFIED:
        print(f"factcheck: warning: the weighted consensus was not used: {weighting.note}", file=sys.stderr)


def warn_if_nothing_checked(result: factcheck_pb2.FactCheckResult) -> int:
    """EXIT_OK, or EXIT_NOTHING_CHECKED with a warning on stderr when the run generated its content and
    that content held no claim to check (the built-in generator's answer without documents, above all)."""
    generated = result.content.source == factcheck_pb2.CONTENT_SOURCE_GENERATED
    if result.mode != factcheck_pb2.MODE_FACT_CHECK or not generated or result.extraction.claims:
        return client.EXIT_OK
    model = result.content.model
    if model.startswith(LOCAL_PREFIX):
        why = (
            f"the built-in generator ({model}) answers only from the knowledge store, and it holds nothing about "
            "this question. Add documents with `factcheck kb add`, or have a real model answer with --generator MODEL."
        )
    else:
        why = f"the answer {model} generated holds no verifiable claim."
    print(f"factcheck: warning: nothing was checked: {why}", file=sys.stderr)
    return client.EXIT_NOTHING_CHECKED
