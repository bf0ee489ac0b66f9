"""factcheck-api's build: the metadata is in pyproject.toml; this only puts the .proto files into the wheel.

The protos have one copy, the repository's protos/factcheck/v1 (what buf lints and the generators read),
outside this project's directory. A wheel built from the checkout (`pip wheel ./api`, `pip install ./api`,
pip's `git+...#subdirectory=api`) copies them in beside the generated code; an sdist carries them in
src/factcheck/v1, so a wheel built from it finds them there. Editable installs skip them: a checkout has them.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

HERE = Path(__file__).resolve().parent
PROTOS = HERE.parent / "protos" / "factcheck" / "v1"
PACKAGE = Path("factcheck") / "v1"


def _protos() -> list[Path]:
    protos = sorted(PROTOS.glob("*.proto"))
    if not protos and not any((HERE / "src" / PACKAGE).glob("*.proto")):
        # Neither a checkout nor an sdist: a wheel without the contract's sources must not be built.
        raise SystemExit(f"factcheck-api: no .proto files in {PROTOS}")
    return protos


class BuildPyWithProtos(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for proto in _protos():
            self.copy_file(str(proto), str(Path(self.build_lib) / PACKAGE / proto.name))


class SdistWithProtos(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        for proto in _protos():
            self.copy_file(str(proto), str(Path(base_dir) / "src" / PACKAGE / proto.name))


setup(cmdclass={"build_py": BuildPyWithProtos, "sdist": SdistWithProtos})
