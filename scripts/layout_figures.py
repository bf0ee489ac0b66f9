"""Figures on the code's layout: loose modules at the top of the shared package, import cycles, the largest modules.

    python scripts/layout_figures.py [ROOT ...]

Every import counts, deferred ones included (inside functions, under TYPE_CHECKING): a cycle closed by a
deferred import is still a cycle a reader has to follow. A cycle is a strongly connected component of the
module graph with more than one module.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

DEFAULT_ROOTS = ["factcheck", "cli", "engines", "services"]


def _python_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        if "migrations" in path.parts or "v1" in path.parts:
            continue
        yield path


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package_base(path: Path) -> Path:
    """The directory the module's import name starts from (the first folder up without an __init__.py)."""
    folder = path.parent
    while (folder / "__init__.py").exists() or folder.name == "factcheck":
        folder = folder.parent
    return folder


def _imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            found.add(prefix)
            found.update(f"{prefix}.{alias.name}" for alias in node.names)
    return found


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            components.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def main(argv: list[str]) -> None:
    roots = [Path(arg) for arg in (argv or DEFAULT_ROOTS) if Path(arg).exists()]
    files = {path: _module_name(path, _package_base(path)) for root in roots for path in _python_files(root)}
    modules = set(files.values())
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for path, name in files.items():
        for imported in _imports(path, name):
            if imported in modules and imported != name:
                graph[name].add(imported)
    cycles = [component for component in _strongly_connected(graph) if len(component) > 1]
    shared = Path("factcheck")
    loose = sorted(p.name for p in shared.glob("*.py") if p.name != "__init__.py")
    lines = sorted(((len(p.read_text(encoding="utf-8").splitlines()), str(p)) for p in files), reverse=True)
    print(f"modules: {len(files)} in {', '.join(str(r) for r in roots)}")
    print(f"loose modules at the top of factcheck/: {len(loose)}")
    print(f"import cycles (deferred imports included): {len(cycles)}, modules in them: {sum(map(len, cycles))}")
    for component in sorted(cycles, key=len, reverse=True):
        print(f"  {len(component)}: {', '.join(component)}")
    print("largest modules (lines):")
    for count, name in lines[:8]:
        print(f"  {count:5d} {name}")
    readme = Path("README.md")
    if readme.exists():
        print(f"README.md: {len(readme.read_text(encoding='utf-8').splitlines())} lines")


if __name__ == "__main__":
    main(sys.argv[1:])
