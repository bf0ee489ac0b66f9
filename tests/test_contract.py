"""The breaking-change check that scripts/test.sh runs is real: it passes on the protos as they are
and fails on a copy with a renumbered field, against the last released contract (contract/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "contract" / "factcheck-api-0.1.0.binpb"


def buf_breaking(workdir: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["npx", "--prefix", str(ROOT), "--no-install", "buf", "breaking", "--against", str(RELEASED)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_protos_keep_the_released_contract():
    result = buf_breaking(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_renumbered_field_is_caught(tmp_path):
    shutil.copytree(ROOT / "protos", tmp_path / "protos")
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    proto = tmp_path / "protos" / "factcheck" / "v1" / "factcheck.proto"
    text = proto.read_text()
    assert "  string question = 1;" in text
    proto.write_text(text.replace("  string question = 1;", "  string question = 99;", 1))
    result = buf_breaking(tmp_path)
    assert result.returncode != 0
    assert "question" in result.stdout + result.stderr
