"""The labelled sets: the shipped ones load with their counts and only valid labels; a caller's own JSONL
file is read or refused with its file name, line number and what is wrong; `sample` is fixed by its seed."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from factcheck.evaluation import sets
from factcheck.evaluation.sets import (
    DEV,
    LABELS,
    MAX_CLAIM_CHARS,
    MAX_EVIDENCE_PASSAGES,
    MAX_ID_CHARS,
    MAX_ITEMS_PER_SET,
    MAX_PASSAGE_CHARS,
    SHIPPED_SETS,
    TEST,
    ItemsFileError,
    LabelledEvidence,
    LabelledItem,
    UnknownSetError,
    load_shipped_set,
    parse_item,
    read_items_file,
    sample,
    split_of,
)
from tests.processes import ROOT

SHIPPED_LABELS = {
    "factcheck-bench": {"VERIFIED": 181, "DISPUTED": 56, "UNVERIFIABLE": 748},
    "wice": {"VERIFIED": 111, "UNVERIFIABLE": 247},
    "climate-fever": {"VERIFIED": 1943, "DISPUTED": 802, "UNVERIFIABLE": 4930},
}


@pytest.mark.parametrize("name", sorted(SHIPPED_SETS))
def test_shipped_sets_load_with_their_counts_and_valid_items(name: str) -> None:
    items = load_shipped_set(name)
    assert len(items) == SHIPPED_SETS[name].items
    assert Counter(item.label for item in items) == SHIPPED_LABELS[name]
    assert set(item.label for item in items) <= set(LABELS)
    assert len({item.id for item in items}) == len(items)
    assert all(1 <= len(item.evidence) <= MAX_EVIDENCE_PASSAGES for item in items)
    assert all(p.text.strip() for item in items for p in item.evidence)


def test_shipped_set_names_are_the_documented_ones() -> None:
    assert set(SHIPPED_SETS) == {"factcheck-bench", "wice", "climate-fever"}
    assert all(info.name == name for name, info in SHIPPED_SETS.items())


def test_factcheck_bench_ships_only_the_test_split() -> None:
    """The train split fitted the verifier and the overlap threshold: not one of its claims is shipped."""
    from bench.checker_accuracy import is_test_claim

    items = load_shipped_set("factcheck-bench")
    assert all(is_test_claim(item.claim) for item in items)


def test_climate_fever_items_carry_their_article_as_title() -> None:
    first = load_shipped_set("climate-fever")[0]
    assert first.id == "cf-0-1"
    assert first.claim == "Global warming is driving polar bears toward extinction"
    assert first.evidence[0].title == "Extinction risk from global warming"
    assert first.label == "UNVERIFIABLE"


def test_an_unknown_set_names_the_shipped_ones() -> None:
    with pytest.raises(UnknownSetError) as raised:
        load_shipped_set("foo")
    assert str(raised.value) == (
        "unknown set 'foo': the shipped sets are climate-fever, factcheck-bench, wice (or give a .jsonl file of your own)"
    )
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("name", sorted(SHIPPED_SETS))
def test_each_shipped_set_has_fixed_dev_and_test_halves_that_never_share_a_claim(name: str) -> None:
    whole = load_shipped_set(name)
    dev, test = load_shipped_set(f"{name}:dev"), load_shipped_set(f"{name}:test")
    assert len(dev) == SHIPPED_SETS[name].dev_items and len(dev) + len(test) == len(whole)
    assert sorted(i.id for i in dev + test) == sorted(i.id for i in whole)
    assert not {i.claim for i in dev} & {i.claim for i in test}  # the items of one claim stay in one half
    assert all(split_of(i) == DEV for i in dev) and all(split_of(i) == TEST for i in test)
    # Both halves hold every label the set holds, in shares near the set's.
    assert {i.label for i in dev} == {i.label for i in test} == {i.label for i in whole}
    # Fixed: the claim's hash, whitespace folded.
    item = whole[0]
    assert split_of(LabelledItem("other-id", "  " + item.claim.replace(" ", "\n "), (), "UNVERIFIABLE")) == split_of(
        item
    )


def test_an_unknown_half_names_the_halves() -> None:
    with pytest.raises(UnknownSetError) as raised:
        load_shipped_set("wice:train")
    assert str(raised.value).endswith("; a shipped set's halves are wice:dev and wice:test")
    with pytest.raises(UnknownSetError):
        load_shipped_set("mine:dev")


def test_limits_fit_the_checker_service() -> None:
    from factcheck_checker import checker_service, council_summary

    assert MAX_PASSAGE_CHARS <= checker_service.MAX_PASSAGE_CHARS
    assert MAX_EVIDENCE_PASSAGES <= checker_service.MAX_COUNCIL_PASSAGES
    assert MAX_CLAIM_CHARS <= council_summary.MAX_CLAIM_CHARS


# --- a caller's own file -------------------------------------------------------------------------


def _write(tmp_path: Path, *lines: str, name: str = "eval.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_reads_every_documented_shape(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        json.dumps(
            {
                "id": "a",
                "claim": " Paris is in France. ",
                "evidence": ["Paris is France's capital."],
                "label": "verified",
            }
        ),
        "",
        json.dumps(
            {
                "claim": "Rome is in Spain.",
                "evidence": [{"title": "Rome", "text": "Rome is in Italy."}],
                "label": "REFUTES",
            }
        ),
        "   ",
        json.dumps({"claim": "Oslo has 3 airports.", "label": "nei", "extra": 1}),
        json.dumps({"claim": "x", "label": "Supported"}),
        json.dumps({"claim": "y", "label": "not_enough_info"}),
        json.dumps({"claim": "z", "label": "refuted"}),
    )
    items = read_items_file(path)
    assert items[:3] == [
        LabelledItem("a", "Paris is in France.", (LabelledEvidence("", "Paris is France's capital."),), "VERIFIED"),
        LabelledItem("line-3", "Rome is in Spain.", (LabelledEvidence("Rome", "Rome is in Italy."),), "DISPUTED"),
        LabelledItem("line-5", "Oslo has 3 airports.", (), "UNVERIFIABLE"),
    ]
    assert [item.label for item in items[3:]] == ["VERIFIED", "UNVERIFIABLE", "DISPUTED"]


GOOD = {"claim": "Paris is in France.", "label": "VERIFIED"}
ALLOWED = "VERIFIED, DISPUTED, UNVERIFIABLE, SUPPORTED, SUPPORTS, REFUTED, REFUTES, NOT_ENOUGH_INFO, NEI"


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"claim": "a" "label": "VERIFIED"}', "not valid JSON (Expecting ',' delimiter at column 15)"),
        ('["a claim", "VERIFIED"]', "not a JSON object (found a list)"),
        ('"a claim"', "not a JSON object (found a string)"),
        ('{"label": "VERIFIED"}', '"claim" is missing or blank'),
        ('{"claim": "   ", "label": "VERIFIED"}', '"claim" is missing or blank'),
        ('{"claim": 7, "label": "VERIFIED"}', '"claim" must be a string'),
        ('{"claim": "a"}', f'"label" is missing; give one of {ALLOWED}'),
        (
            '{"claim": "a", "label": "TRUE"}',
            f"\"label\" 'TRUE' is not a known verdict; give one of {ALLOWED} (any case)",
        ),
        ('{"claim": "a", "label": 1}', f'"label" must be a string, one of {ALLOWED}'),
        (
            '{"claim": "a", "label": "VERIFIED", "evidence": "text"}',
            '"evidence" must be a list of strings or of {"title", "text"} objects',
        ),
        (
            '{"claim": "a", "label": "VERIFIED", "evidence": [3]}',
            '"evidence"[0] must be a string or a {"title", "text"} object (found a number)',
        ),
        ('{"claim": "a", "label": "VERIFIED", "evidence": [{"title": "t"}]}', '"evidence"[0] needs "text", a string'),
        (
            '{"claim": "a", "label": "VERIFIED", "evidence": [{"title": 1, "text": "t"}]}',
            '"evidence"[0].title must be a string',
        ),
        ('{"claim": "a", "label": "VERIFIED", "evidence": ["ok", " "]}', '"evidence"[1] is blank'),
        ('{"id": 5, "claim": "a", "label": "VERIFIED"}', '"id" must be a non-empty string'),
        ('{"id": "", "claim": "a", "label": "VERIFIED"}', '"id" must be a non-empty string'),
    ],
)
def test_a_bad_line_is_refused_with_file_line_and_reason(tmp_path: Path, bad_line: str, message: str) -> None:
    path = _write(tmp_path, json.dumps(GOOD), "", bad_line)
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value) == f"{path} line 3: {message}"
    assert raised.value.line == 3


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"claim": "a" * (MAX_CLAIM_CHARS + 1)}, f'"claim" is 2,001 characters; the most is {MAX_CLAIM_CHARS:,}'),
        ({"id": "i" * (MAX_ID_CHARS + 1)}, f'"id" is 201 characters; the most is {MAX_ID_CHARS}'),
        (
            {"evidence": ["e"] * (MAX_EVIDENCE_PASSAGES + 1)},
            f'"evidence" has 21 passages; the most is {MAX_EVIDENCE_PASSAGES}',
        ),
        (
            {"evidence": [{"text": "e" * (MAX_PASSAGE_CHARS + 1)}]},
            f'"evidence"[0] is 20,001 characters; the most is {MAX_PASSAGE_CHARS:,}',
        ),
    ],
)
def test_a_field_over_its_limit_is_refused(tmp_path: Path, fields: dict, message: str) -> None:
    path = _write(tmp_path, json.dumps(GOOD | fields))
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value) == f"{path} line 1: {message}"
    assert raised.value.line == 1


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(GOOD | {"id": "x"}), json.dumps(GOOD), json.dumps(GOOD | {"id": "x"}))
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value) == f"{path} line 3: id 'x' is used already (line 1)"
    assert raised.value.line == 3


def test_a_given_id_may_not_take_a_default_id(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(GOOD | {"id": "line-2"}), json.dumps(GOOD))
    with pytest.raises(ItemsFileError, match=r"line 2: id 'line-2' is used already \(line 1\)"):
        read_items_file(path)


def test_an_empty_file_holds_no_items(tmp_path: Path) -> None:
    path = _write(tmp_path, "", "  ")
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value) == f"{path} holds no items"
    assert raised.value.line is None


def test_a_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b'\n{"claim": "caf\xe9", "label": "VERIFIED"}\n')
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value).startswith(f"{path} line 2: not UTF-8 text")
    assert raised.value.line == 2


def test_a_utf8_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert read_items_file(path)[0].claim == "Paris is in France."


def test_a_missing_file_is_an_items_file_error(tmp_path: Path) -> None:
    with pytest.raises(ItemsFileError, match="nothing.jsonl: cannot be read"):
        read_items_file(tmp_path / "nothing.jsonl")


def test_more_items_than_a_set_may_hold(tmp_path: Path) -> None:
    path = tmp_path / "eval.jsonl"
    path.write_text('{"claim": "a", "label": "NEI"}\n' * (MAX_ITEMS_PER_SET + 1), encoding="utf-8")
    with pytest.raises(ItemsFileError) as raised:
        read_items_file(path)
    assert str(raised.value) == f"{path} line 20001: more than 20,000 items, the most one set may hold"
    assert raised.value.line == MAX_ITEMS_PER_SET + 1


def test_the_shipped_loader_parses_with_the_same_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shipped file breaking a limit is refused like a caller's file: both go through parse_item."""
    calls = []
    real = sets.parse_item

    def spy(obj: object, where: str, line: int | None = None) -> LabelledItem:
        calls.append(where)
        return real(obj, where, line)

    monkeypatch.setattr(sets, "parse_item", spy)
    load_shipped_set("wice")
    assert len(calls) == SHIPPED_SETS["wice"].items and calls[0] == "wice.jsonl.gz line 1"


def test_parse_item_alone_names_its_place() -> None:
    with pytest.raises(ItemsFileError) as raised:
        parse_item({"id": "q", "claim": "a", "label": "maybe"}, "my set item 4")
    assert str(raised.value).startswith("my set item 4: \"label\" 'maybe' is not a known verdict")
    assert raised.value.line is None
    with pytest.raises(ItemsFileError, match=r'^my set item 4: "id" is missing'):
        parse_item({"claim": "a", "label": "NEI"}, "my set item 4")


def test_the_shipped_files_are_what_the_prepare_script_writes() -> None:
    """Sorted keys, one object a line, gzip without a timestamp: rebuilding gives the same bytes."""
    data = (ROOT / "factcheck" / "evaluation" / "data" / "wice.jsonl.gz").read_bytes()
    assert data[4:8] == b"\0\0\0\0"  # gzip MTIME
    first = gzip.decompress(data).decode("utf-8").split("\n")[0]
    assert list(json.loads(first)) == ["claim", "evidence", "id", "label"]


# --- sample ----------------------------------------------------------------------------------------


def _items(count: int) -> list[LabelledItem]:
    return [LabelledItem(f"i{n}", f"claim {n}", (), "VERIFIED") for n in range(count)]


def test_sample_is_fixed_by_its_seed_and_keeps_the_set_order() -> None:
    items = _items(100)
    chosen = sample(items, 10, seed=7)
    assert len(chosen) == 10
    assert chosen == sample(items, 10, seed=7)
    assert chosen != sample(items, 10, seed=8)
    assert chosen == sorted(chosen, key=items.index)
    # Fixed across Python versions (only Random.random() is drawn): the ids this seed chose when written.
    assert [item.id for item in chosen] == SEED_7_IDS


SEED_7_IDS = ["i6", "i8", "i10", "i21", "i33", "i34", "i56", "i70", "i78", "i82"]


def test_sample_returns_everything_without_a_limit_or_with_a_large_one() -> None:
    items = _items(5)
    assert sample(items, None, seed=1) == items
    assert sample(items, 5, seed=1) == items
    assert sample(items, 50, seed=1) == items


def test_sample_refuses_a_limit_below_one() -> None:
    with pytest.raises(ValueError, match="limit must be at least 1"):
        sample(_items(5), 0, seed=1)
