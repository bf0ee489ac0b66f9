"""`factcheck reviews [list|approve|reject|modify]`: the verification loop's pending reviews
(ReviewService): CRITICAL claims whose investigated outcome waits for a person's decision."""

from __future__ import annotations

import argparse
from typing import cast

from rich.text import Text

from factcheck.v1 import investigation_pb2, investigation_pb2_grpc
from factcheck_cli.client import (
    EXIT_OK,
    UNARY_TIMEOUT_S,
    Gateway,
    add_page_options,
    channel_command,
    next_page_command,
    run_id,
)
from factcheck_cli.investigation import STATUS_STYLE, flag_names, state_name, status_name
from factcheck_cli.tables import Column, add_wide_option, print_table
from factcheck_cli.terminal import make_console
from factcheck_cli.view import local_time

STATUSES = ("CONFIRMED", "REFUTED", "SUPERSEDED", "UNVERIFIABLE")


def add_parser(commands) -> None:
    parser = commands.add_parser("reviews", help="list and decide investigation outcomes waiting for review")
    actions = parser.add_subparsers(dest="reviews_command", metavar="ACTION")
    parser.set_defaults(run=channel_command(run_list), run_id=None, all=False, page_size=0, page_token="", wide=False)

    listing = actions.add_parser("list", help="pending reviews, newest first (the default action)")
    listing.add_argument(
        "--run", dest="run_id", metavar="MESSAGE_ID", help="only this run's reviews (its id, or the start of it)"
    )
    listing.add_argument("--all", action="store_true", help="decided reviews too")
    add_page_options(listing, "reviews")
    add_wide_option(listing)
    listing.set_defaults(run=channel_command(run_list))

    for name, decision, text in (
        ("approve", investigation_pb2.REVIEW_DECISION_APPROVE, "put the proposed status in force"),
        ("reject", investigation_pb2.REVIEW_DECISION_REJECT, "discard it: the first pass's verdict stands"),
        ("modify", investigation_pb2.REVIEW_DECISION_MODIFY, "put another status in force"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument(
            "message_id", help="the run's message id, or the start of it (as `factcheck reviews` lists it)"
        )
        action.add_argument("claim_id", help="the claim's id in that run, e.g. claim_3")
        action.add_argument("--reason", required=True, help="why (stored with the decision)")
        if name == "modify":
            action.add_argument(
                "--status", required=True, choices=STATUSES, type=str.upper, help="the status to put in force"
            )
        action.set_defaults(run=channel_command(run_decide), decision=decision)


def _stub(channel) -> investigation_pb2_grpc.ReviewServiceStub:
    return investigation_pb2_grpc.ReviewServiceStub(channel)


def run_list(args: argparse.Namespace, channel) -> int:
    response = _stub(channel).ListReviews(
        investigation_pb2.ListReviewsRequest(
            message_id=run_id(Gateway(channel), args.run_id) if args.run_id else "",
            include_decided=args.all,
            page_size=args.page_size,
            page_token=args.page_token,
        ),
        timeout=UNARY_TIMEOUT_S,
    )
    console = make_console()
    if not response.reviews:
        console.print("No reviews waiting." if not args.all else "No reviews.")
        return EXIT_OK
    print_table(console, REVIEW_COLUMNS, response.reviews, wide=args.wide)
    if response.next_page_token:
        options = [f"--run {args.run_id}"] * bool(args.run_id) + ["--all"] * args.all
        console.print(
            next_page_command("factcheck reviews list", response.next_page_token, args, *options), soft_wrap=True
        )
    return EXIT_OK


def _proposed(review: investigation_pb2.Review) -> Text:
    proposed = status_name(review.proposed_status)
    return Text(proposed, style=STATUS_STYLE.get(proposed, ""))


REVIEW_COLUMNS = [
    Column("run", lambda r: r.message_id, id=True),
    Column("claim", lambda r: f"{r.claim_id}: {r.claim}", flexible=True),
    Column("origin", lambda r: flag_names(r.origin_flags)),
    Column("proposed", _proposed),
    Column("confidence", lambda r: f"{r.confidence:.2f}", justify="right"),
    Column("state", lambda r: state_name(r.state)),
    Column("reasoning", lambda r: r.reason if r.HasField("reason") else r.reasoning, flexible=True),
    Column("created", lambda r: local_time(r.created_at), wide_only=True),
    Column("decided", lambda r: local_time(r.decided_at) if r.HasField("decided_at") else "—", wide_only=True),
]


def run_decide(args: argparse.Namespace, channel) -> int:
    request = investigation_pb2.DecideReviewRequest(
        message_id=run_id(Gateway(channel), args.message_id),
        claim_id=args.claim_id,
        decision=args.decision,
        reason=args.reason,
    )
    if getattr(args, "status", None):
        status = investigation_pb2.InvestigationStatus.Value(f"INVESTIGATION_STATUS_{args.status}")
        request.status = cast(investigation_pb2.InvestigationStatus, status)  # (Value() is typed int)
    review = _stub(channel).DecideReview(request, timeout=UNARY_TIMEOUT_S).review
    in_force = status_name(review.status) if review.status else "the first pass's verdict"
    print(f"{review.claim_id} of {review.message_id}: {state_name(review.state)}; in force: {in_force}")
    return EXIT_OK
