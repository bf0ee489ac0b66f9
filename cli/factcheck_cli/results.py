"""`factcheck show ID` and `factcheck list`: stored runs (of every mode), read back from the gateway."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import cast

import factcheck_cli.client as client
import factcheck_cli.council_view as council_view
import factcheck_cli.html as html
import factcheck_cli.render as render
import factcheck_cli.tables as tables
import factcheck_cli.view as view
from factcheck.v1 import factcheck_pb2


def add_parsers(commands) -> None:
    show = commands.add_parser(
        "show",
        help="show a stored run's report",
        description=(
            "Show the report of a stored run (a council run: its ranking), by the id `factcheck check`, "
            "`factcheck council` and `factcheck list` print."
        ),
        epilog="exit codes: 0 shown, 3 the gateway is unreachable or refused the call, 5 unknown id",
    )
    show.add_argument("id", help="the run's message id (or its start, as `factcheck list` shows it)")
    show.add_argument("--json", action="store_true", help="print the stored result as one JSON object")
    show.add_argument("--html", metavar="OUT", type=Path, help="also write the report as a self-contained HTML page")
    show.set_defaults(run=client.gateway_command(run_show))

    listing = commands.add_parser(
        "list",
        help="list stored runs of every mode (fact-check, council, entailment), newest first",
        description=(
            "List stored runs of every mode (fact-check, council, entailment), newest first: one line each, cut "
            "to fit, ids shortened (any unambiguous start of an id works wherever an id is taken); --wide shows "
            "them whole, with the question and usage."
        ),
        epilog="exit codes: 0 listed, 2 a bad option, or an invalid page token, 3 the gateway is unreachable",
    )
    listing.add_argument("--status", choices=sorted(STATUSES), type=str.lower, help="only runs with this status")
    listing.add_argument("--mode", choices=sorted(MODES), help="only runs of this mode")
    client.add_page_options(listing, "runs")
    tables.add_wide_option(listing)
    listing.add_argument("--json", action="store_true", help="print the page as one JSON object")
    listing.set_defaults(run=client.gateway_command(run_list))


def run_show(args: argparse.Namespace, gateway: client.Gateway) -> int:
    request = factcheck_pb2.GetResultRequest(message_id=client.run_id(gateway, args.id))
    result = gateway.GetResult(request, timeout=client.UNARY_TIMEOUT_S).result
    if args.json:
        print(render.proto_json(result))
    else:
        render.render_result(render.make_console(), result)
    if args.html is not None:
        html.write_report(args.html, result)
    return client.EXIT_OK


def run_list(args: argparse.Namespace, gateway: client.Gateway) -> int:
    request = factcheck_pb2.ListResultsRequest(
        page_size=args.page_size,
        page_token=args.page_token,
        status=STATUSES[args.status] if args.status else factcheck_pb2.MESSAGE_STATUS_UNSPECIFIED,
        mode=MODES[args.mode] if args.mode else factcheck_pb2.MODE_UNSPECIFIED,
    )
    page = gateway.ListResults(request, timeout=client.UNARY_TIMEOUT_S)
    if args.json:
        print(render.proto_json(page))
        return client.EXIT_OK
    console = render.make_console()
    if not page.results:
        console.print("No stored runs." if not args.page_token else "No more runs.")
    else:
        tables.print_table(console, RESULT_COLUMNS, page.results, wide=args.wide)
    if page.next_page_token:
        filters = [f"--{name} {getattr(args, name)}" for name in ("status", "mode") if getattr(args, name)]
        # soft_wrap: the command stays on one line, so it can be copied whole.
        console.print(client.next_page_command("factcheck list", page.next_page_token, args, *filters), soft_wrap=True)
    return client.EXIT_OK


# The options' names for the proto's values (`--status complete`, `--mode council`).
STATUSES: dict[str, factcheck_pb2.MessageStatus] = {
    name.removeprefix("MESSAGE_STATUS_").lower(): cast(factcheck_pb2.MessageStatus, value)
    for name, value in factcheck_pb2.MessageStatus.items()
    if value != factcheck_pb2.MESSAGE_STATUS_UNSPECIFIED
}
MODES: dict[str, factcheck_pb2.Mode] = {
    name: cast(factcheck_pb2.Mode, value) for value, name in council_view.MODE_NAMES.items()
}


def run_title(summary: factcheck_pb2.ResultSummary) -> str:
    """The run's title without the "Fact-check: " every fact-check's title starts with (the mode column says so)."""
    if not summary.HasField("title"):
        return "—"
    title = summary.title
    prefix = "Fact-check: "
    return title[len(prefix) :] if title.startswith(prefix) and len(title) > len(prefix) else title


RESULT_COLUMNS = [
    tables.Column("id", lambda r: r.message_id, id=True),
    tables.Column("created", lambda r: view.local_time(r.created_at)),
    tables.Column("mode", lambda r: council_view.mode_name(r.mode)),
    tables.Column("status", lambda r: render.plain(view.status_name(r.status), render.STATUS_STYLES.get(r.status, ""))),
    tables.Column("title", run_title, flexible=True),
    tables.Column("question", lambda r: r.question, flexible=True, wide_only=True),
    tables.Column("updated", lambda r: view.local_time(r.updated_at), wide_only=True),
    tables.Column("calls", lambda r: f"{r.usage.calls:,}", justify="right", wide_only=True),
    tables.Column("tokens", lambda r: f"{r.usage.total_tokens:,}", justify="right", wide_only=True),
    tables.Column("cost usd", lambda r: f"{r.usage.cost_usd:.4f}", justify="right", wide_only=True),
]
