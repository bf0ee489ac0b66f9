"""How well `local/checker` judges claims against evidence, and how fast.

Data: Factcheck-Bench's `subtask3_claim_evidence_stance.jsonl` (3,305 claim/evidence
pairs, 661 claims) from $FACTCHECK_DATA_DIR (default: shared/data beside the repository folder). Gold verdicts:
completely-support → VERIFIED, refute → DISPUTED, partially-support and irrelevant →
UNVERIFIABLE.

Split: by claim text, so one claim's pairs are all on one side: a claim goes to the test
split when the SHA-256 of SPLIT_SALT + claim falls in the first TEST_FRACTION of the hash
range (fixed, reproducible, no RNG state). `scripts/train_verifier.py` fits the verifier on
the train split only; the headline figures are on the held-out test split. The full-data
figures are printed too, labelled as such: they include the pairs the verifier was fitted on.

Reported, for the lexical judge (`local/checker-lexical`, the engine before the embedded entailment model), the
entailment model (`local/checker-nli`, when its runtime is installed) and two baselines:
- majority class: always the train split's most frequent verdict (UNVERIFIABLE);
- word overlap: the share of the claim's words (lower-cased, stopwords kept out) found in
  the passage; VERIFIED at or above a threshold chosen on the train split for balanced
  accuracy, else UNVERIFIABLE (plain overlap cannot tell a contradiction).
Metrics: balanced accuracy (the mean of the three per-verdict recalls; 33.3 is chance),
plain accuracy, the 3×3 confusion matrix (rows gold, columns predicted), and the expected
calibration error of the verdict's stated probability (`Judgement.score`; 10 equal-width
bins, |accuracy − mean probability| weighted by the bin's share; word overlap has none).

Public benchmarks (bench/public_benchmarks.py; the data and its licences in bench/data/). They
are EVALUATION ONLY: nothing in this repository trains, tunes, selects or calibrates on them
(models, thresholds, combiners, prefilter settings); the word-overlap threshold they use is the
one chosen on Factcheck-Bench's train split.
- WiCE, claim level (358 Wikipedia claims, each with the article it cites): supported vs not
  (LLM-AggreFact's reading: partially supported counts as not). Each engine gets the whole
  article as the knowledge store's passages (its chunker) and is right when it says VERIFIED
  exactly for the supported claims; word overlap takes the best passage's overlap. Metrics:
  balanced accuracy of the two sides, each side's recall, and the threshold-free ROC AUC of a
  support score (engines: 1 + p for VERIFIED, 1 − p otherwise; word overlap: the overlap).
- CLIMATE-FEVER (7,675 claim / evidence-sentence pairs; it has no train split): the three
  verdicts, as Factcheck-Bench, with each verdict's recall.

Speed and memory: claims/s of each engine on verification prompts built by the real prompt
builder with 10 claims and 3 passages per claim, each engine in a fresh child process whose
peak resident memory (VmHWM, model and interpreter included) is reported; and the size of
the model file.

Run from the repository root: `python -m bench.checker_accuracy` (everything, about 6 minutes on
2 shared cores), or choose with `--benchmarks factcheck-bench,wice,climate-fever,speed`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from bench.public_benchmarks import ArticleClaim, EvidencePair, load_climate_fever, load_wice
from factcheck.evaluation.sets import LABELS
from factcheck.models.inputs import VerifyInputs
from factcheck_engines.evidence_windows import word_overlap
from factcheck_engines.judge import DISPUTED, VERIFIED, Judgement, PassageText
from factcheck_engines.judges import DEFAULT_JUDGES, LEXICAL_JUDGES

STANCE_FILE = Path("factcheck-bench") / "subtask3_claim_evidence_stance.jsonl"
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


class DataMissingError(RuntimeError):
    """The benchmark data is not where it was looked for."""


@dataclass(frozen=True)
class StancePair:
    claim: str
    evidence: str
    gold: str  # VERIFIED / DISPUTED / UNVERIFIABLE


def data_dir() -> Path:
    """$FACTCHECK_DATA_DIR, else shared/data beside the repository folder."""
    return Path(os.environ.get("FACTCHECK_DATA_DIR") or _REPO_ROOT.parent / "shared" / "data")


def load_pairs(directory: Path | None = None) -> list[StancePair]:
    path = (directory or data_dir()) / STANCE_FILE
    if not path.is_file():
        raise DataMissingError(
            f"benchmark data not found: {path}\n"
            "Put Factcheck-Bench under shared/data beside the repository folder "
            "or point FACTCHECK_DATA_DIR at the folder that holds factcheck-bench/."
        )
    with path.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return [StancePair(row["claim"], row["evidence"], GOLD_VERDICT[row["stance"]]) for row in rows]


def hash_fraction(salt: str, claim: str) -> float:
    """Where SHA-256(salt + claim) falls in the hash range, in [0, 1): a fixed, RNG-free split key."""
    digest = hashlib.sha256((salt + claim).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def is_test_claim(claim: str) -> bool:
    return hash_fraction(SPLIT_SALT, claim) < TEST_FRACTION


def split_by_claim(pairs: Iterable[StancePair]) -> tuple[list[StancePair], list[StancePair]]:
    """(train, test), disjoint by claim text."""
    train: list[StancePair] = []
    test: list[StancePair] = []
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
    supported = matrix["VERIFIED"]
    return {
        "balanced_accuracy": balanced_accuracy(matrix),
        "accuracy": accuracy(matrix),
        "ece": ece,
        "recall": {g: 100 * row[g] / sum(row.values()) for g, row in matrix.items() if sum(row.values())},
        "confusion": matrix,
        # The worst failure on true claims: a supported claim called DISPUTED.
        "disputed_supported": 100 * supported["DISPUTED"] / sum(supported.values())
        if sum(supported.values())
        else None,
    }


def binary_scores(
    gold: Sequence[bool],
    predicted: Sequence[bool],
    ranking: Sequence[float],
    judged: Sequence[Judgement] | None = None,
) -> dict:
    """Supported (True) vs not: balanced accuracy, accuracy, each side's recall (percent), the ROC AUC
    of `ranking` (a score that should be higher for supported items; threshold-free) and, for an
    engine (`judged`), the ECE of its verdicts' probabilities (a verdict is right when it says
    VERIFIED exactly for a supported claim) and the share of supported claims it called DISPUTED."""
    recall = {
        side: 100 * sum(p == side for g, p in zip(gold, predicted) if g == side) / count
        for side in (True, False)
        if (count := sum(g == side for g in gold))
    }
    return {
        "balanced_accuracy": sum(recall.values()) / len(recall),
        "accuracy": 100 * sum(g == p for g, p in zip(gold, predicted)) / len(gold),
        "auc": roc_auc(gold, ranking),
        "recall_supported": recall.get(True),
        "recall_not_supported": recall.get(False),
        "ece": None if judged is None else _binary_ece(gold, judged),
        "disputed_supported": None
        if judged is None or not any(gold)
        else 100 * sum(j.verdict == DISPUTED for g, j in zip(gold, judged) if g) / sum(gold),
    }


def _binary_ece(gold: Sequence[bool], judged: Sequence[Judgement]) -> float:
    right = ["yes" if (j.verdict == VERIFIED) == g else "no" for g, j in zip(gold, judged)]
    return expected_calibration_error(right, ["yes"] * len(right), [j.score for j in judged])


def roc_auc(gold: Sequence[bool], ranking: Sequence[float]) -> float | None:
    """P(a random supported item ranks above a random unsupported one), ties counting half, in
    percent (the Mann-Whitney U statistic); None without both kinds of item."""
    from factcheck_gateway.modes.council.aggregate import mid_ranks

    ranks = mid_ranks([-value for value in ranking])  # rank 1 for the lowest; ties share their mean rank
    positives = sum(gold)
    negatives = len(gold) - positives
    if not positives or not negatives:
        return None
    rank_sum = sum(rank for rank, g in zip(ranks, gold) if g)
    return 100 * (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def support_score(judgement: Judgement) -> float:
    """An engine's judgement as one number that ranks support: 1 + p for VERIFIED, 1 − p otherwise
    (p: the probability the engine gives its verdict), so every VERIFIED ranks above the rest."""
    return 1 + judgement.score if judgement.verdict == VERIFIED else 1 - judgement.score


# --- the judge and the baselines ----------------------------------------------------


LEXICAL = "local/checker-lexical (previous engine)"
NLI = "local/checker (entailment model)"
ENGINES = {"lexical": "factcheck_engines.checker_lexical", "nli": "factcheck_engines.checker_nli"}


def judge_predictions(pairs: Sequence[StancePair]) -> list[str]:
    return [j.verdict for j in judgements(pairs, "lexical")]


def judgements(pairs: Sequence[StancePair] | Sequence[EvidencePair], engine: str) -> list[Judgement]:
    """The engine's Judgement for each pair (its one passage as P1)."""
    return judge_items([(pair.claim, [PassageText("P1", pair.evidence)]) for pair in pairs], engine)


def judge_items(items: Sequence[tuple[str, Sequence[PassageText]]], engine: str) -> list[Judgement]:
    """The engine's Judgement for each (claim, passages), as its checker judges a prompt's claims."""
    if engine == "nli":
        return DEFAULT_JUDGES.many(items)
    return LEXICAL_JUDGES.many(items)


def nli_available() -> bool:
    from factcheck_engines import nli_model

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
    from factcheck_engines.judge import PassageText, judge

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


def batching_figures(pairs: Sequence[StancePair], claims: int = 100) -> dict:
    """The entailment model's pairs per CPU-second when each claim's (claim, sentence) pairs are
    batches of their own (what the checker does) against pooled into batches across claims, on the
    speed prompts' claims, and how far pooling moves a probability (the int8 model quantizes each
    batch's activations with one range, so a pair's scores depend on its batch-mates)."""
    from factcheck_engines.evidence_windows import claim_sentences
    from factcheck_engines.nli_model import BATCH, default_model

    model = default_model()
    per_claim = []
    for prompt in _speed_prompts(pairs):
        texts = {p.id: PassageText(p.id, p.text) for p in prompt.passages}
        for claim in prompt.claims:
            sentences = claim_sentences(claim.text, [texts[i] for i in prompt.claim_passages[claim.id]])
            per_claim.append([(claim.text, w.text) for w in sentences])
    per_claim = [items for items in per_claim if items][:claims]
    model.scores(per_claim[0])  # warm up
    started = time.process_time()
    alone = [score for items in per_claim for score in model.scores(items)]
    alone_cpu = time.process_time() - started
    flat = [pair for items in per_claim for pair in items]
    started = time.process_time()
    pooled = [score for first in range(0, len(flat), BATCH) for score in model.scores(flat[first : first + BATCH])]
    pooled_cpu = time.process_time() - started
    moved = max(abs(a.supported - b.supported) + abs(a.refuted - b.refuted) for a, b in zip(alone, pooled))
    return {
        "claims": len(per_claim),
        "pairs": len(flat),
        "per_claim_pairs_per_cpu_s": len(flat) / alone_cpu,
        "pooled_pairs_per_cpu_s": len(flat) / pooled_cpu,
        "largest_change": moved,
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
    from factcheck_engines.nli_model import MODEL_DIR

    return (MODEL_DIR / "model.onnx").stat().st_size / 1e6


def _speed_prompts(pairs: Sequence[StancePair]) -> list[VerifyInputs]:
    """The verification calls' inputs (what the checker passes a `local/` engine with its prompt)."""
    from factcheck.core.domain import ExtractedClaim
    from factcheck.v1 import common_pb2
    from factcheck_checker.verification_prompts import verification_inputs

    evidence_by_claim: dict[str, list[str]] = {}
    for pair in pairs:
        evidence_by_claim.setdefault(pair.claim, []).append(pair.evidence)
    groups = [
        (c, e[:SPEED_PASSAGES_PER_CLAIM]) for c, e in evidence_by_claim.items() if len(e) >= SPEED_PASSAGES_PER_CLAIM
    ]
    prompts: list[VerifyInputs] = []
    for first in range(0, len(groups) - SPEED_CLAIMS_PER_PROMPT + 1, SPEED_CLAIMS_PER_PROMPT):
        claims: list[ExtractedClaim] = []
        passages: list[common_pb2.Passage] = []
        claim_passages: dict[str, list[str]] = {}
        for offset, (claim, texts) in enumerate(groups[first : first + SPEED_CLAIMS_PER_PROMPT]):
            claim_id = f"claim_{offset + 1}"
            claims.append(ExtractedClaim(claim_id, claim, claim, "TECHNICAL"))
            ids = [f"P{len(passages) + i + 1}" for i in range(len(texts))]
            passages += [common_pb2.Passage(id=i, source_title="Evidence", text=t) for i, t in zip(ids, texts)]
            claim_passages[claim_id] = ids
        content = " ".join(c.claim for c in claims)
        prompts.append(verification_inputs(claims, content, passages, claim_passages))
    return prompts


# --- public benchmarks (evaluation only) ---------------------------------------------


def wice_figures(items: Sequence[ArticleClaim], engines: Sequence[str], threshold: float) -> dict:
    """Supported vs not on WiCE, each engine given the whole cited article as the knowledge store's
    passages (its prefilter picks the windows); word overlap: the best passage's overlap."""
    gold = [item.supported for item in items]
    passages = [item.passages() for item in items]
    systems: dict = {}
    for engine in engines:
        made = judge_items([(item.claim, parts) for item, parts in zip(items, passages)], engine)
        systems[_system(engine)] = binary_scores(
            gold, [j.verdict == VERIFIED for j in made], [support_score(j) for j in made], made
        )
    overlaps = [max((word_overlap(i.claim, p.text) for p in parts), default=0.0) for i, parts in zip(items, passages)]
    systems[_overlap_name(threshold)] = binary_scores(gold, [o >= threshold for o in overlaps], overlaps)
    return {
        "claims": len(items),
        "passages": sum(len(parts) for parts in passages),
        "gold_counts": dict(Counter(item.label for item in items)),
        "systems": systems,
    }


def climate_fever_figures(pairs: Sequence[EvidencePair], engines: Sequence[str], threshold: float) -> dict:
    """Every CLIMATE-FEVER (claim, evidence sentence) pair: three verdicts, as on Factcheck-Bench."""
    gold = [pair.gold for pair in pairs]
    systems: dict = {}
    for engine in engines:
        made = judgements(pairs, engine)
        systems[_system(engine)] = _scores(gold, [j.verdict for j in made], [j.score for j in made])
    overlaps = (word_overlap(pair.claim, pair.evidence) for pair in pairs)
    systems[_overlap_name(threshold)] = _scores(gold, _overlap_verdicts(overlaps, threshold))
    return {
        "pairs": len(pairs),
        "claims": len({pair.claim_id for pair in pairs}),
        "gold_counts": dict(Counter(gold)),
        "systems": systems,
    }


def _system(engine: str) -> str:
    return LEXICAL if engine == "lexical" else NLI


def _overlap_name(threshold: float) -> str:
    return f"word overlap (>= {threshold:.2f})"


# --- report -------------------------------------------------------------------------

BENCHMARKS = ("factcheck-bench", "wice", "climate-fever", "speed")
# What `python -m bench` (bench/RESULTS.md) runs: the project's own split and the speeds.
DEFAULT_BENCHMARKS = ("factcheck-bench", "speed")


def evaluate(directory: Path | None = None, benchmarks: Sequence[str] = DEFAULT_BENCHMARKS) -> dict:
    """The figures of the chosen benchmarks (BENCHMARKS): per system, its scores; and the speeds.

    Factcheck-Bench is always read: its train split fixes the word-overlap threshold that every
    benchmark's baseline uses (the public benchmarks are never tuned on)."""
    pairs = load_pairs(directory)
    train, test = split_by_claim(pairs)
    engines = ["lexical", "nli"] if nli_available() else ["lexical"]
    threshold = fit_overlap_threshold(train)
    figures: dict = {"benchmarks": list(benchmarks), "overlap_threshold": threshold, "seconds": {}}
    if "nli" in engines:
        figures["nli_model"] = {"mb": model_size_mb(), "sha256": model_sha256()}
    for benchmark in benchmarks:
        started = time.perf_counter()
        if benchmark == "factcheck-bench":
            figures.update(factcheck_bench_figures(pairs, train, test, engines))
        elif benchmark == "wice":
            figures["wice"] = wice_figures(load_wice(), engines, threshold)
        elif benchmark == "climate-fever":
            figures["climate-fever"] = climate_fever_figures(load_climate_fever(), engines, threshold)
        elif benchmark == "speed":
            figures["judge_claims_per_s"] = judge_claims_per_second(pairs)
            if "nli" in engines:
                figures["batching"] = batching_figures(pairs)
            figures["engines"] = {engine: engine_speed_in_child(engine, directory) for engine in engines}
        else:
            raise ValueError(f"unknown benchmark {benchmark!r} (known: {', '.join(BENCHMARKS)})")
        figures["seconds"][benchmark] = time.perf_counter() - started
    return figures


def factcheck_bench_figures(
    pairs: Sequence[StancePair], train: Sequence[StancePair], test: Sequence[StancePair], engines: Sequence[str]
) -> dict:
    """Per split, the engines' and the baselines' scores on Factcheck-Bench."""
    figures: dict = {
        "pairs": {"all": len(pairs), "train": len(train), "test": len(test)},
        "claims": {"train": len({p.claim for p in train}), "test": len({p.claim for p in test})},
        "gold_counts": {name: dict(Counter(p.gold for p in part)) for name, part in (("test", test), ("all", pairs))},
    }
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
            systems[_system(engine)] = _scores(gold, [j.verdict for j in mine], [j.score for j in mine])
        systems.update({system: _scores(gold, predicted) for system, predicted in _baselines(train, part).items()})
        figures[name] = systems
    return figures


def model_sha256() -> str:
    from factcheck_engines.nli_model import MODEL_DIR

    return hashlib.sha256((MODEL_DIR / "model.onnx").read_bytes()).hexdigest()


def format_report(figures: dict) -> str:
    lines: list[str] = []
    if "nli_model" in figures:
        model = figures["nli_model"]
        lines += [f"entailment model: model.onnx {model['mb']:.1f} MB (int8 ONNX), sha256 {model['sha256'][:16]}", ""]
    for benchmark in figures["benchmarks"]:
        lines += _REPORTS[benchmark](figures)
        lines += [f"({benchmark}: {figures['seconds'][benchmark]:.0f} s)", ""]
    return "\n".join(lines).rstrip() + "\n"


def _factcheck_bench_report(figures: dict) -> list[str]:
    lines = [
        "== Factcheck-Bench subtask 3 (claim + evidence -> verdict) ==",
        f"pairs: {figures['pairs']['all']} (train {figures['pairs']['train']}, test {figures['pairs']['test']}; "
        f"split by claim: {figures['claims']['train']} / {figures['claims']['test']} claims)",
        f"test gold: {_counts(figures['gold_counts']['test'])}",
    ]
    for split in ("test", "full data (includes the train split)"):
        lines += ["", f"-- {split} --", *_three_way_table(figures[split])]
        if split == "test":
            lines += _goal_lines(figures[split])
        for system, scores in figures[split].items():
            lines += ["", f"confusion, {system} (rows gold, columns predicted):", *_matrix_lines(scores["confusion"])]
    return lines


def _wice_report(figures: dict) -> list[str]:
    wice = figures["wice"]
    counts = ", ".join(f"{label} {n}" for label, n in sorted(wice["gold_counts"].items()))
    lines = [
        "== WiCE claim-level test (public; evaluation only): supported vs not (partially/not supported) ==",
        f"claims: {wice['claims']} ({counts}); the cited articles as {wice['passages']} passages "
        "(the knowledge store's chunker); word overlap: the best passage's, threshold from Factcheck-Bench train",
        f"{'system':<42}{'balanced acc':>14}{'accuracy':>10}{'AUC':>8}{'ECE':>7}{'recall sup':>12}"
        f"{'recall not':>12}{'sup DISPUTED':>14}",
    ]
    for system, scores in wice["systems"].items():
        auc = "-" if scores["auc"] is None else f"{scores['auc']:.1f}"
        lines.append(
            f"{system:<42}{scores['balanced_accuracy']:>13.1f}%{scores['accuracy']:>9.1f}%{auc:>8}"
            f"{_figure(scores['ece']):>7}{scores['recall_supported']:>11.1f}%{scores['recall_not_supported']:>11.1f}%"
            f"{_figure(scores['disputed_supported'], '%'):>14}"
        )
    lines.append("AUC ranks the engines by their support score: 1 + p for VERIFIED, 1 - p otherwise.")
    return lines + _goal_lines(wice["systems"])


def _climate_fever_report(figures: dict) -> list[str]:
    climate = figures["climate-fever"]
    return [
        "== CLIMATE-FEVER (public; evaluation only): every claim / evidence-sentence pair ==",
        f"pairs: {climate['pairs']} of {climate['claims']} claims; gold: {_counts(climate['gold_counts'])}",
        *_three_way_table(climate["systems"]),
        *_goal_lines(climate["systems"]),
    ]


def _speed_report(figures: dict) -> list[str]:
    lines = [
        "== speed and memory ==",
        f"lexical judge {figures['judge_claims_per_s']:.0f} claims/s (1 passage each); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end",
    ]
    if "batching" in figures:
        b = figures["batching"]
        lines.append(
            f"entailment model, {b['pairs']} (claim, sentence) pairs of {b['claims']} claims: "
            f"{b['per_claim_pairs_per_cpu_s']:.0f} pairs per CPU-second batched per claim, "
            f"{b['pooled_pairs_per_cpu_s']:.0f} pooled across claims (a probability moves by up to "
            f"{b['largest_change']:.3f} when pooled)"
        )
    for engine, measured in figures["engines"].items():
        lines.append(
            f"{ENGINES[engine].rsplit('.', 1)[1]:<16} {measured['claims_per_s']:>7.1f} claims/s, "
            f"{measured['claims_per_cpu_s']:.1f} claims per CPU-second "
            f"({SPEED_CLAIMS_PER_PROMPT} claims a prompt, {SPEED_PASSAGES_PER_CLAIM} passages a claim), "
            f"peak memory {measured['peak_mb']:.0f} MB (own process)"
        )
    return lines


_REPORTS = {
    "factcheck-bench": _factcheck_bench_report,
    "wice": _wice_report,
    "climate-fever": _climate_fever_report,
    "speed": _speed_report,
}


def _three_way_table(systems: dict) -> list[str]:
    lines = [
        f"{'system':<42}{'balanced acc':>14}{'accuracy':>10}{'ECE':>8}"
        + "".join(f"{'recall ' + label[:5]:>14}" for label in LABELS)
        + f"{'sup DISPUTED':>14}"
    ]
    for system, scores in systems.items():
        ece = "-" if scores["ece"] is None else f"{scores['ece']:.1f}"
        recalls = "".join(
            f"{scores['recall'][label]:>13.1f}%" if label in scores["recall"] else f"{'-':>14}" for label in LABELS
        )
        lines.append(
            f"{system:<42}{scores['balanced_accuracy']:>13.1f}%{scores['accuracy']:>9.1f}%{ece:>8}{recalls}"
            f"{_figure(scores['disputed_supported'], '%'):>14}"
        )
    return lines


# local/checker must beat the better of its baselines (the lexical engine, word overlap) by this much.
GOAL_MARGIN = 3.0
# At most this share of the supported claims may come back DISPUTED.
GOAL_DISPUTED_SUPPORTED = 10.0


def goal_status(systems: dict) -> dict | None:
    """Whether local/checker meets the accuracy goals on one benchmark's systems (None without it)."""
    if NLI not in systems:
        return None
    checker = systems[NLI]
    baselines = {s: f["balanced_accuracy"] for s, f in systems.items() if s == LEXICAL or s.startswith("word overlap")}
    best = max(baselines, key=baselines.__getitem__)
    margin = checker["balanced_accuracy"] - baselines[best]
    disputed = checker["disputed_supported"] or 0.0
    return {
        "best_baseline": best,
        "margin": margin,
        "margin_met": margin >= GOAL_MARGIN,
        "disputed_supported": disputed,
        "disputed_met": disputed <= GOAL_DISPUTED_SUPPORTED,
    }


def _goal_lines(systems: dict) -> list[str]:
    status = goal_status(systems)
    if status is None:
        return []
    return [
        f"goal: local/checker {status['margin']:+.1f} points of balanced accuracy over the better baseline "
        f"({status['best_baseline']}; needs +{GOAL_MARGIN:.0f}): {'met' if status['margin_met'] else 'MISSED'}; "
        f"supported claims called DISPUTED {status['disputed_supported']:.1f}% (at most {GOAL_DISPUTED_SUPPORTED:.0f}%): "
        f"{'met' if status['disputed_met'] else 'MISSED'}"
    ]


def _figure(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.1f}{unit}"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{label} {counts.get(label, 0)}" for label in LABELS)


def _matrix_lines(matrix: dict[str, dict[str, int]]) -> list[str]:
    header = f"{'':>14}" + "".join(f"{label:>14}" for label in LABELS)
    return [header] + [f"{g:>14}" + "".join(f"{matrix[g][p]:>14}" for p in LABELS) for g in LABELS]


def main(argv: list[str] | None = None) -> int:
    """Print the report; exit status 2 when the data is missing."""
    parser = argparse.ArgumentParser(description="local/checker accuracy, calibration, speed and memory")
    parser.add_argument(
        "--benchmarks",
        default=",".join(BENCHMARKS),
        help=f"comma-separated, in order, from: {', '.join(BENCHMARKS)} (default: all)",
    )
    parser.add_argument("--engine-speed", choices=sorted(ENGINES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine_speed:
        return _engine_speed_main(args.engine_speed)
    benchmarks = [name.strip() for name in args.benchmarks.split(",") if name.strip()]
    unknown = sorted(set(benchmarks) - set(BENCHMARKS))
    if unknown or not benchmarks:
        parser.error(f"--benchmarks: choose from {', '.join(BENCHMARKS)} (got {args.benchmarks!r})")
    try:
        figures = evaluate(benchmarks=benchmarks)
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_report(figures), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
