"""`factcheck council`: ask a council of models one question (or rank answers you already have),
have every fact-checker rate every anonymised answer, show the progress, then the ranking."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

import grpc

import factcheck_cli.check as check
import factcheck_cli.client as client
from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_cli.check import STDIN, UsageError

COUNCIL_EXIT_CODES = check.RUN_EXIT_CODES.replace(
    "2 nothing to check, a binary or unreadable file, or an invalid request",
    "2 bad arguments, a --responses file that cannot be used, or an invalid request",
)
RESPONSES_HELP = (
    'named answers to rank instead of generating them: a JSON array of {"name": ..., "text": ...} objects, '
    "or JSON Lines of the same ('-' reads stdin)"
)


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "council",
        help="rank several models' answers to a question by factual reliability",
        description=(
            "Ask QUESTION of 2-8 council models (-m, repeated), or rank 2-8 answers you already have "
            "(--responses FILE). Every fact-checker rates every answer without knowing whose it is; the answers "
            "are ranked by their average rating, with the inaccurate claims by error type. Progress is shown while "
            "the run streams (and resumed after a broken connection, as `check` does), then the ranking."
        ),
        epilog=COUNCIL_EXIT_CODES,
    )
    parser.add_argument("question", help="the question the answers answer")
    parser.add_argument(
        "-m",
        "--model",
        metavar="MODEL",
        action="append",
        default=[],
        dest="models",
        help="a council model that answers; repeat for 2-8",
    )
    parser.add_argument("--responses", metavar="FILE", help=RESPONSES_HELP)
    parser.add_argument(
        "--fact-checker",
        metavar="MODEL",
        action="append",
        default=[],
        dest="fact_checkers",
        help="a fact-checker model; repeat for 1-8 (default: the council models, or the gateway's checkers)",
    )
    parser.add_argument("--chairman", metavar="MODEL", help="writes a final answer from the most reliable response")
    parser.add_argument("--reporter", metavar="MODEL", help="writes the title")
    parser.add_argument(
        "--exclude-self", action="store_true", help="leave each model's rating of its own answer out of the averages"
    )
    check.add_timeout_option(parser, "per-stage timeout")
    parser.add_argument("--conversation-id", metavar="ID", help="conversation the run belongs to")
    parser.add_argument("--json", action="store_true", help="print each event as one JSON object per line")
    parser.add_argument("--html", metavar="OUT", type=Path, help="also write the ranking as a self-contained HTML page")
    check.add_reconnect_option(parser)
    parser.set_defaults(run=client.channel_command(run))


def read_responses(source: str) -> list[council_pb2.NamedResponse]:
    """The named answers in FILE ('-': stdin): a JSON array of {"name", "text"} objects, or one such
    object per line (JSON Lines). Raises UsageError naming the file, the item and what is wrong."""
    where = "stdin" if source == STDIN else source
    if source == STDIN:
        raw = sys.stdin.read()
    else:
        try:
            raw = Path(source).read_text(encoding="utf-8")
        except OSError as error:
            raise UsageError(f"cannot read {source}: {error.strerror}") from error
        except UnicodeDecodeError:
            raise UsageError(f"{where}: not UTF-8 text") from None
    if not raw.strip():
        raise UsageError(f"{where}: no responses (the file is empty)")
    if raw.lstrip().startswith("["):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as error:
            raise UsageError(
                f"{where}: not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
            ) from None
        named = [(f"item {number}", item) for number, item in enumerate(items, start=1)]
    else:
        named = []
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                named.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as error:
                raise UsageError(
                    f"{where}: line {number} is not valid JSON ({error.msg}); "
                    "expected a JSON array or one JSON object per line"
                ) from None
    if not named:
        raise UsageError(f"{where}: no responses (the array is empty)")
    return [_named_response(where, place, item) for place, item in named]


def _named_response(where: str, place: str, item: object) -> council_pb2.NamedResponse:
    if not isinstance(item, dict):
        raise UsageError(f'{where}: {place} is not an object with "name" and "text"')
    for key in ("name", "text"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            problem = "is missing" if value is None else "must be a non-empty string"
            raise UsageError(f'{where}: {place}: "{key}" {problem}')
    return council_pb2.NamedResponse(name=item["name"], text=item["text"])


def build_request(args: argparse.Namespace) -> factcheck_pb2.RunRequest:
    """The RunRequest for the options given; the gateway fills in defaults and validates the counts."""
    if bool(args.models) == (args.responses is not None):
        raise UsageError("give the council models (-m MODEL, repeated) or --responses FILE, not both or neither")
    config = council_pb2.CouncilConfig(council_models=args.models, fact_checker_models=args.fact_checkers)
    if args.responses is not None:
        config.responses.extend(read_responses(args.responses))
    for field, value in (
        ("chairman_model", args.chairman),
        ("reporter_model", args.reporter),
        ("timeout_ms", args.timeout_ms),
    ):
        if value is not None:
            setattr(config, field, value)
    if args.exclude_self:
        config.exclude_self_ratings = True
    request = factcheck_pb2.RunRequest(question=args.question, mode=factcheck_pb2.MODE_COUNCIL, council_config=config)
    if args.conversation_id is not None:
        request.conversation_id = args.conversation_id
    return request


def run(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        request = build_request(args)
    except UsageError as error:
        print(f"factcheck council: {error}", file=sys.stderr)
        return client.EXIT_USAGE
    # AIP-155: a Run retried after a broken connection attaches to the run this one started.
    request.request_id = str(uuid.uuid4())
    return check.follow_run(args, channel, lambda follower: follower.run(request))
