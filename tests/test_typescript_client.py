"""The TypeScript client (clients/typescript): its committed generated code is what the protos
produce, it compiles, and its examples run from Node against the suite: a fact-check (check.ts) and
what a run left behind, through every other gateway service (inspect.ts).

Needs Node and the client's packages: `npm install` in clients/typescript (scripts/test.sh runs it).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CHECKERS, FULL_SEQUENCE
from tests.fake_model_server import assessments, verdicts
from tests.processes import ROOT
from tests.test_cli import FACTCHECK, cli_environment, snake

pytestmark = pytest.mark.e2e

CLIENT = ROOT / "clients" / "typescript"
GENERATED = CLIENT / "src" / "generated"
EXAMPLE = CLIENT / "dist" / "examples" / "check.js"
INSPECT = CLIENT / "dist" / "examples" / "inspect.js"
EXIT_USAGE, EXIT_NOT_FOUND, EXIT_BROKEN_PIPE = 2, 5, 141  # the `factcheck` command's codes
CONTENT = "The Paris Agreement was signed in 2015 by 196 countries. Water boils at lower temperatures at high altitude."


def npx(*args: str, cwd: Path = CLIENT, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run(["npx", "--no-install", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _node_directory() -> str:
    node = shutil.which("node")
    assert node is not None, "node is not installed"
    return str(Path(node).parent)


@pytest.fixture(scope="module")
def node_packages() -> None:
    assert shutil.which("node") and shutil.which("npx"), "Node.js is required for the TypeScript client tests"
    assert (CLIENT / "node_modules" / ".bin" / "tsc").exists(), (
        "the TypeScript client's packages are missing: run `npm install` in clients/typescript (scripts/test.sh does)"
    )


@pytest.fixture(scope="module")
def example(node_packages) -> Path:
    """The client and its example compiled (tsc, strict) into clients/typescript/dist."""
    npx("tsc", "-p", "tsconfig.json")
    return EXAMPLE


def test_generated_typescript_matches_the_protos(node_packages, tmp_path):
    npx("buf", "generate", "../..", "--template", "buf.gen.yaml", "-o", str(tmp_path))
    fresh = {p.relative_to(tmp_path / "src" / "generated"): p.read_bytes() for p in tmp_path.rglob("*.ts")}
    committed = {p.relative_to(GENERATED): p.read_bytes() for p in GENERATED.rglob("*.ts")}
    assert set(fresh) == set(committed), "generated files differ: run `npm run generate` in clients/typescript"
    stale = sorted(str(name) for name in fresh if fresh[name] != committed[name])
    assert not stale, f"stale generated TypeScript {stale}: run `npm run generate` in clients/typescript"
    assert Path("factcheck/v1/factcheck.ts") in committed


def test_the_example_runs_a_fact_check_from_node(example, shared_suites, shared_models):
    suite, _ = shared_suites.get("cli", "sqlite")  # the command-line modules' suite (conftest.py)
    shared_models.reset()
    shared_models.script(CHECKERS[0], verdicts({"claim_1": "DISPUTED"}, correction="It was adopted in 2015."))
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": suite.gateway_target}
    as_json = subprocess.run(
        ["node", str(example), "--json", CONTENT], capture_output=True, text=True, env=env, timeout=120
    )
    plain = subprocess.run(["node", str(example), CONTENT], capture_output=True, text=True, env=env, timeout=120)
    assert as_json.returncode == 0, as_json.stderr
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    kinds = [snake(next(key for key in event if key not in ("messageId", "seq", "timestamp"))) for event in events]
    assert kinds == FULL_SEQUENCE
    assert [event["seq"] for event in events] == [str(n) for n in range(1, len(events) + 1)]  # int64 as strings
    [checked] = [e["checkerComplete"] for e in events if e.get("checkerComplete", {}).get("model") == CHECKERS[0]]
    assert checked["summary"]["disputed"] == 1
    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0].split()[:2] == ["1", "factcheckStart"] and f"checkers {', '.join(CHECKERS)}" in lines[0]
    assert lines[-1].split()[:2] == [str(len(FULL_SEQUENCE)), "complete"]
    assert any(f"{CHECKERS[0]}: 1 verified, 1 disputed, 0 unverifiable" in line for line in lines)


def test_the_example_reports_an_unreachable_gateway(example):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        target = f"127.0.0.1:{probe.getsockname()[1]}"
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": target}
    done = subprocess.run(["node", str(example), "x"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 3
    assert done.stderr.startswith(f"factcheck example: UNAVAILABLE from {target}: ")


@pytest.mark.parametrize("args", [[""], ["--json", "   "], [], ["--json"]], ids=["empty", "blank", "none", "json-none"])
def test_the_example_refuses_to_check_nothing(example, args):
    """As `factcheck check ""` does: exit 2 and why, before connecting (no gateway listens at the target)."""
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": "127.0.0.1:9"}
    done = subprocess.run(["node", str(example), *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith("factcheck example: nothing to check: ")
    assert ("the content is empty" in done.stderr) == bool(args and args[-1] != "--json")


@pytest.fixture
def cli_suite_target(shared_suites, shared_models) -> str:
    """The command-line modules' suite (conftest.py), its fake models unscripted."""
    suite, _ = shared_suites.get("cli", "sqlite")
    shared_models.reset()
    return suite.gateway_target


def test_a_reader_that_goes_away_ends_the_example_quietly(example, cli_suite_target):
    """`--json | head -3` with the reader gone before the first line: exit 141, no EPIPE stack trace."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": cli_suite_target}
    try:
        done = subprocess.run(
            ["node", str(example), "--json", CONTENT], stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=120
        )
    finally:
        os.close(write_end)
    assert done.returncode == EXIT_BROKEN_PIPE, done.stderr
    assert done.stderr == b""


def test_head_takes_the_first_events_and_the_pipeline_succeeds(example, cli_suite_target):
    script = f"node '{example}' --json '{CONTENT}' | head -3; echo \"${{PIPESTATUS[0]}}\""
    env = {"PATH": _node_directory() + os.pathsep + "/usr/bin:/bin", "FACTCHECK_GATEWAY_TARGET": cli_suite_target}
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120)
    *events, status = done.stdout.splitlines()
    assert [json.loads(line)["seq"] for line in events] == ["1", "2", "3"]
    assert status in ("0", str(EXIT_BROKEN_PIPE)) and done.stderr == ""  # 0 when head read before it closed


def buf_curl(target: str, method: str, request: dict) -> dict:
    """One unary call with `buf curl` (installed by the repository root's `npm install`), over reflection."""
    buf = ROOT / "node_modules" / ".bin" / "buf"
    assert buf.exists(), (
        "buf is missing: run `npm install --no-package-lock` in the repository root (scripts/test.sh does)"
    )
    done = subprocess.run(
        [str(buf), "curl", "--protocol", "grpc", "--http2-prior-knowledge", "-d", json.dumps(request)]
        + [f"http://{target}/{method}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def json_paths(value, path: str = "") -> set[str]:
    """Every key path of a JSON value ("report.reliabilityScore", "claims[].claimKey")."""
    if isinstance(value, dict):
        return {path} | {p for key, item in value.items() for p in json_paths(item, f"{path}.{key}".lstrip("."))}
    if isinstance(value, list):
        return {path} | {p for item in value for p in json_paths(item, f"{path}[]")}
    return {path}


INVESTIGATED = "The Golden Gate Bridge opened to traffic in 1937. The Eiffel Tower is 330 metres tall."
QUESTION = "When did the Golden Gate Bridge open to traffic?"  # the claim answers it: its outcome awaits a review
DOCUMENTS = {
    "bridge-history.txt": "The Golden Gate Bridge opened to traffic in 1937 after four years of construction.",
    "bridge-district.txt": "Opened in 1937, the Golden Gate Bridge carried its first traffic on 28 May.",
}


def test_the_inspect_example_reads_claims_reviews_and_usage(example, cli_suite_target, shared_models, tmp_path):
    """ClaimsService, ReviewService and UsageService from Node, on a run with citations and the verification loop."""
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": cli_suite_target}

    def factcheck(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(FACTCHECK), *args], capture_output=True, text=True, env=cli_environment(cli_suite_target), timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done

    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text)
    factcheck("kb", "add", str(tmp_path))
    try:
        for model in CHECKERS:
            shared_models.script(model, verdicts({"claim_1": "UNVERIFIABLE"}, cite="quote", support="SUPPORTED"))
        shared_models.script("fake/investigator", assessments({"Golden Gate Bridge": "SUPPORTS"}))
        checked = factcheck(
            "check",
            "--json",
            "--citations",
            "--investigate",
            "--investigator",
            "fake/investigator",
            "-q",
            QUESTION,
            INVESTIGATED,
        )
        message_id = json.loads(checked.stdout.splitlines()[0])["messageId"]
        shown_by_python = json.loads(factcheck("show", "--json", message_id).stdout)
        shown_by_buf = buf_curl(cli_suite_target, "factcheck.v1.FactCheckService/GetResult", {"message_id": message_id})

        as_json = subprocess.run(
            ["node", str(INSPECT), "--json", message_id], capture_output=True, text=True, env=env, timeout=60
        )
        plain = subprocess.run(["node", str(INSPECT), message_id], capture_output=True, text=True, env=env, timeout=60)
        unknown = subprocess.run(
            ["node", str(INSPECT), "no-such-run"], capture_output=True, text=True, env=env, timeout=60
        )
        no_id = subprocess.run(["node", str(INSPECT)], capture_output=True, text=True, env=env, timeout=60)
    finally:
        # The suite is shared with other modules: leave no document behind (`kb add DIR` names each
        # document by the folder's name and its path in it).
        for name in DOCUMENTS:
            factcheck("kb", "delete", f"{tmp_path.name}/{name}")
    assert as_json.returncode == 0, as_json.stderr
    shown = json.loads(as_json.stdout)
    assert shown["result"]["messageId"] == message_id and shown["result"]["status"] == "MESSAGE_STATUS_COMPLETE"
    # The clients print the same JSON for the same result, as buf curl does: the proto3 JSON mapping's
    # lowerCamelCase names, fields at their default left out.
    assert json_paths(shown["result"]) == json_paths(shown_by_python) == json_paths(shown_by_buf["result"])
    assert "report.reliabilityScore" in json_paths(shown_by_python)
    claims = shown["claims"]["claims"]
    assert sorted(claim["claimKey"] for claim in claims) == ["claim_1", "claim_2"]
    assert {claim["messageId"] for claim in claims} == {message_id}
    [review] = shown["reviews"]["reviews"]
    assert (review["claimId"], review["state"]) == ("claim_1", "REVIEW_STATE_PENDING")
    assert review["proposedStatus"] == "INVESTIGATION_STATUS_CONFIRMED"
    by_model = {row["model"]: row for row in shown["usage"]["rows"]}
    assert {*CHECKERS, "fake/investigator"} <= set(by_model)
    assert int(shown["usage"]["total"]["calls"]) >= sum(int(by_model[m]["usage"]["calls"]) for m in CHECKERS)

    assert plain.returncode == 0, plain.stderr
    lines = plain.stdout.splitlines()
    assert lines[0].startswith(f"run {message_id}: ") and lines[0].endswith("(MESSAGE_STATUS_COMPLETE)")
    assert "claims: 2" in lines and "reviews: 1" in lines
    assert any(line.split()[:2] == ["claim_1", "REVIEW_STATE_PENDING"] for line in lines)
    assert any(line.split()[:1] == [CHECKERS[0]] for line in lines)

    assert unknown.returncode == EXIT_NOT_FOUND and unknown.stdout == ""
    assert unknown.stderr.startswith(f"factcheck example: NOT_FOUND from {cli_suite_target}: ")
    assert no_id.returncode == EXIT_USAGE and "give one run's message id" in no_id.stderr


# --- the promise-based client (clients/typescript/src/client.ts) ---------------------------------------------

PROMISE_TESTS = CLIENT / "dist" / "test" / "client.test.js"


def test_the_promise_client_calls_every_service_with_cancellation(example, shared_suites, shared_models):
    """clients/typescript/test/client.test.ts under `node --test` against the suite: a method for every RPC of every
    gateway service; a run and an evaluation as async iterables (run, watch), each service's calls as promises
    (EvaluationService's listItems and compare among them), a threshold fitted by an evaluation of the suite's
    MiniCheck-dialect checker and used by a run; refusals as rejections with their status, AbortSignal for unary
    and streaming calls. Each verify call takes 0.5 s, so a run can be stopped half-way."""
    suite, _ = shared_suites.get("cli", "sqlite")
    shared_models.reset()
    shared_models.set_latency("verify", 0.5)
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": suite.gateway_target}
    try:
        done = subprocess.run(
            ["node", "--test", "--test-reporter=spec", str(PROMISE_TESTS)],
            capture_output=True,
            text=True,
            env=env,
            timeout=180,
        )
    finally:
        shared_models.reset()
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    counts = dict(
        line.split()[1:3] for line in done.stdout.splitlines() if line.startswith("ℹ ") and len(line.split()) == 3
    )
    assert counts["fail"] == "0" and int(counts["pass"]) >= 18, done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--checker", "x"], "nothing to check: give the content"),  # the flag's value is not content
        (["--bogus", "x"], "Unknown option '--bogus'"),
        (["--checker"], "Option '--checker <value>' argument missing"),
        (["--checker", "a", "--checker", "b", "--checker", "c", "--checker", "d", "--checker", "e", "x"], "at most 4"),
    ],
    ids=["flag-only", "unknown", "no-value", "five-checkers"],
)
def test_the_example_parses_its_flags(example, args, said):
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": "127.0.0.1:9"}
    done = subprocess.run(["node", str(example), *args], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == EXIT_USAGE and done.stdout == "", done.stderr
    assert done.stderr.startswith(f"factcheck example: {said}"), done.stderr


def test_the_example_sends_its_flags_not_as_content(example, cli_suite_target, shared_models):
    """`check.js --checker M --json CONTENT`: M checks CONTENT (before, the flags were checked as content)."""
    env = {"PATH": _node_directory(), "FACTCHECK_GATEWAY_TARGET": cli_suite_target}
    done = subprocess.run(
        ["node", str(example), "--checker", CHECKERS[1], "--json", CONTENT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    [start] = [json.loads(line)["factcheckStart"] for line in done.stdout.splitlines()[:1]]
    assert start["config"]["checkerModels"] == [CHECKERS[1]]
    [extracted] = [request for request in shared_models.requests if request.kind == "extract"]
    assert CONTENT in extracted.prompt and "--checker" not in extracted.prompt
    assert {request.model for request in shared_models.requests if request.kind == "verify"} == {CHECKERS[1]}
