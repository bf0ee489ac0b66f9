"""The `factcheck` command with durable runs: check that survives its gateway,
watch, cancel, and failure causes, as real processes.

Gateways use short leases (tests.test_durable_runs.DURABLE_SETTINGS) so a killed gateway's
run is resumed within seconds. The extractor, checker and reporter are shared by the module;
most tests share one gateway on SQLite, the ones that kill or starve a gateway start their own.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field

import pytest

from tests.conftest import FULL_SEQUENCE, fresh_database, suite_environment
from tests.fake_model_server import default_reply, delay, hold_until_closed
from tests.processes import ServiceProcess, start_service, start_services, stop_services
from tests.test_cli import CLAIMS, CONTENT, FACTCHECK, cli_environment, events_of, flat, kind_of
from tests.test_durable_runs import DURABLE_SETTINGS

pytestmark = pytest.mark.e2e

CLI_TIMEOUT_S = 120


@pytest.fixture(scope="module")
def workers(fake_models, tmp_path_factory):
    """Extractor, checker and reporter processes, shared by every gateway of the module."""
    env = {**suite_environment(fake_models, f"sqlite:///{tmp_path_factory.mktemp('workers') / 'unused.db'}")}
    services = start_services(("extractor", "checker", "reporter"), env)
    yield services
    stop_services(services.values())


def gateway_environment(fake_models, workers, database_url: str) -> dict[str, str]:
    return {
        **suite_environment(fake_models, database_url),
        **DURABLE_SETTINGS,
        "FACTCHECK_EXTRACTOR_TARGET": workers["extractor"].target,
        "FACTCHECK_CHECKER_TARGET": workers["checker"].target,
        "FACTCHECK_REPORTER_TARGET": workers["reporter"].target,
    }


@pytest.fixture(scope="module")
def shared_gateway(fake_models, workers, tmp_path_factory):
    database = tmp_path_factory.mktemp("cli-durable") / "factcheck.db"
    gateway = start_service("gateway", gateway_environment(fake_models, workers, f"sqlite:///{database}"))
    yield gateway
    gateway.stop()


@pytest.fixture
def start_gateway(fake_models, workers):
    """Start gateways of this test (on any database, on a given port); all are stopped afterwards."""
    started: list[ServiceProcess] = []

    def start(database_url: str, port: int | None = None, **extra: str) -> ServiceProcess:
        env = {**gateway_environment(fake_models, workers, database_url), **extra}
        if port is not None:
            env["FACTCHECK_LISTEN"] = f"127.0.0.1:{port}"
        gateway = start_service("gateway", env)
        started.append(gateway)
        return gateway

    yield start
    stop_services(started)


@pytest.fixture(autouse=True)
def unscripted(fake_models):
    fake_models.reset()


def factcheck(target: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FACTCHECK), *args], capture_output=True, text=True, env=cli_environment(target), timeout=CLI_TIMEOUT_S
    )


@dataclass
class Running:
    """A `factcheck` process in the background; its output lines are collected as they come."""

    process: subprocess.Popen
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    _lines: queue.Queue = field(default_factory=queue.Queue)
    _collectors: list[threading.Thread] = field(default_factory=list)

    def _collect(self, stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))
            self._lines.put(line)

    def start_collecting(self) -> None:
        for stream, lines in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr)):
            collector = threading.Thread(target=self._collect, args=(stream, lines), daemon=True)
            collector.start()
            self._collectors.append(collector)

    def wait_for(self, predicate, timeout_s: float = 60.0) -> str:
        """The first line (stdout or stderr, already seen or still to come) that satisfies predicate."""
        give_up = time.monotonic() + timeout_s
        while True:
            for line in self.stdout + self.stderr:  # both lists grow; they are short
                if predicate(line):
                    return line
            remaining = give_up - time.monotonic()
            if remaining <= 0 or (self.process.poll() is not None and self._lines.empty()):
                raise AssertionError(f"no such line; stdout={self.stdout} stderr={self.stderr}")
            try:
                self._lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                pass

    def finish(self, timeout_s: float = CLI_TIMEOUT_S) -> int:
        code = self.process.wait(timeout=timeout_s)
        for collector in self._collectors:  # they have read the last lines once the pipes close
            collector.join(timeout=10)
        return code


# Starts the command with Ctrl-C as a terminal delivers it: a test runner started in the background
# (or by a job runner) may have SIGINT ignored or blocked, and a child inherits both across exec.
_WITH_CTRL_C = (
    "import os, signal, sys; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def start_factcheck(target: str, *args: str) -> Running:
    process = subprocess.Popen(
        [sys.executable, "-c", _WITH_CTRL_C, str(FACTCHECK), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_environment(target),
    )
    running = Running(process)
    running.start_collecting()
    return running


def event_line(kind: str):
    return lambda line: line.startswith("{") and kind_of(json.loads(line)) == kind


def message_id_of(running: Running) -> str:
    """The run's id, from the first JSON event or the progress display's first line."""
    line = running.wait_for(lambda line: line.startswith("{") or line.startswith("start "))
    if line.startswith("{"):
        return json.loads(line)["messageId"]
    return line.split("run ", 1)[1].split(":", 1)[0]


def assert_every_event_once(events: list[dict]) -> None:
    assert [kind_of(event) for event in events] == FULL_SEQUENCE
    assert [int(event["seq"]) for event in events] == list(range(1, len(FULL_SEQUENCE) + 1))
    assert len({event["messageId"] for event in events}) == 1


# --- check reconnects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "backend, how",
    [("sqlite", "SIGKILL"), ("postgresql", "SIGKILL"), ("sqlite", "SIGTERM")],
    ids=["sqlite-killed-and-restarted", "postgresql-replica-killed", "sqlite-restarted"],
)
def test_check_survives_its_gateway_going_away(backend, how, fake_models, start_gateway, tmp_path):
    """SQLite: the gateway is started again on its port. PostgreSQL: the CLI's target lists two replicas."""
    # checker-b's first answer never comes (its gateway goes first); the resumed call gets an answer.
    fake_models.script("fake/checker-b", delay(120), default_reply())
    with fresh_database(backend, tmp_path) as database_url:
        first = start_gateway(database_url, FACTCHECK_SHUTDOWN_GRACE_S="0.5")
        target = first.target
        if backend == "postgresql":
            second = start_gateway(database_url)
            target = f"ipv4:{first.target},{second.target}"  # pick_first: the CLI uses the first while it lives
        check = start_factcheck(target, "check", "--json", CONTENT)
        check.wait_for(event_line("checker_complete"))
        fake_models.wait_for_requests("fake/checker-b", 1)  # its held call (see wait_for_requests)

        if how == "SIGKILL":  # no shutdown, no lease handed over
            first.process.kill()
            first.process.wait()
        else:  # a graceful stop: the run outlasts the grace period and is handed over
            first.stop()
        if backend == "sqlite":
            start_gateway(database_url, port=int(first.target.rsplit(":", 1)[1]))
        code = check.finish()

    assert code == 0, check.stderr
    events = [json.loads(line) for line in check.stdout]
    assert_every_event_once(events)  # nothing shown twice, nothing missed
    assert events[-1]["complete"]["status"] == "MESSAGE_STATUS_COMPLETE"
    [note] = check.stderr
    assert note.startswith("factcheck: connection to the gateway lost (UNAVAILABLE")
    assert note.endswith("resuming after event 5…")
    # The stage stored before the kill was not called again.
    assert len(fake_models.requests_for("fake/checker-a")) == 1


def test_check_retries_its_run_until_the_gateway_can_take_it(fake_models, start_gateway, tmp_path):
    missing = tmp_path / "not-yet"  # SQLite cannot create a file in a folder that does not exist
    gateway = start_gateway(f"sqlite:///{missing / 'late.db'}")
    check = start_factcheck(gateway.target, "check", "--json", CONTENT)
    check.wait_for(lambda line: "retrying the run with the same request id" in line)
    missing.mkdir()  # the gateway's database answers: it migrates and accepts runs

    assert check.finish() == 0, check.stderr
    events = [json.loads(line) for line in check.stdout]
    assert_every_event_once(events)
    assert "The results database is unavailable" in check.stderr[0]
    listing = factcheck(gateway.target, "list")
    # One run, however many tries: the listing's one row (after its header) is it.
    assert [line.split()[0] for line in listing.stdout.splitlines()[1:]] == [events[0]["messageId"][:8]]
    shown = json.loads(factcheck(gateway.target, "show", "--json", events[0]["messageId"]).stdout)
    assert uuid.UUID(shown["requestId"]).version == 4


def test_a_gateway_never_reached_is_reported_at_once(fake_models):
    done = factcheck("127.0.0.1:1", "check", CONTENT)
    assert done.returncode == 3
    assert done.stderr.startswith("factcheck: gateway unavailable at 127.0.0.1:1: ")
    assert "connection to the gateway lost" not in done.stderr


# --- watch --------------------------------------------------------------------------------------------


def test_watch_follows_a_running_run_then_replays_it(fake_models, shared_gateway, tmp_path):
    fake_models.set_latency("verify", 1.0)
    target = shared_gateway.target
    check = start_factcheck(target, "check", "--json", CONTENT)
    message_id = message_id_of(check)
    assert check.process.poll() is None  # still running: the watch below follows it live

    live = factcheck(target, "watch", message_id)
    assert check.finish() == 0, check.stderr
    assert live.returncode == 0, live.stderr
    progress = live.stderr.splitlines()
    assert progress[0].startswith(f"start     run {message_id}: checking your content with 2 checkers")
    assert [line.split()[0] for line in progress].count("verify") == 4
    assert progress[-1].split()[:2] == ["done", "complete"]
    report = flat(live.stdout)  # the report, as check prints it
    assert "Reliability score 85/100" in report
    assert all(f"{claim} [#{n} VERIFIED]" in report for n, claim in enumerate(CLAIMS, start=1))

    streamed = [json.loads(line) for line in check.stdout]
    replayed = factcheck(target, "watch", "--json", "--html", str(tmp_path / "watched.html"), message_id)
    assert replayed.returncode == 0, replayed.stderr
    assert events_of(replayed.stdout) == streamed  # the same events, timestamps and all
    assert CLAIMS[0] in (tmp_path / "watched.html").read_text()
    rest = factcheck(target, "watch", "--json", "--after-seq", "5", message_id)
    assert events_of(rest.stdout) == streamed[5:]


def test_watch_an_unknown_run_is_not_found(shared_gateway):
    done = factcheck(shared_gateway.target, "watch", "no-such-run")
    assert done.returncode == 5
    assert done.stderr.strip() == "factcheck: not found: No fact-check with message_id 'no-such-run'"


def test_ctrl_c_leaves_the_run_going_and_says_how_to_follow_it(fake_models, shared_gateway):
    # Interrupted while the checkers work (held 5 s): on a loaded machine a shorter hold let the run end
    # before the signal reached the command, which then rightly exited 0.
    fake_models.set_latency("verify", 5.0)
    check = start_factcheck(shared_gateway.target, "check", CONTENT)
    message_id = message_id_of(check)
    check.wait_for(lambda line: line.startswith("verify    checking"))
    check.process.send_signal(signal.SIGINT)
    assert check.finish() == 130
    stderr = "\n".join(check.stderr)
    assert f"factcheck watch {message_id}" in stderr and f"factcheck cancel {message_id}" in stderr
    watched = factcheck(shared_gateway.target, "watch", "--json", message_id)  # it went on and completed
    assert watched.returncode == 0 and kind_of(events_of(watched.stdout)[-1]) == "complete"


# --- cancel -------------------------------------------------------------------------------------------


def test_cancel_stops_a_running_run_and_its_followers_exit_cancelled(fake_models, shared_gateway):
    for checker in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(checker, hold_until_closed())
    target = shared_gateway.target
    check = start_factcheck(target, "check", CONTENT)  # progress on stderr
    message_id = message_id_of(check)
    check.wait_for(lambda line: line.startswith("verify    checking 3 claims"))
    watch = start_factcheck(target, "watch", "--json", message_id)
    watch.wait_for(event_line("verify_start"))

    cancelled = factcheck(target, "cancel", message_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert (
        cancelled.stdout.strip()
        == f"Run {message_id}: CANCELLED. What it did before is stored: factcheck show {message_id}"
    )

    assert check.finish() == 4 and watch.finish() == 4
    assert check.stderr[-3].split(maxsplit=1) == ["cancelled", "Cancelled by the caller."]  # the progress line
    assert check.stderr[-2:] == [
        "factcheck: the run was cancelled: Cancelled by the caller.",
        f"What was done is stored: factcheck show {message_id}",
    ]
    watched = [json.loads(line) for line in watch.stdout]
    assert kind_of(watched[-1]) == "cancelled" and watched[-1]["cancelled"]["reason"] == "Cancelled by the caller."
    assert [int(event["seq"]) for event in watched] == list(range(1, len(watched) + 1))

    again = factcheck(target, "cancel", message_id)
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f"factcheck: run {message_id} already finished (CANCELLED); there is nothing to cancel."
    )
    unknown = factcheck(target, "cancel", "no-such-run")
    assert unknown.returncode == 5
    assert unknown.stderr.strip() == "factcheck: not found: No fact-check with message_id 'no-such-run'"

    shown = factcheck(target, "show", message_id)
    report = flat(shown.stdout)
    assert "status CANCELLED" in report and "The run was cancelled: only what was done before it stopped" in report
    assert "Cancelled by the caller." in report
    # The listing shortens ids to their first 8 characters: id, date, time, mode, status.
    [row] = [line.split() for line in factcheck(target, "list").stdout.splitlines() if line.startswith(message_id[:8])]
    assert row[3:5] == ["fact-check", "CANCELLED"]
    replay = factcheck(target, "watch", message_id)  # a cancelled run replays and exits cancelled too
    assert replay.returncode == 4 and "factcheck: the run was cancelled" in replay.stderr


# --- evaluations ------------------------------------------------------------------------------------


def labelled_items(path, count: int) -> str:
    path.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "claim": f"Claim number {n}.", "label": "VERIFIED"}) + "\n" for n in range(count)
        ),
        encoding="utf-8",
    )
    return str(path)


def test_eval_follows_on_after_the_server_recycles_its_connection(fake_models, start_gateway, tmp_path):
    fake_models.set_latency("fake/checker-a", 0.2)
    gateway = start_gateway(
        f"sqlite:///{tmp_path / 'age.db'}",
        FACTCHECK_MAX_CONNECTION_AGE_S="1",
        FACTCHECK_MAX_CONNECTION_AGE_GRACE_S="0.5",
    )
    items = labelled_items(tmp_path / "ten.jsonl", 10)
    done = factcheck(gateway.target, "eval", "--checker", "fake/checker-a", "--set", items, "--concurrency", "1")
    assert done.returncode == 0, done.stderr
    assert "finished  COMPLETE (10/10 answers stored)" in done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("note ")]
    assert notes and all("the evaluation goes on: following it again after event" in note for note in notes)
    assert "Start the suite" not in done.stderr and "factcheck eval resume" not in done.stderr
    assert len(fake_models.requests_for("fake/checker-a")) == 10  # it never stopped: nothing asked twice


def test_eval_follows_its_evaluation_to_a_restarted_gateway(fake_models, start_gateway, tmp_path):
    fake_models.set_latency("fake/checker-a", 0.3)
    database_url = f"sqlite:///{tmp_path / 'restart.db'}"
    first = start_gateway(database_url)
    items = labelled_items(tmp_path / "twelve.jsonl", 12)
    running = start_factcheck(first.target, "eval", "--checker", "fake/checker-a", "--set", items, "--concurrency", "1")
    running.wait_for(lambda line: line.startswith("progress "))
    first.process.kill()  # the gateway dies with the evaluation under way ...
    first.process.wait()
    # ... and the next gateway on its address resumes it once its heartbeat lapses; the command follows it there.
    start_gateway(database_url, port=int(first.target.rsplit(":", 1)[1]))
    assert running.finish() == 0, running.stderr
    stderr = "\n".join(running.stderr)
    assert "finished  COMPLETE (12/12 answers stored)" in stderr
    assert "the evaluation goes on: following it again" in stderr and "Start the suite" not in stderr
    assert 12 <= len(fake_models.requests_for("fake/checker-a")) <= 13  # a call cut short by the kill, at most
