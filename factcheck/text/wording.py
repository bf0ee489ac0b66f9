"""Small wording rules every message shares."""

from __future__ import annotations


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """ "1 passage", "3 passages", "0 passages"; `plural` for a noun that does not just take an s ("entries")."""
    return f"{number:,} {noun}" if number == 1 else f"{number:,} {plural or noun + 's'}"
