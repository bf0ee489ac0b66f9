"""Claim-level citations: citation precision, the correction pass and numeric QA, offline.

1. Citation precision on Factcheck-Bench's claim-evidence pairs (`subtask3_claim_evidence_stance.jsonl`,
   under $FACTCHECK_DATA_DIR, see bench/data.py), split by claim as bench/checker_accuracy.py splits it (the
   verifier behind local/checker was fitted on the train split: the headline is the held-out test split).
   Each claim is checked once with all its evidence passages as the run's pool, through the code a run
   uses: the verification prompt with the SUPPORT section, `local/checker`'s answer, the parser, the
   verbatim-quote check (services/checker/factcheck_checker/citations.py) and the per-checker tier rules
   (services/checker/factcheck_checker/support.py). A claim's primary citation is its first kept citation when its tier
   is SUPPORTED or PARTIAL. Precision: the share of primary citations whose quote occurs verbatim in
   the cited passage (by construction: the figure checks it) and whose passage supports the claim
   (gold stance completely-support or partially-support; "strict": completely-support only).
   Baseline: cite, for every claim, the passage with the highest word overlap with the claim.
2. The correction pass over the same pools (`local/checker` answering the review prompt, checked by
   services/checker/factcheck_checker/review.py): how often each correction type fires, and for REPLACE whether the new
   passage supports the claim better than the old one (gold stances), and precision after corrections.
3. Numeric QA on the generated set (bench/numeric_qa_set.py, 620 items): claim → numeric profile (entity)
   → `answer_from_text` on the passage → `verify_answers`; precision and recall of `match`, per variant.
   Baseline: match when any figure of the passage agrees with the claim's (no entity or year check).

Run from the repository root: `python -m bench.citations`.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass

from bench import numeric_qa_set
from bench.checker_accuracy import STANCE_FILE, DataMissingError, data_dir, is_test_claim
from factcheck.core.claim_profile import numeric_profile
from factcheck.core.domain import ExtractedClaim
from factcheck.core.numeric_qa import answer_from_text, verify_answers
from factcheck.text.numbers import compare_figures, figure_of, find_quantities
from factcheck.v1 import citations_pb2, common_pb2
from factcheck_checker.citations import resolve_citations
from factcheck_checker.review import check_review, parse_review, review_inputs
from factcheck_checker.support import claim_supports
from factcheck_checker.verification_prompts import verification_inputs
from factcheck_checker.verifications import parse_verifications
from factcheck_engines import checker as local_checker
from factcheck_engines.evidence_windows import word_overlap

SUPPORTING = {"completely-support", "partially-support"}
MAX_PASSAGES_PER_CLAIM = 10


@dataclass
class ClaimPool:
    claim: str
    passages: list[common_pb2.Passage]
    stances: dict[str, str]  # passage id → gold stance


def load_pools() -> list[ClaimPool]:
    path = data_dir() / STANCE_FILE
    if not path.is_file():
        raise DataMissingError(f"benchmark data not found: {path}")
    grouped: dict[str, list[tuple[str, str]]] = defaultdict(list)
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                grouped[row["claim"]].append((row["evidence"], row["stance"]))
    pools = []
    for claim, rows in grouped.items():
        passages, stances = [], {}
        for index, (text, stance) in enumerate(rows[:MAX_PASSAGES_PER_CLAIM], start=1):
            passage_id = f"P{index}"
            passages.append(
                common_pb2.Passage(
                    id=passage_id,
                    source_id=f"s{index}",
                    source_title=f"Evidence {index}",
                    text=text,
                    end_offset=len(text),
                )
            )
            stances[passage_id] = stance
        pools.append(ClaimPool(claim, passages, stances))
    return pools


@dataclass
class Cited:
    tier: str  # supported / partial / unsupported / contradicted / abstained
    passage_id: str | None
    quote: str


TIER_NAMES = {1: "supported", 2: "partial", 3: "unsupported", 4: "contradicted"}


def cite(pool: ClaimPool) -> Cited:
    """One checker (local/checker) through the run's code path: inputs, answer, parser, quote check, tier rules."""
    claim = ExtractedClaim("claim_1", pool.claim, pool.claim, "TECHNICAL")
    listing = {"claim_1": [p.id for p in pool.passages]}
    inputs = verification_inputs([claim], pool.claim, pool.passages, listing, support_tiers=True)
    words: dict[str, str] = {}
    parsed = parse_verifications(local_checker.answer(inputs), "local/checker", ["claim_1"], supports=words)
    resolved, _ = resolve_citations(parsed, {p.id: p for p in pool.passages})
    [support] = claim_supports(resolved, words)
    tier = "abstained" if support.abstained else TIER_NAMES[support.tier]
    citation = resolved[0].citations[0] if resolved[0].citations else None
    return Cited(tier, citation.passage_id if citation else None, citation.quote if citation else "")


def review(pool: ClaimPool, cited: Cited):
    """The correction pass (local/checker on the review prompt, then the service's checks)."""
    item = citations_pb2.ReviewClaim(
        claim=common_pb2.Claim(id="claim_1", claim=pool.claim),
        cited_span_ids=[cited.passage_id] if cited.passage_id else [],
    )
    spans = [
        citations_pb2.PoolSpan(id=p.id, source_id=p.source_id, source_title=p.source_title, text=p.text)
        for p in pool.passages
    ]
    corrections, questions = parse_review(local_checker.answer(review_inputs([item], spans)), ["claim_1"])
    kept, _, dropped = check_review(corrections, questions, {"claim_1": item}, {s.id: s for s in spans})
    return (kept[0] if kept else None), dropped


def _precision(hits: int, total: int) -> str:
    return f"{hits / total * 100:.1f}% ({hits}/{total})" if total else "– (0)"


def citation_figures(pools: list[ClaimPool]) -> dict:
    primary = verbatim = supporting = strict = 0
    baseline_hits = baseline_strict = 0
    tiers: Counter[str] = Counter()
    types: Counter[str] = Counter()
    replace_before = replace_after = replace_total = 0
    remove_right = remove_total = alternate_support = alternate_total = dropped_total = 0
    after_primary = after_support = 0
    started = time.perf_counter()
    for pool in pools:
        cited = cite(pool)
        tiers[cited.tier] += 1
        passages = {p.id: p for p in pool.passages}
        is_primary = cited.tier in ("supported", "partial") and cited.passage_id is not None
        if is_primary and cited.passage_id is not None:
            primary += 1
            verbatim += cited.quote in passages[cited.passage_id].text
            supporting += pool.stances[cited.passage_id] in SUPPORTING
            strict += pool.stances[cited.passage_id] == "completely-support"
        best = max(pool.passages, key=lambda p: word_overlap(pool.claim, p.text))
        baseline_hits += pool.stances[best.id] in SUPPORTING
        baseline_strict += pool.stances[best.id] == "completely-support"

        correction, dropped = review(pool, cited)
        dropped_total += dropped
        kind = (
            citations_pb2.CorrectionType.Name(correction.correction_type).removeprefix("CORRECTION_TYPE_").lower()
            if correction
            else "keep"
        )
        types[kind] += 1
        final = cited.passage_id if is_primary else None
        if kind == "replace":
            replace_total += 1
            replace_before += bool(cited.passage_id) and pool.stances.get(cited.passage_id or "") in SUPPORTING
            replace_after += pool.stances[correction.corrected_span_id] in SUPPORTING
            final = correction.corrected_span_id
        elif kind == "remove":
            remove_total += 1
            remove_right += pool.stances.get(cited.passage_id or "") not in SUPPORTING
            final = None
        elif kind == "add_alternate":
            alternate_total += 1
            alternate_support += pool.stances[correction.corrected_span_id] in SUPPORTING
        if final is not None:
            after_primary += 1
            after_support += pool.stances[final] in SUPPORTING
    elapsed = time.perf_counter() - started
    return {
        "claims": len(pools),
        "passages": sum(len(p.passages) for p in pools),
        "claims_with_support": sum(any(s in SUPPORTING for s in p.stances.values()) for p in pools),
        "tiers": dict(tiers),
        "primary": primary,
        "verbatim": _precision(verbatim, primary),
        "precision": _precision(supporting, primary),
        "precision_strict": _precision(strict, primary),
        "baseline": _precision(baseline_hits, len(pools)),
        "baseline_strict": _precision(baseline_strict, len(pools)),
        "corrections": dict(types),
        "dropped_corrections": dropped_total,
        "replace_support_before": _precision(replace_before, replace_total),
        "replace_support_after": _precision(replace_after, replace_total),
        "remove_right": _precision(remove_right, remove_total),
        "alternate_support": _precision(alternate_support, alternate_total),
        "precision_after": _precision(after_support, after_primary),
        "seconds": elapsed,
    }


def numeric_figures(items: list[dict]) -> dict:
    confusion: Counter[tuple[bool, bool]] = Counter()
    baseline: Counter[tuple[bool, bool]] = Counter()
    by_variant: dict[str, Counter] = defaultdict(Counter)
    started = time.perf_counter()
    for item in items:
        profile = numeric_profile(item["claim"])
        assert profile is not None and profile.figure is not None  # (the set's claims are numeric)
        answer = answer_from_text(item["claim"], profile.entity, item["evidence"])
        predicted = verify_answers("", profile.figure.raw, answer or "").match
        confusion[(item["match"], predicted)] += 1
        by_variant[item["variant"]][predicted == item["match"]] += 1
        any_agree = any(compare_figures(profile.figure, figure_of(q)).match for q in find_quantities(item["evidence"]))
        baseline[(item["match"], any_agree)] += 1
    elapsed = time.perf_counter() - started

    def scores(matrix: Counter) -> dict:
        tp, fp, fn = matrix[(True, True)], matrix[(False, True)], matrix[(True, False)]
        return {
            "precision": _precision(tp, tp + fp),
            "recall": _precision(tp, tp + fn),
            "accuracy": _precision(tp + matrix[(False, False)], sum(matrix.values())),
        }

    return {
        "items": len(items),
        "positives": sum(1 for i in items if i["match"]),
        "qa": scores(confusion),
        "baseline": scores(baseline),
        "variants": {v: _precision(c[True], c[True] + c[False]) for v, c in sorted(by_variant.items())},
        "seconds": elapsed,
    }


def evaluate() -> dict:
    pools = load_pools()
    test = [p for p in pools if is_test_claim(p.claim)]
    items = numeric_qa_set.generate()
    numeric_qa_set.write(items)
    return {"test": citation_figures(test), "all": citation_figures(pools), "numeric": numeric_figures(items)}


def format_report(figures: dict) -> str:
    lines = ["## Claim-level citations (offline: local/checker)", ""]
    lines += [
        "Factcheck-Bench claim-evidence pairs grouped by claim (each claim checked once against all its passages), "
        "split by claim as bench/checker_accuracy.py splits it.",
        "",
        "| split | claims | passages | claims with a supporting passage | tiers | primary citations | quote verbatim in source | precision (supports the claim) | strict (completely supports) | baseline: best word overlap | strict baseline |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("test", "all"):
        f = figures[name]
        tiers = ", ".join(f"{k} {v}" for k, v in sorted(f["tiers"].items()))
        label = "test (held out)" if name == "test" else "all (includes the verifier's train split)"
        lines.append(
            f"| {label} | {f['claims']} | {f['passages']} | {f['claims_with_support']} | {tiers} | {f['primary']} | "
            f"{f['verbatim']} | {f['precision']} | {f['precision_strict']} | {f['baseline']} | {f['baseline_strict']} |"
        )
    lines += [
        "",
        "The correction pass (local/checker on the review prompt; the service drops quotes not in their span):",
        "",
        "| split | keep | replace | remove | add_alternate | dropped | replaced: old passage supports | replaced: new passage supports | removals of a non-supporting citation | alternates that support | precision after corrections |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in ("test", "all"):
        f = figures[name]
        c = f["corrections"]
        lines.append(
            f"| {name} | {c.get('keep', 0)} | {c.get('replace', 0)} | {c.get('remove', 0)} | {c.get('add_alternate', 0)} | "
            f"{f['dropped_corrections']} | {f['replace_support_before']} | {f['replace_support_after']} | {f['remove_right']} | "
            f"{f['alternate_support']} | {f['precision_after']} |"
        )
    n = figures["numeric"]
    lines += [
        "",
        f"Numeric QA on the generated set (bench/numeric_qa_set.py: {n['items']} claim/evidence pairs, {n['positives']} "
        "with the same figure for the same entity and year):",
        "",
        "| method | precision of match | recall of match | accuracy |",
        "|---|---|---|---|",
        f"| QA (entity and year checked, normalised, 2% + rounding tolerance) | {n['qa']['precision']} | {n['qa']['recall']} | {n['qa']['accuracy']} |",
        f"| baseline: any figure of the passage agrees | {n['baseline']['precision']} | {n['baseline']['recall']} | {n['baseline']['accuracy']} |",
        "",
        "Per variant (share answered correctly): " + ", ".join(f"{k} {v}" for k, v in n["variants"].items()) + ".",
        "",
        f"Time: {figures['test']['seconds']:.1f} s for the test split's claims (verification and review), "
        f"{n['seconds']:.2f} s for the numeric set.",
    ]
    return "\n".join(lines)


def main() -> int:
    try:
        figures = evaluate()
    except DataMissingError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_report(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
