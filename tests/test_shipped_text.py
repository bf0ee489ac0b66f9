"""Shipped code explains itself: no comment, docstring or message points at the project's working
papers (issue numbers, the design seeds, lettered spec sections, DESIGN.md) or at paths outside
the repository (../shared/...). Such references mean nothing to a reader of the released code:
the text names the behaviour instead.

Shipped means the shared library, the services, the contract (protos/ and the factcheck-api
distribution) and the TypeScript client's sources. Code generated from the protos (`*_pb2*.py`,
`*_pb2*.pyi`, the TypeScript client's `generated/`) is left out: its text comes from the protos,
which are checked themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Where shipped text lives, and the file kinds read there.
SHIPPED_ROOTS = ("factcheck", "services", "protos", "api/src", "clients/typescript/src")
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
