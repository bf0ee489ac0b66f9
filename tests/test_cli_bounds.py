"""Every bound docs/cli.md and the commands' help state is enforced before anything is sent: one line on
stderr naming the option, exit 2, no gateway needed. The bounds are the gateway's own numbers. Options
that mean nothing for a command (`serve --gateway`) are refused, and an unknown option before the command
is named as such.
"""

from __future__ import annotations

import pytest

from factcheck_cli import arguments
from factcheck_cli.app import main
from factcheck_gateway.evaluations import plan as evaluation_plan
from factcheck_gateway.modes.fact_check import plan as fact_check_plan
from factcheck_gateway.modes.fact_check.investigate import options as investigate_options
from factcheck_gateway.request_validation import TIMEOUT_MS_MAX, TIMEOUT_MS_MIN
from factcheck_gateway.runs.database_calls import MAX_PAGE_SIZE
from factcheck_gateway.servicers.evaluations import MAX_DISAGREEMENTS
from factcheck_gateway.servicers.knowledge import MAX_TOP_K

# Nothing listens here: a bound checked before sending never gets as far as the gateway.
DEAD = "127.0.0.1:9"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """The command in this process: its exit code, stdout and stderr."""
    try:
        code = main(["--gateway", DEAD, *argv] if argv[0] not in ("serve", "demo") else list(argv))
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


OUT_OF_BOUNDS = [
    # (the command, the option's line on stderr after "<prog>: error: argument ")
    (["kb", "search", "tides", "--top-k", "0"], "factcheck kb search", "--top-k: must be between 1 and 50 (got 0)"),
    (["kb", "search", "tides", "--top-k", "51"], "factcheck kb search", "--top-k: must be between 1 and 50 (got 51)"),
    (["list", "--page-size", "500"], "factcheck list", "--page-size: must be between 1 and 100 (got 500)"),
    (["list", "--page-size", "-1"], "factcheck list", "--page-size: must be between 1 and 100 (got -1)"),
    (["kb", "list", "--page-size", "101"], "factcheck kb list", "--page-size: must be between 1 and 100 (got 101)"),
    (["claims", "--page-size", "0"], "factcheck claims", "--page-size: must be between 1 and 100 (got 0)"),
    (
        ["reviews", "list", "--page-size", "200"],
        "factcheck reviews list",
        "--page-size: must be between 1 and 100 (got 200)",
    ),
    (["eval", "list", "--page-size", "0"], "factcheck eval list", "--page-size: must be between 1 and 100 (got 0)"),
    (
        ["check", "x", "--timeout-ms", "1000"],
        "factcheck check",
        "--timeout-ms: must be between 30,000 and 180,000 (got 1000)",
    ),
    (
        ["check", "x", "--max-content-length", "100"],
        "factcheck check",
        "--max-content-length: must be between 500 and 50,000 (got 100)",
    ),
    (
        ["check", "x", "--investigate-batch-size", "21"],
        "factcheck check",
        "--investigate-batch-size: must be between 1 and 20 (got 21)",
    ),
    (
        ["check", "x", "--reconnect-timeout", "-1"],
        "factcheck check",
        "--reconnect-timeout: must not be negative (got -1)",
    ),
    (
        ["council", "q", "-m", "a/b", "-m", "c/d", "--timeout-ms", "999999"],
        "factcheck council",
        "--timeout-ms: must be between 30,000 and 180,000 (got 999999)",
    ),
    (
        ["entail", "--claim", "c", "--timeout-ms", "5"],
        "factcheck entail",
        "--timeout-ms: must be between 30,000 and 180,000 (got 5)",
    ),
    (["watch", "some-run", "--after-seq", "-1"], "factcheck watch", "--after-seq: must not be negative (got -1)"),
    (["usage", "--days", "0"], "factcheck usage", "--days: must be at least 1 (got 0)"),
    (["list", "--page-size", "ten"], "factcheck list", "--page-size: not a whole number: 'ten'"),
    (["serve", "--base-port", "70000"], "factcheck serve", "--base-port: must be between 1 and 65,532 (got 70000)"),
    (["demo", "--base-port", "0"], "factcheck demo", "--base-port: must be between 1 and 65,532 (got 0)"),
    (["list", "--status", "done"], "factcheck list", "--status: invalid choice: 'done'"),
    (
        ["eval", "compare", "a", "b", "--max-disagreements", "1001"],
        "factcheck eval compare",
        "--max-disagreements: must be between 0 and 1,000 (got 1001)",
    ),
    (
        ["eval", "compare", "a", "b", "--max-disagreements", "-1"],
        "factcheck eval compare",
        "--max-disagreements: must be between 0 and 1,000 (got -1)",
    ),
]


@pytest.mark.parametrize(("argv", "prog", "line"), OUT_OF_BOUNDS, ids=[" ".join(case[0]) for case in OUT_OF_BOUNDS])
def test_a_value_out_of_its_documented_bounds_is_one_line_and_exit_2(capsys, argv, prog, line):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"{prog}: error: argument {line}") and err.count("\n") == 1, err


def test_the_bounds_are_the_gateways():
    assert arguments.PAGE_SIZE == (1, MAX_PAGE_SIZE)
    assert arguments.TOP_K == (1, MAX_TOP_K)
    assert arguments.TIMEOUT_MS == (TIMEOUT_MS_MIN, TIMEOUT_MS_MAX)
    assert arguments.MAX_CONTENT_LENGTH == (
        fact_check_plan.MAX_CONTENT_LENGTH_MIN,
        fact_check_plan.MAX_CONTENT_LENGTH_MAX,
    )
    assert arguments.INVESTIGATE_BATCH_SIZE == (investigate_options.BATCH_MIN, investigate_options.BATCH_MAX)
    assert arguments.EVAL_LIMIT == (1, evaluation_plan.MAX_ITEMS_PER_SET)
    assert arguments.EVAL_CONCURRENCY == (1, evaluation_plan.MAX_CONCURRENCY)
    assert arguments.MAX_DISAGREEMENTS == (0, MAX_DISAGREEMENTS)


@pytest.mark.parametrize(
    ("argv", "command", "says"),
    [
        (["serve", "--gateway", "h:1"], "serve", "`factcheck serve` starts its own gateway"),
        (["--gateway", "h:1", "serve"], "serve", "`factcheck serve` starts its own gateway"),
        (["demo", "--gateway", "h:1"], "demo", "`factcheck demo` starts its own suite"),
        (["--gateway", "h:1", "demo"], "demo", "`factcheck demo` starts its own suite"),
    ],
)
def test_serve_and_demo_refuse_a_gateway(capsys, argv, command, says):
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err == f"factcheck {command}: error: argument --gateway: does not apply: {says} " + (
        "(--host and --base-port say where)\n" if command == "serve" else "(--base-port says where)\n"
    )


def test_an_unknown_option_before_the_command_is_named(capsys):
    code, _, err = run(capsys, "--bogus-flag", "x")
    assert code == 2 and err.endswith("factcheck: error: unrecognized arguments: --bogus-flag\n") and "'x'" not in err
    code, _, err = run(capsys, "--bogus-flag=3", "list")
    assert code == 2 and err.endswith("factcheck: error: unrecognized arguments: --bogus-flag=3\n")
    code, _, err = run(capsys, "nosuchcommand")
    assert code == 2 and "invalid choice: 'nosuchcommand'" in err  # a command that does not exist is still one


def test_kb_add_id_names_one_file(capsys, tmp_path):
    (tmp_path / "a.md").write_text("A.")
    (tmp_path / "b.md").write_text("B.")
    for paths in ([tmp_path], [tmp_path / "a.md", tmp_path / "b.md"]):
        code, out, err = run(capsys, "kb", "add", *map(str, paths), "--id", "mine")
        assert (code, out) == (2, "")
        assert err == "factcheck kb add: --id names one document: give exactly one file, not a folder\n"
