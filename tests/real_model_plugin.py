"""pytest hooks for tests that use a real llama.cpp server (tests/real_model_server.py's `LlamaServer`).

After every test that holds a server among its fixtures, the server's process must still be alive. When it is
not, the test fails, and its report starts with one line that says so (`llama.cpp server exited with SIGSEGV
(signal 11) during test_x; last lines of its log: …`), before whatever the test itself saw: a dead server
otherwise surfaces as ledger mismatches and refused connections that a reader has to dig through.

The server's system-info line (the instruction sets llama.cpp was built with) is shown in the terminal summary
once a test records it (`record_llama_system_info`), workers included.
"""

from __future__ import annotations

from collections.abc import Generator

import pluggy
import pytest

from tests.real_model_server import LlamaServer

SYSTEM_INFO_PROPERTY = "llama.cpp system info"
# How long a failed test waits for a server on its way out to be seen dead.
DYING_GRACE_S = 3.0


def servers_of(item: pytest.Item) -> list[LlamaServer]:
    values = getattr(item, "funcargs", {}).values()
    return [value for value in values if isinstance(value, LlamaServer)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Generator[None, pluggy.Result, None]:
    outcome = yield
    if call.when != "call":
        return
    report = outcome.get_result()
    # A test that failed may have failed because the server is dying: its connections close a moment before its
    # exit can be seen, so that is waited for briefly; a passing test costs one look.
    grace_s = DYING_GRACE_S if report.failed else 0.0
    for server in servers_of(item):
        line = server.death(during=item.name, grace_s=grace_s)
        if line is None:
            continue
        report.outcome = "failed"
        seen = f"\n\nWhat the test saw:\n{report.longreprtext}" if report.longrepr else ""
        report.longrepr = line + seen
        return


def record_llama_system_info(request: pytest.FixtureRequest, server: LlamaServer) -> None:
    """Put the server's system-info line in the test's report, for the terminal summary."""
    request.node.user_properties.append((SYSTEM_INFO_PROPERTY, server.system_info or "(not printed)"))


_seen_system_info: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == SYSTEM_INFO_PROPERTY and value not in _seen_system_info:
            _seen_system_info.append(str(value))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for line in _seen_system_info:
        terminalreporter.write_line(f"{SYSTEM_INFO_PROPERTY}: {line}")
