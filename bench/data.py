"""Where the benchmarks find their data: FACTCHECK_DATA_DIR, else shared/data beside the repository folder."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    path = Path(os.environ.get("FACTCHECK_DATA_DIR", ROOT.parent / "shared" / "data"))
    if not path.is_dir():
        raise SystemExit(
            f"benchmark data not found at {path}: "
            "put shared/data beside the repository folder or set FACTCHECK_DATA_DIR"
        )
    return path


def read_jsonl(relative: str) -> Iterator[dict]:
    with open(data_dir() / relative, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)
