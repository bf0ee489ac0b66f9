"""The import contracts ([tool.importlinter] in pyproject.toml): the layers of the shared library and the
services, the services' and the gateway modes' independence, the gateway's shared machinery free of modes, no
database library in the stateless services, factcheck.text free of the generated API.

`lint-imports` (import-linter) checks them from the source, without importing it. The other tests prove the
guard guards: each contract of pyproject.toml is broken on purpose in a copy of the source and reported there
(VIOLATIONS below), a contract the code breaks is reported, and so are the imports it could miss if configured
otherwise (inside functions, under `if TYPE_CHECKING:`)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path
from typing import NamedTuple

import pytest

from tests.processes import ROOT

OPTIONS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
# factcheck.v1, the generated code, is the directory of the `factcheck` namespace package in api/src: with it on
# the path, lint-imports reads it as a part of `factcheck` (as scripts/test.sh runs it).
API_SRC = ROOT / "api" / "src"


def _lint_imports(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # The venv's own: the one scripts/test.sh runs. No cache: nothing written into the checkout, and
    # parallel test workers never share one. Wide lines: a contract's name and its verdict on one line.
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache", "--no-logo", *args]
    env = os.environ | {"PYTHONPATH": str(API_SRC), "COLUMNS": "1000"}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cwd, env=env)


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
        if top not in OPTIONS["root_packages"]:  # a library (include_external_packages): installed
            assert importlib.util.find_spec(top) is not None, name
            continue
        base = {
            "factcheck": API_SRC if rest[:1] == ["v1"] else ROOT,
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


# --- every contract of pyproject.toml, broken on purpose -----------------------------------------------------------
class Violation(NamedTuple):
    """An import that breaks one contract. `module` is a file of a root package, as a path from the repository's
    root: written in a copy of the source with `line` as its text, or, when the file exists, with `line` added at
    its end. `also` names the other contracts the same import must break (a layers contract whose siblings are
    independent also forbids what an independence contract forbids); every other contract stays kept."""

    module: str
    line: str
    also: tuple[str, ...] = ()


# {contract id: its violation}, one entry per contract of pyproject.toml (a test checks it): a contract added there
# adds its entry here. `contract_probe.py` is a module no checkout has; editing an existing module shows that the
# copy's version of a module is the one read.
VIOLATIONS: dict[str, Violation] = {
    "layers": Violation("factcheck/kit/settings.py", "import factcheck.models"),
    "services": Violation(
        "services/extractor/factcheck_extractor/contract_probe.py", "import factcheck_reporter", also=("layers",)
    ),
    "gateway-modes": Violation(
        "services/gateway/factcheck_gateway/modes/council/contract_probe.py",
        "import factcheck_gateway.modes.entailment",
    ),
    "gateway-core": Violation(
        "services/gateway/factcheck_gateway/runs/contract_probe.py",
        "import factcheck_gateway.modes",
        also=("gateway-layers",),
    ),
    # The store imports no feature: a feature's tables and queries sit above it.
    "gateway-layers": Violation(
        "services/gateway/factcheck_gateway/store/contract_probe.py", "import factcheck_gateway.ledger"
    ),
    "stateless-services": Violation("services/checker/factcheck_checker/contract_probe.py", "import sqlalchemy.orm"),
    "text-without-api": Violation("factcheck/text/contract_probe.py", "from factcheck.v1 import common_pb2"),
    "gateway-engines": Violation(
        "services/gateway/factcheck_gateway/servicers/contract_probe.py", "import factcheck_engines.judge"
    ),
}
CONTRACTS = {contract["id"]: contract["name"] for contract in OPTIONS["contracts"]}


def _package_directories() -> list[Path]:
    """Where the root packages' source is in this checkout (a namespace package may have several directories)."""
    found = set()
    for name in OPTIONS["root_packages"]:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.submodule_search_locations is not None, name
        found |= {Path(p) for p in spec.submodule_search_locations if Path(p).is_dir()}
        if (API_SRC / name).is_dir():
            found.add(API_SRC / name)
    assert all(d.resolve().is_relative_to(ROOT) for d in found), found
    return sorted({d.resolve() for d in found})


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    """The root packages' .py files, nothing else, at their places relative to the repository's root."""
    copy = tmp_path_factory.mktemp("source")
    for directory in _package_directories():
        for path in directory.rglob("*.py"):
            target = copy / path.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return copy


def _on_copy(copy: Path, *args: str) -> subprocess.CompletedProcess:
    """`args` run by the venv's Python with only the copy's package directories and the installed libraries on
    its path: -S skips the site module, so no editable install's finder (which would add this checkout's
    directories to the `factcheck` namespace package) is loaded."""
    parents = sorted({(copy / d.relative_to(ROOT)).parent for d in _package_directories()})
    libraries = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    env = os.environ | {"PYTHONPATH": os.pathsep.join(map(str, [*parents, *libraries])), "COLUMNS": "1000"}
    command = [sys.executable, "-S", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=copy, env=env)


def _lint_copy(copy: Path) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    """lint-imports with the project's settings (pyproject.toml) on the copy; {contract id: KEPT or BROKEN}."""
    run = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    done = _on_copy(copy, "-c", run, "--no-cache", "--no-logo", "--config", str(ROOT / "pyproject.toml"))
    verdicts = {}
    for line in done.stdout.splitlines():
        name, _, verdict = line.rpartition(" ")
        if verdict in ("KEPT", "BROKEN") and name in CONTRACTS.values():
            verdicts[next(i for i, n in CONTRACTS.items() if n == name)] = verdict
    return done, verdicts


def test_every_contract_has_its_violation():
    assert set(VIOLATIONS) == set(CONTRACTS)
    assert all(set(v.also) <= set(CONTRACTS) for v in VIOLATIONS.values())


def test_the_copy_alone_is_read(pristine):
    # The packages the copied lint-imports finds are the copy's: nothing of this checkout is on its path.
    names = json.dumps(OPTIONS["root_packages"])
    find = (
        "import importlib.util as u, json; "
        f"print(json.dumps([p for n in {names} for p in u.find_spec(n).submodule_search_locations]))"
    )
    done = _on_copy(pristine, "-c", find)
    assert done.returncode == 0, done.stderr
    directories = [Path(p) for p in json.loads(done.stdout)]
    assert directories and all(p.is_relative_to(pristine) for p in directories), directories
    # And the unchanged copy keeps every contract, as the checkout does.
    done, verdicts = _lint_copy(pristine)
    assert done.returncode == 0 and verdicts == dict.fromkeys(CONTRACTS, "KEPT"), done.stdout + done.stderr


@pytest.mark.parametrize("contract", sorted(VIOLATIONS))
def test_each_contract_reports_its_violation(contract, pristine, tmp_path):
    violation = VIOLATIONS[contract]
    copy = tmp_path / "source"
    shutil.copytree(pristine, copy)
    module = copy / violation.module
    assert module.parent.is_dir(), f"{violation.module}: no such package (moved? update VIOLATIONS)"
    before = module.read_text() if module.exists() else ""
    module.write_text(f"{before}\n{violation.line}\n")
    done, verdicts = _lint_copy(copy)
    broken = {contract, *violation.also}
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdicts == {c: "BROKEN" if c in broken else "KEPT" for c in CONTRACTS}, done.stdout
    # The offending import is the one reported: the module that exists only in the copy, or the copy's version.
    importer = Path(violation.module).relative_to(_root_of(violation.module)).with_suffix("").as_posix()
    assert f"{importer.replace('/', '.')} -> " in done.stdout, done.stdout


def _root_of(module: str) -> Path:
    """The directory of the repository holding `module`'s root package (services/checker for its package)."""
    return next(d.parent.relative_to(ROOT) for d in _package_directories() if (ROOT / module).is_relative_to(d))
