"""Start factcheck services as real processes for end-to-end tests (and benchmarks)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 60.0


@dataclass
class ServiceProcess:
    """One service process; its output is collected so a failing test can show it."""

    name: str
    process: subprocess.Popen
    address: str | None = None
    output: list[str] = field(default_factory=list)
    _listening: threading.Event = field(default_factory=threading.Event)

    def _drain(self) -> None:
        assert self.process.stdout is not None  # (started with stdout=PIPE)
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            if self.address is None and " listening on " in line:
                self.address = line.rsplit(" listening on ", 1)[1].strip()
                self._listening.set()
        self._listening.set()  # the process ended; stop waiting

    def wait_until_listening(self) -> str:
        threading.Thread(target=self._drain, daemon=True).start()
        self._listening.wait(STARTUP_TIMEOUT_S)
        if self.address is None:
            self.stop()
            raise RuntimeError(f"{self.name} did not start:\n" + "\n".join(self.output[-40:]))
        return self.address

    @property
    def target(self) -> str:
        assert self.address is not None
        return self.address.replace("0.0.0.0", "127.0.0.1")

    def stop(self, timeout: float = 15.0) -> int:
        self.terminate()
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def terminate(self) -> None:
        """SIGTERM, without waiting (`stop` waits)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)


def stop_services(services: Iterable[ServiceProcess]) -> None:
    """Stop several services at once: each shuts down gracefully, so stopping one after another adds up."""
    services = list(services)
    for service in services:
        service.terminate()
    for service in services:
        service.stop()


def start_service(name: str, env: Mapping[str, str]) -> ServiceProcess:
    """Run `python -m factcheck_<name>.main` listening on an ephemeral loopback port."""
    service = _spawn_service(name, env)
    service.wait_until_listening()
    return service


def start_services(
    names: Iterable[str], env: Mapping[str, str], per_service: Mapping[str, Mapping[str, str]] | None = None
) -> dict[str, ServiceProcess]:
    """Start several services at once (most of a start is the interpreter importing, which overlaps
    well), each with `env` plus its own `per_service` settings; if one fails to start, all are stopped."""
    per_service = per_service or {}
    services: dict[str, ServiceProcess] = {}
    try:
        for name in names:
            services[name] = _spawn_service(name, {**env, **per_service.get(name, {})})
        for service in services.values():
            service.wait_until_listening()
    except BaseException:
        stop_services(services.values())
        raise
    return services


def _spawn_service(name: str, env: Mapping[str, str]) -> ServiceProcess:
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", "FACTCHECK_LISTEN": "127.0.0.1:0", **env}
    process = subprocess.Popen(
        [sys.executable, "-m", f"factcheck_{name}.main"],
        cwd=ROOT,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    return ServiceProcess(name, process)


@dataclass
class Suite:
    """The four services as separate processes, wired together."""

    services: dict[str, ServiceProcess]

    @property
    def gateway_target(self) -> str:
        return self.services["gateway"].target

    def logs(self) -> str:
        return "\n".join(f"[{name}] {line}" for name, s in self.services.items() for line in s.output)

    def stop(self) -> None:
        """The gateway first (its runs call the others while it drains), then the rest at once."""
        if "gateway" in self.services:
            self.services["gateway"].stop()
        stop_services(service for name, service in self.services.items() if name != "gateway")


def start_suite(
    env: Mapping[str, str],
    *,
    checker_target: str | None = None,
    per_service: Mapping[str, Mapping[str, str]] | None = None,
) -> Suite:
    """Start extractor, checker and reporter, then a gateway pointed at them.

    With `checker_target`, no checker is started: the gateway uses that target (e.g.
    several checker processes the caller started, as `ipv4:host:port,host:port`).
    `per_service` adds settings for single services (by name, "gateway" included).
    """
    per_service = per_service or {}
    names = ("extractor", "reporter") if checker_target else ("extractor", "checker", "reporter")
    services = start_services(names, env, per_service)
    try:
        gateway_env = {
            **env,
            "FACTCHECK_EXTRACTOR_TARGET": services["extractor"].target,
            "FACTCHECK_CHECKER_TARGET": checker_target or services["checker"].target,
            "FACTCHECK_REPORTER_TARGET": services["reporter"].target,
            **per_service.get("gateway", {}),
        }
        services["gateway"] = start_service("gateway", gateway_env)
    except BaseException:
        Suite(services).stop()
        raise
    return Suite(services)
