"""Shipped code explains itself: no comment, docstring or message points at the project's working
papers (issue numbers, the design seeds, lettered spec sections, DESIGN.md) or at paths outside
the repository (../shared/...). Such references mean nothing to a reader of the released code:
the text names the behaviour instead. Nor does it cite "the spec": it states the rule it implements, or
links the docs/ page that states it; and every .py file it names exists.

Shipped means the shared library, the services, the contract (protos/ and the factcheck-api
distribution) and the TypeScript client's sources. Code generated from the protos (`*_pb2*.py`,
`*_pb2*.pyi`, the TypeScript client's `generated/`) is left out: its text comes from the protos,
which are checked themselves.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import os
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Where shipped text lives, and the file kinds read there.
SHIPPED_ROOTS = ("factcheck", "cli", "engines", "services", "protos", "api/src", "clients/typescript/src")
TEXT_SUFFIXES = {".py", ".pyi", ".proto", ".ts", ".j2", ".css", ".html", ".sql", ".sh", ".toml", ".yaml", ".yml"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "generated", ".venv", "build", "dist"}
GENERATED = re.compile(r"_pb2(_grpc)?\.pyi?$")

FORBIDDEN = {
    "issue number": re.compile(r"\b[Ii]ssues? ?#?\d+|\(#\d+\)"),
    "design seed": re.compile(r"\b[Ss]eeds? ?\d|\b[Tt]he seed's\b"),
    "spec section": re.compile(r"\b[Ss]pec(?:ification)?(?:'s)? section\b|\b[Ss]ection [A-H]\b"),
    "DESIGN.md": re.compile(r"DESIGN\.md"),
    "path outside the repository": re.compile(r"\.\./shared\b"),
}


def shipped_files(root: str) -> list[Path]:
    base = ROOT / root
    return sorted(
        path
        for path in base.rglob("*")
        if path.is_file()
        and path.suffix in TEXT_SUFFIXES
        and not GENERATED.search(path.name)
        and not SKIPPED_DIRS.intersection(path.relative_to(base).parts)
        and not any(part.endswith(".egg-info") for part in path.relative_to(base).parts)
    )


def offences(path: Path) -> list[str]:
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            match = pattern.search(line)
            if match:
                found.append(f"{path.relative_to(ROOT)}:{number}: {what} ({match.group(0)!r}): {line.strip()}")
    return found


@pytest.mark.parametrize("root", SHIPPED_ROOTS)
def test_shipped_text_names_behaviour_not_working_papers(root: str) -> None:
    files = shipped_files(root)
    assert files, f"no shipped files found under {root}/"
    found = [offence for path in files for offence in offences(path)]
    assert not found, f"{len(found)} reference(s) to working papers in shipped code:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "line",
    [
        "# claim-level citations (issue 17)",
        '"""The verification loop (issues 18/19)."""',
        "// fixed in (#12)",
        "Entailment mode (seed 1): four agents",
        "the seed's nine names",
        "Spec section B, calculateConsensus",
        "the spec's section G",
        "rows (section E, DB Storage)",
        "see DESIGN.md",
        "data from ../shared/data",
    ],
)
def test_the_patterns_catch_working_paper_references(line: str) -> None:
    assert any(pattern.search(line) for pattern in FORBIDDEN.values())


@pytest.mark.parametrize(
    "line",
    [
        "random.Random(seed)",
        "rng = random.Random(SEED)  # a fixed seed",
        "CLAIM #4. and Statement #4",
        "color: #333;",
        "Response A: MOSTLY ACCURATE",
        "the verification prompt's EVIDENCE section",
        "We issue BEGIN ourselves",
        "minor issues, 50-69 = mixed accuracy",
    ],
)
def test_the_patterns_leave_ordinary_text_alone(line: str) -> None:
    assert not any(pattern.search(line) for pattern in FORBIDDEN.values())


# --- rules stated, not a spec cited; file names that exist ----------------------------------------------------------
# The code and its templates (the protos' wording, and so the generated code's, is checked with the protos).
CODE_ROOTS = ("factcheck", "cli", "engines", "services", "api/src")
SPEC = re.compile(r"\bspec\b", re.I)
# A file name in the code: `tiers.py`, `runs/concurrency_limit.py`, `modes/<mode>/plan.py` (<...>: any folder).
PY_FILE_NAME = re.compile(r"(?<![\w./<>-])((?:[\w<>-]+/)*\w+\.py)\b")


def _code() -> list[Path]:
    return [path for root in CODE_ROOTS for path in shipped_files(root)]


def _comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and of every string that stands alone as a statement (docstrings)."""
    source = path.read_text(encoding="utf-8")
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.append((node.lineno, node.value.value))
    return found


def test_shipped_code_states_its_rules_rather_than_citing_a_spec() -> None:
    # "As the spec says" sends a reader to a document the repository does not have: the text says the rule, or
    # links the docs/ page that states it (docs/modes.md, docs/api.md, ...). Python: its comments and docstrings
    # (a string the code uses may say "spec", as the CLI's "spec verdict" does); other files: every line.
    cited = []
    for path in _code():
        lines = (
            _comments_and_docstrings(path)
            if path.suffix == ".py"
            else enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        )
        cited += [f"{path.relative_to(ROOT)}:{number}" for number, text in lines if SPEC.search(text)]
    assert not cited, f"text that cites a spec: {cited}"


def _repository_python_files() -> list[str]:
    """Every .py file of the checkout, as a path from its root (none of a local install's: venvs, builds)."""
    found = []
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRS and not d.startswith(".")]
        found += [(Path(directory) / name).relative_to(ROOT).as_posix() for name in files if name.endswith(".py")]
    return found


def _names_a_file(mention: str, path: Path, repository: list[str]) -> bool:
    """Whether a .py file name written in `path` names a file of the repository: a name with folders ends a
    repository path; a bare name is a file of the same package tree (factcheck/, services/<name>/, api/), and a
    file farther away is named with its folders."""
    if "/" in mention:
        pattern = re.sub(r"<[^>]*>", "*", mention)
        return any(fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(name, f"*/{pattern}") for name in repository)
    parts = path.relative_to(ROOT).parts
    tree = "/".join(parts[:2]) if parts[0] == "services" else parts[0]
    return any(name.startswith(f"{tree}/") and name.rsplit("/", 1)[-1] == mention for name in repository)


def test_shipped_code_names_only_files_that_exist() -> None:
    repository = _repository_python_files()
    assert len(repository) > 300  # the walk found the checkout
    stale = [
        f"{path.relative_to(ROOT)}:{number}: {mention}"
        for path in _code()
        if path.suffix == ".py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for mention in PY_FILE_NAME.findall(line)
        if not _names_a_file(mention, path, repository)
    ]
    assert not stale, f"names of files that do not exist: {stale}"


@pytest.mark.parametrize(
    ("mention", "where", "exists"),
    [
        ("tiers.py", "services/gateway/factcheck_gateway/claims/__init__.py", True),
        ("runs/concurrency_limit.py", "services/gateway/factcheck_gateway/servicers/fact_check.py", True),
        ("modes/<mode>/plan.py", "services/gateway/factcheck_gateway/modes/base.py", True),
        ("run_limit.py", "services/gateway/factcheck_gateway/servicers/fact_check.py", False),
        # A bare name of another package tree: written with its folders, or it is taken for a missing file.
        ("checker_service.py", "factcheck/evaluation/sets.py", False),
        ("factcheck_checker/checker_service.py", "factcheck/evaluation/sets.py", True),
    ],
)
def test_file_names_resolve_as_a_reader_would(mention: str, where: str, exists: bool) -> None:
    assert _names_a_file(mention, ROOT / where, _repository_python_files()) is exists
