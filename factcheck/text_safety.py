"""Text from outside (model answers, provider errors, caller input) made safe to pass on.

Two functions, no dependencies, linear in the input:

- `clean_text(text)`: well-formed text that every consumer accepts. Lone surrogates
  (which `json.loads` produces from escapes like "\\ud800" and which cannot be encoded
  as UTF-8, so protobuf, gRPC and the database refuse them), NUL (PostgreSQL refuses it
  in text) and the other C0/C1 control characters except tab, line feed and carriage
  return (terminal escape sequences among them) become U+FFFD. Everything else,
  line breaks included, is kept, so a model's answer keeps its layout.
- `excerpt(text, limit)`: a bounded, single-line quote for an error message or a log
  line: `clean_text`, then every line break, tab and other control or invisible
  formatting character (bidi overrides included) as a space, whitespace runs collapsed,
  and at most `limit` characters, cut with "…". The result is at most `limit`
  characters, so at most 4 * `limit` UTF-8 bytes.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "clean_text", "excerpt"]

REPLACEMENT = "\ufffd"
ELLIPSIS = "\u2026"

# Surrogates, and the control characters no text consumer needs: C0 except \t \n \r, DEL, C1.
_ILL_FORMED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# What a one-line quote must not contain: all of the above (already replaced), the line breaks
# and tab, Unicode line/paragraph separators, and bidi and zero-width formatting characters that
# would make a log line or a terminal show something other than what it holds.
_NOT_ONE_LINE = re.compile("[\t\n\r\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_WHITESPACE_RUN = re.compile(r"\s+")


def clean_text(text: str) -> str:
    """`text` with lone surrogates and control characters (except tab, LF, CR) replaced by U+FFFD."""
    if _ILL_FORMED.search(text) is None:  # the common case: no copy
        return text
    return _ILL_FORMED.sub(REPLACEMENT, text)


def excerpt(text: str, limit: int = 200) -> str:
    """`text` as one clean line of at most `limit` characters (cut ones end with "…").

    Only the first few times `limit` characters (after leading whitespace) are looked at, so
    quoting a 100 MB body costs no more than quoting a short one.
    """
    if limit <= 0:
        return ""
    text = text.lstrip()
    # Whitespace collapsing only shortens text, so a head of a few times the limit is enough:
    # the cost stays bounded whatever the input's size.
    head = text[: limit * 4 + 64]
    line = _WHITESPACE_RUN.sub(" ", _NOT_ONE_LINE.sub(" ", clean_text(head))).strip()
    if len(line) <= limit and len(head) == len(text):
        return line
    return line[: limit - 1].rstrip() + ELLIPSIS
