"""What each service's image installs, read from the Dockerfile without a Docker engine.

    python -m scripts.image_contents            # one line per image: distributions, site-packages, engine data
    python -m scripts.image_contents --list     # and the distributions of each

For each image (each Dockerfile stage with a CMD), the `pip install` arguments of its stage and of the stages it is
built on (FROM) are resolved as pip would resolve them in the image (`pip install --dry-run --ignore-installed --report`,
from the configured package indexes: nothing is installed). Each resolved distribution's size is what its
wheel unpacks to in site-packages: for a distribution of this checkout (a directory), the wheel built from it;
for a local wheel, that wheel; otherwise the same version installed beside this script (its RECORD's sizes).
The engines' data is the part of those wheels under the local engines' `data/` folder (`factcheck_engines/data/`,
or `factcheck/engines/data/` where the engines shipped in the library).

Differences from a real image: the Python running this script decides environment markers (the image's is
python:3.11-slim), and an editable install counts as the wheel of the same directory (the image held the
source tree, the same files).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"
ENGINE_DATA = ("factcheck_engines/data/", "factcheck/engines/data/")


def stages(dockerfile: str) -> dict[str, tuple[str, str]]:
    """Each stage's parent image or stage and its instructions, by name; comments dropped, continued lines joined."""
    text = re.sub(r"\\\n", " ", "".join(line for line in dockerfile.splitlines(True) if not line.startswith("#")))
    named = {}
    for stage in re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]:
        match = re.match(r"(\S+) AS (\S+)\n", stage)
        if match:
            named[match.group(2)] = (match.group(1), stage)
    return named


def image_arguments(named: dict[str, tuple[str, str]], image: str) -> list[str]:
    """The `pip install` arguments of a stage and of the stages under it, the lowest first."""
    chain: list[str] = []
    while image in named:
        parent, stage = named[image]
        chain.insert(0, stage)
        image = parent
    found: list[str] = []
    for stage in chain:
        found += [word for word in install_arguments(stage) if word not in found]
    return found


def install_arguments(stage: str) -> list[str]:
    """The projects and requirements a stage's `pip install` commands name (flags dropped; `-e DIR` as DIR).
    A stage's dependency-only install of a stub (followed by `pip uninstall`) names the same project again."""
    found: list[str] = []
    for command in re.findall(r"pip install ([^&\n]*)", stage):
        words = shlex.split(command)
        for word in words:
            if word.startswith("-"):
                continue
            if word not in found:
                found.append(word)
    return found


def resolve(arguments: list[str]) -> list[dict]:
    """What pip would install for these arguments into an empty environment (its installation report)."""
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        command = [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed"]
        command += ["--no-build-isolation", "--report", str(report), *arguments]
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True, text=True)
        return json.loads(report.read_text())["install"]


def wheel_sizes(wheel: Path) -> tuple[int, int]:
    """(bytes unpacked, bytes of them under the engines' data folder)."""
    with zipfile.ZipFile(wheel) as archive:
        infos = archive.infolist()
    total = sum(info.file_size for info in infos)
    data = sum(info.file_size for info in infos if info.filename.startswith(ENGINE_DATA))
    return total, data


_built: dict[Path, Path] = {}


def local_wheel(directory: Path, out: Path) -> Path:
    """The wheel of a directory of this checkout; the build/ folder the build leaves there is removed (unless it
    was there before), so that nothing of it is read as source afterwards."""
    if directory not in _built:
        before = set(out.glob("*.whl"))
        leftover = directory / "build"
        had_build = leftover.exists()
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out)]
            + [str(directory)],
            check=True,
            capture_output=True,
            text=True,
        )
        if not had_build:
            shutil.rmtree(leftover, ignore_errors=True)
        [_built[directory]] = set(out.glob("*.whl")) - before
    return _built[directory]


def installed_size(name: str, release: str) -> int:
    """The size of the files the wheel of this release put in site-packages, if it is installed here."""
    try:
        installed = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return -1
    if installed.version != release or installed.read_text("direct_url.json"):  # another release, or a local one
        return -1
    return sum(file.size or 0 for file in installed.files or [])


def sizes(item: dict, out: Path) -> tuple[int, int]:
    url = item["download_info"]["url"]
    path = Path(unquote(urlparse(url).path))
    if url.startswith("file://") and path.is_dir():
        return wheel_sizes(local_wheel(path, out))
    if url.startswith("file://") and path.suffix == ".whl":
        return wheel_sizes(path)
    return installed_size(item["metadata"]["name"], item["metadata"]["version"]), 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list each image's distributions")
    options = parser.parse_args()
    named = stages(DOCKERFILE.read_text())
    images = [name for name, (_, stage) in named.items() if re.search(r"^CMD ", stage, flags=re.MULTILINE)]
    print(f"{'image':<10} {'distributions':>13} {'site-packages':>14} {'engine data':>12}  of the suite's own")
    with ThreadPoolExecutor(max_workers=len(images) or 1) as pool:  # mostly waiting on pip's resolver
        resolved = list(pool.map(resolve, [image_arguments(named, image) for image in images]))
    with tempfile.TemporaryDirectory() as wheels:
        for image, installed in zip(images, resolved):
            measured = {item["metadata"]["name"]: sizes(item, Path(wheels)) for item in installed}
            total = sum(size for size, _ in measured.values() if size > 0)
            data = sum(data for _, data in measured.values())
            own = sorted(name for name in measured if name.startswith("factcheck"))
            unmeasured = [name for name, (size, _) in measured.items() if size < 0]
            note = f"  (not measured: {', '.join(unmeasured)})" if unmeasured else ""
            print(
                f"{image:<10} {len(installed):>13} {total / 1e6:>11.1f} MB {data / 1e6:>9.1f} MB  {' '.join(own)}{note}"
            )
            if options.list:
                for name, (size, _) in sorted(measured.items(), key=lambda entry: -entry[1][0]):
                    print(f"    {name:<40} {size / 1e6:>8.2f} MB")


if __name__ == "__main__":
    main()
