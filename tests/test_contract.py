"""The proto checks that scripts/test.sh runs are real. The breaking-change check passes on the protos
as they are and fails on a copy with a renumbered field, against the last released contract
(contract/). The lint keeps Buf's COMMENTS rules (every service, RPC, message, field and enum value
documented) and fails on a copy with an undocumented field."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "contract" / "factcheck-api-0.1.0.binpb"


def buf(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["npx", "--prefix", str(ROOT), "--no-install", "buf", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def buf_breaking(workdir: Path) -> subprocess.CompletedProcess:
    return buf(workdir, "breaking", "--against", str(RELEASED))


def copy_of_the_protos(tmp_path: Path) -> Path:
    """The protos and buf.yaml in tmp_path; returns the copy of factcheck.proto to change."""
    shutil.copytree(ROOT / "protos", tmp_path / "protos")
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    return tmp_path / "protos" / "factcheck" / "v1" / "factcheck.proto"


def test_the_protos_keep_the_released_contract():
    result = buf_breaking(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renumbered_field_is_caught(tmp_path):
    proto = copy_of_the_protos(tmp_path)
    text = proto.read_text()
    assert "  string question = 1;" in text
    proto.write_text(text.replace("  string question = 1;", "  string question = 99;", 1))
    result = buf_breaking(tmp_path)
    assert result.returncode != 0
    assert "question" in result.stdout + result.stderr


def test_the_lint_requires_documented_protos():
    rules = yaml.safe_load((ROOT / "buf.yaml").read_text())["lint"]["use"]
    assert {"STANDARD", "COMMENTS"} <= set(rules)


def test_an_undocumented_field_is_caught(tmp_path):
    proto = copy_of_the_protos(tmp_path)
    text = proto.read_text()
    documented = "  // The run to follow.\n  string message_id = 1;\n"
    assert documented in text
    proto.write_text(text.replace(documented, "  string message_id = 1;\n", 1))
    result = buf(tmp_path, "lint")
    assert result.returncode != 0
    assert 'Field "message_id" should have a non-empty comment' in result.stdout + result.stderr
