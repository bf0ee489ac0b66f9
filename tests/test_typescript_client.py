"""The TypeScript client (clients/typescript): its committed generated code is what the protos
produce, it compiles, and its example runs a fact-check from Node against the suite.

Needs Node and the client's packages: `npm install` in clients/typescript (scripts/test.sh runs it).
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.conftest import CHECKERS, FULL_SEQUENCE
from tests.fake_model_server import verdicts
from tests.processes import ROOT

pytestmark = pytest.mark.e2e

CLIENT = ROOT / "clients" / "typescript"
GENERATED = CLIENT / "src" / "generated"
EXAMPLE = CLIENT / "dist" / "examples" / "check.js"
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


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


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
