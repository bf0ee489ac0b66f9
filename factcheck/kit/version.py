"""The suite's version, as `--version` of every console script prints it."""

from __future__ import annotations

from importlib import metadata


def installed_version() -> str:
    """The installed `factcheck` distribution's version; "unknown" in a source tree that was never installed."""
    try:
        return metadata.version("factcheck")
    except metadata.PackageNotFoundError:
        return "unknown"
