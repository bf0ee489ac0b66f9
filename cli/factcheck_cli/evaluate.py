"""`factcheck eval`: measure checker models on labelled sets through the gateway's EvaluationService,
and `factcheck eval list / show / watch / compare / resume / cancel / sets`.

A `--set` is a shipped set's name (`factcheck eval sets` lists them; the gateway reads it from its
own package) or the caller's JSONL file, read here and sent whole as a CustomEvaluationSet. The
evaluation runs on the gateway whatever happens to this command: its progress is followed, again
after a broken connection (eval_follow.py), and Ctrl-C asks whether to cancel it or to detach (on no
terminal: detach), then says how to watch it again.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Callable, Iterable

import grpc

import factcheck_cli.check as check
import factcheck_cli.client as client
import factcheck_cli.eval_html as eval_html
import factcheck_cli.eval_render as eval_render
import factcheck_cli.eval_view as eval_view
import factcheck_cli.ids as ids
from factcheck.evaluation.sets import SHIPPED_SETS, ItemsFileError, LabelledItem, read_items_file
from factcheck.kit.grpc_options import MAX_MESSAGE_BYTES
from factcheck.v1 import evaluation_pb2, evaluation_pb2_grpc, usage_pb2
from factcheck_cli.arguments import (
    EVAL_CONCURRENCY,
    EVAL_LIMIT,
    MAX_DISAGREEMENTS,
    bounded,
    int_between,
    non_negative_float,
    positive_int,
)
from factcheck_cli.eval_follow import EndedBeforeStart, EvaluationFollower, watch_hint
from factcheck_cli.eval_items import add_item_options, fetch_items, run_items, wants_items
from factcheck_cli.follow import ConnectionLost
from factcheck_cli.tables import add_wide_option, print_table
from factcheck_cli.terminal import make_console, proto_json

EvaluationStub = evaluation_pb2_grpc.EvaluationServiceStub

RUN_EXIT_CODES = (
    "exit codes: 0 complete, 1 PARTIAL (the budget ran out, or checker calls failed: resume asks them again) or "
    "failed, 2 bad input (an "
    "unknown set, an unreadable, empty or malformed JSONL file, a label outside VERIFIED/DISPUTED/UNVERIFIABLE) "
    "or an invalid request, 3 the gateway is unreachable (also after --reconnect-timeout) or refused the call, "
    "4 cancelled, 130 interrupted by Ctrl-C (cancelled or detached, as you chose: a detached evaluation goes on; "
    "`factcheck eval watch ID` follows it again)"
)
FOLLOW_EXIT_CODES = RUN_EXIT_CODES.replace("2 bad input (an unknown set", "2 bad arguments (")
# The request travels as one gRPC message (the custom sets whole): keep a margin below the limit.
MAX_REQUEST_BYTES = MAX_MESSAGE_BYTES - 2**20
# CustomEvaluationSet.name: 1-64 characters of a-z, 0-9, ".", "_" and "-".
SET_NAME_CHARS = re.compile(r"[^a-z0-9._-]+")
MAX_SET_NAME = 64
# How long a Ctrl-C's CancelEvaluation may take.
CANCEL_TIMEOUT_S = 10.0
# The most mistakes the HTML page lists (the command line lists them all: `eval show ID --items --wrong`).
MAX_MISTAKES_IN_PAGE = 1_000


class UsageError(Exception):
    """Input the command cannot use; shown as a one-line message, exit 2."""


# --- the parser ---------------------------------------------------------------------------


def add_parser(commands) -> None:
    evaluate = commands.add_parser(
        "eval",
        usage=(
            "factcheck eval --checker MODEL [--checker MODEL ...] --set NAME|FILE.jsonl [--set ...] [options]\n"
            "       factcheck eval {list,show,resume,cancel,sets} ..."
        ),
        help="measure checker models on labelled sets (scores, calibration, cost); list, show, resume, cancel",
        description=(
            "Evaluate checker models on labelled claims: every item goes to the checker exactly as a run's "
            "claims do, and each model is scored per set (balanced accuracy, per-verdict precision and recall, "
            "calibration, DISPUTED on supported claims, unreadable answers, latency, tokens, cost). "
            "A progress bar runs on stderr, then the tables print. The evaluation runs on the gateway: a broken "
            "connection is followed again by itself, and Ctrl-C asks whether to cancel it or detach (without a "
            "terminal: detach); `factcheck eval watch ID` follows it again. The subcommands read stored evaluations."
        ),
        epilog=RUN_EXIT_CODES,
    )
    evaluate.add_argument(
        "--checker",
        metavar="MODEL",
        action="append",
        default=[],
        help="a checker model to evaluate (provider/name, e.g. local/checker); repeat for 1-8 models",
    )
    evaluate.add_argument(
        "--set",
        metavar="NAME|FILE.jsonl",
        action="append",
        default=[],
        dest="sets",
        help=(
            "a labelled set: a shipped set's name (`factcheck eval sets`), one of its halves (NAME:dev, "
            "NAME:test), or your own JSONL file "
            '({"id", "claim", "evidence", "label"} per line, the label VERIFIED, DISPUTED or UNVERIFIABLE); '
            "repeat for several"
        ),
    )
    evaluate.add_argument(
        "--limit",
        type=int_between(EVAL_LIMIT),
        metavar="N",
        help=f"items drawn from each set, {bounded(EVAL_LIMIT)} (default: every item)",
    )
    evaluate.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="the seed of the draw: the same seed and limit draw the same items (default 0)",
    )
    add_budget_options(evaluate)
    evaluate.add_argument(
        "--cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="reuse verifications already paid for, so a repeated evaluation pays only for what changed "
        "(default: the gateway's FACTCHECK_CACHE_ENABLED); --no-cache asks every model again",
    )
    evaluate.add_argument(
        "--concurrency",
        type=int_between(EVAL_CONCURRENCY),
        metavar="N",
        help=f"items sent to each checker at once, {bounded(EVAL_CONCURRENCY)} (default 4)",
    )
    evaluate.add_argument(
        "--fit-threshold",
        action="store_true",
        help="also fit each checker's decision threshold once the evaluation is complete (the P(supported) of "
        "best balanced accuracy, VERIFIED against not): binary checkers only (onnx/ and grounding-dialect "
        "models), on one set, a shipped set's dev half (e.g. wice:dev) or your own file; "
        "`factcheck check --thresholds-from ID` then uses them",
    )
    evaluate.add_argument(
        "--thresholds-from",
        metavar="ID",
        help="the evaluation whose fitted thresholds the binary checkers use instead of their own (measure them "
        "on other items than they were fitted on, e.g. wice:test)",
    )
    add_output_options(evaluate)
    check.add_reconnect_option(evaluate)
    evaluate.set_defaults(run=client.channel_command(run_evaluation))

    actions = evaluate.add_subparsers(
        dest="action", metavar="ACTION", prog="factcheck eval", help="or one of these, on stored evaluations"
    )

    listing = actions.add_parser(
        "list",
        help="list your evaluations, newest first, with each checker's balanced accuracy per set",
        description="List your evaluations, newest first: status, checkers, sets, each checker's balanced "
        "accuracy on each set (marked * when it rests on fewer items than were drawn), answers stored.",
        epilog="exit codes: 0 listed, 2 an invalid page token or size, 3 the gateway is unreachable",
    )
    client.add_page_options(listing, "evaluations")
    add_wide_option(listing)
    listing.add_argument("--json", action="store_true", help="print the page as one JSON object")
    listing.set_defaults(run=client.channel_command(run_list))

    show = actions.add_parser(
        "show",
        usage="factcheck eval show ID [--wide] [--json] [--html PATH]\n"
        "       factcheck eval show ID --items [--wrong | --failed] [--checker MODEL] [--set NAME] [--label L] "
        "[--wide] [--jsonl PATH|-] [--csv PATH|-]",
        help="show a stored evaluation's scores, or every checker's answer on every item",
        description="Show a stored evaluation's score tables and confusion matrices, by the id `factcheck eval` "
        "and `factcheck eval list` print. With --items: every checker's answer on every item (the claim, its "
        "label, the verdict or why there is none, the checker's evidence, latency, cache), filtered by the "
        "options; --jsonl and --csv write the answers as records a notebook reads directly "
        "(pandas.read_json(path, lines=True), pandas.read_csv(path)).",
        epilog="exit codes: 0 shown, 2 bad arguments, 3 the gateway is unreachable or refused the call, 5 unknown id",
    )
    show.add_argument("id", help="the evaluation's id (or its start, as `factcheck eval list` shows it)")
    add_output_options(show)
    add_item_options(show)
    show.set_defaults(run=client.channel_command(run_show))

    watch = actions.add_parser(
        "watch",
        help="follow an evaluation again (from any gateway), then show its scores",
        description="Follow an evaluation with the same progress as `factcheck eval`: a detached one, one "
        "started elsewhere, or one whose command lost its connection. Its events are replayed from the start "
        "(or after --after-seq N), then followed live to its end; a broken connection is followed again.",
        epilog=FOLLOW_EXIT_CODES,
    )
    watch.add_argument("id", help="the evaluation's id")
    watch.add_argument(
        "--after-seq",
        type=int,
        default=0,
        metavar="N",
        help="follow only the events after event N (the seq of the last one you saw); default: from the start",
    )
    add_output_options(watch)
    check.add_reconnect_option(watch)
    watch.set_defaults(run=client.channel_command(run_watch))

    compare = actions.add_parser(
        "compare",
        help="compare two evaluations: balanced accuracy per checker and set, with a 95%% interval",
        description="Compare evaluation B with evaluation A: per checker and set both measured, the balanced "
        "accuracy of each on the items both judged, the difference B − A with a paired bootstrap 95% "
        "interval (an interval that does not hold 0 is a difference the items show), and the items where "
        "their answers differ.",
        epilog="exit codes: 0 compared, 1 nothing to compare (no checker and set in common), 3 the gateway is "
        "unreachable or refused the call, 5 unknown id",
    )
    compare.add_argument("a", metavar="A", help="the baseline evaluation's id")
    compare.add_argument("b", metavar="B", help="the evaluation compared with it")
    compare.add_argument(
        "--max-disagreements",
        type=int_between(MAX_DISAGREEMENTS),
        metavar="N",
        help=f"list at most N items where they disagree, {bounded(MAX_DISAGREEMENTS)} (default 100; all are counted)",
    )
    add_wide_option(compare)
    compare.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    compare.set_defaults(run=client.channel_command(run_compare))

    resume = actions.add_parser(
        "resume",
        help="continue a stopped evaluation with the items it has no answer for",
        description=(
            "Continue an evaluation that was cancelled, ran out of budget (PARTIAL), failed, or lost its "
            "gateway: only the answers it lacks are asked for, with the same progress and tables as `factcheck "
            "eval`. A larger budget lets a PARTIAL one finish."
        ),
        epilog=(
            "exit codes: 0 complete, 1 stopped before the end again (PARTIAL) or failed, or it cannot be resumed "
            "(complete, or a gateway is working on it), 2 bad arguments or an invalid request, 3 the gateway is "
            "unreachable, 4 cancelled, 5 unknown id, 130 interrupted by Ctrl-C (cancelled or detached)"
        ),
    )
    resume.add_argument("id", help="the evaluation's id (or its start, as `factcheck eval list` shows it)")
    add_budget_options(resume, resumed=True)
    add_output_options(resume)
    check.add_reconnect_option(resume)
    resume.set_defaults(run=client.channel_command(run_resume))

    cancel = actions.add_parser(
        "cancel",
        help="stop a running evaluation",
        description="Stop a running evaluation, on whichever gateway runs it: what it judged stays stored, its "
        "status becomes CANCELLED, and `factcheck eval resume ID` continues it.",
        epilog="exit codes: 0 cancelled, 1 it had already finished, 3 the gateway is unreachable, 5 unknown id",
    )
    cancel.add_argument("id", help="the evaluation's id (or its start, as `factcheck eval list` shows it)")
    cancel.set_defaults(run=client.channel_command(run_cancel))

    sets = actions.add_parser(
        "sets",
        help="list the labelled sets the gateway ships",
        description="List the labelled sets the gateway ships (installed with it, never downloaded): "
        "name, items, licence and what they are. Give a name to `factcheck eval --set NAME`.",
        epilog="exit codes: 0 listed, 3 the gateway is unreachable",
    )
    add_wide_option(sets)
    sets.add_argument("--json", action="store_true", help="print the sets as one JSON object")
    sets.set_defaults(run=client.channel_command(run_sets))


def add_budget_options(parser: argparse.ArgumentParser, *, resumed: bool = False) -> None:
    default = "the evaluation's own" if resumed else "your tenant's default, as runs have"
    stops = "PARTIAL" if not resumed else "PARTIAL again"
    parser.add_argument(
        "--max-cost-usd",
        type=non_negative_float,
        metavar="X",
        help=f"the most its model calls may cost, in US dollars; reached, it stops as {stops} (default: {default})",
    )
    parser.add_argument(
        "--max-tokens",
        type=positive_int,
        metavar="N",
        help=f"the most tokens (prompt + completion) its model calls may use (default: {default})",
    )


def add_output_options(parser: argparse.ArgumentParser) -> None:
    add_wide_option(parser)
    parser.add_argument(
        "--json", action="store_true", help="print the final evaluation as one JSON object (instead of the tables)"
    )
    parser.add_argument(
        "--html",
        metavar="PATH",
        type=Path,
        help="also write the scores as a self-contained HTML page with the plots (reliability diagrams, "
        "confusion heat-maps, latency, a comparison of the models) and the checkers' mistakes",
    )


# --- the request --------------------------------------------------------------------------


def is_file_set(value: str) -> bool:
    """A --set value that is a file: an existing file, a name ending in .jsonl, or a path with a folder."""
    return value.endswith(".jsonl") or "/" in value or "\\" in value or Path(value).is_file()


def custom_set_name(path: Path, taken: set[str]) -> str:
    """The file's stem as a custom set's name (a-z, 0-9, ".", "_", "-"; at most 64), made unique among
    the request's sets and distinct from every shipped set's name."""
    base = SET_NAME_CHARS.sub("-", path.stem.lower()).strip("-.") or "custom"
    base = base[:MAX_SET_NAME]
    if base in SHIPPED_SETS:
        base = f"{base[: MAX_SET_NAME - 7]}-custom"
    name, number = base, 1
    while name in taken:
        number += 1
        suffix = f"-{number}"
        name = f"{base[: MAX_SET_NAME - len(suffix)]}{suffix}"
    taken.add(name)
    return name


def labelled_claim(item: LabelledItem) -> evaluation_pb2.LabelledClaim:
    return evaluation_pb2.LabelledClaim(
        id=item.id,
        claim=item.claim,
        evidence=[evaluation_pb2.LabelledEvidence(title=passage.title, text=passage.text) for passage in item.evidence],
        label=f"VERDICT_{item.label}",
    )


def read_sets(values: Iterable[str]) -> tuple[list[str], list[evaluation_pb2.CustomEvaluationSet]]:
    """The shipped set names and the custom sets the --set values give; UsageError for a file that cannot be used."""
    shipped: list[str] = []
    custom: list[evaluation_pb2.CustomEvaluationSet] = []
    taken: set[str] = set()
    for value in values:
        if not is_file_set(value):
            if value in shipped:
                raise UsageError(f"--set {value} is given twice")
            shipped.append(value)
            continue
        try:
            items = read_items_file(value)
        except ItemsFileError as error:
            raise UsageError(str(error)) from error
        name = custom_set_name(Path(value), taken)
        custom.append(evaluation_pb2.CustomEvaluationSet(name=name, items=[labelled_claim(item) for item in items]))
    return shipped, custom


def budget_of(args: argparse.Namespace) -> usage_pb2.RunBudget | None:
    if args.max_cost_usd is None and args.max_tokens is None:
        return None
    budget = usage_pb2.RunBudget()
    if args.max_cost_usd is not None:
        budget.max_cost_usd = args.max_cost_usd
    if args.max_tokens is not None:
        budget.max_tokens = args.max_tokens
    return budget


def build_config(args: argparse.Namespace) -> evaluation_pb2.EvaluationConfig:
    """The EvaluationConfig the options ask for; UsageError for what needs no gateway to refuse."""
    if not args.checker:
        raise UsageError("give at least one --checker MODEL (e.g. --checker local/checker)")
    if not args.sets:
        raise UsageError("give at least one --set NAME|FILE.jsonl (`factcheck eval sets` lists the shipped sets)")
    shipped, custom = read_sets(args.sets)
    config = evaluation_pb2.EvaluationConfig(checker_models=args.checker, sets=shipped, custom_sets=custom)
    if args.limit is not None:
        config.limit = args.limit
    if args.seed is not None:
        config.seed = args.seed
    budget = budget_of(args)
    if budget is not None:
        config.budget.CopyFrom(budget)
    if args.cache is not None:
        config.use_cache = args.cache
    if args.concurrency is not None:
        config.concurrency = args.concurrency
    if args.fit_threshold:
        config.fit_thresholds = True
    if args.thresholds_from is not None:
        config.threshold_evaluation_id = args.thresholds_from
    if (size := config.ByteSize()) > MAX_REQUEST_BYTES:
        raise UsageError(
            f"the sets are {size / 2**20:.0f} MiB together; one request holds at most "
            f"{MAX_REQUEST_BYTES / 2**20:.0f} MiB: split the file into smaller sets"
        )
    return config


# --- running and following ----------------------------------------------------------------


def run_evaluation(args: argparse.Namespace, channel: grpc.Channel) -> int:
    try:
        config = build_config(args)
    except UsageError as error:
        print(f"factcheck eval: {error}", file=sys.stderr)
        return client.EXIT_USAGE
    request = evaluation_pb2.RunEvaluationRequest(config=config)
    return follow(args, channel, lambda follower: follower.run(request))


def run_resume(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = EvaluationStub(channel)
    args.id = evaluation_id(stub, args.id)
    request = evaluation_pb2.ResumeEvaluationRequest(evaluation_id=args.id)
    budget = budget_of(args)
    if budget is not None:
        request.budget.CopyFrom(budget)
    return follow(args, channel, lambda follower: follower.resume(request), resuming=args.id)


def run_watch(args: argparse.Namespace, channel: grpc.Channel) -> int:
    if args.after_seq < 0:
        print(f"factcheck eval watch: --after-seq must not be negative (got {args.after_seq})", file=sys.stderr)
        return client.EXIT_USAGE
    args.id = evaluation_id(EvaluationStub(channel), args.id)
    return follow(args, channel, lambda follower: follower.watch(args.id, args.after_seq))


def follow(
    args: argparse.Namespace,
    channel: grpc.Channel,
    start: Callable[[EvaluationFollower], evaluation_pb2.Evaluation],
    resuming: str | None = None,
) -> int:
    """Show the evaluation's events to its end, then the evaluation; the exit code. A broken connection
    is followed again (a note, no error); Ctrl-C asks whether to cancel or to detach."""
    progress = eval_render.EvalProgress()
    follower = EvaluationFollower(channel, progress.show, progress.note, args.reconnect_timeout)
    try:
        with progress:
            evaluation = start(follower)
    except KeyboardInterrupt:
        return interrupted(follower.stub, follower.resource_id)
    except EndedBeforeStart:
        print("factcheck eval: the gateway ended the stream before the evaluation started", file=sys.stderr)
        return client.EXIT_GATEWAY_ERROR
    except ConnectionLost as lost:
        check.report_lost(lost, "evaluation", watch_hint)
        return client.EXIT_GATEWAY_ERROR
    except grpc.RpcError as error:
        if resuming is not None and error.code() == grpc.StatusCode.FAILED_PRECONDITION:
            print(f"factcheck eval: cannot resume evaluation {resuming}: {error.details()}", file=sys.stderr)
            return client.EXIT_RUN_FAILED
        if follower.resource_id is None or not follower.shown:
            raise  # refused before any event (not found, invalid, unreachable): the command's usual message
        print(f"factcheck: {client.describe_rpc_error(error, client.gateway_target())}", file=sys.stderr)
        print(f"The evaluation goes on at the gateway: {watch_hint(follower.resource_id)}.", file=sys.stderr)
        return client.exit_code_of(error)
    present(args, follower.stub, evaluation)
    unfitted = eval_view.unfitted_lines(evaluation)
    for line in unfitted:
        print(f"factcheck eval: {line}", file=sys.stderr)
    return client.EXIT_RUN_FAILED if unfitted else exit_code(evaluation)


def interrupted(stub: EvaluationStub, evaluation_id: str | None) -> int:
    """Ctrl-C: cancel the evaluation or detach from it (it goes on), as the person at the terminal chooses;
    without a terminal to ask on, detach. Says how to go on either way."""
    if evaluation_id is None:
        print("\nfactcheck: interrupted before the evaluation started", file=sys.stderr)
        return client.EXIT_INTERRUPTED
    if ask_cancel(evaluation_id):
        try:
            stub.CancelEvaluation(
                evaluation_pb2.CancelEvaluationRequest(evaluation_id=evaluation_id), timeout=CANCEL_TIMEOUT_S
            )
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                print(
                    f"factcheck: could not cancel: {client.describe_rpc_error(error, client.gateway_target())}",
                    file=sys.stderr,
                )
                print(f"It may still be going: {watch_hint(evaluation_id)}.", file=sys.stderr)
                return client.EXIT_INTERRUPTED
            print(f"factcheck: evaluation {evaluation_id} had already ended.", file=sys.stderr)
            return client.EXIT_INTERRUPTED
        print(
            f"factcheck: interrupted: evaluation {evaluation_id} is cancelled; what was judged is stored.\n"
            f"Resume it with `factcheck eval resume {evaluation_id}`, see it with `factcheck eval show {evaluation_id}`.",
            file=sys.stderr,
        )
        return client.EXIT_INTERRUPTED
    print(
        f"factcheck: detached: evaluation {evaluation_id} goes on at the gateway.\n"
        f"Watch it again with `factcheck eval watch {evaluation_id}`, stop it with `factcheck eval cancel {evaluation_id}`.",
        file=sys.stderr,
    )
    return client.EXIT_INTERRUPTED


def ask_cancel(evaluation_id: str) -> bool:
    """Whether to cancel: asked on a terminal (detach is the default); without one, never."""
    if not sys.stdin.isatty():
        return False
    print(
        f"\nCancel evaluation {evaluation_id}, or detach and let it run? [c]ancel / [D]etach: ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    try:
        answer = sys.stdin.readline()
    except (KeyboardInterrupt, OSError):
        print(file=sys.stderr)
        return False
    return answer.strip().lower() in ("c", "cancel")


def exit_code(evaluation: evaluation_pb2.Evaluation) -> int:
    status = evaluation.status
    if status == evaluation_pb2.EVALUATION_STATUS_COMPLETE:
        return client.EXIT_OK
    if status == evaluation_pb2.EVALUATION_STATUS_CANCELLED:
        return client.EXIT_CANCELLED
    return client.EXIT_RUN_FAILED


def present(args: argparse.Namespace, stub: EvaluationStub, evaluation: evaluation_pb2.Evaluation) -> None:
    """The evaluation as the tables (or --json) on stdout, and the HTML page when asked for."""
    if args.json:
        print(proto_json(evaluation), flush=True)
    else:
        eval_render.render_evaluation(make_console(), evaluation, wide=args.wide)
    if args.html is not None:
        mistakes = list(fetch_items(stub, evaluation.evaluation_id, wrong_only=True, limit=MAX_MISTAKES_IN_PAGE + 1))
        eval_html.write_page(args.html, evaluation, mistakes, MAX_MISTAKES_IN_PAGE)


# --- stored evaluations -------------------------------------------------------------------


def evaluation_id(stub: EvaluationStub, value: str) -> str:
    """The evaluation id `value` stands for: itself, or the one evaluation whose id starts with it."""

    def page(token: str) -> tuple[list[str], str]:
        request = evaluation_pb2.ListEvaluationsRequest(page_size=client.MAX_PAGE_SIZE, page_token=token)
        listed = stub.ListEvaluations(request, timeout=client.UNARY_TIMEOUT_S)
        return [evaluation.evaluation_id for evaluation in listed.evaluations], listed.next_page_token

    return ids.expand(value, page, "evaluation")


def run_show(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = EvaluationStub(channel)
    args.id = evaluation_id(stub, args.id)
    if wants_items(args):
        return run_items(args, stub)
    request = evaluation_pb2.GetEvaluationRequest(evaluation_id=args.id)
    evaluation = stub.GetEvaluation(request, timeout=client.UNARY_TIMEOUT_S).evaluation
    present(args, stub, evaluation)
    return client.EXIT_OK


def run_compare(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = EvaluationStub(channel)
    first, second = evaluation_id(stub, args.a), evaluation_id(stub, args.b)
    request = evaluation_pb2.CompareEvaluationsRequest(evaluation_id=first, other_evaluation_id=second)
    if args.max_disagreements is not None:
        request.max_disagreements = args.max_disagreements
    try:
        response = stub.CompareEvaluations(request, timeout=client.UNARY_TIMEOUT_S)
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
        print(f"factcheck: {error.details()}", file=sys.stderr)
        return client.EXIT_RUN_FAILED
    if args.json:
        print(proto_json(response))
        return client.EXIT_OK
    eval_render.render_comparison(make_console(), response, wide=args.wide)
    return client.EXIT_OK


def run_list(args: argparse.Namespace, channel: grpc.Channel) -> int:
    request = evaluation_pb2.ListEvaluationsRequest(page_size=args.page_size, page_token=args.page_token)
    page = EvaluationStub(channel).ListEvaluations(request, timeout=client.UNARY_TIMEOUT_S)
    if args.json:
        print(proto_json(page))
        return client.EXIT_OK
    console = make_console()
    if not page.evaluations:
        console.print("No stored evaluations." if not args.page_token else "No more evaluations.")
    else:
        print_table(console, eval_render.EVALUATION_COLUMNS, page.evaluations, wide=args.wide)
    if page.next_page_token:
        console.print(client.next_page_command("factcheck eval list", page.next_page_token, args), soft_wrap=True)
    return client.EXIT_OK


def run_cancel(args: argparse.Namespace, channel: grpc.Channel) -> int:
    stub = EvaluationStub(channel)
    args.id = evaluation_id(stub, args.id)
    try:
        response = stub.CancelEvaluation(
            evaluation_pb2.CancelEvaluationRequest(evaluation_id=args.id), timeout=client.UNARY_TIMEOUT_S
        )
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
        print(
            f"factcheck: evaluation {args.id} already finished{_status_of(stub, args.id)}; there is nothing to cancel.",
            file=sys.stderr,
        )
        return client.EXIT_RUN_FAILED
    print(
        f"Evaluation {args.id}: {eval_view.status_name(response.status)}. What it judged is stored: "
        f"factcheck eval show {args.id}; continue it with factcheck eval resume {args.id}"
    )
    return client.EXIT_OK


def _status_of(stub: EvaluationStub, evaluation_id: str) -> str:
    """ " (COMPLETE)", or nothing when the status cannot be read."""
    try:
        evaluation = stub.GetEvaluation(
            evaluation_pb2.GetEvaluationRequest(evaluation_id=evaluation_id), timeout=client.UNARY_TIMEOUT_S
        ).evaluation
    except grpc.RpcError:
        return ""
    return f" ({eval_view.status_name(evaluation.status)})"


def run_sets(args: argparse.Namespace, channel: grpc.Channel) -> int:
    response = EvaluationStub(channel).ListEvaluationSets(
        evaluation_pb2.ListEvaluationSetsRequest(), timeout=client.UNARY_TIMEOUT_S
    )
    if args.json:
        print(proto_json(response))
    elif not response.sets:
        print("The gateway ships no labelled sets.")
    else:
        print_table(make_console(), eval_render.SET_COLUMNS, response.sets, wide=args.wide)
    return client.EXIT_OK
