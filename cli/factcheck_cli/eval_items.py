"""`factcheck eval show ID --items`: every checker's answer on every item of an evaluation, filtered, as
a table or as records a notebook reads directly (--jsonl, --csv; "-" for stdout), read page by page
from ListEvaluationItems."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import factcheck_cli.client as client
import factcheck_cli.eval_render as eval_render
import factcheck_cli.eval_view as eval_view
from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc
from factcheck_cli.tables import print_table
from factcheck_cli.terminal import counted, make_console

PAGE_SIZE = 100  # the most a page holds
LABELS = {
    "verified": common_pb2.VERDICT_VERIFIED,
    "disputed": common_pb2.VERDICT_DISPUTED,
    "unverifiable": common_pb2.VERDICT_UNVERIFIABLE,
}
STDOUT = "-"


def add_item_options(parser: argparse.ArgumentParser) -> None:
    items = parser.add_argument_group("answers (every checker's answer on every item)")
    items.add_argument("--items", action="store_true", help="print the answers instead of the scores")
    which = items.add_mutually_exclusive_group()
    which.add_argument(
        "--wrong", action="store_true", help="only wrong answers: a verdict other than the label, or unreadable"
    )
    which.add_argument("--failed", action="store_true", help="only checker calls that failed, with why")
    items.add_argument("--checker", metavar="MODEL", help="only this checker model's answers")
    items.add_argument("--set", metavar="NAME", dest="set_name", help="only this set's items")
    items.add_argument(
        "--label",
        choices=sorted(LABELS),
        type=str.lower,
        metavar="LABEL",
        help="only items labelled so: verified, disputed or unverifiable",
    )
    items.add_argument(
        "--jsonl", metavar="PATH", help="write the answers as JSON lines, one record per answer ('-': stdout)"
    )
    items.add_argument("--csv", metavar="PATH", help="write the answers as CSV with a header row ('-': stdout)")


def wants_items(args: argparse.Namespace) -> bool:
    return bool(
        args.items or args.jsonl or args.csv or args.wrong or args.failed or args.checker or args.set_name or args.label
    )


def fetch_items(
    stub: evaluation_pb2_grpc.EvaluationServiceStub,
    evaluation_id: str,
    *,
    limit: int | None = None,
    **filters,
) -> Iterator[evaluation_pb2.EvaluationItem]:
    """The evaluation's answers that pass `filters` (ListEvaluationItemsRequest's fields), every page (at
    most `limit` answers)."""
    token, given = "", 0
    while True:
        page = stub.ListEvaluationItems(
            evaluation_pb2.ListEvaluationItemsRequest(
                evaluation_id=evaluation_id, page_size=PAGE_SIZE, page_token=token, **filters
            ),
            timeout=client.UNARY_TIMEOUT_S,
        )
        for item in page.items:
            if limit is not None and given >= limit:
                return
            given += 1
            yield item
        token = page.next_page_token
        if not token:
            return


def _filters(args: argparse.Namespace) -> dict:
    filters: dict = {"wrong_only": args.wrong, "failed_only": args.failed}
    if args.checker:
        filters["checker_model"] = args.checker
    if args.set_name:
        filters["set"] = args.set_name
    if args.label:
        filters["label"] = LABELS[args.label]
    return filters


def run_items(args: argparse.Namespace, stub: evaluation_pb2_grpc.EvaluationServiceStub) -> int:
    if args.json or args.html is not None:
        print(
            "factcheck eval show: --json and --html show the scores; write the answers with --jsonl or --csv",
            file=sys.stderr,
        )
        return client.EXIT_USAGE
    if args.jsonl == STDOUT and args.csv == STDOUT:
        print("factcheck eval show: only one of --jsonl and --csv can write to stdout ('-')", file=sys.stderr)
        return client.EXIT_USAGE
    items = list(fetch_items(stub, args.id, **_filters(args)))
    records = [eval_view.item_record(args.id, item) for item in items]
    for path, write in ((args.jsonl, write_jsonl), (args.csv, write_csv)):
        if path:
            _write(path, write, records)
    # The table, unless the answers were asked for as records only (or stdout carries them).
    if (args.items and STDOUT not in (args.jsonl, args.csv)) or not (args.jsonl or args.csv):
        console = make_console()
        if items:
            print_table(console, eval_render.ITEM_COLUMNS, items, wide=args.wide)
        console.print(f"{counted(len(items), 'answer')}{describe(args)}")
    return client.EXIT_OK


def describe(args: argparse.Namespace) -> str:
    parts = []
    if args.wrong:
        parts.append("wrong")
    if args.failed:
        parts.append("failed calls")
    for label, value in (("checker", args.checker), ("set", args.set_name), ("label", args.label)):
        if value:
            parts.append(f"{label} {value}")
    return f" ({', '.join(parts)})" if parts else ""


def _write(path: str, write, records: list[dict]) -> None:
    if path == STDOUT:
        write(sys.stdout, records)
        sys.stdout.flush()
        return
    with Path(path).open("w", encoding="utf-8", newline="") as stream:
        write(stream, records)
    print(f"{counted(len(records), 'answer')} written to {path}", file=sys.stderr)


def write_jsonl(stream: TextIO, records: list[dict]) -> None:
    for record in records:
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_csv(stream: TextIO, records: list[dict]) -> None:
    writer = csv.DictWriter(stream, fieldnames=eval_view.RECORD_FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({key: "" if value is None else value for key, value in record.items()})
