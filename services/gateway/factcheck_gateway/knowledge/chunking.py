"""Split a document into passages that keep their character offsets in the document.

Passages are runs of whole sentences of about TARGET_CHARS characters, never crossing
a paragraph break; a sentence longer than MAX_CHARS is cut at whitespace. Offsets are
indices into the original text, so `text[start:end] == passage` always holds.

A Markdown heading (`# The Paris Agreement`, or a line underlined with `===` or `---`; `kb add`
writes an HTML page's h1-h6 the same way) names the section it introduces; it states no fact,
so it is never a passage of its own nor part of one: passages are evidence a checker may cite.
Instead it titles them: each chunk carries the heading in effect where it starts (the last one
above it, which is the innermost, since a heading closes every deeper section before it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TARGET_CHARS = 600
MAX_CHARS = 1200

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A heading at the start of a paragraph: an ATX heading line, or a line and its setext underline.
_HEADING = re.compile(r"[ \t]{0,3}(?:#{1,6}(?:[ \t][^\n]*)?|[^\n]+\n[ \t]{0,3}(?:=+|-+)[ \t]*)(?:\n|$)")
# A sentence ends at . ! or ? (and a closing quote or bracket, which stays with it) followed by
# whitespace and an upper-case letter, digit or quote.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[A-Z0-9\"'(\[])")


@dataclass(frozen=True)
class Chunk:
    text: str
    start: int
    end: int
    heading: str = ""  # the section's heading, without its marks ("" before the first heading)


def chunk_text(text: str, target_chars: int = TARGET_CHARS, max_chars: int = MAX_CHARS) -> list[Chunk]:
    chunks: list[Chunk] = []
    heading = ""
    for para_start, para_end in _spans(text, _PARAGRAPH_BREAK, 0, len(text)):
        para_start, heading = _after_headings(text, para_start, para_end, heading)
        current: tuple[int, int] | None = None
        for start, end in _sentences(text, para_start, para_end, max_chars):
            if current is not None and end - current[0] > target_chars:
                chunks.append(_chunk(text, *current, heading))
                current = None
            current = (current[0] if current else start, end)
        if current is not None:
            chunks.append(_chunk(text, *current, heading))
    return chunks


def _after_headings(text: str, start: int, end: int, heading: str) -> tuple[int, str]:
    """Where the paragraph text[start:end] goes on after the headings it starts with (`end` if it is all
    headings), and the heading in effect there (`heading`, the one before, if the paragraph starts with none)."""
    while start < end and (match := _HEADING.match(text, start, end)):
        heading = _heading_text(match.group())
        start = _strip(text, match.end(), end)[0]
    return start, heading


def _heading_text(heading: str) -> str:
    """A heading's words: an ATX heading without its opening and closing #s, a setext one without its underline."""
    lines = heading.strip().splitlines()
    if len(lines) > 1:  # setext: the first line is the text
        return " ".join(lines[0].split())
    words = lines[0].lstrip("#").strip()
    words = re.sub(r"(?:^|[ \t]+)#+$", "", words)  # an optional closing sequence: "## Title ##"
    return " ".join(words.split())


def _chunk(text: str, start: int, end: int, heading: str) -> Chunk:
    return Chunk(text[start:end], start, end, heading)


def _spans(text: str, separator: re.Pattern[str], start: int, end: int) -> list[tuple[int, int]]:
    """The stripped, non-empty pieces of text[start:end] between matches of `separator`."""
    pieces, cursor = [], start
    for match in separator.finditer(text, start, end):
        pieces.append((cursor, match.start()))
        cursor = match.end()
    pieces.append((cursor, end))
    return [span for span in (_strip(text, s, e) for s, e in pieces) if span[0] < span[1]]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _sentences(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    sentences = []
    for s, e in _spans(text, _SENTENCE_END, start, end):
        while e - s > max_chars:  # an overlong "sentence": cut at the last whitespace before max_chars
            cut = text.rfind(" ", s, s + max_chars)
            cut = cut if cut > s else s + max_chars
            sentences.append(_strip(text, s, cut))
            s = _strip(text, cut, e)[0]
        sentences.append((s, e))
    return sentences
