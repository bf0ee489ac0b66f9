"""`factcheck show ID` and `factcheck list`: stored runs (of every mode), read back from the gateway."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich import box
from rich.table import Table
from rich.text import Text

import factcheck.cli.client as client
import factcheck.cli.council_view as council_view
import factcheck.cli.html as html
import factcheck.cli.render as render
import factcheck.cli.view as view
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
    show.add_argument("id", help="the run's message id")
    show.add_argument("--json", action="store_true", help="print the stored result as one JSON object")
    show.add_argument("--html", metavar="OUT", type=Path, help="also write the report as a self-contained HTML page")
    show.set_defaults(run=client.gateway_command(run_show))

    listing = commands.add_parser(
        "list",
        help="list stored runs of every mode (fact-check, council, entailment), newest first",
        epilog="exit codes: 0 listed, 2 an invalid page token or size, 3 the gateway is unreachable",
    )
    client.add_page_options(listing, "runs")
    listing.add_argument("--json", action="store_true", help="print the page as one JSON object")
    listing.set_defaults(run=client.gateway_command(run_list))


def run_show(args: argparse.Namespace, gateway: client.Gateway) -> int:
    request = factcheck_pb2.GetResultRequest(message_id=args.id)
    result = gateway.GetResult(request, timeout=client.UNARY_TIMEOUT_S).result
    if args.json:
        print(render.proto_json(result))
    else:
        render.render_result(render.make_console(), result)
    if args.html is not None:
        html.write_report(args.html, result)
    return client.EXIT_OK


def run_list(args: argparse.Namespace, gateway: client.Gateway) -> int:
    request = factcheck_pb2.ListResultsRequest(page_size=args.page_size, page_token=args.page_token)
    page = gateway.ListResults(request, timeout=client.UNARY_TIMEOUT_S)
    if args.json:
        print(render.proto_json(page))
        return client.EXIT_OK
    console = render.make_console()
    if not page.results:
        console.print("No stored fact-checks." if not args.page_token else "No more fact-checks.")
    else:
        console.print(results_table(page.results))
    if page.next_page_token:
        size = f" --page-size {args.page_size}" if args.page_size else ""
        # soft_wrap: the command stays on one line, so it can be copied whole.
        console.print(Text(f"Next page: factcheck list{size} --page-token {page.next_page_token}"), soft_wrap=True)
    return client.EXIT_OK


def results_table(results) -> Table:
    """One row per stored run: enough to pick the id to `show`."""
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("id", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("mode", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("title", ratio=1)
    table.add_column("question", ratio=1)
    for summary in results:
        table.add_row(
            render.plain(summary.message_id),
            view.local_time(summary.created_at),
            council_view.mode_name(summary.mode),
            render.plain(view.status_name(summary.status), render.STATUS_STYLES.get(summary.status, "")),
            render.plain(summary.title if summary.HasField("title") else "—"),
            render.plain(summary.question),
        )
    return table
