"""Cutting a passage into verbatim pieces that a grounding model reads with a claim.

- `chunk_spans(text, tokens, room)`: consecutive sentences packed into chunks of at most `room`
  tokens (MiniCheck's reading of a long document: each chunk with the claim, the best one decides);
- `sentence_units(text, tokens, room)`: every sentence on its own (SummaC's reading).

A sentence longer than `room` is cut into pieces of at most `room` tokens, each cut between two words
where one is near. Every span is `(start, end)` in `text`, so `text[start:end]` is verbatim (quotable).

Token counts are the model's: `tokens` are the character offsets of the passage's tokens as the model's
own tokenizer reads the whole passage (`token_offsets` for a tokenizer's encoding), or, for a model behind
a server whose tokenizer the suite does not have, `approximate_token_offsets`: about four characters a
token, the model client's estimate.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence

from factcheck.text.sentences import sentence_spans

Span = tuple[int, int]

_WORD = re.compile(r"\S+")
# Characters per token in the model client's estimate (factcheck.models.limits.estimate_tokens).
_CHARS_PER_TOKEN = 4


def approximate_token_offsets(text: str) -> list[Span]:
    """Offsets of estimated tokens: every word as ceil(len / 4) tokens of about four characters."""
    tokens: list[Span] = []
    for word in _WORD.finditer(text):
        start, end = word.span()
        pieces = math.ceil((end - start) / _CHARS_PER_TOKEN)
        step = (end - start) / pieces
        tokens += [(start + round(i * step), start + round((i + 1) * step)) for i in range(pieces)]
    return tokens


def token_offsets(offsets: Sequence[tuple[int, int]]) -> list[Span]:
    """A tokenizer's offsets without the empty ones (special tokens, which cover no text)."""
    return [(start, end) for start, end in offsets if end > start]


def chunk_spans(text: str, tokens: Sequence[Span], room: int) -> list[Span]:
    """Consecutive sentences packed into chunks of at most `room` tokens (a longer sentence cut)."""
    return _units(text, tokens, room, pack=True)


def sentence_units(text: str, tokens: Sequence[Span], room: int) -> list[Span]:
    """Every sentence on its own (a sentence over `room` tokens cut)."""
    return _units(text, tokens, room, pack=False)


def _units(text: str, tokens: Sequence[Span], room: int, *, pack: bool) -> list[Span]:
    if room < 1:
        raise ValueError("room must be at least one token")
    starts = [start for start, _ in tokens]
    units: list[Span] = []
    current: list[int] | None = None  # [start, end, tokens] of the chunk being packed
    for start, end in sentence_spans(text):
        first, last = bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)
        count = last - first
        if count == 0:
            continue  # no token of the model's in it (punctuation the tokenizer drops)
        if count > room:
            if current is not None:
                units.append((current[0], current[1]))
                current = None
            units += _cut(text, tokens[first:last], room)
        elif not pack:
            units.append((start, end))
        elif current is not None and current[2] + count <= room:
            current[1], current[2] = end, current[2] + count
        else:
            if current is not None:
                units.append((current[0], current[1]))
            current = [start, end, count]
    if current is not None:
        units.append((current[0], current[1]))
    return units


def cut_span(text: str, tokens: Sequence[Span], span: Span, room: int) -> list[Span]:
    """`span` cut into pieces of at most `room` of its tokens (a unit whose real length, claim and special
    tokens included, came out longer than the count it was packed by)."""
    inside = [token for token in tokens if span[0] <= token[0] < span[1]]
    return _cut(text, inside, room) if inside else []


def _cut(text: str, tokens: Sequence[Span], room: int) -> list[Span]:
    """Pieces of at most `room` consecutive tokens, each ending before a word that starts a new piece
    when one starts in the piece's second half (else at the `room`-th token)."""
    pieces: list[Span] = []
    first = 0
    while first < len(tokens):
        last = min(first + room, len(tokens))  # exclusive
        if last < len(tokens):
            for boundary in range(last, first + max(room // 2, 1), -1):
                if _starts_word(text, tokens[boundary][0]):
                    last = boundary
                    break
        pieces.append((tokens[first][0], tokens[last - 1][1]))
        first = last
    return pieces


def _starts_word(text: str, offset: int) -> bool:
    return offset == 0 or text[offset - 1].isspace()
