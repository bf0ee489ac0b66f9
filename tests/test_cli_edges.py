"""The rough edges of the `factcheck` command, one test each, as a real process
against the running suite (fake models): exit codes as docs/cli.md documents them, a closed
stdout, binary and empty input, `kb` with empty files and long ids, `--question` with other
options, `--version`, `--gateway`, `--json` on every listing, and the services' `--help`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests import test_cli
from tests.test_cli import CLAIMS, CONTENT, FACTCHECK, cli_environment, events_of, run_id

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
    assert f"skipped  {folder / 'empty.md'} is empty" in done.stderr
    assert f"skipped  {folder / 'blank.txt'} is empty" in done.stderr

    only_empty = factcheck("kb", "add", str(folder / "empty.md"))
    assert only_empty.returncode == 2 and "no .txt, .md or .html files with text found" in only_empty.stderr
    assert factcheck("kb", "delete", str(folder / "tides.md")).returncode == 0  # the suite is shared


# --- kb list ------------------------------------------------------------------------------------------


def test_kb_list_shows_the_full_ids_delete_takes(suite, factcheck, tmp_path):
    deep = tmp_path / "a-rather-long-folder-name" / "and-another-one-below-it" / "yet-another-level"
    deep.mkdir(parents=True)
    path = deep / "the-document-with-a-long-name-about-glaciers.md"
    path.write_text("# Glaciers\n\nGlaciers store about 69 percent of the world's fresh water.\n")
    assert factcheck("kb", "add", str(path)).returncode == 0
    narrow = subprocess.run(
        [str(FACTCHECK), "kb", "list", "--page-size", "100"],
        capture_output=True,
        text=True,
        env={**cli_environment(suite.gateway_target), "COLUMNS": "80"},
        timeout=60,
    )
    assert narrow.returncode == 0, narrow.stderr
    assert str(path) in narrow.stdout.splitlines()  # on a line of its own, uncut: copy it into `kb delete`
    listed = json.loads(factcheck("kb", "list", "--json", "--page-size", "100").stdout)
    [document] = [d for d in listed["documents"] if d["id"] == str(path)]
    assert document["title"] == "Glaciers" and int(document["passageCount"]) >= 1
    assert factcheck("kb", "delete", str(path)).returncode == 0


def test_kb_search_json_lists_the_passages(factcheck, tmp_path):
    path = tmp_path / "volcano.txt"
    path.write_text("Mauna Kea rises about 10,210 metres from its base on the ocean floor.")
    assert factcheck("kb", "add", str(path)).returncode == 0
    found = json.loads(factcheck("kb", "search", "--json", "Mauna Kea base").stdout)
    assert [p["sourceId"] for p in found["passages"]][:1] == [str(path)]
    assert "10,210 metres" in found["passages"][0]["text"]
    assert factcheck("kb", "delete", str(path)).returncode == 0  # the suite is shared


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


def test_version(factcheck):
    done = factcheck("--version")
    assert done.returncode == 0 and done.stdout.startswith("factcheck ") and done.stdout.split()[1][0].isdigit()


def test_the_gateway_flag_overrides_the_environment(suite, factcheck):
    done = factcheck("--gateway", suite.gateway_target, "list", target=dead_target())
    assert done.returncode == 0, done.stderr
    down = factcheck("--gateway", dead_target(), "list")
    assert down.returncode == 3 and "gateway unavailable at 127.0.0.1:" in down.stderr


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
