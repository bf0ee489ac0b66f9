"""`factcheck entail`: is a claim entailed by a source excerpt? An entailment-mode run on the gateway
(four isolated agents: extractor, reliability, judge, auditor), then each item's final verdict,
confidence, reliability and the auditor's reasons; `--json` prints each item's final aggregated
output exactly in the entailment workflow's structure, one JSON object per line, in item order."""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path

import grpc

import factcheck_cli.client as client
from factcheck.core.entailment_rules import final_json
from factcheck.v1 import entailment_pb2, factcheck_pb2
from factcheck_cli.check import (
    STDIN,
    UsageError,
    add_reconnect_option,
    add_timeout_option,
    report_failure,
    report_lost,
)
from factcheck_cli.follow import RECONNECT_TIMEOUT_S, ConnectionLost, Follower

DEFAULT_QUESTION = "Is each claim entailed by its source?"
_AGENTS = ("extractor", "reliability", "judge", "auditor")


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "entail",
        help="check whether a claim is entailed by a source excerpt (four isolated agents)",
        description=(
            "Judge whether each CLAIM is textually entailed by its SOURCE excerpt with four isolated "
            "agents: extractor, reliability, entailment judge and adversarial auditor. One item with --claim, "
            "--source and --source-type, or many with --items (JSON Lines: claim, source_excerpt, source_type)."
        ),
        epilog="exit codes: 0 every item judged, 1 the run or an item failed, 2 bad input or an invalid request, 3 gateway unreachable",
    )
    parser.add_argument("--claim", help="the claim to check")
    parser.add_argument("--source", metavar="FILE", help="file holding the source excerpt ('-' for stdin)")
    parser.add_argument("--source-type", help='what the source is, e.g. "peer-reviewed journal article"')
    parser.add_argument("--items", metavar="FILE", help="JSON Lines, one item per line ('-' for stdin)")
    parser.add_argument("--model", metavar="MODEL", help="every agent's model (default: the gateway's)")
    for agent in _AGENTS:
        parser.add_argument(f"--{agent}", metavar="MODEL", help=f"the {agent} agent's model")
    add_timeout_option(parser, "per-agent-call timeout")
    parser.add_argument(
        "--json", action="store_true", help="print each item's final output as one JSON object per line"
    )
    add_reconnect_option(parser)
    parser.set_defaults(run=client.channel_command(run))


def _read(path: str) -> str:
    if path == STDIN:
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from error


def read_items(args: argparse.Namespace) -> list[entailment_pb2.EntailmentItem]:
    single = (args.claim, args.source, args.source_type)
    if args.items is not None:
        if any(value is not None for value in single):
            raise UsageError("give --items, or --claim with --source and --source-type, not both")
        return [_item_of_line(number, line) for number, line in _lines(_read(args.items))]
    if any(value is None for value in single):
        raise UsageError("--claim, --source and --source-type are all needed (or --items FILE)")
    return [
        entailment_pb2.EntailmentItem(claim=args.claim, source_excerpt=_read(args.source), source_type=args.source_type)
    ]


def _lines(text: str):
    return [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]


def _item_of_line(number: int, line: str) -> entailment_pb2.EntailmentItem:
    try:
        data = json.loads(line)
    except ValueError:
        raise UsageError(f"--items line {number} is not JSON") from None
    if not isinstance(data, dict):
        raise UsageError(f"--items line {number} is not a JSON object")
    excerpt = data.get("source_excerpt", data.get("source"))
    values = (data.get("claim"), excerpt, data.get("source_type"))
    if not all(isinstance(value, str) for value in values):
        raise UsageError(f"--items line {number} needs string fields claim, source_excerpt and source_type")
    return entailment_pb2.EntailmentItem(claim=values[0], source_excerpt=values[1], source_type=values[2])


def build_request(args: argparse.Namespace, items) -> factcheck_pb2.RunRequest:
    config = entailment_pb2.EntailmentConfig(items=items)
    if args.model is not None:
        config.model = args.model
    for agent in _AGENTS:
        if getattr(args, agent) is not None:
            setattr(config, f"{agent}_model", getattr(args, agent))
    if args.timeout_ms is not None:
        config.timeout_ms = args.timeout_ms
    return factcheck_pb2.RunRequest(
        question=DEFAULT_QUESTION,
        mode=factcheck_pb2.MODE_ENTAILMENT,
        entailment_config=config,
        request_id=str(uuid.uuid4()),  # a Run retried after a broken connection attaches to this one
    )


def run(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        items = read_items(args)
    except UsageError as error:
        print(f"factcheck entail: {error}", file=sys.stderr)
        return client.EXIT_USAGE
    follower = Follower(channel, lambda event: None, _note, getattr(args, "reconnect_timeout", RECONNECT_TIMEOUT_S))
    try:
        ending = follower.run(build_request(args, items))
    except ConnectionLost as lost:
        report_lost(lost)
        return client.EXIT_GATEWAY_ERROR
    if ending.kind != "complete":
        report_failure(ending)
        return client.EXIT_CANCELLED if ending.kind == "cancelled" else client.EXIT_RUN_FAILED
    gateway = client.Gateway(channel)
    result = gateway.GetResult(
        factcheck_pb2.GetResultRequest(message_id=ending.message_id), timeout=client.UNARY_TIMEOUT_S
    ).result
    failed = False
    for item in result.entailment.items:
        if not item.HasField("final"):
            failed = True
            print(f"factcheck entail: item {item.item_index + 1} failed: {item.error}", file=sys.stderr)
            continue
        if args.json:
            print(json.dumps(final_json(item.final), ensure_ascii=False), flush=True)
        else:
            print(describe(item), flush=True)
    return client.EXIT_RUN_FAILED if failed else client.EXIT_OK


def describe(item: entailment_pb2.EntailmentItemResult) -> str:
    final = final_json(item.final)
    lines = [
        f"[{item.item_index + 1}] {final['final_verdict']}  confidence {final['final_confidence']} "
        f"(judge {final['entailment_confidence']})  reliability {final['reliability_rating'] or 'unknown'}",
        f"    claim: {final['claim']}",
    ]
    if item.HasField("judge"):
        lines += [f"    judge: {reason}" for reason in item.judge.reasoning]
    if item.HasField("auditor"):
        auditor = item.auditor
        if auditor.rejected:
            lines.append(f"    auditor (rejected): {auditor.rejection}")
        lines += [f"    auditor: {reason}" for reason in auditor.auditor_reasoning]
        if not auditor.auditor_reasoning and not auditor.rejected:
            lines.append("    auditor: no material ambiguity")
    lines += [f"    note: {note}" for note in final["notes"]]
    return "\n".join(lines)


def _note(text: str) -> None:
    print(f"factcheck: {text}", file=sys.stderr, flush=True)
