"""The real-model tier names a dead server: a test during which llama.cpp's server dies fails with one line first.

Each case runs a small test module in its own pytest process (with tests/real_model_plugin.py, as the tier has
it): the inner test starts a streamed completion on a fresh server and kills the server's process from the test
while it generates. The inner run must fail, and the first line of its failure must be the plugin's, naming the
signal and the test. The same server's system-info line shows the instruction sets it was built with: a portable
build (scripts/llama_wheel.sh) has none of AVX-512's or AMX's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.real_model_plugin import record_llama_system_info
from tests.real_model_server import LlamaServer
from tests.test_real_model import _require_the_real_model

pytestmark = [pytest.mark.e2e, pytest.mark.realmodel]

ROOT = Path(__file__).resolve().parent.parent

INNER = """
import json, os, signal, urllib.request
import pytest
from tests.real_model_server import LlamaServer

@pytest.fixture
def llama():
    with LlamaServer.start() as server:
        yield server

def test_a_completion_that_loses_its_server(llama):
    body = {"messages": [{"role": "user", "content": "Count from 1 to 300, one number a line."}],
            "max_tokens": 400, "stream": True}
    request = urllib.request.Request(f"{llama.base_url}/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        answer.readline()  # the first piece of the answer: the server is generating
        os.kill(llama.pid, signal.SIG_NAME)
        answer.read()  # what the suite would see: a broken connection
    # The kernel closes a killed process's connections a moment before its exit can be seen: the test ends once it
    # can (a test that passes as its server dies is caught by the next test's look instead).
    llama.process.wait(timeout=30)
"""


@pytest.mark.parametrize("signal_name", ["SIGSEGV", "SIGKILL"])
def test_a_server_killed_mid_run_is_named_in_one_line(tmp_path: Path, signal_name: str) -> None:
    _require_the_real_model()
    inner = tmp_path / "test_inner_death.py"
    inner.write_text(INNER.replace("SIG_NAME", signal_name))
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.real_model_plugin"]
    # -vv: the short summary gives each failure's whole first line, uncut.
    command += ["-c", os.devnull, "--rootdir", str(tmp_path), "-vv", "-rf", "-n", "0", str(inner)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    finished = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=300)
    output = finished.stdout + finished.stderr
    assert finished.returncode == 1, output

    number = signal.Signals[signal_name].value
    expected = (
        f"llama.cpp server exited with {signal_name} (signal {number}) during "
        "test_a_completion_that_loses_its_server; last lines of its log: "
    )
    # The short summary gives each failure's first line: it is the plugin's, not the broken connection's.
    summary = [line for line in output.splitlines() if line.startswith("FAILED ")]
    assert len(summary) == 1, output
    assert summary[0].split(" - ", 1)[1].startswith(expected), output
    # And the failure's body starts with it too. What the test itself saw comes after it when the test failed on its
    # own (the broken connection); a read that the kill ended cleanly leaves the plugin's line alone.
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if "_ test_a_completion_that_loses_its_server _" in line)
    body = [line for line in lines[header + 1 :] if line.strip()]
    assert body[0].startswith(expected), output
    if "What the test saw:" in body:
        assert body.index("What the test saw:") == 1, output


def test_the_server_is_a_portable_build(request: pytest.FixtureRequest) -> None:
    """The library was built for a portable baseline, not for this machine's CPU: llama.cpp's own system-info
    line (shown in the terminal summary) lists no AVX-512 or AMX instruction set, whatever this CPU has."""
    _require_the_real_model()
    with LlamaServer.start() as server:
        record_llama_system_info(request, server)
        info = server.system_info
    assert info is not None, "\n".join(server.output[-40:])
    for native_only in ("AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AMX_INT8", "AVX_VNNI"):
        assert f"{native_only} = 1" not in info, info
