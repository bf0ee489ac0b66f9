"""Write the labelled sets `factcheck eval` ships: factcheck/evaluation/data/<name>.jsonl.gz.

Each set is gzipped JSONL in the items-file format (factcheck/evaluation/sets.py), written
deterministically (sorted keys, gzip mtime 0), so running this again on the same data gives the same
bytes. Beside them: each upstream licence (LICENSES/) and README.md, the provenance.

- factcheck-bench: the TEST split of Factcheck-Bench's claim/evidence stance pairs, split exactly as
  bench/checker_accuracy.py splits it (whose train split fixes the word-overlap threshold and trains the
  verifier), one item per (claim, passage) pair.
- wice: bench/data/wice/claim_test.jsonl, each claim with its cited article cut into passages by the
  knowledge store's chunker (as bench/checker_accuracy.py reads it), at most MAX_EVIDENCE_PASSAGES kept.
- climate-fever: bench/data/climate-fever/climate-fever.jsonl, one item per (claim, evidence sentence).

These are EVALUATION sets: nothing may train, tune, select or calibrate on them.

Run from the repository root: `python -m scripts.prepare_eval_sets` (Factcheck-Bench from
$FACTCHECK_DATA_DIR, default shared/data beside the repository folder).
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import sys
from collections import Counter
from pathlib import Path

from bench.checker_accuracy import GOLD_VERDICT, SPLIT_SALT, TEST_FRACTION, data_dir, is_test_claim, load_pairs
from bench.public_benchmarks import CLIMATE_FEVER_FILE, WICE_FILE, load_climate_fever, load_wice
from factcheck.evaluation.sets import LABELS, MAX_EVIDENCE_PASSAGES, SHIPPED_SETS, parse_item
from factcheck_engines.evidence_windows import word_overlap

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "factcheck" / "evaluation" / "data"
WICE_VERDICT = {"supported": "VERIFIED", "partially_supported": "UNVERIFIABLE", "not_supported": "UNVERIFIABLE"}


def factcheck_bench_items() -> list[dict]:
    """The test split's (claim, passage) pairs; N in "fcb-N" is the pair's place (1-based) in the upstream file."""
    return [
        {
            "id": f"fcb-{index}",
            "claim": pair.claim,
            "evidence": [{"title": "", "text": pair.evidence}],
            "label": pair.gold,
        }
        for index, pair in enumerate(load_pairs(), 1)
        if is_test_claim(pair.claim)
    ]


def wice_items() -> tuple[list[dict], int]:
    """Every claim with its article's passages, and how many articles were cut to MAX_EVIDENCE_PASSAGES."""
    items, trimmed = [], 0
    for claim in load_wice():
        passages = claim.passages()
        if len(passages) > MAX_EVIDENCE_PASSAGES:
            trimmed += 1
            # The passages sharing most words with the claim; ties and the kept order go by the article.
            ranked = sorted(range(len(passages)), key=lambda i: (-word_overlap(claim.claim, passages[i].text), i))
            passages = [passages[i] for i in sorted(ranked[:MAX_EVIDENCE_PASSAGES])]
        items.append(
            {
                "id": f"wice-{claim.id}",
                "claim": claim.claim,
                "evidence": [{"title": "", "text": p.text} for p in passages],
                "label": WICE_VERDICT[claim.label],
            }
        )
    return items, trimmed


def climate_fever_items() -> list[dict]:
    """Every (claim, evidence sentence) pair: "cf-<claim_id>-<k>", k the sentence's place (1-5) among the claim's."""
    items, seen = [], Counter[str]()
    for pair in load_climate_fever():
        seen[pair.claim_id] += 1
        items.append(
            {
                "id": f"cf-{pair.claim_id}-{seen[pair.claim_id]}",
                "claim": pair.claim,
                "evidence": [{"title": pair.article, "text": pair.evidence}],
                "label": pair.gold,
            }
        )
    return items


def write_set(name: str, items: list[dict]) -> Path:
    """`items` as gzipped JSONL, each checked by the loader's own parser first (the same limits)."""
    for number, item in enumerate(items, 1):
        parse_item(item, f"{name} item {number}")
    text = "".join(json.dumps(item, sort_keys=True, ensure_ascii=False) + "\n" for item in items)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(text.encode("utf-8"))
    path = OUT / f"{name}.jsonl.gz"
    path.write_bytes(buffer.getvalue())
    return path


LICENCE_FILES = {
    "factcheck-bench-LICENSE": lambda: data_dir() / "factcheck-bench" / "LICENSE",
    "wice-LICENSE.md": lambda: WICE_FILE.parent / "LICENSE.md",
    "climate-fever-README.md": lambda: CLIMATE_FEVER_FILE.parent / "README.md",
    "climate-fever-UPSTREAM_README.md": lambda: CLIMATE_FEVER_FILE.parent / "UPSTREAM_README.md",
}


def readme(counts: dict[str, Counter[str]], wice_trimmed: int) -> str:
    def figures(name: str) -> str:
        labels = ", ".join(f"{label} {counts[name][label]:,}" for label in LABELS)
        return f"{sum(counts[name].values()):,} items ({labels})"

    return f"""# The shipped evaluation sets

Written by `scripts/prepare_eval_sets.py` (run it again to rebuild them: same data, same bytes). Each
`<name>.jsonl.gz` is gzipped JSONL in the items-file format of docs/evaluation.md: `id`, `claim`,
`evidence` (`title`, `text`) and `label` (VERIFIED, DISPUTED or UNVERIFIABLE).

**Evaluation sets only.** Nothing may train, tune, select or calibrate on them (models, thresholds,
combiners, prefilter settings): they are how models are judged. Training scripts must not read this
folder, `bench/data/wice/` or `bench/data/climate-fever/`, nor Factcheck-Bench's test split.

## factcheck-bench

{figures("factcheck-bench")}. Factcheck-Bench (https://github.com/yuxiaw/Factcheck-GPT), file
`subtask3_claim_evidence_stance.jsonl` (shared/data/factcheck-bench). Licence: Apache-2.0
(`LICENSES/factcheck-bench-LICENSE`). Only the TEST split of bench/checker_accuracy.py: a claim is a
test claim when SHA-256("{SPLIT_SALT}" + claim) falls in the first {TEST_FRACTION:.0%} of the hash range; the
train split is what the verifier and the word-overlap threshold were fitted on, so it is not shipped.
One item per (claim, evidence passage) pair, `fcb-N` with N the pair's place in the upstream file.
Gold: {", ".join(f"{stance} → {verdict}" for stance, verdict in GOLD_VERDICT.items())}.

## wice

{figures("wice")}. WiCE's claim-level test split (https://github.com/ryokamoi/wice; bench/data/wice/README.md
names the commit). Licence: the annotations ODC-BY 1.0, the article text Wikipedia's (CC BY-SA) and
Common Crawl's terms (`LICENSES/wice-LICENSE.md`). Each claim (`wice-<upstream id>`) comes with the article
it cites, its sentences one a line cut into passages by the knowledge store's chunker
(factcheck_gateway/knowledge/chunking.py), as bench/checker_accuracy.py reads it. An item holds at most
{MAX_EVIDENCE_PASSAGES} passages: {wice_trimmed} articles had more, and for those the {MAX_EVIDENCE_PASSAGES} passages sharing the most
words with the claim (word overlap) are kept, in article order. Gold: supported → VERIFIED;
partially_supported and not_supported → UNVERIFIABLE. WiCE's "not supported" means the cited article
does not support the claim, not that the claim is false, so the set has no DISPUTED item.

## climate-fever

{figures("climate-fever")}. CLIMATE-FEVER (https://github.com/tdiggelm/climate-fever-dataset;
bench/data/climate-fever/README.md names the commit). Licence: the upstream repository names none
(`LICENSES/climate-fever-UPSTREAM_README.md`, its README, asks users to cite Diggelmann et al., 2020,
arXiv:2012.00614); the evidence sentences are English Wikipedia text (CC BY-SA). Shipped for evaluation,
with attribution, as the authors distribute it (`LICENSES/climate-fever-README.md`). One item per (claim,
evidence sentence) pair, `cf-<claim_id>-<k>`, the sentence's Wikipedia article as its title. Gold:
SUPPORTS → VERIFIED, REFUTES → DISPUTED, NOT_ENOUGH_INFO → UNVERIFIABLE.
"""


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    licences = OUT / "LICENSES"
    licences.mkdir(exist_ok=True)
    wice, wice_trimmed = wice_items()
    sets = {"factcheck-bench": factcheck_bench_items(), "wice": wice, "climate-fever": climate_fever_items()}
    assert set(sets) == set(SHIPPED_SETS), "the shipped sets and SHIPPED_SETS must name the same sets"
    counts = {name: Counter(item["label"] for item in items) for name, items in sets.items()}
    for name, items in sets.items():
        path = write_set(name, items)
        by_label = ", ".join(f"{label} {counts[name][label]}" for label in LABELS)
        print(f"{name}: {len(items)} items ({by_label}); {path.relative_to(ROOT)} {path.stat().st_size:,} bytes")
        if len(items) != SHIPPED_SETS[name].items:
            print(f"  SHIPPED_SETS[{name!r}].items says {SHIPPED_SETS[name].items}: update it", file=sys.stderr)
    print(f"wice: {wice_trimmed} articles cut to {MAX_EVIDENCE_PASSAGES} passages")
    for target, source in LICENCE_FILES.items():
        shutil.copyfile(source(), licences / target)
    (OUT / "README.md").write_text(readme(counts, wice_trimmed), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
