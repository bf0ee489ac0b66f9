"""How well `local/checker` judges claims against evidence, and how fast.

Data: Factcheck-Bench's `subtask3_claim_evidence_stance.jsonl` (3,305 claim/evidence
pairs, 661 claims) from ../shared/data (or $FACTCHECK_DATA_DIR). Gold verdicts:
completely-support → VERIFIED, refute → DISPUTED, partially-support and irrelevant →
UNVERIFIABLE.

Split: by claim text, so one claim's pairs are all on one side: a claim goes to the test
split when the SHA-256 of SPLIT_SALT + claim falls in the first TEST_FRACTION of the hash
range (fixed, reproducible, no RNG state). `scripts/train_verifier.py` fits the verifier on
the train split only; the headline figures are on the held-out test split. The full-data
figures are printed too, labelled as such: they include the pairs the verifier was fitted on.

Reported, for `judge` and two baselines:
- majority class: always the train split's most frequent verdict (UNVERIFIABLE);
- word overlap: the share of the claim's words (lower-cased, stopwords kept out) found in
  the passage; VERIFIED at or above a threshold chosen on the train split for balanced
  accuracy, else UNVERIFIABLE (plain overlap cannot tell a contradiction).
Metrics: balanced accuracy (the mean of the three per-verdict recalls; 33.3 is chance),
plain accuracy, and the 3×3 confusion matrix (rows gold, columns predicted).

Speed: claims/s of `judge` over the pairs (one passage each), and of the whole
`local/checker` engine on verification prompts built by the real prompt builder with
10 claims and 3 passages per claim.

Run from the repository root: `python -m bench.checker_accuracy`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

STANCE_FILE = Path("factcheck-bench") / "subtask3_claim_evidence_stance.jsonl"
LABELS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
GOLD_VERDICT = {
    "completely-support": "VERIFIED",
    "refute": "DISPUTED",
    "partially-support": "UNVERIFIABLE",
    "irrelevant": "UNVERIFIABLE",
}
SPLIT_SALT = "factcheck-checker-split-v1:"
TEST_FRACTION = 0.3
SPEED_CLAIMS_PER_PROMPT = 10
SPEED_PASSAGES_PER_CLAIM = 3

_REPO_ROOT = Path(__file__).resolve().parent.parent
_WORD = re.compile(r"[a-z0-9]+")


class DataMissingError(RuntimeError):
    """The benchmark data is not where it was looked for."""


@dataclass(frozen=True)
class StancePair:
    claim: str
    evidence: str
    gold: str  # VERIFIED / DISPUTED / UNVERIFIABLE


def data_dir() -> Path:
    """$FACTCHECK_DATA_DIR, else ../shared/data relative to the repository root."""
    return Path(os.environ.get("FACTCHECK_DATA_DIR") or _REPO_ROOT.parent / "shared" / "data")


def load_pairs(directory: Path | None = None) -> list[StancePair]:
    path = (directory or data_dir()) / STANCE_FILE
    if not path.is_file():
        raise DataMissingError(
            f"benchmark data not found: {path}\n"
            "Put Factcheck-Bench under ../shared/data (relative to the repository root) "
            "or point FACTCHECK_DATA_DIR at the folder that holds factcheck-bench/."
        )
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return [StancePair(row["claim"], row["evidence"], GOLD_VERDICT[row["stance"]]) for row in rows]


def is_test_claim(claim: str) -> bool:
    digest = hashlib.sha256((SPLIT_SALT + claim).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < TEST_FRACTION


def split_by_claim(pairs: Iterable[StancePair]) -> tuple[list[StancePair], list[StancePair]]:
    """(train, test), disjoint by claim text."""
    train, test = [], []
    for pair in pairs:
        (test if is_test_claim(pair.claim) else train).append(pair)
    return train, test


# --- metrics ------------------------------------------------------------------------


def confusion_matrix(gold: Sequence[str], predicted: Sequence[str]) -> dict[str, dict[str, int]]:
    counts = Counter(zip(gold, predicted))
    return {g: {p: counts[g, p] for p in LABELS} for g in LABELS}


def balanced_accuracy(matrix: dict[str, dict[str, int]]) -> float:
    """Mean recall over the gold verdicts present, in percent."""
    recalls = [row[g] / sum(row.values()) for g, row in matrix.items() if sum(row.values())]
    return 100 * sum(recalls) / len(recalls)


def accuracy(matrix: dict[str, dict[str, int]]) -> float:
    total = sum(sum(row.values()) for row in matrix.values())
    return 100 * sum(matrix[g][g] for g in LABELS) / total


def _scores(gold: Sequence[str], predicted: Sequence[str]) -> dict:
    matrix = confusion_matrix(gold, predicted)
    return {"balanced_accuracy": balanced_accuracy(matrix), "accuracy": accuracy(matrix), "confusion": matrix}


# --- the judge and the baselines ----------------------------------------------------


def judge_predictions(pairs: Sequence[StancePair]) -> list[str]:
    from factcheck.engines.judge import PassageText, judge

    return [judge(pair.claim, [PassageText("P1", pair.evidence)]).verdict for pair in pairs]


def word_overlap(claim: str, evidence: str) -> float:
    """Share of the claim's distinct non-stopword words that occur in the evidence."""
    from factcheck.engines.sentences import STOPWORDS

    words = {w for w in _WORD.findall(claim.lower()) if w not in STOPWORDS}
    return len(words & set(_WORD.findall(evidence.lower()))) / len(words) if words else 0.0


def fit_overlap_threshold(train: Sequence[StancePair]) -> float:
    """The overlap threshold with the best balanced accuracy on `train`."""
    overlaps = [word_overlap(p.claim, p.evidence) for p in train]
    gold = [p.gold for p in train]

    def score(threshold: float) -> float:
        return balanced_accuracy(confusion_matrix(gold, _overlap_verdicts(overlaps, threshold)))

    return max(sorted(set(overlaps)), key=score)


def _overlap_verdicts(overlaps: Iterable[float], threshold: float) -> list[str]:
    return ["VERIFIED" if overlap >= threshold else "UNVERIFIABLE" for overlap in overlaps]


def _baselines(train: Sequence[StancePair], pairs: Sequence[StancePair]) -> dict[str, list[str]]:
    majority = Counter(p.gold for p in train).most_common(1)[0][0]
    threshold = fit_overlap_threshold(train)
    return {
        "majority class": [majority] * len(pairs),
        f"word overlap (>= {threshold:.2f})": _overlap_verdicts(
            (word_overlap(p.claim, p.evidence) for p in pairs), threshold
        ),
    }


# --- speed --------------------------------------------------------------------------


def judge_claims_per_second(pairs: Sequence[StancePair]) -> float:
    from factcheck.engines.judge import PassageText, judge

    started = time.perf_counter()
    for pair in pairs:
        judge(pair.claim, [PassageText("P1", pair.evidence)])
    return len(pairs) / (time.perf_counter() - started)


def engine_claims_per_second(pairs: Sequence[StancePair]) -> float:
    """`local/checker` on real verification prompts: 10 claims a prompt, 3 passages a claim."""
    from factcheck.engines import checker

    prompts = _speed_prompts(pairs)
    started = time.perf_counter()
    for prompt in prompts:
        checker.answer(prompt)
    return len(prompts) * SPEED_CLAIMS_PER_PROMPT / (time.perf_counter() - started)


def _speed_prompts(pairs: Sequence[StancePair]) -> list[str]:
    from factcheck.domain import ExtractedClaim
    from factcheck.services.checker.prompts import build_verification_prompt
    from factcheck.v1 import common_pb2

    evidence_by_claim: dict[str, list[str]] = {}
    for pair in pairs:
        evidence_by_claim.setdefault(pair.claim, []).append(pair.evidence)
    groups = [
        (c, e[:SPEED_PASSAGES_PER_CLAIM]) for c, e in evidence_by_claim.items() if len(e) >= SPEED_PASSAGES_PER_CLAIM
    ]
    prompts = []
    for first in range(0, len(groups) - SPEED_CLAIMS_PER_PROMPT + 1, SPEED_CLAIMS_PER_PROMPT):
        claims, passages, claim_passages = [], [], {}
        for offset, (claim, texts) in enumerate(groups[first : first + SPEED_CLAIMS_PER_PROMPT]):
            claim_id = f"claim_{offset + 1}"
            claims.append(ExtractedClaim(claim_id, claim, claim, "TECHNICAL"))
            ids = [f"P{len(passages) + i + 1}" for i in range(len(texts))]
            passages += [common_pb2.Passage(id=i, source_title="Evidence", text=t) for i, t in zip(ids, texts)]
            claim_passages[claim_id] = ids
        content = " ".join(c.claim for c in claims)
        prompts.append(build_verification_prompt(claims, content, passages, claim_passages))
    return prompts


# --- report -------------------------------------------------------------------------


def evaluate(directory: Path | None = None) -> dict:
    """All figures: per split, the judge and the baselines' scores; and the speeds."""
    pairs = load_pairs(directory)
    train, test = split_by_claim(pairs)
    figures: dict = {
        "pairs": {"all": len(pairs), "train": len(train), "test": len(test)},
        "claims": {"train": len({p.claim for p in train}), "test": len({p.claim for p in test})},
        "gold_counts": {name: dict(Counter(p.gold for p in part)) for name, part in (("test", test), ("all", pairs))},
    }
    for name, part in (("test", test), ("full data (includes the train split)", pairs)):
        gold = [p.gold for p in part]
        systems = {"local/checker judge": judge_predictions(part), **_baselines(train, part)}
        figures[name] = {system: _scores(gold, predicted) for system, predicted in systems.items()}
    figures["judge_claims_per_s"] = judge_claims_per_second(pairs)
    figures["engine_claims_per_s"] = engine_claims_per_second(pairs)
    return figures


def format_report(figures: dict) -> str:
    lines = [
        "local/checker on Factcheck-Bench subtask 3 (claim + evidence -> verdict)",
        f"pairs: {figures['pairs']['all']} (train {figures['pairs']['train']}, test {figures['pairs']['test']}; "
        f"split by claim: {figures['claims']['train']} / {figures['claims']['test']} claims)",
        f"test gold: {_counts(figures['gold_counts']['test'])}",
    ]
    for split in ("test", "full data (includes the train split)"):
        lines += ["", f"== {split} =="]
        lines += [f"{'system':<34}{'balanced acc':>14}{'accuracy':>10}"]
        for system, scores in figures[split].items():
            lines.append(f"{system:<34}{scores['balanced_accuracy']:>13.1f}%{scores['accuracy']:>9.1f}%")
        for system, scores in figures[split].items():
            lines += ["", f"confusion, {system} (rows gold, columns predicted):", *_matrix_lines(scores["confusion"])]
    lines += [
        "",
        f"speed: judge {figures['judge_claims_per_s']:.0f} claims/s (1 passage each); "
        f"local/checker engine {figures['engine_claims_per_s']:.0f} claims/s "
        f"({SPEED_CLAIMS_PER_PROMPT} claims a prompt, {SPEED_PASSAGES_PER_CLAIM} passages a claim)",
    ]
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} {counts.get(label, 0)}" for label in LABELS)


def _matrix_lines(matrix: dict[str, dict[str, int]]) -> list[str]:
    header = f"{'':>14}" + "".join(f"{label:>14}" for label in LABELS)
    return [header] + [f"{g:>14}" + "".join(f"{matrix[g][p]:>14}" for p in LABELS) for g in LABELS]


def main() -> int:
    """Print the report; exit status 2 when the data is missing."""
    try:
        figures = evaluate()
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
