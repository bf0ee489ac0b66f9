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

Reported, for the lexical judge (`local/checker-lexical`, the engine before issue 19), the
entailment model (`local/checker-nli`, when its runtime is installed) and two baselines:
- majority class: always the train split's most frequent verdict (UNVERIFIABLE);
- word overlap: the share of the claim's words (lower-cased, stopwords kept out) found in
  the passage; VERIFIED at or above a threshold chosen on the train split for balanced
  accuracy, else UNVERIFIABLE (plain overlap cannot tell a contradiction).
Metrics: balanced accuracy (the mean of the three per-verdict recalls; 33.3 is chance),
plain accuracy, the 3×3 confusion matrix (rows gold, columns predicted), and the expected
calibration error of the verdict's stated probability (`Judgement.score`; 10 equal-width
bins, |accuracy − mean probability| weighted by the bin's share; word overlap has none).

Speed and memory: claims/s of each engine on verification prompts built by the real prompt
builder with 10 claims and 3 passages per claim, each engine in a fresh child process whose
peak resident memory (VmHWM, model and interpreter included) is reported; and the size of
the model file.

Run from the repository root: `python -m bench.checker_accuracy`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
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
# Prompts timed per engine (200 claims): enough for a steady rate, short for the entailment model.
SPEED_PROMPTS = 20

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


def _scores(gold: Sequence[str], predicted: Sequence[str], probabilities: Sequence[float] | None = None) -> dict:
    matrix = confusion_matrix(gold, predicted)
    ece = expected_calibration_error(gold, predicted, probabilities) if probabilities is not None else None
    return {
        "balanced_accuracy": balanced_accuracy(matrix),
        "accuracy": accuracy(matrix),
        "ece": ece,
        "confusion": matrix,
    }


# --- the judge and the baselines ----------------------------------------------------


LEXICAL = "local/checker-lexical (previous engine)"
NLI = "local/checker-nli (entailment model)"
ENGINES = {"lexical": "factcheck.engines.checker_lexical", "nli": "factcheck.engines.checker_nli"}


def judge_predictions(pairs: Sequence[StancePair]) -> list[str]:
    return [j.verdict for j in judgements(pairs, "lexical")]


def judgements(pairs: Sequence[StancePair], engine: str) -> list:
    """The engine's Judgement for each pair (its one passage as P1)."""
    from factcheck.engines.judge import PassageText

    if engine == "nli":
        from factcheck.engines.nli_judge import judge
    else:
        from factcheck.engines.judge import judge
    return [judge(pair.claim, [PassageText("P1", pair.evidence)]) for pair in pairs]


def nli_available() -> bool:
    from factcheck.engines import nli_model

    return nli_model.available()


def expected_calibration_error(gold: Sequence[str], verdicts: Sequence[str], probabilities: Sequence[float]) -> float:
    """ECE of the verdicts' probabilities, in percentage points (10 equal-width bins)."""
    bins: dict[int, list[tuple[float, bool]]] = {}
    for g, v, p in zip(gold, verdicts, probabilities):
        bins.setdefault(min(int(p * 10), 9), []).append((p, g == v))
    total = len(gold)
    return 100 * sum(
        len(items) / total * abs(sum(c for _, c in items) / len(items) - sum(p for p, _ in items) / len(items))
        for items in bins.values()
    )


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


def engine_claims_per_second(pairs: Sequence[StancePair], engine: str = "lexical") -> float:
    """An engine on real verification prompts: 10 claims a prompt, 3 passages a claim."""
    return engine_speed(pairs, engine)["claims_per_s"]


def engine_speed(pairs: Sequence[StancePair], engine: str) -> dict:
    """claims/s (wall clock) and claims per CPU-second of the process (all its threads): the
    second holds up on a machine shared with other work, where the first falls."""
    import importlib

    module = importlib.import_module(ENGINES[engine])
    prompts = _speed_prompts(pairs)[:SPEED_PROMPTS]
    module.answer(prompts[0])  # load the model (the nli engine's first call) outside the timing
    started, cpu_started = time.perf_counter(), time.process_time()
    for prompt in prompts:
        module.answer(prompt)
    claims = len(prompts) * SPEED_CLAIMS_PER_PROMPT
    return {
        "claims_per_s": claims / (time.perf_counter() - started),
        "claims_per_cpu_s": claims / (time.process_time() - cpu_started),
    }


def engine_speed_in_child(engine: str, directory: Path | None = None) -> dict:
    """claims/s and peak memory (MB) of `engine` in a fresh Python process."""
    env = {**os.environ, "FACTCHECK_DATA_DIR": str(directory or data_dir())}
    result = subprocess.run(
        [sys.executable, "-m", "bench.checker_accuracy", "--engine-speed", engine],
        cwd=_REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _engine_speed_main(engine: str) -> int:
    measured = engine_speed(load_pairs(), engine)
    print(json.dumps({**measured, "peak_mb": _peak_memory_mb()}))
    return 0


def _peak_memory_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def model_size_mb() -> float:
    from factcheck.engines.nli_model import MODEL_DIR

    return (MODEL_DIR / "model.onnx").stat().st_size / 1e6


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
    engines = ["lexical", "nli"] if nli_available() else ["lexical"]
    made = {engine: judgements(pairs, engine) for engine in engines}  # each pair judged once
    in_test = [is_test_claim(p.claim) for p in pairs]
    for name, part, keep in (
        ("test", test, in_test),
        ("full data (includes the train split)", pairs, [True] * len(pairs)),
    ):
        gold = [p.gold for p in part]
        systems: dict = {}
        for engine in engines:
            mine = [j for j, k in zip(made[engine], keep) if k]
            systems[LEXICAL if engine == "lexical" else NLI] = _scores(
                gold, [j.verdict for j in mine], [j.score for j in mine]
            )
        systems.update({system: _scores(gold, predicted) for system, predicted in _baselines(train, part).items()})
        figures[name] = systems
    figures["judge_claims_per_s"] = judge_claims_per_second(pairs)
    figures["engines"] = {engine: engine_speed_in_child(engine, directory) for engine in engines}
    figures["engine_claims_per_s"] = figures["engines"]["lexical"]["claims_per_s"]
    if "nli" in engines:
        figures["nli_model_mb"] = model_size_mb()
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
        lines += [f"{'system':<42}{'balanced acc':>14}{'accuracy':>10}{'ECE':>8}"]
        for system, scores in figures[split].items():
            ece = "-" if scores["ece"] is None else f"{scores['ece']:.1f}"
            lines.append(f"{system:<42}{scores['balanced_accuracy']:>13.1f}%{scores['accuracy']:>9.1f}%{ece:>8}")
        for system, scores in figures[split].items():
            lines += ["", f"confusion, {system} (rows gold, columns predicted):", *_matrix_lines(scores["confusion"])]
    lines += ["", f"speed: lexical judge {figures['judge_claims_per_s']:.0f} claims/s (1 passage each)"]
    for engine, measured in figures["engines"].items():
        lines.append(
            f"{ENGINES[engine].rsplit('.', 1)[1]:<16} {measured['claims_per_s']:>7.1f} claims/s, "
            f"{measured['claims_per_cpu_s']:.1f} claims per CPU-second "
            f"({SPEED_CLAIMS_PER_PROMPT} claims a prompt, {SPEED_PASSAGES_PER_CLAIM} passages a claim), "
            f"peak memory {measured['peak_mb']:.0f} MB (own process)"
        )
    if "nli_model_mb" in figures:
        lines.append(f"entailment model file: {figures['nli_model_mb']:.1f} MB (int8 ONNX)")
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} {counts.get(label, 0)}" for label in LABELS)


def _matrix_lines(matrix: dict[str, dict[str, int]]) -> list[str]:
    header = f"{'':>14}" + "".join(f"{label:>14}" for label in LABELS)
    return [header] + [f"{g:>14}" + "".join(f"{matrix[g][p]:>14}" for p in LABELS) for g in LABELS]


def main(argv: list[str] | None = None) -> int:
    """Print the report; exit status 2 when the data is missing."""
    parser = argparse.ArgumentParser(description="local/checker accuracy, calibration, speed and memory")
    parser.add_argument("--engine-speed", choices=sorted(ENGINES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine_speed:
        return _engine_speed_main(args.engine_speed)
    try:
        figures = evaluate()
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
