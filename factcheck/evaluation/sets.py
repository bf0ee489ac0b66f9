"""Labelled sets: claims with their evidence passages and gold verdicts, shipped or the caller's own.

A labelled item is one claim, the passages the checker is to judge it against, and the verdict a
person gave it (VERIFIED, DISPUTED or UNVERIFIABLE). The shipped sets (`SHIPPED_SETS`) are gzipped
JSONL in the package (`data/`, written by scripts/prepare_eval_sets.py); a caller's own set is a
JSONL file read by `read_items_file`. Both are parsed by `parse_item`, so both obey the same limits,
which keep every item inside what the checker service accepts. Nothing here downloads anything.

Each shipped set has a fixed dev half and test half ("wice:dev", "wice:test": `split_of`), by a hash of
each item's claim, so that the items of one claim (Factcheck-Bench's and CLIMATE-FEVER's several passages
per claim) are in one half. A decision threshold may be fitted on a dev half only; the test half is what
it is then measured on, and nothing that fits reads it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable, Sequence

LABELS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
# Other spellings of the gold verdicts: FEVER's (and CLIMATE-FEVER's), read case-insensitively like LABELS.
LABEL_ALIASES = {
    "SUPPORTED": "VERIFIED",
    "SUPPORTS": "VERIFIED",
    "REFUTED": "DISPUTED",
    "REFUTES": "DISPUTED",
    "NOT_ENOUGH_INFO": "UNVERIFIABLE",
    "NEI": "UNVERIFIABLE",
}

# Limits on one set. The claim and passage limits are the checker's (MAX_CLAIM_CHARS of its council
# summary and the gateway's entailment mode, MAX_PASSAGE_CHARS of factcheck_checker/checker_service.py), so an item that
# loads is one the checker accepts; 20 passages is the gateway's MAX_SOURCES, and 20 × 20,000 characters
# stay far inside a gRPC message.
MAX_ITEMS_PER_SET = 20_000
MAX_CLAIM_CHARS = 2_000
MAX_EVIDENCE_PASSAGES = 20
MAX_PASSAGE_CHARS = 20_000
MAX_TITLE_CHARS = 500
MAX_ID_CHARS = 200
MAX_LABEL_CHARS = 100


@dataclass(frozen=True)
class LabelledEvidence:
    title: str
    text: str


@dataclass(frozen=True)
class LabelledItem:
    id: str
    claim: str
    evidence: tuple[LabelledEvidence, ...]
    label: str  # one of LABELS


@dataclass(frozen=True)
class SetInfo:
    name: str
    title: str
    description: str
    licence: str
    items: int  # how many items the shipped file holds
    dev_items: int = 0  # of those, in the dev half ("<name>:dev"; the rest: "<name>:test")


# The halves of a shipped set ("wice:dev", "wice:test").
DEV, TEST = "dev", "test"
SPLITS = (DEV, TEST)
# Salts the split's hash: a new salt is a new split (and new half sizes in SHIPPED_SETS).
_SPLIT_SALT = "factcheck-split-v1\0"


SHIPPED_SETS: dict[str, SetInfo] = {
    info.name: info
    for info in (
        SetInfo(
            "factcheck-bench",
            "Factcheck-Bench (test split)",
            "Claims from LLM answers with one retrieved web passage each; Factcheck-Bench's held-out "
            "test split (never used to train or tune the built-in checkers), one item per (claim, passage) "
            "pair. Partial support and irrelevant passages are UNVERIFIABLE.",
            "Apache-2.0",
            985,
            525,
        ),
        SetInfo(
            "wice",
            "WiCE (claim-level test split)",
            "Wikipedia claims, each with the article it cites cut into passages. Only VERIFIED and "
            "UNVERIFIABLE: WiCE's 'not supported' means the article does not support the claim, not "
            "that the claim is false.",
            "ODC-BY-1.0 (annotations); article text CC BY-SA (Wikipedia) and Common Crawl terms",
            358,
            178,
        ),
        SetInfo(
            "climate-fever",
            "CLIMATE-FEVER",
            "Climate claims from the web, each paired with one Wikipedia evidence sentence at a time "
            "(five per claim), labelled per pair.",
            "no licence named upstream (evaluation use with attribution); evidence text CC BY-SA (Wikipedia)",
            7675,
            3730,
        ),
    )
}


class UnknownSetError(ValueError):
    """A set name that is not among the shipped sets."""


class ItemsFileError(ValueError):
    """A labelled-items file that cannot be read; `line` is the 1-based line at fault (None: the whole file)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


def split_of(item: LabelledItem) -> str:
    """DEV or TEST: the half of its set an item is in, fixed by a hash of its claim (whitespace folded)."""
    digest = hashlib.sha256((_SPLIT_SALT + " ".join(item.claim.split())).encode("utf-8")).hexdigest()
    return DEV if int(digest[:8], 16) % 2 == 0 else TEST


def shipped_set_and_split(name: str) -> tuple[str, str | None]:
    """A shipped set's name and its half ("wice:dev" → ("wice", "dev"); "wice" → ("wice", None));
    UnknownSetError for a name that is neither a shipped set nor one of its halves."""
    base, colon, split = name.partition(":")
    if base not in SHIPPED_SETS or (colon and split not in SPLITS):
        known = ", ".join(sorted(SHIPPED_SETS))
        halves = f"; a shipped set's halves are {base}:dev and {base}:test" if base in SHIPPED_SETS else ""
        raise UnknownSetError(
            f"unknown set {name!r}: the shipped sets are {known} (or give a .jsonl file of your own){halves}"
        )
    return base, split or None


def load_shipped_set(name: str) -> list[LabelledItem]:
    """The items of the shipped set `name` (SHIPPED_SETS), or of one of its halves ("wice:dev", "wice:test":
    `split_of`), read from the package's data."""
    base, split = shipped_set_and_split(name)
    data = resources.files("factcheck.evaluation").joinpath("data", f"{base}.jsonl.gz").read_bytes()
    items = _read_lines(gzip.decompress(data), f"{base}.jsonl.gz")
    return items if split is None else [item for item in items if split_of(item) == split]


def read_items_file(path: str | Path) -> list[LabelledItem]:
    """The items of a caller's JSONL file, one object a line (see docs/evaluation.md); blank lines are skipped."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ItemsFileError(f"{path}: cannot be read ({error.strerror or error})") from error
    return _read_lines(data, str(path))


def _read_lines(data: bytes, name: str) -> list[LabelledItem]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ItemsFileError(f"{name} line {line}: not UTF-8 text (byte {error.start + 1} of the file)", line) from None
    items: list[LabelledItem] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        where = f"{name} line {number}"
        if len(items) == MAX_ITEMS_PER_SET:
            raise ItemsFileError(f"{where}: more than {MAX_ITEMS_PER_SET:,} items, the most one set may hold", number)
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ItemsFileError(f"{where}: not valid JSON ({error.msg} at column {error.colno})", number) from None
        item = parse_item(obj, where, line=number)
        if item.id in seen:
            raise ItemsFileError(f"{where}: id {item.id!r} is used already (line {seen[item.id]})", number)
        seen[item.id] = number
        items.append(item)
    if not items:
        raise ItemsFileError(f"{name} holds no items")
    return items


def parse_item(obj: object, where: str, line: int | None = None) -> LabelledItem:
    """One labelled item from its JSON object; `where` ("eval.jsonl line 3") starts every error message.

    Fields: "claim" (required), "label" (required: LABELS or LABEL_ALIASES, any case), "id" (default
    "line-N", N = `line`), "evidence" (a list of strings or {"title", "text"} objects; default none).
    Other fields are ignored.
    """

    def fail(problem: str) -> ItemsFileError:
        return ItemsFileError(f"{where}: {problem}", line)

    if not isinstance(obj, dict):
        raise fail(f"not a JSON object (found {_json_kind(obj)})")
    item_id = obj.get("id", f"line-{line}" if line is not None else None)
    if item_id is None and "id" not in obj:
        raise fail('"id" is missing (only a line of a file has a default id)')
    if not isinstance(item_id, str) or not item_id.strip():
        raise fail('"id" must be a non-empty string')
    if len(item_id) > MAX_ID_CHARS:
        raise fail(f'"id" is {len(item_id):,} characters; the most is {MAX_ID_CHARS:,}')
    claim = obj.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        raise fail(
            '"claim" is missing or blank' if claim is None or isinstance(claim, str) else '"claim" must be a string'
        )
    if len(claim) > MAX_CLAIM_CHARS:
        raise fail(f'"claim" is {len(claim):,} characters; the most is {MAX_CLAIM_CHARS:,}')
    return LabelledItem(
        item_id, claim.strip(), _evidence(obj.get("evidence", []), fail), _label(obj.get("label"), fail)
    )


def _label(value: object, fail: Callable[[str], ItemsFileError]) -> str:
    allowed = ", ".join([*LABELS, *LABEL_ALIASES])
    if value is None:
        raise fail(f'"label" is missing; give one of {allowed}')
    if not isinstance(value, str):
        raise fail(f'"label" must be a string, one of {allowed}')
    key = value.strip().upper()
    if key in LABELS:
        return key
    if key in LABEL_ALIASES:
        return LABEL_ALIASES[key]
    shown = value if len(value) <= MAX_LABEL_CHARS else value[:MAX_LABEL_CHARS] + "…"
    raise fail(f'"label" {shown!r} is not a known verdict; give one of {allowed} (any case)')


def _evidence(value: object, fail: Callable[[str], ItemsFileError]) -> tuple[LabelledEvidence, ...]:
    if not isinstance(value, list):
        raise fail('"evidence" must be a list of strings or of {"title", "text"} objects')
    if len(value) > MAX_EVIDENCE_PASSAGES:
        raise fail(f'"evidence" has {len(value)} passages; the most is {MAX_EVIDENCE_PASSAGES}')
    passages = []
    for index, entry in enumerate(value):
        field = f'"evidence"[{index}]'
        if isinstance(entry, dict):
            title, text = entry.get("title", ""), entry.get("text")
        elif isinstance(entry, str):
            title, text = "", entry
        else:
            raise fail(f'{field} must be a string or a {{"title", "text"}} object (found {_json_kind(entry)})')
        if not isinstance(title, str):
            raise fail(f"{field}.title must be a string")
        if not isinstance(text, str):
            raise fail(f'{field} needs "text", a string')
        if not text.strip():
            raise fail(f"{field} is blank")
        if len(text) > MAX_PASSAGE_CHARS:
            raise fail(f"{field} is {len(text):,} characters; the most is {MAX_PASSAGE_CHARS:,}")
        if len(title) > MAX_TITLE_CHARS:
            raise fail(f"{field}.title is {len(title):,} characters; the most is {MAX_TITLE_CHARS:,}")
        passages.append(LabelledEvidence(title.strip(), text))
    return tuple(passages)


def _json_kind(value: object) -> str:
    names = {list: "a list", str: "a string", bool: "true or false", int: "a number", float: "a number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def sample(items: Sequence[LabelledItem], limit: int | None, seed: int) -> list[LabelledItem]:
    """All `items` when `limit` is None or at least their number; else `limit` of them chosen at random
    with `seed`, in the set's order. Only `Random.random()` is drawn: the one draw whose sequence for a
    given seed Python promises to keep across versions (`random.sample` has no such promise)."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for every item), not {limit}")
    if limit is None or limit >= len(items):
        return list(items)
    rng = random.Random(seed)
    keys = [rng.random() for _ in items]
    chosen = set(sorted(range(len(items)), key=keys.__getitem__)[:limit])
    return [item for index, item in enumerate(items) if index in chosen]
