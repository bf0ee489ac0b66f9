"""Make untrusted text (model answers, provider errors, caller input) safe to pass on and to quote.

Dependency-free on purpose, so every layer (model client, errors, logging, services) can use it.

- `clean_text(text)`: well-formed text that every consumer accepts. Lone surrogates
  (which `json.loads` produces from escapes like "\\ud800" and which cannot be encoded
  as UTF-8, so protobuf, gRPC and the database refuse them), NUL (PostgreSQL refuses it
  in text) and the other C0/C1 control characters except tab, line feed and carriage
  return (terminal escape sequences among them) become U+FFFD. Everything else, line
  breaks included, is kept, so a model's answer keeps its layout.
- `escape_controls(text)`: the same text on one line; control characters, line and
  paragraph separators, bidirectional overrides and lone surrogates become visible
  escapes (`\\n`, `\\x00`, `\\u2028`, `\\ud800`), so nothing can start a forged line or
  fail to encode as UTF-8.
- `excerpt(text, limit)`: the same, bounded to `limit` characters with an ellipsis; it
  looks at no more than `limit` characters of the input, so a megabyte costs nothing.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
REPLACEMENT = "\ufffd"

# Surrogates, and the control characters no text consumer needs: C0 except \t \n \r, DEL, C1.
_ILL_FORMED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with lone surrogates and control characters (except tab, LF, CR) replaced by U+FFFD."""
    if _ILL_FORMED.search(text) is None:  # the common case: no copy
        return text
    return _ILL_FORMED.sub(REPLACEMENT, text)


# C0 and C1 controls (newline, NUL, escape, NEL...), line/paragraph separators, the
# bidirectional controls that can make a line read differently, and surrogates (a lone
# surrogate cannot be encoded as UTF-8).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escape_match(match: re.Match[str]) -> str:
    return _escape(match.group())


def escape_controls(text: str) -> str:
    """`text` on one line, with every unsafe character escaped (see the module docstring)."""
    return _UNSAFE.sub(_escape_match, text)


def has_unsafe_characters(text: str) -> bool:
    """True if `text` holds a control character, a line separator, a bidi control or a lone surrogate."""
    return _UNSAFE.search(text) is not None


def excerpt(text: str, limit: int = 80) -> str:
    """A single-line, printable, bounded excerpt of untrusted text (at most `limit` characters).

    Longer text is cut and ends with "…". Non-strings are quoted by their str().
    """
    if not isinstance(text, str):
        text = str(text)
    limit = max(limit, 1)
    head = escape_controls(text[: limit + 1])
    if len(head) <= limit and len(text) <= limit:
        return head
    # Cut on a character boundary of the original text, never inside an escape sequence.
    pieces, used = [], 0
    for char in text[:limit]:
        piece = _escape(char) if _UNSAFE.match(char) else char
        if used + len(piece) > limit - 1:
            break
        pieces.append(piece)
        used += len(piece)
    return "".join(pieces) + ELLIPSIS


def first_line(error: BaseException) -> str:
    """The first line of an error's message (its type's name when the message is empty), for a log line."""
    return (str(error).splitlines() or [type(error).__name__])[0]
