"""Finding a piece of text inside a larger one, exactly or ignoring case and whitespace runs.

Claims are located in the content (extractor) and quotes in passages (checker) the same
way: an exact match first, else a match on folded text mapped back to exact offsets.
"""

from __future__ import annotations

Span = tuple[int, int]
FoldedText = tuple[str, list[int]]


def fold_text(text: str) -> FoldedText:
    """Text lower-cased character by character with whitespace runs as one space, plus each output
    character's index in text (lower() can lengthen a character, so the map is not 1:1)."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if chars and chars[-1] == " ":
                continue
            chars.append(" ")
            index.append(i)
        else:
            low = ch.lower()
            chars.extend(low)
            index.extend([i] * len(low))
    return "".join(chars), index


def find_exact(content: str, candidates: list[str]) -> Span | None:
    for candidate in candidates:
        start = content.find(candidate)
        if start != -1:
            return start, start + len(candidate)
    return None


def find_folded(folded: FoldedText, candidates: list[str]) -> Span | None:
    """First span of the content whose folded form equals a folded candidate, as original offsets."""
    haystack, index = folded
    for candidate in candidates:
        target = fold_text(candidate)[0]
        pos = haystack.find(target)
        while pos != -1:
            end = pos + len(target)
            # Skip hits that begin or end inside a character lower() expanded to several.
            starts_whole = pos == 0 or index[pos - 1] != index[pos]
            ends_whole = end == len(haystack) or index[end] != index[end - 1]
            if starts_whole and ends_whole:
                return index[pos], index[end - 1] + 1
            pos = haystack.find(target, pos + 1)
    return None


def locate(text: str, needle: str) -> Span | None:
    """The first span of text equal to needle, exactly or ignoring case and whitespace runs."""
    needle = needle.strip()
    if not needle:
        return None
    return find_exact(text, [needle]) or find_folded(fold_text(text), [needle])
