"""Shortening text for display (titles, excerpts): cut at a word boundary, and say so with "…".

A cut that ends mid-phrase without a mark reads as the whole of it ("Facts about the Eiffel Tower, the
Paris"); a cut inside a word reads as a misspelling. So: whole words only, and an ellipsis whenever
anything was left out.
"""

from __future__ import annotations

ELLIPSIS = "…"
# Dropped before the ellipsis: "Tower, …" and "Tower.…" read worse than "Tower…".
_TRAILING = " ,;:.!?-\u2013\u2014" + ELLIPSIS


def shorten(text: str, limit: int) -> str:
    """`text` with its whitespace runs as single spaces; if longer than `limit` characters, its longest run of
    whole words that leaves room for "…", then "…" (a first word longer than that is cut inside)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    limit = max(limit, 2)
    window = text[:limit]  # at most limit - 1 characters are kept, then the ellipsis
    kept = window.rsplit(" ", 1)[0].rstrip(_TRAILING) if " " in window else ""
    return (kept or text[: limit - 1].rstrip(_TRAILING) or text[: limit - 1]) + ELLIPSIS
