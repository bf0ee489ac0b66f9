"""Loaders for the public benchmarks in bench/data/ that `bench/checker_accuracy.py` reports on.

EVALUATION ONLY: nothing in this repository may train, tune, select or calibrate on these files
(models, thresholds, combiners, prefilter settings). They are how the embedded entailment checker is judged;
each folder's README names the upstream repository, commit and licence.

- WiCE (bench/data/wice/claim_test.jsonl): Wikipedia claims with the sentences of the article each
  cites. Gold as LLM-AggreFact reads it: "supported" is supported; "partially_supported" and
  "not_supported" are not. The article goes to the checker as the knowledge store would hold it:
  its sentences one a line, cut into passages by the store's chunker.
- CLIMATE-FEVER (bench/data/climate-fever/climate-fever.jsonl): climate claims, each with five
  Wikipedia evidence sentences labelled SUPPORTS / REFUTES / NOT_ENOUGH_INFO; every (claim,
  sentence) pair is an item with the verdict VERIFIED / DISPUTED / UNVERIFIABLE.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from factcheck_engines.judge import PassageText
from factcheck_gateway.knowledge.chunking import chunk_text

DATA = Path(__file__).resolve().parent / "data"
WICE_FILE = DATA / "wice" / "claim_test.jsonl"
CLIMATE_FEVER_FILE = DATA / "climate-fever" / "climate-fever.jsonl"

WICE_SUPPORTED = {"supported": True, "partially_supported": False, "not_supported": False}
CLIMATE_FEVER_VERDICT = {"SUPPORTS": "VERIFIED", "REFUTES": "DISPUTED", "NOT_ENOUGH_INFO": "UNVERIFIABLE"}


@dataclass(frozen=True)
class ArticleClaim:
    """A WiCE claim, the sentences of the article it cites, and whether the article supports it."""

    claim: str
    sentences: tuple[str, ...]
    supported: bool
    label: str  # upstream's: supported / partially_supported / not_supported
    id: str = ""  # upstream's meta.id ("test00561")

    def passages(self) -> list[PassageText]:
        """The article as the knowledge store would cut it: P1, P2, ... in article order."""
        chunks = chunk_text("\n".join(self.sentences))
        return [PassageText(f"P{index}", chunk.text) for index, chunk in enumerate(chunks, 1)]


@dataclass(frozen=True)
class EvidencePair:
    """One CLIMATE-FEVER (claim, evidence sentence) pair with its gold verdict."""

    claim_id: str
    claim: str
    evidence: str
    gold: str  # VERIFIED / DISPUTED / UNVERIFIABLE
    article: str = ""  # the Wikipedia article the sentence is from


def load_wice(path: Path = WICE_FILE) -> list[ArticleClaim]:
    return [
        ArticleClaim(
            row["claim"], tuple(row["evidence"]), WICE_SUPPORTED[row["label"]], row["label"], row["meta"]["id"]
        )
        for row in _rows(path)
    ]


def load_climate_fever(path: Path = CLIMATE_FEVER_FILE) -> list[EvidencePair]:
    return [
        EvidencePair(
            row["claim_id"],
            row["claim"],
            evidence["evidence"],
            CLIMATE_FEVER_VERDICT[evidence["evidence_label"]],
            evidence["article"],
        )
        for row in _rows(path)
        for evidence in row["evidences"]
    ]


def _rows(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)
