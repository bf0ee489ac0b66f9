"""The README and docs/: a short README, links and quoted repository paths that exist inside the
repository, and every setting documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from factcheck.kit.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]

# Where a dotted module name's first part lives in this checkout.
PACKAGE_ROOTS = {
    "factcheck": ROOT / "factcheck",
    **{
        f"factcheck_{name}": ROOT / "services" / name / f"factcheck_{name}"
        for name in ("extractor", "checker", "reporter", "gateway")
    },
}
# The top-level entries a quoted path may start with (not the ignored ones a local install makes).
TOP_LEVEL = {p.name for p in ROOT.iterdir() if not p.name.startswith(".")} - {"node_modules", "build"}
# Placeholders and ellipses mark an example, not a path to check: `services/<name>/`, `bench.*`.
PLACEHOLDER = re.compile(r"[<>{}*$…]|\.\.\.")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\s]+)`")


def _prose(page: Path) -> str:
    """The page without its fenced code blocks: their text is commands and output, not links or references."""
    return re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", _prose(page), flags=re.M)
    return {_slug(heading) for heading in headings}


def _links(page: Path) -> list[str]:
    return [target for target in LINK.findall(_prose(page)) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]


def _inside(path: Path) -> bool:
    return path == ROOT or ROOT in path.parents


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_stays_in_the_repository_and_exists(page):
    problems = []
    for target in _links(page):
        path_part, _, anchor = target.partition("#")
        if path_part.startswith("/"):
            problems.append(f"{target}: an absolute path")
            continue
        path = (page.parent / path_part).resolve() if path_part else page
        if not _inside(path):
            problems.append(f"{target}: outside the repository")
        elif not path.exists():
            problems.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            problems.append(f"{target}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert not problems, f"{page.name}: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_web_link_points_at_files_outside_the_repository(page):
    external = [t for t in LINK.findall(_prose(page)) if t.startswith("file:")]
    assert not external, f"{page.name}: {external}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_quoted_repository_path_exists(page):
    missing = []
    for span in CODE_SPAN.findall(_prose(page)):
        candidate = span.rstrip(".,;:")
        if "/" not in candidate or PLACEHOLDER.search(candidate) or candidate.split("/")[0] not in TOP_LEVEL:
            continue
        if not (ROOT / candidate).exists():
            missing.append(candidate)
    assert not missing, f"{page.name} quotes paths that do not exist: {missing}"


def _module_problem(name: str) -> str | None:
    """Why a dotted name (`factcheck.kit.healthcheck`, `factcheck_gateway.knowledge.bulk.bulk_load`) does not
    resolve in this checkout, or None: its modules must exist, and a trailing attribute be defined there."""
    parts = name.split(".")
    if parts[:2] == ["factcheck", "v1"]:  # the generated contract (api/src): protos' names follow
        return None if (ROOT / "api" / "src" / "factcheck" / "v1").is_dir() else "no api/src/factcheck/v1"
    path, rest = PACKAGE_ROOTS[parts[0]], parts[1:]
    module = path / "__init__.py"
    while rest and ((path / rest[0]).is_dir() or (path / f"{rest[0]}.py").is_file()):
        path = path / rest[0]
        module = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        rest = rest[1:]
    if not rest:
        return None
    source = module.read_text(encoding="utf-8") if module.is_file() else ""
    if not re.search(
        rf"^\s*(?:async def|def|class) {re.escape(rest[0])}\b|^{re.escape(rest[0])}\b\s*[:=]", source, re.M
    ):
        return f"{rest[0]} is not defined in {module.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_quoted_module_exists(page):
    problems = []
    for span in CODE_SPAN.findall(_prose(page)):
        name = span.split("(", 1)[0].rstrip(".,;:")
        if not re.fullmatch(r"\w+(\.\w+)+", name) or name.split(".")[0] not in PACKAGE_ROOTS:
            continue
        problem = _module_problem(name)
        if problem:
            problems.append(f"{name}: {problem}")
    assert not problems, f"{page.name}: " + "; ".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_refers_to_issue_numbers_or_documents_outside_the_repository(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\bissues? \d+", text, re.I), page.name
    assert "DESIGN.md" not in text and "../shared" not in text and "seeds/" not in text, page.name


def test_the_readme_is_short_and_gives_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    assert "bash scripts/install.sh && .venv/bin/factcheck demo" in text
    assert "bash scripts/test.sh" in text
    # Every page of docs/ is reachable from the README.
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(README)}
    assert not [page.name for page in DOCS if page.resolve() not in linked]


def _settings_env_names() -> set[str]:
    prefix = Settings.model_config.get("env_prefix", "")
    assert prefix == "FACTCHECK_"
    return {prefix + field.upper() for field in Settings.model_fields}


def test_every_setting_is_documented_in_settings_md():
    documented = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    names = _settings_env_names()
    assert len(names) > 50  # the mapping found the fields
    missing = sorted(name for name in names if not re.search(rf"`{name}`", documented))
    assert not missing, f"settings not in docs/settings.md: {missing}"


def test_settings_md_documents_only_real_variables():
    """A name in docs/settings.md is a setting, or one the tests and benchmarks read (listed apart)."""
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    settings_part, _, tests_part = text.partition("## Variables read only by tests and benchmarks")
    stale = sorted(set(re.findall(r"FACTCHECK_[A-Z0-9_]*[A-Z0-9]", settings_part)) - _settings_env_names())
    assert not stale, f"docs/settings.md names variables no setting reads: {stale}"
    code = "\n".join(p.read_text(encoding="utf-8") for d in ("tests", "bench") for p in (ROOT / d).rglob("*.py"))
    unread = sorted(name for name in set(re.findall(r"FACTCHECK_[A-Z0-9_]*[A-Z0-9]", tests_part)) if name not in code)
    assert tests_part and not unread, f"no test or benchmark reads {unread}"
