"""Does a checker vouch only for what its evidence says? Claims a passage supports, and copies with one specific
changed, each judged alone against its passage.

Data: bench/data/contrast/contrast.jsonl (scripts/prepare_contrast_set.py; built from SufficientFacts, a training
source of the checker, never from an evaluation set). Each item is a claim, the encyclopedic passage it is judged
against (with its page title), the kind of change (`supported`: none; `year`, `figure`, `name`, `term`:
a specific the passage states, changed; `negation`; `absent`: a detail the passage never mentions; `subject`:
another page's subject), the gold verdict, and for the swaps the passage's value a correction must hold.

Each claim goes through the checker's own path: the verification call's inputs as the checker service builds them
(one claim, one passage "P1" with its title), the engine's answer, and the checker's parser
(`parse_verifications`), so verdict, correction and confidence are what a caller gets.

Figures, per engine and split (`dev` is what the grounding rules were tuned on; `test` is not looked at while
tuning):
- changed copies VERIFIED (goal: at most 2%), by kind of change;
- supported claims VERIFIED (goal: at least 85%);
- copies whose passage states the other value (year, figure, name, term, negation) DISPUTED (goal: 70%);
- DISPUTED swaps whose correction holds the passage's value (goal: 90%; negations have no value to hold);
- wrong verdicts at HIGH confidence (goal: none), with examples;
- claims judged per second.

    python -m bench.contrast [--engines local/checker,local/checker-lexical,local/checker-overlap]
                             [--split dev|test|all] [--show-errors 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from factcheck.core.domain import ClaimVerification, ExtractedClaim
from factcheck.v1 import common_pb2

DATA = Path(__file__).resolve().parent / "data" / "contrast" / "contrast.jsonl"
ENGINES = ("local/checker", "local/checker-lexical", "local/checker-overlap")
SWAPS = ("year", "figure", "name", "term")
STATED_ELSEWHERE = SWAPS + ("negation",)
CHANGES = ("supported", "year", "figure", "name", "term", "negation", "absent", "subject")


@dataclass(frozen=True)
class Item:
    id: str
    claim: str
    title: str
    passage: str
    change: str
    gold: str
    passage_value: str | None
    split: str


@dataclass(frozen=True)
class Judged:
    item: Item
    verdict: str
    confidence: str
    correction: str | None


def load(split: str = "all") -> list[Item]:
    items = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if split in ("all", row["split"]):
            items.append(
                Item(
                    row["id"],
                    row["claim"],
                    row["title"],
                    row["passage"],
                    row["change"],
                    row["gold"],
                    row["passage_value"],
                    row["split"],
                )
            )
    return items


def judge(engine: str, item: Item) -> ClaimVerification:
    """The claim judged alone against its passage, through the checker's inputs, the engine and the parser."""
    from factcheck_checker.verification_prompts import verification_inputs
    from factcheck_checker.verifications import parse_verifications
    from factcheck_engines import checker, checker_lexical, checker_overlap

    answer = {
        "local/checker": checker.answer,
        "local/checker-lexical": checker_lexical.answer,
        "local/checker-overlap": checker_overlap.answer,
    }[engine]
    claim = ExtractedClaim("claim_1", item.claim, item.claim, "TECHNICAL")
    passage = common_pb2.Passage(id="P1", source_title=item.title, text=item.passage)
    inputs = verification_inputs([claim], item.claim, [passage], {"claim_1": ["P1"]})
    [verification] = parse_verifications(answer(inputs), engine, ["claim_1"])
    return verification


def judge_all(engine: str, items: Sequence[Item]) -> tuple[list[Judged], float]:
    started = time.perf_counter()
    judged = []
    for item in items:
        verification = judge(engine, item)
        judged.append(Judged(item, verification.verdict, verification.confidence, verification.correction))
    return judged, time.perf_counter() - started


def figures(judged: Sequence[Judged]) -> dict:
    changed = [j for j in judged if j.item.change != "supported"]
    supported = [j for j in judged if j.item.change == "supported"]
    stated = [j for j in judged if j.item.change in STATED_ELSEWHERE]
    disputed_swaps = [j for j in judged if j.item.change in SWAPS and j.verdict == "DISPUTED"]
    corrected = [j for j in disputed_swaps if j.correction and _holds(j.correction, j.item.passage_value or "")]
    high_wrong = [j for j in judged if j.confidence == "HIGH" and j.verdict != j.item.gold]
    by_change: dict[str, Counter] = defaultdict(Counter)
    for j in judged:
        by_change[j.item.change][j.verdict] += 1
    return {
        "items": len(judged),
        "changed_verified": _share(sum(j.verdict == "VERIFIED" for j in changed), len(changed)),
        "supported_verified": _share(sum(j.verdict == "VERIFIED" for j in supported), len(supported)),
        "stated_disputed": _share(sum(j.verdict == "DISPUTED" for j in stated), len(stated)),
        "corrections_hold_value": _share(len(corrected), len(disputed_swaps)),
        "high_confidence_wrong": len(high_wrong),
        "by_change": {change: dict(by_change[change]) for change in CHANGES if change in by_change},
        "high_wrong_examples": [_example(j) for j in high_wrong[:5]],
    }


def _holds(correction: str, value: str) -> bool:
    return " ".join(value.lower().split()) in " ".join(correction.lower().split())


def _share(part: int, whole: int) -> dict:
    return {"count": part, "of": whole, "share": round(part / whole, 4) if whole else None}


def _example(j: Judged) -> dict:
    return {
        "id": j.item.id,
        "change": j.item.change,
        "claim": j.item.claim,
        "gold": j.item.gold,
        "verdict": j.verdict,
        "confidence": j.confidence,
        "correction": j.correction,
    }


def _percent(share: dict) -> str:
    return "–" if share["share"] is None else f"{100 * share['share']:.1f}% ({share['count']}/{share['of']})"


def print_table(engine: str, split: str, result: dict, seconds: float, show_errors: Sequence[Judged]) -> None:
    print(f"\n{engine} — split {split}: {result['items']} claims, {result['items'] / seconds:.1f} claims/s")
    print(f"  changed copies VERIFIED            {_percent(result['changed_verified'])}   (goal <= 2%)")
    print(f"  supported claims VERIFIED          {_percent(result['supported_verified'])}   (goal >= 85%)")
    print(f"  stated other value → DISPUTED      {_percent(result['stated_disputed'])}   (goal >= 70%)")
    print(f"  DISPUTED swaps, correction holds   {_percent(result['corrections_hold_value'])}   (goal >= 90%)")
    print(f"  wrong at HIGH confidence           {result['high_confidence_wrong']}   (goal 0)")
    print(f"  {'change':<10} {'VERIFIED':>9} {'DISPUTED':>9} {'UNVERIF.':>9}")
    for change, counts in result["by_change"].items():
        print(
            f"  {change:<10} {counts.get('VERIFIED', 0):>9} {counts.get('DISPUTED', 0):>9} "
            f"{counts.get('UNVERIFIABLE', 0):>9}"
        )
    for j in show_errors:
        print(f"    ✗ [{j.item.change}] {j.item.claim!r} → {j.verdict} {j.confidence} {j.correction or ''}")
        print(f"        {j.item.title}: {j.item.passage[:160]!r}")


def errors(judged: Sequence[Judged], limit: int) -> list[Judged]:
    wrong = [
        j
        for j in judged
        if (j.item.gold == "VERIFIED") != (j.verdict == "VERIFIED")
        or (j.item.gold == "DISPUTED" and j.verdict != "DISPUTED")
    ]
    return wrong[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--split", default="all", choices=("dev", "test", "heldout", "all"))
    parser.add_argument("--show-errors", type=int, default=0, help="print this many wrong verdicts per engine")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    splits = ("dev", "test", "heldout") if args.split == "all" else (args.split,)
    report: dict = {}
    for engine in args.engines.split(","):
        for split in splits:
            items = load(split)
            judged, seconds = judge_all(engine, items)
            result = figures(judged)
            result["claims_per_second"] = round(len(items) / seconds, 1)
            report[f"{engine} {split}"] = result
            if not args.json:
                print_table(engine, split, result, seconds, errors(judged, args.show_errors))
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
