"""Regenerate the committed code for protos/factcheck/v1: Python (the factcheck-api distribution) and TypeScript.

    python scripts/generate_protos.py            # writes into api/src/factcheck/v1/ and clients/typescript/src/generated/
    python scripts/generate_protos.py --out DIR  # writes DIR/factcheck/v1/ only (used by the staleness test)

Generated with `-I protos`, so the modules import each other package-absolutely
(`from factcheck.v1 import common_pb2`). Output depends on the pinned grpcio-tools, and it decides
factcheck-api's lower bounds on grpcio and protobuf (api/pyproject.toml). The .proto files stay in
protos/, their one copy: factcheck-api's build puts them into its wheel (api/setup.py).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
# The factcheck-api distribution's source root: the code lands in API_SOURCE_ROOT/factcheck/v1.
API_SOURCE_ROOT = ROOT / "api" / "src"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")
TYPESCRIPT_CLIENT = ROOT / "clients" / "typescript"


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / "factcheck" / "v1").glob("*.proto"))


def generate(out_root: Path) -> list[Path]:
    """Run protoc for every proto; return the files written under out_root/factcheck/v1."""
    import grpc_tools
    from grpc_tools import protoc

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    out_dir = out_root / "factcheck" / "v1"
    out_dir.mkdir(parents=True, exist_ok=True)
    args = [
        "grpc_tools.protoc",
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        f"--python_out={out_root}",
        f"--pyi_out={out_root}",
        f"--grpc_python_out={out_root}",
        *[str(p.relative_to(PROTO_ROOT)) for p in proto_files()],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    return sorted(p for p in out_dir.iterdir() if p.name.endswith(GENERATED_SUFFIXES))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=API_SOURCE_ROOT, help="root to write factcheck/v1 under")
    args = parser.parse_args()
    written = generate(args.out)
    # A proto that was removed leaves no stale code behind.
    for path in (args.out / "factcheck" / "v1").iterdir():
        if path.name.endswith(GENERATED_SUFFIXES) and path not in written:
            path.unlink()
    for path in written:
        print(path.relative_to(args.out))
    if args.out == API_SOURCE_ROOT:
        generate_typescript()


def generate_typescript() -> None:
    """The TypeScript client's code (ts-proto through buf, as clients/typescript/buf.gen.yaml says)."""
    if not (TYPESCRIPT_CLIENT / "node_modules" / ".bin" / "protoc-gen-ts_proto").exists():
        print("clients/typescript: not regenerated; run `npm install` there, then this script again", file=sys.stderr)
        return
    shutil.rmtree(TYPESCRIPT_CLIENT / "src" / "generated", ignore_errors=True)  # protos removed stay removed
    subprocess.run(
        ["npx", "--no-install", "buf", "generate", "../..", "--template", "buf.gen.yaml"],
        cwd=TYPESCRIPT_CLIENT,
        check=True,
    )
    for path in sorted((TYPESCRIPT_CLIENT / "src" / "generated").rglob("*.ts")):
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
