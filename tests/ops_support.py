"""Helpers for the operations tests: finding and reading a service's Prometheus metrics."""

from __future__ import annotations

import re
import urllib.request

from tests.processes import ServiceProcess


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
