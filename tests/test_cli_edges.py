"""The rough edges of the `factcheck` command, one test each, as a real process
against the running suite (fake models): exit codes as docs/cli.md documents them, a closed
stdout, binary and empty input, `kb` with empty files and long ids, `--question` with other
options, `--version`, `--gateway`, `--json` on every listing, and the services' `--help`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests import test_cli
from tests.test_cli import CLAIMS, CONTENT, FACTCHECK, cli_environment, events_of, kind_of, run_id

pytestmark = pytest.mark.e2e

EXIT_BROKEN_PIPE = 141

# test_cli's fixtures: the shared suite on SQLite, its fake model server, and the command.
suite, factcheck, fake_models = test_cli.suite, test_cli.factcheck, test_cli.fake_models


def dead_target() -> str:
    """A loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


# --- exit codes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", ["", "   \n\t"])
def test_empty_content_is_a_usage_error(factcheck, content):
    done = factcheck("check", content)
    assert done.returncode == 2
    assert done.stderr == "factcheck check: nothing to check: the content is empty\n"


def test_an_unknown_id_and_a_dead_gateway_have_different_codes(factcheck):
    unknown = factcheck("show", "no-such-run")
    down = factcheck("show", "no-such-run", target=dead_target())
    assert (unknown.returncode, down.returncode) == (5, 3)
    assert unknown.stderr.startswith("factcheck: not found: ") and "unavailable" in down.stderr


# --- a closed stdout ----------------------------------------------------------------------------------


@pytest.mark.parametrize("json_output", [False, True])
def test_a_reader_that_goes_away_ends_the_command_quietly(suite, json_output):
    """`factcheck check - | head -1`: the reader closes the pipe; no traceback, no "Exception ignored"."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line: every write meets a closed pipe
    try:
        process = subprocess.run(
            [str(FACTCHECK), "check", *(["--json"] if json_output else []), "-"],
            input=CONTENT.encode(),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=cli_environment(suite.gateway_target),
            timeout=120,
        )
    finally:
        os.close(write_end)
    stderr = process.stderr.decode()
    assert process.returncode == EXIT_BROKEN_PIPE, stderr
    assert "Traceback" not in stderr and "Exception" not in stderr and "Broken pipe" not in stderr


def test_head_takes_the_first_line_and_the_pipeline_succeeds(suite):
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{FACTCHECK}' check - 2>/dev/null | head -1; echo \"${{PIPESTATUS[0]}}\""],
        input=CONTENT,
        capture_output=True,
        text=True,
        env=cli_environment(suite.gateway_target),
        timeout=120,
    )
    first, status = done.stdout.splitlines()
    assert "Fact-check of the supplied content" in first  # the report's first line
    assert status in ("0", str(EXIT_BROKEN_PIPE)) and done.stderr == ""  # 0 when head read before it closed


# --- binary and empty input ---------------------------------------------------------------------------


def test_a_binary_file_is_refused(factcheck, tmp_path):
    image = tmp_path / "photo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    done = factcheck("check", "-f", str(image))
    assert done.returncode == 2
    assert done.stderr == f"factcheck check: nothing to check: {image} is a binary file, not text\n"


def test_binary_stdin_is_refused(suite):
    done = subprocess.run(
        [str(FACTCHECK), "check", "-"],
        input=b"\x00\x01\x02binary",
        capture_output=True,
        env=cli_environment(suite.gateway_target),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == "factcheck check: nothing to check: stdin is a binary file, not text\n"


def test_kb_add_skips_an_empty_file_by_name_and_adds_the_rest(factcheck, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "empty.md").write_text("")
    (folder / "blank.txt").write_text("  \n\n")
    (folder / "tides.md").write_text("# Tides\n\nThe Bay of Fundy has the highest tides in the world.\n")
    done = factcheck("kb", "add", str(folder))
    assert done.returncode == 0, done.stderr
    assert "1 added" in done.stdout and "Tides" in done.stdout
    assert f"skipped  {folder / 'empty.md'}: empty" in done.stderr
    assert f"skipped  {folder / 'blank.txt'}: empty" in done.stderr

    only_empty = factcheck("kb", "add", str(folder / "empty.md"))
    assert only_empty.returncode == 2 and "no .txt, .md or .html files with text found" in only_empty.stderr
    assert factcheck("kb", "delete", "notes/tides.md").returncode == 0  # the suite is shared


# --- kb list ------------------------------------------------------------------------------------------


def test_kb_list_shows_the_full_ids_delete_takes(suite, factcheck, tmp_path):
    top = tmp_path / "a-rather-long-folder-name"
    deep = top / "and-another-one-below-it" / "yet-another-level"
    deep.mkdir(parents=True)
    (deep / "the-document-with-a-long-name-about-glaciers.md").write_text(
        "# Glaciers\n\nGlaciers store about 69 percent of the world's fresh water.\n"
    )
    assert factcheck("kb", "add", str(top)).returncode == 0
    path = "a-rather-long-folder-name/and-another-one-below-it/yet-another-level/the-document-with-a-long-name-about-glaciers.md"
    narrow = subprocess.run(
        [str(FACTCHECK), "kb", "list", "--page-size", "100"],
        capture_output=True,
        text=True,
        env={**cli_environment(suite.gateway_target), "COLUMNS": "80"},
        timeout=60,
    )
    assert narrow.returncode == 0, narrow.stderr
    [row] = [line for line in narrow.stdout.splitlines() if line.startswith("a-rather-long-folder-name/")]
    assert len(row) <= 80 and "…" in row and "Glaciers" in row  # one line, cut to fit
    wide = subprocess.run(
        [str(FACTCHECK), "kb", "list", "--page-size", "100", "--wide"],
        capture_output=True,
        text=True,
        env={**cli_environment(suite.gateway_target), "COLUMNS": "80"},
        timeout=60,
    )
    [row] = [line for line in wide.stdout.splitlines() if line.startswith("a-rather-long-folder-name/")]
    assert row.split()[0] == path  # whole: copy it into `kb delete`
    listed = json.loads(factcheck("kb", "list", "--json", "--page-size", "100").stdout)
    [document] = [d for d in listed["documents"] if d["id"] == path]
    assert document["title"] == "Glaciers" and int(document["passageCount"]) >= 1
    assert factcheck("kb", "delete", path).returncode == 0


def test_kb_search_json_lists_the_passages(factcheck, tmp_path):
    path = tmp_path / "volcano.txt"
    path.write_text("Mauna Kea rises about 10,210 metres from its base on the ocean floor.")
    assert factcheck("kb", "add", str(path)).returncode == 0
    found = json.loads(factcheck("kb", "search", "--json", "Mauna Kea base").stdout)
    assert [p["sourceId"] for p in found["passages"]][:1] == ["volcano.txt"]  # a file named alone: its name
    assert "10,210 metres" in found["passages"][0]["text"]
    assert factcheck("kb", "delete", "volcano.txt").returncode == 0  # the suite is shared


# --- list --json --------------------------------------------------------------------------------------


def test_list_json_is_the_page(factcheck):
    ids = [run_id(factcheck) for _ in range(2)]
    done = factcheck("list", "--json", "--page-size", "1")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    page = json.loads(line)
    assert [r["messageId"] for r in page["results"]] == [ids[1]] and page["nextPageToken"]


# --- options ------------------------------------------------------------------------------------------


def test_a_question_with_a_checker_uses_the_default_generator(suite, factcheck):
    done = factcheck("check", "--json", "--question", "Tell me about the Eiffel Tower", "--checker", "fake/one")
    assert done.returncode == 0, done.stderr
    start = events_of(done.stdout)[0]["factcheckStart"]
    # The command's FACTCHECK_DEFAULT_GENERATOR_MODEL is unset here: the built-in default.
    assert start["config"]["generatorModel"] == "local/generator"
    assert start["config"]["checkerModels"] == ["fake/one"]


LOCAL_MODELS = ("--extractor", "local/extractor", "--checker", "local/checker", "--reporter", "local/reporter")


@pytest.mark.parametrize("json_output", [False, True])
def test_a_question_the_built_in_generator_cannot_answer_is_a_warning_not_a_success(factcheck, json_output):
    """The README's `check --question` on the built-in models with no document about the question: the
    generator writes no content, so nothing is checked; the command says why and exits 6."""
    question = "What are the key facts about the history of the Internet?"
    done = factcheck("check", *(["--json"] if json_output else []), "--question", question, *LOCAL_MODELS)
    assert done.returncode == 6, done.stdout + done.stderr
    warning = done.stderr.splitlines()[-1]
    assert warning == (
        "factcheck: warning: nothing was checked: the built-in generator (local/generator) answers only from the "
        "knowledge store, and it holds nothing about this question. Add documents with `factcheck kb add`, or have "
        "a real model answer with --generator MODEL."
    )
    if json_output:
        assert kind_of(events_of(done.stdout)[-1]) == "complete"  # the run itself completed
    else:
        assert "No verifiable claims" in done.stdout
    # Content the caller gives that holds no claim is checked and found to have none: a plain success.
    plain = factcheck("check", "Hello there, how are you?", *LOCAL_MODELS)
    assert plain.returncode == 0 and "nothing was checked" not in plain.stderr


def test_version(factcheck):
    done = factcheck("--version")
    assert done.returncode == 0 and done.stdout.startswith("factcheck ") and done.stdout.split()[1][0].isdigit()


def test_the_gateway_flag_overrides_the_environment(suite, factcheck):
    done = factcheck("--gateway", suite.gateway_target, "list", target=dead_target())
    assert done.returncode == 0, done.stderr
    down = factcheck("--gateway", dead_target(), "list")
    assert down.returncode == 3 and "gateway unavailable at 127.0.0.1:" in down.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("check", "Water boils at 100 degrees Celsius.", "--gateway", "{target}"),
        ("check", "--gateway", "{target}", "Water boils at 100 degrees Celsius."),
        ("kb", "list", "--gateway", "{target}"),
        ("kb", "--gateway", "{target}", "search", "water"),
        ("reviews", "list", "--gateway", "{target}"),
    ],
)
def test_the_gateway_flag_works_after_the_command_too(suite, factcheck, args):
    """Where people put it: after the command, or between a command and its action."""
    done = factcheck(*(a.format(target=suite.gateway_target) for a in args), target=dead_target())
    assert done.returncode == 0, done.stderr
    down = dead_target()
    refused = factcheck(*(a.format(target=down) for a in args))
    assert refused.returncode == 3 and f"factcheck: gateway unavailable at {down}: " in refused.stderr
    # The hint names the setting and the flag that point the command elsewhere.
    assert "set FACTCHECK_GATEWAY_TARGET, or pass --gateway HOST:PORT." in refused.stderr


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (("check", "--bogus-flag", "x"), "factcheck check"),
        (("check", "x", "--bogus-flag"), "factcheck check"),
        (("kb", "add", "notes.md", "--bogus-flag"), "factcheck kb add"),
        (("kb", "--bogus-flag", "list"), "factcheck kb"),
        (("--bogus-flag", "list"), "factcheck"),
        (("--bogus-flag", "x"), "factcheck"),  # not "invalid choice: 'x'"
        (("--gateway", "h:1", "--bogus-flag", "x"), "factcheck"),
    ],
)
def test_an_unknown_option_is_reported_with_the_usage_of_the_command_it_was_given_to(factcheck, args, usage):
    done = factcheck(*args, target=dead_target())
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"usage: {usage} [-h] ")
    assert done.stderr.endswith(f"\n{usage}: error: unrecognized arguments: --bogus-flag\n")


def _commands(parser: argparse.ArgumentParser, name: str):
    """(name, parser) of the command line and every command and action below it."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, subparser in action.choices.items():
                yield from _commands(subparser, f"{name} {sub}")


def test_every_command_and_parameter_says_what_it_does():
    """Walks every command, action and argument of the parser the console script runs."""
    from factcheck_cli.app import build_parser

    undocumented = []
    for name, parser in _commands(build_parser(), "factcheck"):
        if not parser.description or "`" in parser.description.split()[0]:
            undocumented.append(f"{name}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                undocumented += [f"{name} {c.dest}: no help line" for c in action._choices_actions if not c.help]
            elif not action.help or action.help == argparse.SUPPRESS:
                undocumented.append(f"{name} {'/'.join(action.option_strings) or action.dest}: no help")
    assert undocumented == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (("kb", "list"), ["--page-size N documents per page", "--page-token TOKEN"]),
        (("kb", "search"), ["query ", "the words to look for", "--top-k N"]),
        (("kb", "delete"), ["document_id ", "the document's id"]),
        (("reviews", "approve"), ["message_id ", "claim_id "]),
        (("claims",), ["--page-size N claims per page"]),
        (("list",), ["List stored runs of every mode"]),
        (("demo",), ["Run the whole suite offline in one command"]),
        (
            ("eval",),
            [
                "--checker MODEL",
                "--set NAME|FILE.jsonl",
                "Ctrl-C asks whether to cancel it or detach",
                "list",
                "sets",
                "watch",
                "compare",
            ],
        ),
        (
            ("eval", "show"),
            ["id ", "the evaluation's id", "--html PATH", "--items", "--wrong", "--jsonl PATH", "--csv PATH"],
        ),
        (("eval", "watch"), ["Follow an evaluation", "--after-seq N", "--reconnect-timeout SECONDS"]),
        (("eval", "compare"), ["paired bootstrap 95% interval", "--max-disagreements N"]),
        (("eval", "resume"), ["Continue an evaluation", "--max-cost-usd X"]),
        (("eval", "list"), ["--page-size N evaluations per page"]),
        (("eval", "sets"), ["List the labelled sets the gateway ships"]),
    ],
)
def test_help_describes_each_command_and_parameter(factcheck, command, expected):
    done = factcheck(*command, "--help")
    assert done.returncode == 0, done.stderr
    for text in expected:
        assert text in " ".join(done.stdout.split()), (text, done.stdout)
    assert "--gateway TARGET" in done.stdout  # the global option, taken here too


@pytest.mark.parametrize("name", ["/nonexistent-factcheck-path", "missing-notes.md"])
def test_kb_add_of_a_path_that_does_not_exist_says_it_cannot_read_it(factcheck, tmp_path, name):
    path = tmp_path / name if not name.startswith("/") else Path(name)
    done = factcheck("kb", "add", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"factcheck kb add: cannot read {path}: No such file or directory\n"  # as `check -f` says
    checked = factcheck("check", "-f", str(path))
    assert (
        checked.returncode == 2
        and checked.stderr == f"factcheck check: cannot read {path}: No such file or directory\n"
    )


@pytest.mark.parametrize(
    "script", ["factcheck-gateway", "factcheck-extractor", "factcheck-checker", "factcheck-reporter"]
)
def test_every_console_script_answers_help_without_serving(script):
    answers = {
        option: subprocess.run(
            [str(Path(sys.executable).parent / script), option],
            capture_output=True,
            text=True,
            env=cli_environment("unused"),
            timeout=30,  # a server would never return
        )
        for option in ("--help", "--version")
    }
    assert all(done.returncode == 0 for done in answers.values()), answers
    assert answers["--help"].stdout.startswith(f"usage: {script} ") and "FACTCHECK_LISTEN" in answers["--help"].stdout
    assert answers["--version"].stdout.startswith(f"{script} ")


# --- titles -------------------------------------------------------------------------------------------


def test_content_is_titled_by_its_subject_not_the_default_question(factcheck, fake_models):
    """`check CONTENT` sends the question "Fact-check this content"; the reporter titled that instruction
    ("Fact-check: Fact-check this content"). The title prompt now carries the content alone."""
    message_id = run_id(factcheck)
    assert json.loads(factcheck("show", "--json", message_id).stdout)["question"] == "Fact-check this content"
    [title_prompt] = [
        r.prompt for r in fake_models.requests_for("fake/reporter") if r.prompt.startswith("Write a short title")
    ]
    assert "Fact-check this content" not in title_prompt and CLAIMS[0] in title_prompt


# --- the embedded database's place ---------------------------------------------------------------------


def test_the_default_database_is_in_the_users_data_directory(monkeypatch, tmp_path):
    from factcheck.kit.settings import Settings

    for name in ("FACTCHECK_DATABASE_URL", "FACTCHECK_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert Settings().database_url == f"sqlite:///{tmp_path / 'xdg' / 'factcheck' / 'factcheck.db'}"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")  # the XDG spec: only absolute paths count
    assert Settings().database_url == f"sqlite:///{Path.home() / '.local/share/factcheck/factcheck.db'}"
    monkeypatch.setenv("FACTCHECK_DATA_DIR", str(tmp_path / "mine"))
    assert Settings().database_url == f"sqlite:///{tmp_path / 'mine' / 'factcheck.db'}"
    monkeypatch.setenv("FACTCHECK_DATABASE_URL", "postgresql+psycopg://db/factcheck")
    assert Settings().database_url == "postgresql+psycopg://db/factcheck"


def test_the_gateway_finds_the_same_database_from_any_directory(tmp_path):
    """`serve` from another folder used to start an empty database there (sqlite:///factcheck.db)."""
    env = {key: value for key, value in cli_environment("unused").items() if not key.startswith("FACTCHECK_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        done = subprocess.run(
            [str(Path(sys.executable).parent / "factcheck-gateway"), "migrate"],
            cwd=tmp_path / folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert list((tmp_path / folder).iterdir()) == []
    assert (tmp_path / "data" / "factcheck" / "factcheck.db").is_file()  # created with its folder
