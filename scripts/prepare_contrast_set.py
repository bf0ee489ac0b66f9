"""Write bench/data/contrast/contrast.jsonl: claims a short encyclopedic passage supports, and copies of each with
one specific changed, for `python -m bench.contrast`.

    python -m scripts.prepare_contrast_set --mirror /work/.mirror

Source (a training source of the checker, never an evaluation set): SufficientFacts
(copenlu/sufficient_facts @ 1fbc363; MIT, text from Wikipedia via FEVER and VitaminC, CC BY-SA 3.0): the claims
whose full evidence SUPPORTS them, with that evidence sentence rebuilt whole (its `text_orig`, the removed part put
back) under its Wikipedia page title. A claim is kept when the passage states every capitalised word and every
number of the claim (so that the passage, not an inference, supports it), the claim has 4 to 30 words and the
passage at most 120.

Each kept claim gives a `supported` item (gold VERIFIED) and, where the claim allows, changed copies, made by this
script's own rules (not the suite's):
- `year`, `figure`: a year or number the passage states, changed (gold DISPUTED; the passage's value is the one a
  correction must hold);
- `name`: a capitalised name after "in", "by", "from", "of", "for", "at", "on" or "with" that the passage states,
  swapped for one of the same kind: a month for a month, a place for a place of the same category of the suite's
  gazetteer (factcheck/text/data/gazetteer.json: a country for a country), else a name of as many words another
  claim has after the same word (gold DISPUTED, the passage's name to be corrected to);
- `term`: north/south, largest/smallest, first/last, won/lost, increased/decreased and the like swapped for their
  opposite (gold DISPUTED, the original word);
- `negation`: "is"/"was"/"has"/"were"/"are" made "is not" ... (gold DISPUTED; no value to correct);
- `absent`: a detail added that the passage never mentions: a year (where the passage has none) or a place
  (gold UNVERIFIABLE);
- `subject`: the claim's subject (the page title, where the claim opens with it) swapped for another page's title
  (gold UNVERIFIABLE: the passage is about something else).
Each item has a `split`: `dev` (the grounding rules were tuned on it) or `test` (report it), by a hash of the page
title, so a page's items are on one side; and `heldout`: claims FEVER Symmetric (github.com/TalSchuster/FeverSymmetric
@ fa25d17, CC BY-SA 3.0; another training source of the checker) pairs with an evidence sentence that supports
them, without a page title, changed by the same rules, and read only once the rules were settled. Deterministic
(seeded); the output is byte-identical on every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "bench" / "data" / "contrast" / "contrast.jsonl"
REPO = "copenlu+sufficient_facts"
COMMIT = "1fbc36364f5639d294299784958599fda0978472"
PARTS = ("fever", "vitaminc")
# The held-out split's source: FEVER Symmetric (github.com/TalSchuster/FeverSymmetric @ fa25d17; CC BY-SA 3.0).
HELD_OUT_REPO = "TalSchuster+FeverSymmetric"
HELD_OUT_COMMIT = "fa25d17e73ea0694edc78133ec654b9f32f6db73"
HELD_OUT_FILES = (
    "symmetric_v0.1/fever_symmetric_full.jsonl",
    "symmetric_v0.1/fever_symmetric_generated.jsonl",
    "symmetric_v0.2/fever_symmetric_dev.jsonl",
    "symmetric_v0.2/fever_symmetric_test.jsonl",
)
SEED = 20261205
DEV_SHARE = 0.5
# A kept claim's words the passage must hold: the passage states the claim, more or less in its words.
MIN_WORD_SHARE = 0.6
# At most this many copies of one kind of change (drawn with the seed), so no kind outweighs the rest.
MAX_PER_CHANGE = 150

_FEVER_TOKENS = [
    ("-LRB-", "("),
    ("-RRB-", ")"),
    ("-LSB-", "["),
    ("-RSB-", "]"),
    ("-LCB-", "{"),
    ("-RCB-", "}"),
    ("``", '"'),
    ("''", '"'),
    ("--", "-"),
]
_SPACE_BEFORE = re.compile(r" ([,.;:!?%)\]}]|'s\b|'re\b|n't\b|'d\b|'ll\b)")
_SPACE_AFTER = re.compile(r"([(\[{$]) ")
_SPAN = re.compile(r"<span[^>]*>(.*?)</span>")
_TITLE = re.compile(r"^\[\[([^\]]*)\]\]\s*")
_YEAR = re.compile(r"(?<![\d,.])(1[0-9]{3}|20[0-9]{2})(?!\d|,\d|'?s\b)")
# Any year or decade ("1969", "the 1950s", "mid-1970s"): a passage with one mentions a time.
_ANY_YEAR = re.compile(r"(?<!\d)(1[0-9]{3}|20[0-9]{2})(?!\d)")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w,])")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*")
_SLOT = re.compile(r"\b(in|by|from|of|for|at|on|with) ((?:[A-Z][\w'’-]*)(?: [A-Z][\w'’-]*)*)")
_COPULA = re.compile(r"\b(is|was|has|were|are|had)\b")
_OPPOSITES = [
    ("north", "south"),
    ("northern", "southern"),
    ("east", "west"),
    ("eastern", "western"),
    ("largest", "smallest"),
    ("biggest", "smallest"),
    ("highest", "lowest"),
    ("tallest", "shortest"),
    ("longest", "shortest"),
    ("oldest", "youngest"),
    ("first", "last"),
    ("won", "lost"),
    ("increased", "decreased"),
    ("before", "after"),
    ("larger", "smaller"),
    ("higher", "lower"),
    ("older", "younger"),
    ("male", "female"),
    ("public", "private"),
    ("opened", "closed"),
]
_OPPOSITE = {a: b for a, b in _OPPOSITES} | {b: a for a, b in _OPPOSITES}
_PRONOUNS = frozenset("i you he she it we they me him her us them my your his its our their this that".split())
_ABSENT_PLACES = ["in Norway", "in Peru", "in Vietnam", "in Kenya", "in Portugal", "in Canada", "in Egypt"]


def detokenize(text: str) -> str:
    for token, plain in _FEVER_TOKENS:
        text = text.replace(token, plain)
    text = _SPACE_BEFORE.sub(r"\1", text)
    text = _SPACE_AFTER.sub(r"\1", text)
    return " ".join(text.split())


def git_show(mirror: Path, path: str, repo: str = REPO, commit: str = COMMIT) -> str:
    gitdir = mirror / repo / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def held_out_pairs(mirror: Path) -> list[dict]:
    """(claim, "", evidence sentence) for every FEVER Symmetric pair that SUPPORTS its claim, one per claim: the
    `heldout` split, from another source than the other two, read only to report (no page title)."""
    pairs: dict[str, dict] = {}
    for path in HELD_OUT_FILES:
        for line in git_show(mirror, path, HELD_OUT_REPO, HELD_OUT_COMMIT).splitlines():
            row = json.loads(line)
            if (row.get("label") or row.get("gold_label")) != "SUPPORTS":
                continue
            evidence = row.get("evidence") or row.get("evidence_sentence") or ""
            claim = detokenize(row["claim"])
            pairs.setdefault(
                claim, {"claim": claim, "title": "", "passage": detokenize(evidence), "source": "fever-symmetric"}
            )
    return [pairs[claim] for claim in sorted(pairs)]


def supported_pairs(mirror: Path) -> list[dict]:
    """(claim, title, passage) for every claim whose whole evidence sentence SUPPORTS it, one per claim."""
    pairs: dict[str, dict] = {}
    for part in PARTS:
        for line in git_show(mirror, f"data/sufficient_facts/{part}_sufficient_facts.jsonl").splitlines():
            row = json.loads(line)
            if row.get("label_before") != "SUPPORTS" or len(row.get("evidence") or []) != 1:
                continue
            title_match = _TITLE.match(row["text_orig"])
            if not title_match:
                continue
            title = detokenize(title_match.group(1).replace("_", " "))
            passage = detokenize(_SPAN.sub(r"\1", row["text_orig"][title_match.end() :]))
            claim = detokenize(row["claim"])
            pairs.setdefault(claim, {"claim": claim, "title": title, "passage": passage, "source": part})
    return [pairs[claim] for claim in sorted(pairs)]


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w.,$]){re.escape(word)}(?![\w]|[.,]\d)", text) is not None


def states_every_specific(claim: str, title: str, passage: str) -> bool:
    held = f"{title} {passage}".lower()
    words = [m.group() for m in _CAPITALISED.finditer(claim)]
    if words and claim.startswith(words[0]) and words[0].lower() in _STOP:
        words = words[1:]  # "The", "In": capitalised only because it opens the claim
    numbers = [m.group() for m in _NUMBER.finditer(claim)]
    return all(w.lower().strip("'’") in held for w in words) and all(n in passage for n in numbers)


def keep(pair: dict) -> bool:
    claim_words, passage_words = len(pair["claim"].split()), len(pair["passage"].split())
    return (
        4 <= claim_words <= 30
        and passage_words <= 120
        and "[[" not in pair["passage"]  # a second page's evidence glued on
        and states_every_specific(**_texts(pair))
        and word_share(pair["claim"], f"{pair['title']} {pair['passage']}") >= MIN_WORD_SHARE
    )


_STOP = frozenset(
    "a an the of in on at by for to from with and or is was are were be been has have had it its this that as "
    "which who not".split()
)


def word_share(claim: str, text: str) -> float:
    """The share of the claim's words (stopwords aside, a plural or past -s/-ed/-d dropped) the text holds."""

    def bare(word: str) -> str:
        for suffix in ("ed", "es", "s", "d"):
            if word.endswith(suffix) and len(word) > len(suffix) + 3:
                return word[: -len(suffix)]
        return word

    words = [bare(w) for w in re.findall(r"[a-z0-9]+", claim.lower()) if w not in _STOP]
    held = {bare(w) for w in re.findall(r"[a-z0-9]+", text.lower())}
    return sum(w in held for w in words) / len(words) if words else 0.0


def _texts(pair: dict) -> dict:
    return {"claim": pair["claim"], "title": pair["title"], "passage": pair["passage"]}


def split_of(title: str) -> str:
    digest = hashlib.sha256(f"contrast-split:{title}".encode()).digest()
    return "dev" if digest[0] / 256 < DEV_SHARE else "test"


def changed_copies(pair: dict, rng: random.Random, slot_names: dict[str, list[str]], titles: list[str]) -> list[dict]:
    claim, passage = pair["claim"], pair["passage"]
    copies = []

    def copy(kind: str, new_claim: str, gold: str, original: str | None) -> None:
        if new_claim != claim:
            copies.append({"change": kind, "claim": new_claim, "gold": gold, "passage_value": original})

    years = [m for m in _YEAR.finditer(claim) if _has_word(passage, m.group())]
    if years:
        m = rng.choice(years)
        stated = {int(y) for y in _YEAR.findall(passage)}
        # A bound ("after 1995") stays true when moved away from the passage's year: move it past it.
        before = claim[max(0, m.start() - 30) : m.start()].lower()
        steps = range(-12, 13)
        if re.search(r"\b(after|since)\b[^.,;]*$", before):
            steps = range(1, 13)
        elif re.search(r"\b(before|until|by|prior to)\b[^.,;]*$", before):
            steps = range(-12, 0)
        candidates = [int(m.group()) + d for d in steps if d and int(m.group()) + d not in stated]
        new = str(rng.choice(candidates))
        copy("year", claim[: m.start()] + new + claim[m.end() :], "DISPUTED", m.group())
    figures = [m for m in _NUMBER.finditer(claim) if not _YEAR.fullmatch(m.group()) and _has_word(passage, m.group())]
    if figures:
        m = rng.choice(figures)
        value = float(m.group().replace(",", ""))
        # A bound ("more than 3 million") stays true when moved away from the passage's value: move it past it.
        before = claim[max(0, m.start() - 12) : m.start()].lower()
        if re.search(r"(more than|over|at least|above)\s*\$?$", before):
            changed = value * rng.choice([2, 3])
        elif re.search(r"(less than|under|at most|below|fewer than)\s*\$?$", before):
            changed = value * 0.5
        else:
            changed = value * rng.choice([2, 3, 0.5]) if value > 3 else value + rng.choice([2, 3, 4])
        text = f"{changed:,.0f}" if "," in m.group() else (f"{changed:g}" if "." in m.group() else str(int(changed)))
        copy("figure", claim[: m.start()] + text + claim[m.end() :], "DISPUTED", m.group())
    # Not a name inside the page's own title ("Bank of America"): changing that changes the subject ("subject").
    slots = [
        m
        for m in _SLOT.finditer(claim)
        if _has_word(passage, m.group(2)) and m.start(2) > 0 and m.group(2).lower() not in pair["title"].lower()
    ]
    if slots:
        m = rng.choice(slots)
        held = f"{pair['title']} {passage}".lower()
        others = [n for n in same_kind_names(m.group(2), m.group(1), slot_names) if n.lower() not in held]
        if others:
            new = rng.choice(others)
            copy("name", claim[: m.start(2)] + new + claim[m.end(2) :], "DISPUTED", m.group(2))
    terms = [m for m in re.finditer(r"\b[a-z]+\b", claim) if m.group() in _OPPOSITE]
    if terms:
        m = rng.choice(terms)
        copy("term", claim[: m.start()] + _OPPOSITE[m.group()] + claim[m.end() :], "DISPUTED", m.group())
    copula = _COPULA.search(claim)
    if copula and " not " not in claim and "n't" not in claim:
        copy("negation", claim[: copula.end()] + " not" + claim[copula.end() :], "DISPUTED", None)
    body = claim.rstrip(". ")
    if not _ANY_YEAR.search(passage) and not _ANY_YEAR.search(claim):
        copy("absent", f"{body} in {rng.randint(1900, 2015)}.", "UNVERIFIABLE", None)
    elif not mentions_a_place(f"{pair['title']} {passage} {claim}"):
        copy("absent", f"{body} {rng.choice(_ABSENT_PLACES)}.", "UNVERIFIABLE", None)
    title = pair["title"]
    if claim.startswith(title + " ") and len(title.split()) <= 4:
        other = rng.choice([t for t in titles if t != title and t.lower() not in passage.lower()])
        copy("subject", other + claim[len(title) :], "UNVERIFIABLE", None)
    return copies


_MONTHS = "January February March April May June July August September October November December".split()


@lru_cache(maxsize=1)
def _gazetteer() -> dict[str, dict]:
    return json.loads((ROOT / "factcheck" / "text" / "data" / "gazetteer.json").read_text(encoding="utf-8"))["entries"]


def same_kind_names(name: str, slot: str, slot_names: dict[str, list[str]]) -> list[str]:
    """Names of the same kind as `name`, to swap it for: a month for a month, a place of the gazetteer's category
    for a place (a country for a country), else names other claims have after the same word with as many words
    (a person's "First Last" for another's)."""
    if name in _MONTHS:
        return [m for m in _MONTHS if m != name]
    entry = _gazetteer().get(name)
    if entry is not None:
        return sorted(n for n, e in _gazetteer().items() if e["category"] == entry["category"] and n != name)
    width = len(name.split())
    return [
        n
        for n in slot_names.get(slot, [])
        if len(n.split()) == width
        and len(n) > 2  # not "Dr", "St"
        and n.split()[0].lower() not in _PRONOUNS
        and n not in _MONTHS
        and n not in _gazetteer()
        and not any(ch.isdigit() for ch in n)
    ]


@lru_cache(maxsize=1)
def _place_words() -> frozenset[str]:
    """Every country, city, region and continent the gazetteer knows, with its demonyms, in lower case: a passage
    holding none of them mentions no place, so a place added to its claim is a detail it never mentions."""
    words: set[str] = set()
    for name, entry in _gazetteer().items():
        if entry["category"] in ("country", "city", "region", "continent"):
            words.update(w.lower() for w in [name, *entry["aliases"], *entry["demonyms"]])
    return frozenset(words)


def mentions_a_place(text: str) -> bool:
    lowered = f" {' '.join(re.findall(r'[a-z]+', text.lower()))} "
    return any(f" {word} " in lowered for word in _place_words())


def build(mirror: Path) -> list[dict]:
    pairs = [p for p in supported_pairs(mirror) if keep(p)]
    known = {p["claim"] for p in pairs}
    held_out = [p for p in held_out_pairs(mirror) if keep(p) and p["claim"] not in known]
    # Each source is changed with its own draws and its own pools of names, so one never moves the other.
    return contrast_items(pairs, random.Random(SEED), "c") + contrast_items(held_out, random.Random(SEED + 1), "h")


def contrast_items(pairs: list[dict], rng: random.Random, prefix: str) -> list[dict]:
    slot_names: dict[str, list[str]] = {}
    for pair in pairs:
        for m in _SLOT.finditer(pair["claim"]):
            if m.start(2) > 0:
                slot_names.setdefault(m.group(1), []).append(m.group(2))
    slot_names = {word: sorted(set(names)) for word, names in slot_names.items()}
    titles = sorted({p["title"] for p in pairs if len(p["title"].split()) <= 4 and "(" not in p["title"]})
    items: list[dict] = []
    copies: list[dict] = []
    for index, pair in enumerate(pairs):
        base = {
            "id": f"{prefix}{index:04d}",
            "title": pair["title"],
            "passage": pair["passage"],
            "source": pair["source"],
            "split": "heldout" if pair["source"] == "fever-symmetric" else split_of(pair["title"]),
        }
        items.append({**base, "change": "supported", "claim": pair["claim"], "gold": "VERIFIED", "passage_value": None})
        for number, changed in enumerate(changed_copies(pair, rng, slot_names, titles)):
            copies.append({**base, "id": f"{base['id']}-{number}", **changed})
    for change in sorted({c["change"] for c in copies}):
        of_change = [c for c in copies if c["change"] == change]
        kept = of_change if len(of_change) <= MAX_PER_CHANGE else rng.sample(of_change, MAX_PER_CHANGE)
        items += sorted(kept, key=lambda c: c["id"])
    return items


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of owner+name/repo clones")
    args = parser.parse_args(argv)
    items = build(args.mirror)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with OUTPUT.open("w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")
    counts: dict[str, int] = {}
    for item in items:
        counts[item["change"]] = counts.get(item["change"], 0) + 1
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(items)} items {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
