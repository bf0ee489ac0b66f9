"""Short ids, as git and gh show commit hashes: a UUID (a run's, an evaluation's, a claim's) is shown by
its first 8 characters in tables, and every command that takes such an id accepts any unambiguous prefix
of it, found among the newest of its kind (`expand`). Other ids (document ids are paths) are never
shortened; they are only cut to fit, with "…", and `--wide` shows them whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable

SHORT_ID_CHARS = 8
# How many of the newest runs (evaluations, claims) a prefix is looked for among.
MAX_SEARCHED = 1_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_PREFIX = re.compile(r"[0-9a-f]{4}[0-9a-f-]{0,31}")

# One page of ids (newest first) after a page token, and the next page's token ("" after the last).
IdPages = Callable[[str], tuple[list[str], str]]


class AmbiguousId(ValueError):
    """A prefix that more than one id starts with (a usage error: give more of it)."""


class UnknownId(LookupError):
    """A prefix no id among the newest starts with."""


def short_id(value: str) -> str:
    """A UUID's first 8 characters; any other id as it is."""
    return value[:SHORT_ID_CHARS] if _UUID.fullmatch(value) else value


def is_prefix(value: str) -> bool:
    """Whether `value` may be the start of a UUID rather than a whole id: 4 to 35 of its characters."""
    return _PREFIX.fullmatch(value) is not None and _UUID.fullmatch(value) is None


def expand(value: str, pages: IdPages, noun: str) -> str:
    """The whole id `value` stands for: itself unless it is a prefix (`is_prefix`), else the one id among
    the newest MAX_SEARCHED that starts with it. AmbiguousId or UnknownId, each with a one-line message."""
    if not is_prefix(value):
        return value
    found: list[str] = []
    token, searched = "", 0
    while searched < MAX_SEARCHED:
        ids, token = pages(token)
        searched += len(ids)
        found += [candidate for candidate in ids if candidate.startswith(value)]
        if len(found) > 1:
            shown = ", ".join(short_id(candidate) for candidate in found[:3])
            raise AmbiguousId(f"{value!r} is the start of more than one {noun} id ({shown}); give more of it")
        if not token:
            break
    if found:
        return found[0]
    raise UnknownId(f"no {noun} id starts with {value!r} (among the newest {MAX_SEARCHED:,})")
