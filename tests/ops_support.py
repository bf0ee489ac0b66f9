"""Helpers for the operations tests: suites with per-service settings, metrics scraping."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Mapping

from factcheck.v1 import factcheck_pb2
from tests.fake_model_server import FakeModelServer
from tests.processes import ServiceProcess, Suite, start_service

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude."
)


def content_request(content: str = CONTENT, **config) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Fact-check this paragraph",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=content, **config),
    )


def fake_model_environment(fake_models: FakeModelServer, database_url: str) -> dict[str, str]:
    return {
        "FACTCHECK_MODEL_BASE_URL": fake_models.base_url,
        "FACTCHECK_DATABASE_URL": database_url,
        "FACTCHECK_DEFAULT_EXTRACTOR_MODEL": "fake/extractor",
        "FACTCHECK_DEFAULT_CHECKER_MODELS": "fake/checker-a,fake/checker-b",
        "FACTCHECK_DEFAULT_REPORTER_MODEL": "fake/reporter",
        "FACTCHECK_MODEL_MAX_RETRIES": "1",
        "FACTCHECK_MODEL_BACKOFF_BASE_S": "0.01",
    }


def start_suite_with(env: Mapping[str, str], per_service: Mapping[str, Mapping[str, str]] | None = None) -> Suite:
    """Like tests.processes.start_suite, with extra settings for single services."""
    per_service = per_service or {}
    services: dict[str, ServiceProcess] = {}
    try:
        for name in ("extractor", "checker", "reporter"):
            services[name] = start_service(name, {**env, **per_service.get(name, {})})
        gateway_env = {
            **env,
            "FACTCHECK_EXTRACTOR_TARGET": services["extractor"].target,
            "FACTCHECK_CHECKER_TARGET": services["checker"].target,
            "FACTCHECK_REPORTER_TARGET": services["reporter"].target,
            **per_service.get("gateway", {}),
        }
        services["gateway"] = start_service("gateway", gateway_env)
    except BaseException:
        Suite(services).stop()
        raise
    return Suite(services)


def metrics_url(service: ServiceProcess) -> str:
    """The /metrics URL a service printed (it needs FACTCHECK_METRICS_LISTEN)."""
    for line in service.output:
        if " metrics on " in line:
            return line.rsplit(" metrics on ", 1)[1].strip().replace("0.0.0.0", "127.0.0.1")
    raise AssertionError(f"{service.name} printed no metrics address:\n" + "\n".join(service.output))


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$")


def sample_value(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels` (0 when none)."""
    total = 0.0
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if not match or match.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match.group(2) or ""))
        if all(found.get(key) == value for key, value in labels.items()):
            total += float(match.group(3))
    return total
