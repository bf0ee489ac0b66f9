"""factcheck.text.text_safety: well-formed text and bounded one-line excerpts, for any input."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck.text.text_safety import clean_text, excerpt

# Every code point, lone surrogates and control characters included.
any_text = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=400)
FAST = settings(max_examples=300, deadline=None)


def test_clean_text_replaces_what_cannot_be_encoded_or_stored():
    assert clean_text("ok \ud800 \udfff") == "ok \ufffd \ufffd"
    assert clean_text("a\x00b\x1b[31m\x7f\x85\x9b") == "a\ufffdb\ufffd[31m\ufffd\ufffd\ufffd"
    assert clean_text("line one\n\tline two\r\n") == "line one\n\tline two\r\n"
    text = "caf\u00e9 \U0001f600 \u202e"
    assert clean_text(text) is text  # nothing to replace: no copy


def test_excerpt_is_one_short_line_that_shows_what_it_quotes():
    # What could forge a line or fail to encode is shown as a visible escape, never sent as is.
    assert excerpt("model overloaded \ud83d") == "model overloaded \\ud83d"
    assert excerpt("a\n b\tc\u2028d\u202ee", 80) == "a\\n b\\tc\\u2028d\\u202ee"
    assert excerpt("x" * 500, 10) == "x" * 9 + "\u2026"
    assert excerpt("short", 10) == "short"
    assert excerpt("", 10) == ""


def test_excerpt_of_a_huge_text_reads_only_its_head():
    huge = "word " * 5_000_000
    started = time.perf_counter()
    result = excerpt(huge, 50)
    # Not a speed goal: a full scan of 25 MB would take far longer than this generous bound.
    assert time.perf_counter() - started < 1.0
    assert len(result) == 50 and result.endswith("\u2026")


@FAST
@given(any_text)
def test_clean_text_is_always_encodable_and_keeps_layout(text):
    cleaned = clean_text(text)
    cleaned.encode("utf-8")
    assert len(cleaned) == len(text)
    assert [ch for ch in cleaned if ch in "\t\n\r"] == [ch for ch in text if ch in "\t\n\r"]
    assert "\x00" not in cleaned
    assert clean_text(cleaned) == cleaned


@FAST
@given(any_text, st.integers(1, 300))
def test_excerpt_is_always_bounded_single_line_and_encodable(text, limit):
    quoted = excerpt(text, limit)
    assert len(quoted) <= limit
    assert len(quoted.encode("utf-8")) <= 4 * limit
    assert not any(ch in quoted for ch in "\n\r\t\u2028\u2029\x85")
    assert not any(ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF for ch in quoted)
