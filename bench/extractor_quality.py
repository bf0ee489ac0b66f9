"""Claim recall and precision of `local/extractor` against factcheck-GPT's gold decompositions.

Data: `factcheck-bench/factcheck-GPT-benchmark.jsonl` under `$FACTCHECK_DATA_DIR`
(default: `shared/data` beside the repository folder; see `bench/data.py`). Each row has a `response` and, per sentence,
the gold atomic `claims` with a `claim_checkworthiness` label; the gold set is the
claims labelled "factual" (the extractor must leave opinions out: docs/modes.md#fact-check-mode).

Matching, per response: a predicted claim and a gold claim match when the F1 of their
content-word sets (`sentences.content_words`: stemmed, no stopwords) is at least
`MATCH_F1`. Pairs are matched one-to-one, greedily by descending F1. Precision =
matched / predicted, recall = matched / gold, both pooled over all responses. The gold
claims are decontextualised ("Justice William O. Douglas was born ...") where the
extractor quotes the text ("He was born ..."), so the threshold tolerates missing
subject words.

Speed: claims/s = predicted claims / wall time of extraction over all responses, in one
process, best of `TIMING_ROUNDS` rounds.

Baseline, printed beside it: every sentence of the response is one claim.

Run from the repository root: `python -m bench.extractor_quality`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, Iterable

from bench.data import data_dir, read_jsonl
from factcheck.engines.extractor import extract_claims
from factcheck.text.sentences import content_words, split_sentences

DATA_FILE = Path("factcheck-bench") / "factcheck-GPT-benchmark.jsonl"
MATCH_F1 = 0.6
TIMING_ROUNDS = 3

Extractor = Callable[[str], list[str]]


def load_rows() -> list[tuple[str, list[str]]]:
    """(response, factual gold claims) per row of the benchmark file."""
    return [(row["response"], _gold_claims(row)) for row in read_jsonl(str(DATA_FILE))]


def _gold_claims(row: dict) -> list[str]:
    claims = []
    for sentence in row["sentences"].values():
        labels = sentence.get("claim_checkworthiness") or []
        for index, claim in enumerate(sentence.get("claims") or []):
            if index >= len(labels) or labels[index] == "factual":
                claims.append(claim)
    return claims


def token_f1(predicted: str, gold: str) -> float:
    """F1 of the two claims' content-word sets."""
    a, b = set(content_words(predicted)), set(content_words(gold))
    common = len(a & b)
    if not common:
        return 0.0
    precision, recall = common / len(a), common / len(b)
    return 2 * precision * recall / (precision + recall)


def count_matches(predicted: list[str], gold: list[str], threshold: float = MATCH_F1) -> int:
    """One-to-one greedy matching by descending F1, pairs below `threshold` excluded."""
    pairs = sorted(
        ((token_f1(p, g), i, j) for i, p in enumerate(predicted) for j, g in enumerate(gold)),
        key=lambda pair: (-pair[0], pair[1], pair[2]),
    )
    used_predicted: set[int] = set()
    used_gold: set[int] = set()
    for score, i, j in pairs:
        if score < threshold:
            break
        if i not in used_predicted and j not in used_gold:
            used_predicted.add(i)
            used_gold.add(j)
    return len(used_predicted)


def local_extractor(response: str) -> list[str]:
    return [claim.text for claim in extract_claims(response)]


def sentence_baseline(response: str) -> list[str]:
    return split_sentences(response)


def score_system(extractor: Extractor, rows: list[tuple[str, list[str]]]) -> dict[str, float | int]:
    """Predicted/matched counts, precision, recall, F1 and claims/s of one extractor."""
    predictions, seconds = _timed(extractor, [response for response, _ in rows])
    predicted = sum(len(p) for p in predictions)
    gold = sum(len(g) for _, g in rows)
    matched = sum(count_matches(p, g) for p, (_, g) in zip(predictions, rows))
    precision = matched / predicted if predicted else 0.0
    recall = matched / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "predicted": predicted,
        "matched": matched,
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "claims_per_s": round(predicted / seconds, 1) if seconds else 0.0,
    }


def _timed(extractor: Extractor, responses: Iterable[str]) -> tuple[list[list[str]], float]:
    responses = list(responses)
    best = float("inf")
    predictions: list[list[str]] = []
    for _ in range(TIMING_ROUNDS):
        started = time.perf_counter()
        predictions = [extractor(response) for response in responses]
        best = min(best, time.perf_counter() - started)
    return predictions, best


def measure() -> dict:
    """The benchmark's figures as a dict (for `python -m bench` to collect)."""
    rows = load_rows()
    return {
        "benchmark": "extractor_quality",
        "data": str(data_dir() / DATA_FILE),
        "responses": len(rows),
        "gold_claims": sum(len(gold) for _, gold in rows),
        "match_f1": MATCH_F1,
        "local_extractor": score_system(local_extractor, rows),
        "baseline_sentences": score_system(sentence_baseline, rows),
    }


def main() -> int:
    path = data_dir() / DATA_FILE  # data_dir() exits with a message if the folder is missing
    if not path.is_file():
        print(
            f"extractor_quality: benchmark data not found at {path}.\n"
            "Put factcheck-bench/ under shared/data beside the repository folder or set FACTCHECK_DATA_DIR.",
            file=sys.stderr,
        )
        return 2
    figures = measure()
    print(
        f"local/extractor vs factcheck-GPT gold claims: {figures['responses']} responses, "
        f"{figures['gold_claims']} factual gold claims\n"
        f"match: content-word F1 >= {figures['match_f1']}, one-to-one greedy; single process\n"
    )
    header = f"{'system':<22}{'predicted':>10}{'matched':>9}{'precision':>11}{'recall':>8}{'F1':>8}{'claims/s':>11}"
    print(header)
    for name, key in (("local/extractor", "local_extractor"), ("baseline: sentences", "baseline_sentences")):
        r = figures[key]
        print(
            f"{name:<22}{r['predicted']:>10}{r['matched']:>9}{r['precision']:>11.3f}"
            f"{r['recall']:>8.3f}{r['f1']:>8.3f}{r['claims_per_s']:>11.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
