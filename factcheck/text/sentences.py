"""Sentence segmentation and small text helpers shared by the `local/` engines.

Public API (keep it small; the local checker imports from here):

- `sentence_spans(text) -> list[tuple[int, int]]`: `(start, end)` character offsets of
  each sentence, stripped of surrounding whitespace, so `text[start:end]` is verbatim.
- `split_sentences(text) -> list[str]`: the sentences themselves.
- `tokenize(text) -> list[str]`: lower-cased word tokens. Numbers keep their inner
  punctuation and a trailing percent sign ("1,000", "1.1", "30%"); words keep inner
  hyphens and apostrophes ("berners-lee", "didn't").
- `STOPWORDS`: English function words. It includes negations ("not", "no", "never") and
  quantifiers ("all", "most", "some"), so callers that care about those must look at
  `tokenize()` output rather than `content_words()`.
- `content_words(text) -> list[str]`: `tokenize()` minus `STOPWORDS` and single-letter
  tokens, each reduced by `stem()`.
- `refers_back(sentence) -> bool`: whether the sentence's subject points back to something
  named before it (a pronoun, or "the/this <common noun>": "The company employs ...").
- `stem(word) -> str`: a light suffix stripper ("studies" -> "study", "signed" -> "sign")
  good enough for lexical overlap, not a linguistic stemmer.

Segmentation approach: a sentence ends at ".", "!" or "?" (optionally followed by closing
quotes or brackets) when whitespace and then an upper-case letter, digit, quote or
bracket follow, or the text ends. A full stop does not end a sentence after a title
("Dr.", "Mr."), after a lower-case abbreviation ("approx.", "e.g."), inside a number
("1.1", no space follows) or when a lower-case word follows. After an initial
("William O. Douglas"), a dotted acronym ("U.S.") or an abbreviation that can close a
sentence ("etc.", "Inc."), it ends the sentence only if the next word is a typical
sentence opener ("The", "He", "In", ...). Line structure also counts: a blank line ends
a sentence, and so does a single line break before a list item or heading or after a
line ending in ":" or terminal punctuation; other single line breaks are treated as
hard wrapping. Limits: rule-based, English only; an acronym or initial that really does
end a sentence before a proper noun ("... in the U.S. Congress passed") stays joined.
"""

from __future__ import annotations

import re

__all__ = [
    "STOPWORDS",
    "content_words",
    "sentence_spans",
    "split_sentences",
    "stem",
    "tokenize",
]

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each
    few for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just may me might more most must my myself no nor not
    now of off on once only or other our ours ourselves out over own same shall she should
    so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves never
    """.split()
)

# Titles before a name: a full stop after them never ends a sentence.
_TITLES = frozenset(
    "mr mrs ms dr prof st mt sen rep gov gen col lt sgt capt cmdr adm fr rev hon pres messrs mme mlle".split()
)
# Abbreviations that may also close a sentence: ambiguous, decided by the next word.
_CLOSING_ABBREVIATIONS = frozenset(
    "etc inc ltd co corp jr sr bros no vs fig approx est dept univ jan feb mar apr jun "
    "jul aug sep sept oct nov dec".split()
)
# Words that typically open a sentence; used to settle ambiguous full stops.
_SENTENCE_OPENERS = frozenset(
    "the a an this that these those it its he she they we i you his her their our my "
    "in on at for by from with after before during when while although though however "
    "but and or so yet there here as if since because many most some all each both "
    "one two three several no not its today later then thus also other".split()
)

_TERMINATOR = re.compile(r"""[.!?]+["'”’)\]]*(?=\s|$)""")
_NEXT_WORD = re.compile(r"""\s*["'“‘(\[]*([A-Za-z0-9][\w'’-]*)""")
_WORD_BEFORE = re.compile(r"""([A-Za-z][A-Za-z.]*)\.$""")
_DOTTED_ACRONYM = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]$")
_LINE_BREAKS = re.compile(r"\n[ \t]*(?:\n[ \t]*)*")
_LIST_OR_HEADING = re.compile(r"[ \t]*(?:[-*•+]\s|\d+[.)](?!\d)|#+\s|>\s)")
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[.,'’\-][A-Za-z0-9]+)*%?")
_STEM_SUFFIXES = ("ational", "ations", "ation", "ness", "ment", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """`(start, end)` offsets of the sentences of `text`, whitespace-stripped, in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in sorted(_line_cuts(text) | _punctuation_cuts(text)):
        _append_span(text, start, cut, spans)
        start = cut
    _append_span(text, start, len(text), spans)
    return spans


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, verbatim (see `sentence_spans`)."""
    return [text[start:end] for start, end in sentence_spans(text)]


def tokenize(text: str) -> list[str]:
    """Lower-cased word and number tokens of `text`, in order."""
    return [token.lower() for token in _TOKEN.findall(text)]


def content_words(text: str) -> list[str]:
    """Stemmed tokens of `text` that carry content: no stopwords, no single letters."""
    return [stem(token) for token in tokenize(text) if token not in STOPWORDS and len(token) > 1]


def stem(word: str) -> str:
    """Strip one common English suffix, keeping a stem of at least three characters."""
    if not word.isalpha():
        return word
    for suffix in _STEM_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def _append_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    segment = text[start:end]
    stripped_start = start + len(segment) - len(segment.lstrip())
    stripped_end = start + len(segment.rstrip())
    if stripped_end > stripped_start:
        spans.append((stripped_start, stripped_end))


def _line_cuts(text: str) -> set[int]:
    """Offsets where line structure ends a sentence (see the module docstring)."""
    cuts = set()
    for match in _LINE_BREAKS.finditer(text):
        last = match.start() - 1
        while last >= 0 and text[last].isspace():
            last -= 1
        line_start = text.rfind("\n", 0, last + 1) + 1
        if (
            match.group().count("\n") > 1  # a blank line
            or last < 0
            or text[last] in ".!?:;"
            or _LIST_OR_HEADING.match(text, match.end())
            or _LIST_OR_HEADING.match(text, line_start)
        ):
            cuts.add(match.end())
    return cuts


def _punctuation_cuts(text: str) -> set[int]:
    """Offsets just after sentence-ending punctuation (see the module docstring)."""
    cuts = set()
    for match in _TERMINATOR.finditer(text):
        if _ends_sentence(text, match.start(), match.end()):
            cuts.add(match.end())
    return cuts


def _ends_sentence(text: str, mark: int, after: int) -> bool:
    next_word = _NEXT_WORD.match(text, after)
    if next_word is None:
        return after >= len(text.rstrip())
    first = next_word.group(1)
    if first[0].islower():
        return False
    if text[mark] != "." or text[mark:after].startswith(".."):
        return True
    word = _WORD_BEFORE.search(text[max(0, mark - 40) : mark + 1])
    if word is None:
        return True
    return _full_stop_ends_sentence(word.group(1), first)


def _full_stop_ends_sentence(word: str, next_word: str) -> bool:
    lowered = word.lower()
    if lowered in _TITLES:
        return False
    ambiguous = (
        (len(word) == 1 and word.isupper())
        or _DOTTED_ACRONYM.match(word) is not None
        or lowered in _CLOSING_ABBREVIATIONS
    )
    if ambiguous:
        return next_word.lower() in _SENTENCE_OPENERS
    return True


# A pronoun, or a determiner and a common (lower-case) noun, opening the sentence.
_REFERS_BACK = re.compile(
    r"\s*(?:(?i:in|by|as of|since)\s+\d{4},?\s+)?"  # a date may come first: "In 2021 its population ..."
    r"(?:(?i:it|its|they|their|he|she|his|her)\b|(?i:the|this|that|these|those)\s+[a-z][\w-]*\b"
    r"(?!\s+(?:of|in|for)\s+(?:the\s+)?[A-Z]))"  # "the population of Chile" names its own subject
)


def refers_back(sentence: str) -> bool:
    """True when the sentence opens (after a date, if any) with a pronoun or "the/this <common noun>" ("The
    company employs ...", "In 2021 its population ..."), so what it is about was named before it, not in
    it; "the population of Chile" names its own subject."""
    return _REFERS_BACK.match(sentence) is not None
