"""The import contracts ([tool.importlinter] in pyproject.toml): the layers of the shared library and the
services, the services' and the gateway modes' independence, the gateway's shared machinery free of modes.

`lint-imports` (import-linter) checks them from the source, without importing it. The other tests prove the
guard guards: a contract the code breaks is reported, and so are the imports it could miss if configured
otherwise (inside functions, under `if TYPE_CHECKING:`)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.processes import ROOT

OPTIONS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _lint_imports(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # The venv's own: the one scripts/test.sh runs. No cache: nothing written into the checkout, and
    # parallel test workers never share one.
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd)


def _config(top_level: dict, contracts: list[dict]) -> str:
    """A TOML config (JSON's strings, lists and booleans are TOML's too)."""
    lines = ["[tool.importlinter]", *(f"{key} = {json.dumps(value)}" for key, value in top_level.items())]
    for contract in contracts:
        lines += ["", "[[tool.importlinter.contracts]]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in contract.items()]
    return "\n".join(lines) + "\n"


def _settings() -> dict:
    """The project's top-level options (root packages, whether TYPE_CHECKING imports count), no contracts."""
    return {key: value for key, value in OPTIONS.items() if key != "contracts"}


def test_the_import_contracts_hold():
    done = _lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Contracts: {len(OPTIONS['contracts'])} kept, 0 broken." in done.stdout


def test_every_contract_names_only_modules_that_exist():
    # A misspelt module would make a contract vacuous (nothing imports what does not exist).
    names = set()
    for contract in OPTIONS["contracts"]:
        for key in ("layers", "modules", "source_modules", "forbidden_modules"):
            for entry in contract.get(key, []):
                names |= {part.strip() for part in entry.replace(":", "|").split("|")}
    assert len(names) > 10
    for name in sorted(names):
        top, *rest = name.split(".")
        base = {
            "factcheck": ROOT,
            "factcheck_cli": ROOT / "cli",
            "factcheck_engines": ROOT / "engines",
            "factcheck_extractor": ROOT / "services" / "extractor",
            "factcheck_checker": ROOT / "services" / "checker",
            "factcheck_reporter": ROOT / "services" / "reporter",
            "factcheck_gateway": ROOT / "services" / "gateway",
        }[top]
        path = base.joinpath(top, *rest)
        assert path.is_dir() or path.with_suffix(".py").is_file(), name


def test_a_contract_the_code_breaks_is_reported(tmp_path):
    # The gateway is built on the kit: a contract forbidding that must fail, naming an offending import.
    config = tmp_path / "contracts.toml"
    contract = {
        "id": "broken",
        "name": "The gateway does without the kit",
        "type": "forbidden",
        "source_modules": ["factcheck_gateway"],
        "forbidden_modules": ["factcheck.kit"],
    }
    config.write_text(_config(_settings(), [contract]))
    done = _lint_imports("--config", str(config))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "The gateway does without the kit BROKEN" in done.stdout
    assert "factcheck_gateway is not allowed to import factcheck.kit" in done.stdout
    assert "Contracts: 0 kept, 1 broken." in done.stdout


def test_imports_inside_functions_and_under_type_checking_count(tmp_path):
    # A throwaway package: `low` imports `high` only inside a function, and `mid` only for its types.
    package = tmp_path / "toy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("VALUE = 1\n")
    (package / "low.py").write_text("def value():\n    from toy.high import VALUE\n\n    return VALUE\n")
    (package / "mid.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from toy import high\n\n"
        "def name(module: 'high') -> str:\n    return module.__name__\n"
    )
    contracts = [
        {"id": module, "name": f"{module} below high", "type": "forbidden"}
        | {"source_modules": [f"toy.{module}"], "forbidden_modules": ["toy.high"]}
        for module in ("low", "mid")
    ]
    config = tmp_path / "contracts.toml"
    # The project's own top-level options (exclude_type_checking_imports among them), on this package.
    config.write_text(_config(_settings() | {"root_packages": ["toy"]}, contracts))
    done = _lint_imports("--config", str(config), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "low below high BROKEN" in done.stdout and "mid below high BROKEN" in done.stdout
    assert "toy.low -> toy.high (l.2)" in done.stdout and "toy.mid -> toy.high (l.4)" in done.stdout
