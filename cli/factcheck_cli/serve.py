"""`factcheck serve`: the four services as separate processes, started and stopped together."""

from __future__ import annotations

import argparse
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from factcheck.kit.settings import DEFAULT_PORTS
from factcheck.serving.server import PORT_TAKEN_HINT
from factcheck_cli.arguments import BASE_PORT, bounded, int_between

# Started in this order: the gateway last, once the services it calls are up.
SERVICES = ("extractor", "checker", "reporter", "gateway")
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0


@dataclass
class ServiceProcess:
    name: str
    process: subprocess.Popen
    address: str | None = None
    last_line: str = ""


# `serve --gateway`: the command starts the gateway; it does not talk to one.
NO_GATEWAY = "does not apply: `factcheck serve` starts its own gateway (--host and --base-port say where)"


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "serve",
        help="start the gateway, extractor, checker and reporter as separate processes",
        description="Start the whole suite locally (ports 50051-50054). Ctrl-C or SIGTERM stops every service.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: 127.0.0.1)")
    parser.add_argument(
        "--base-port",
        type=int_between(BASE_PORT),
        default=DEFAULT_PORTS["gateway"],
        help=f"gateway port, {bounded(BASE_PORT)}; extractor, checker and reporter take the next three "
        "(default: 50051)",
    )
    parser.set_defaults(run=run, no_gateway=NO_GATEWAY)


def _ports(base_port: int) -> dict[str, int]:
    """The default port layout (`DEFAULT_PORTS`: gateway, extractor, checker, reporter), shifted to
    start at base_port."""
    return {name: base_port + port - DEFAULT_PORTS["gateway"] for name, port in DEFAULT_PORTS.items()}


def _environment(ports: dict[str, int]) -> dict[str, str]:
    """The gateway reaches the services this command starts, whatever the caller's environment says."""
    env = dict(os.environ)
    for name in ("extractor", "checker", "reporter"):
        env[f"FACTCHECK_{name.upper()}_TARGET"] = f"127.0.0.1:{ports[name]}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _relay_output(service: ServiceProcess, ready: queue.Queue, echo: bool) -> None:
    """Prefix each line of a service's output with its name (when echoing); report the address it listens on."""
    assert service.process.stdout is not None  # (started with stdout=PIPE)
    for line in service.process.stdout:
        line = line.rstrip("\n")
        if line.strip():
            service.last_line = line
        if " listening on " in line and service.address is None:
            service.address = line.rsplit(" listening on ", 1)[1]
            ready.put(service.name)
        if echo:
            print(f"[{service.name}] {line}", flush=True)
    ready.put(None)


def _start(name: str, listen: str, env: dict[str, str], ready: queue.Queue, echo: bool) -> ServiceProcess:
    service_env = dict(env, FACTCHECK_LISTEN=listen)
    process = subprocess.Popen(
        [sys.executable, "-m", f"factcheck_{name}.main"],
        env=service_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    service = ServiceProcess(name, process)
    threading.Thread(target=_relay_output, args=(service, ready, echo), daemon=True).start()
    return service


def _wait_until_listening(service: ServiceProcess, ready: queue.Queue, stop: threading.Event) -> bool:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline and not stop.is_set():
        try:
            ready.get(timeout=0.2)
        except queue.Empty:
            pass
        if service.address is not None:
            return True
        if service.process.poll() is not None:
            return False
    return False


def _wait_for_output_end(ready: queue.Queue, timeout_s: float = 5.0) -> None:
    """Until the relay has read a stopped service's last line (it queues None at the end)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if ready.get(timeout=0.1) is None:
                return
        except queue.Empty:
            pass


def stop_services(services: list[ServiceProcess]) -> None:
    """SIGTERM every service (gateway first), then wait; kill what has not stopped in time."""
    for service in reversed(services):
        if service.process.poll() is None:
            service.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for service in services:
        try:
            service.process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            service.process.kill()
            service.process.wait()


def _why_not_started(service: ServiceProcess, port: int) -> str:
    """The service's own reason when it gave one, with the hint for this command: it sets each service's
    FACTCHECK_LISTEN itself, so the way to other ports is --base-port."""
    hint = "Stop the other server, or pass --base-port to start the suite on other ports"
    if "cannot listen" in service.last_line:
        return f": {service.last_line.removesuffix(PORT_TAKEN_HINT).rstrip()} {hint}"
    return f" (is port {port} free?). {hint}"


def start_services(host: str, base_port: int, stop: threading.Event, *, echo: bool) -> list[ServiceProcess]:
    """Start the four services, each once the previous one listens; raises RuntimeError if one does not."""
    ports = _ports(base_port)
    env = _environment(ports)
    services: list[ServiceProcess] = []
    for name in SERVICES:
        ready: queue.Queue = queue.Queue()
        service = _start(name, f"{host}:{ports[name]}", env, ready, echo)
        services.append(service)
        if not _wait_until_listening(service, ready, stop):
            stop_services(services)
            _wait_for_output_end(ready)
            raise RuntimeError(f"{name} did not start{_why_not_started(service, ports[name])}")
    return services


def run(args: argparse.Namespace) -> int:
    stop = threading.Event()

    def request_stop(signum, frame) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        services = start_services(args.host, args.base_port, stop, echo=True)
    except RuntimeError as error:
        print(f"factcheck serve: {error}. The suite is stopped.", file=sys.stderr, flush=True)
        return 1
    try:
        print("factcheck suite is up:", flush=True)
        for service in services:
            print(f"  {service.name:<10} {service.address}", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        while not stop.wait(0.5):
            exited = [s for s in services if s.process.poll() is not None]
            if exited:
                print(f"factcheck serve: {exited[0].name} exited; stopping the suite", file=sys.stderr, flush=True)
                return 1
        print("factcheck serve: stopping", flush=True)
        return 0
    finally:
        stop_services(services)
