"""A claim's checkable specifics, and where a text holds them.

A specific is what a claim could get wrong while every other word stays right: a figure with its unit ("330
metres"), a date ("20 July 1969", "1889"), a name (a person, place, organisation, work, vessel or event: "Apollo
11", "Mount Kilimanjaro", "the Pacific Ocean", "Medicine") or a contrast term (a word from a small closed set
whose neighbours flip the meaning: north/south, largest/smallest, first/last, opened/closed, won/lost,
increased/decreased). Common content words ("mission", "landed") are not specifics: they may be paraphrased, and
whether a sentence means them is for an entailment model to say.

- `claim_specifics(claim)`: the claim's specifics, in order.
- `TextFacts(text)` (`text_facts`, cached by text): what a text holds, read once.
- `occurrences(specific, facts)`: where the text states the specific: verbatim (the same words, any case),
  normalised ("1,642 metres" = "1642 m", "9 Nov 1989" = "9 November 1989", "northern" = "north") or by a known
  equivalence (a country and its demonym or short form: "France" = "French", "UK" = "United Kingdom").
- `rivals(specific, facts)`: what the text gives in its place, of the same kind: another year, another figure
  counting the same thing, another name of the same category (two countries, two oceans: the gazetteer's
  categories), another member of the term's set ("smallest" for "largest").
- `missing_from(claim, texts)`: the claim's specifics that none of the texts states (the gateway's audit).

Names are capitalised spans ("Nobel Prize", "Eiffel Tower"), joined over "of", "de", "von" and the like
("Champ de Mars"), with a number that follows ("Apollo 11"); a capitalised first word counts only when more of
the name follows, or the gazetteer knows it ("Paris is ..."), since any sentence starts with one. The gazetteer
(data/gazetteer.json, scripts/prepare_gazetteer.py) gives places, celestial bodies, fields, months and weekdays
their category and their equivalent spellings. English only; rule-based.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Iterable, Sequence

from factcheck.text.numbers import (
    DateMention,
    Quantity,
    comparable,
    dates_agree,
    find_dates,
    find_quantities,
    is_measure,
    may_count_the_same,
)
from factcheck.text.sentences import STOPWORDS, stem

KIND_FIGURE, KIND_DATE, KIND_NAME, KIND_TERM = "figure", "date", "name", "term"
# How a text states a specific: the same words, a normalised form, or a known equivalent.
VERBATIM, NORMALISED, EQUIVALENT = "verbatim", "normalised", "equivalent"

# Words that join the parts of one name ("Champ de Mars", "University of Oxford", "Confessions of a Dangerous Mind").
_NAME_JOINERS = frozenset("of de del della da di du von van der den la le y the a an".split())
# Words after a name that it may be written without ("John S. McCain Jr." is "McCain"), and titles before one.
_NAME_SUFFIXES = frozenset("jr sr ii iii iv st dr mr mrs ms prof".split())
# All-capital words that name a kind of thing, not one thing.
_COMMON_ACRONYMS = frozenset(
    "TV DVD CD CEO CFO PC AI GDP DNA RNA HIV AIDS UFO FM AM PM ID IQ VIP MP MVP USB PDF".split()
)
# Capitalised words that are not names: sentence openers and function words written with a capital.
_NOT_NAMES = STOPWORDS | frozenset("i mr mrs ms dr st".split())
_WORD = re.compile(r"[^\W\d_](?:[\w'’.-]*[^\W_])?|\d+(?:[.,]\d+)*")
_POSSESSIVE = re.compile(r"['’]s?$")
# "19th", "2nd": an ordinal (a rank), not a figure.
_ORDINAL_SUFFIX = re.compile(r"(?:st|nd|rd|th)\b")

# Contrast terms: each word → (its set, its value). Two words of one set with different values say different
# things of the same attribute ("the largest" / "the smallest"); one value's words say the same ("largest" =
# "biggest", "north" = "northern").
_TERM_SETS: dict[str, dict[str, tuple[str, ...]]] = {
    "direction": {
        "north": ("north", "northern", "northward", "northwards", "north-bound"),
        "south": ("south", "southern", "southward", "southwards"),
        "east": ("east", "eastern", "eastward", "eastwards"),
        "west": ("west", "western", "westward", "westwards"),
        "northeast": ("northeast", "north-east", "northeastern", "north-eastern"),
        "northwest": ("northwest", "north-west", "northwestern", "north-western"),
        "southeast": ("southeast", "south-east", "southeastern", "south-eastern"),
        "southwest": ("southwest", "south-west", "southwestern", "south-western"),
    },
    "size": {
        "largest": ("largest", "biggest"),
        "smallest": ("smallest", "tiniest"),
        "second-largest": ("second-largest", "second-biggest"),
        "third-largest": ("third-largest", "third-biggest"),
    },
    "height": {
        "highest": ("highest", "tallest"),
        "lowest": ("lowest",),
        "second-highest": ("second-highest", "second-tallest"),
    },
    "length": {"longest": ("longest",), "shortest": ("shortest",), "second-longest": ("second-longest",)},
    "age": {"oldest": ("oldest",), "youngest": ("youngest",), "newest": ("newest",)},
    "depth": {"deepest": ("deepest",), "shallowest": ("shallowest",)},
    "speed": {"fastest": ("fastest",), "slowest": ("slowest",)},
    "wealth": {"richest": ("richest", "wealthiest"), "poorest": ("poorest",)},
    "population": {"most populous": ("most-populous",), "least populous": ("least-populous",)},
    "order": {
        "first": ("first",),
        "last": ("last", "final"),
        "second": ("second",),
        "third": ("third",),
        "fourth": ("fourth",),
        "fifth": ("fifth",),
    },
    "time": {"earliest": ("earliest",), "latest": ("latest",)},
    "sequence": {"before": ("before", "prior"), "after": ("after", "following")},
    "size comparison": {"larger": ("larger", "bigger"), "smaller": ("smaller",)},
    "height comparison": {"higher": ("higher", "taller"), "lower": ("lower",)},
    "age comparison": {"older": ("older",), "younger": ("younger",)},
    "change": {
        "up": (
            *("increased", "increase", "increases", "increasing", "rose", "risen", "rise", "rises", "rising"),
            *("grew", "grown", "grow", "grows", "growing", "expanded", "expand", "expands", "expanding"),
        ),
        "down": (
            *("decreased", "decrease", "decreases", "decreasing", "fell", "fallen", "falling"),
            *("declined", "declines", "declining", "shrank", "shrunk", "shrink", "shrinks", "shrinking"),
        ),
    },
    "opening": {"opened": ("opened", "opens", "reopened"), "closed": ("closed", "closes", "shut")},
    "outcome": {
        "won": ("won", "win", "wins", "winning", "awarded", "earned"),
        "lost": ("lost", "lose", "loses", "losing"),
    },
    "life": {"born": ("born",), "died": ("died", "dies")},
    "status": {"legal": ("legal",), "illegal": ("illegal",)},
    "sector": {"public": ("public",), "private": ("private",)},
    "sex": {"male": ("male", "males"), "female": ("female", "females")},
    "truth": {"true": ("true",), "false": ("false",)},
    "life state": {"alive": ("alive",), "dead": ("dead",)},
}
# Term sets whose words open a sentence as a way into it ("After the war, ..."), not as what it says.
_OPENING_TERM_SETS = frozenset({"sequence"})
_TERMS: dict[str, tuple[str, str]] = {
    word: (term_set, value)
    for term_set, values in _TERM_SETS.items()
    for value, words in values.items()
    for word in words
}


@dataclass(frozen=True)
class Specific:
    """One specific of a claim. `text` is claim[start:end]; `words` are a name's or term's lower-case words
    (possessives dropped); `category` is a name's gazetteer category or a term's set; `value` a term's value."""

    kind: str
    text: str
    start: int
    end: int
    words: tuple[str, ...] = ()
    category: str | None = None
    value: str | None = None
    quantity: Quantity | None = None
    date: DateMention | None = None
    # A date written as a bound ("before 10 June 2001", "after 1990"): "before" or "after" it.
    bound: str | None = None


@dataclass(frozen=True)
class Occurrence:
    """Where a text states (or, for `rivals`, contradicts) a specific: text[start:end], and how."""

    start: int
    end: int
    how: str
    text: str = ""


@dataclass(frozen=True)
class _Token:
    word: str  # as written
    lower: str
    start: int
    end: int
    capital: bool


@dataclass(frozen=True)
class _Name:
    text: str
    start: int
    end: int
    words: tuple[str, ...]
    category: str | None


@dataclass
class TextFacts:
    """What a text holds, whatever the claim: its tokens, figures, dates, names and contrast terms."""

    text: str
    tokens: list[_Token] = field(default_factory=list)
    words: frozenset[str] = frozenset()  # lower-case word forms, possessives dropped
    stems: frozenset[str] = frozenset()
    quantities: list[Quantity] = field(default_factory=list)
    dates: list[DateMention] = field(default_factory=list)
    names: list[_Name] = field(default_factory=list)
    terms: list[tuple[_Token, str, str]] = field(default_factory=list)  # (token, set, value)

    def __post_init__(self) -> None:
        self.tokens = _tokens(self.text)
        self.words = frozenset(_bare(t.lower) for t in self.tokens)
        self.stems = frozenset(stem(w) for w in self.words)
        self.dates = find_dates(self.text)
        date_spans = [(d.start, d.end) for d in self.dates]
        self.names = [n for n in _names(self.text, self.tokens) if not _inside(n.start, n.end, date_spans)]
        name_spans = [(n.start, n.end) for n in self.names]
        # A number inside a name ("Apollo 11", "Boeing 747") is part of the name, not a figure.
        self.quantities = [
            q
            for q in find_quantities(self.text)
            if not any(a <= q.start < b for a, b in name_spans) and not _ORDINAL_SUFFIX.match(self.text, q.end)
        ]
        self.terms = _terms(self.text, self.tokens)


@lru_cache(maxsize=1024)
def text_facts(text: str) -> TextFacts:
    return TextFacts(text)


def claim_specifics(claim: str) -> list[Specific]:
    """The claim's specifics (see the module docstring), in the order they appear."""
    facts = text_facts(claim)
    found: list[Specific] = []
    for quantity in facts.quantities:
        found.append(Specific(KIND_FIGURE, quantity.text, quantity.start, quantity.end, quantity=quantity))
    for date in facts.dates:
        bound = _DATE_BOUND.search(claim[: date.start])
        if bound:  # "before 10 June 2001": the bound word is part of the date's specific
            side = _BOUNDS[bound.group(1).lower()]
            found.append(
                Specific(KIND_DATE, claim[bound.start() : date.end], bound.start(), date.end, date=date, bound=side)
            )
        else:
            found.append(Specific(KIND_DATE, date.text, date.start, date.end, date=date))
    for name in facts.names:
        found.append(Specific(KIND_NAME, name.text, name.start, name.end, name.words, name.category))
    taken = [(s.start, s.end) for s in found]
    for token, term_set, value in facts.terms:
        if not _inside(token.start, token.end, taken):
            found.append(Specific(KIND_TERM, token.word, token.start, token.end, (token.lower,), term_set, value))
    return sorted(found, key=lambda s: s.start)


def occurrences(specific: Specific, facts: TextFacts) -> list[Occurrence]:
    """Where `facts`' text states `specific` (see the module docstring), in order."""
    text = facts.text
    if specific.kind == KIND_FIGURE and specific.quantity is not None:
        claimed = specific.quantity
        return [
            Occurrence(q.start, q.end, _same_words(claimed.text, q.text), q.text)
            for q in facts.quantities
            if may_count_the_same(claimed, q) and _implies(q, claimed)
        ]
    if specific.kind == KIND_DATE and specific.date is not None:
        claimed_date = specific.date
        if specific.bound is not None:
            return [
                Occurrence(d.start, d.end, NORMALISED, d.text)
                for d in facts.dates
                if _within(d, claimed_date, specific.bound)
            ]
        return [
            Occurrence(d.start, d.end, _same_words(claimed_date.text, d.text), d.text)
            for d in facts.dates
            if _date_implies(d, claimed_date)
        ]
    if specific.kind == KIND_TERM:
        return [
            Occurrence(t.start, t.end, VERBATIM if t.lower == specific.words[0] else NORMALISED, t.word)
            for t, term_set, value in facts.terms
            if term_set == specific.category and value == specific.value
        ]
    return _name_occurrences(specific, facts, text)


def rivals(specific: Specific, facts: TextFacts) -> list[Occurrence]:
    """What `facts`' text gives instead of `specific`: values of the same kind that do not agree with it (a
    year for a year, a figure counting the same thing, a name of the same gazetteer category, another value
    of the same contrast set), in order. A name without a category has no rivals here (the grounding rules
    look for one in the same place of the sentence)."""
    if specific.kind == KIND_FIGURE and specific.quantity is not None:
        claimed = specific.quantity
        return [
            Occurrence(q.start, q.end, "rival", q.text)
            for q in facts.quantities
            if _same_count(claimed, q) and _contradicts(q, claimed)
        ]
    if specific.kind == KIND_DATE and specific.date is not None:
        claimed_date = specific.date
        if specific.bound is not None:
            # Only a bound of the same side is another value of it ("since 2016" for "since 2018"): any other
            # date may well lie within the claim's bound.
            return [
                Occurrence(d.start, d.end, "rival", d.text)
                for d in facts.dates
                if _bound_before(facts.text, d.start) == specific.bound and not dates_agree(claimed_date, d)
            ]
        # A bound in the text ("before 1492") is no date of the event: it may hold whatever the claim's date is.
        return [
            Occurrence(d.start, d.end, "rival", d.text)
            for d in facts.dates
            if not dates_agree(claimed_date, d) and _bound_before(facts.text, d.start) is None
        ]
    if specific.kind == KIND_TERM:
        return [
            Occurrence(t.start, t.end, "rival", t.word)
            for t, term_set, value in facts.terms
            if term_set == specific.category and value != specific.value
        ]
    if specific.category is None:
        return []
    own = _name_keys(specific.words)
    return [
        Occurrence(n.start, n.end, "rival", n.text)
        for n in facts.names
        if n.category == specific.category and not (_name_keys(n.words) & own)
    ]


def missing_from(claim: str, texts: Iterable[str]) -> list[Specific]:
    """The claim's specifics that none of `texts` states, in the claim's order."""
    held = [text_facts(text) for text in texts]
    return [s for s in claim_specifics(claim) if not any(occurrences(s, facts) for facts in held)]


def _terms(text: str, tokens: Sequence[_Token]) -> list[tuple[_Token, str, str]]:
    """The contrast terms of the text; two words that make one ("second largest", "most populous") are read as
    their hyphenated form."""
    found: list[tuple[_Token, str, str]] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if index + 1 < len(tokens):
            joined = f"{token.lower}-{tokens[index + 1].lower}"
            if joined in _TERMS and text[token.end : tokens[index + 1].start] == " ":
                after = tokens[index + 1]
                whole = _Token(text[token.start : after.end], joined, token.start, after.end, token.capital)
                found.append((whole, *_TERMS[joined]))
                index += 2
                continue
        if token.lower in _TERMS and not (
            _TERMS[token.lower][0] in _OPENING_TERM_SETS and _opens_sentence(text, token.start)
        ):
            found.append((token, *_TERMS[token.lower]))
        elif "-" in token.lower and token.lower.split("-")[0] in _TERMS:
            # "third-round", "north-facing": the compound's first word is the term
            first = token.word.split("-")[0]
            found.append(
                (
                    _Token(first, first.lower(), token.start, token.start + len(first), token.capital),
                    *_TERMS[first.lower()],
                )
            )
        index += 1
    return found


# --- names -----------------------------------------------------------------------------------------------


def _tokens(text: str) -> list[_Token]:
    tokens = []
    for match in _WORD.finditer(text):
        word = match.group().rstrip(".")
        if not word:
            continue
        tokens.append(_Token(word, word.lower(), match.start(), match.start() + len(word), word[0].isupper()))
    return tokens


def _names(text: str, tokens: Sequence[_Token]) -> list[_Name]:
    """Capitalised spans (see the module docstring): a run of capitalised words, joined over joiner words ("Champ
    de Mars", "Confessions of a Dangerous Mind") and capitalised function words inside a title ("Speak Your
    Mind", "Just Mercy"), with initials and titles ("John S. McCain Jr.") and a number right after ("Apollo 11").
    A single letter or a common acronym ("TV") alone is no name."""
    names: list[_Name] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        opening = _opens_sentence(text, token.start)
        if not (_name_word(token) or (token.capital and not opening and _continues(text, tokens, index))):
            index += 1
            continue
        last = _name_end(text, tokens, index)
        span = tokens[index : last + 1]
        index = last + 1
        start, end = span[0].start, span[-1].end
        if span[-1].lower in _NAME_SUFFIXES and text[end : end + 1] == ".":
            end += 1
        if len(span) == 1 and (len(span[0].word) == 1 or span[0].word in _COMMON_ACRONYMS):
            continue
        words = tuple(_bare(t.lower) for t in span if t.lower not in _NAME_JOINERS)
        category = _category(words)
        if opening and len(span) == 1 and category is None:
            continue  # any sentence starts with a capital: one word alone there is a name only if the gazetteer says so
        names.append(_Name(text[start:end], start, end, words, category))
    return names


def _name_end(text: str, tokens: Sequence[_Token], first: int) -> int:
    """The index of the last token of the name that starts at `first`."""
    last = first
    probe = first + 1
    while probe < len(tokens) and _adjacent(text, tokens[probe - 1], tokens[probe]):
        candidate = tokens[probe]
        if _name_word(candidate) or (candidate.capital and _continues(text, tokens, probe)):
            last = probe
            probe += 1
        elif candidate.lower[0].isdigit():
            if probe == last + 1 and len(candidate.word) <= 4:
                last = probe
            break
        elif candidate.lower in _NAME_JOINERS:
            after = probe
            while after < len(tokens) and tokens[after].lower in _NAME_JOINERS:
                after += 1
            if after < len(tokens) and _name_word(tokens[after]) and _adjacent(text, tokens[after - 1], tokens[after]):
                probe = after
            else:
                break
        else:
            break
    return last


def _name_word(token: _Token) -> bool:
    return token.capital and (token.lower not in _NOT_NAMES or token.word == "May") and not token.lower[0].isdigit()


def _continues(text: str, tokens: Sequence[_Token], index: int) -> bool:
    """A capitalised function word inside a title: the next word, right after it, is a name word."""
    following = index + 1
    return (
        following < len(tokens) and _adjacent(text, tokens[index], tokens[following]) and _name_word(tokens[following])
    )


def _adjacent(text: str, before: _Token, after: _Token) -> bool:
    """Only spaces (or a hyphen) between two tokens, or the full stop of an initial or a title ("S. McCain"): a
    comma or a sentence's full stop ends a name."""
    between = text[before.end : after.start]
    if "\n" in between:
        return False
    if between.strip(" -") == "":
        return True
    initial = len(before.word) == 1 and before.word.isupper()
    return between.strip() == "." and (initial or before.lower in _NAME_SUFFIXES)


def _opens_sentence(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \t\"'“‘(")
    return not before or before[-1] in ".!?:\n"


def _has_digit(span: Sequence[_Token]) -> bool:
    return any(t.lower[0].isdigit() for t in span)


def _bare(word: str) -> str:
    return _POSSESSIVE.sub("", word) if "'" in word or "’" in word else word


def _inside(start: int, end: int, spans: Sequence[tuple[int, int]]) -> bool:
    return any(a <= start and end <= b for a, b in spans)


def _name_occurrences(specific: Specific, facts: TextFacts, text: str) -> list[Occurrence]:
    """Every place the text names it: verbatim where its words appear together as written; normalised where the
    text holds each of its distinctive words (initials, "Jr." and possessives aside: "McCain" for "John S.
    McCain Jr."); by equivalence where the text names the same gazetteer entry another way (a demonym, a short
    form: "Canadian" for "Canada")."""
    found: list[Occurrence] = []
    pattern = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in specific.text.split()) + r"(?!\w)", re.I)
    for match in pattern.finditer(text):
        found.append(Occurrence(match.start(), match.end(), VERBATIM, match.group()))
    wanted = _distinctive_words(specific.words)
    forms = {form for w in wanted for form in _name_forms(w)}
    if not found and wanted and all(_name_forms(w) & facts.words for w in wanted):
        for token in facts.tokens:
            if _bare(token.lower) in forms:
                found.append(Occurrence(token.start, token.end, NORMALISED, token.word))
    keys = _name_keys(specific.words)
    if keys:
        for name in facts.names:
            if _name_keys(name.words) & keys and not _overlaps_any(name.start, found):
                found.append(Occurrence(name.start, name.end, EQUIVALENT, name.text))
        for token in facts.tokens:  # a demonym written in lower case or inside a hyphenated word
            if _entries([token.lower]) & keys and not _overlaps_any(token.start, found):
                found.append(Occurrence(token.start, token.end, EQUIVALENT, token.word))
    return sorted(found, key=lambda o: o.start)


def _name_forms(word: str) -> set[str]:
    """A name word as a text may write it: itself, and with or without a plural "s" ("Beatles", "Beatle"); never a
    stem ("Economics" is not "economic")."""
    return {word, word + "s", word[:-1] if word.endswith("s") and len(word) > 3 else word}


def _distinctive_words(words: Sequence[str]) -> list[str]:
    """A name's words that say which one it is: no joiners, initials, titles or "Jr."."""
    return [w for w in words if w not in _NAME_JOINERS and w not in _NAME_SUFFIXES and (len(w) > 1 or w.isdigit())]


def _overlaps_any(start: int, found: Sequence[Occurrence]) -> bool:
    return any(o.start <= start < o.end for o in found)


def _implies(stated: Quantity, claimed: Quantity) -> bool:
    """The stated figure says at least what the claimed one does: its interval lies within the claim's, widened by
    their rounding ("8.7 million" implies "more than 3 million"; "over 436 million" does not imply "over 872
    million")."""
    tolerance = max(stated.tolerance, claimed.tolerance)
    return claimed.low - tolerance <= stated.low and stated.high <= claimed.high + tolerance


# A date the claim bounds: "before", "prior to", "until", "by" (at the latest); "after", "since" (from then on).
_DATE_BOUND = re.compile(r"\b(before|prior to|until|till|by|after|since)\s+(?:the\s+)?$", re.IGNORECASE)
_BOUNDS = {
    **dict.fromkeys(("before", "prior to", "until", "till", "by"), "before"),
    **dict.fromkeys(("after", "since"), "after"),
}


def _bound_before(text: str, start: int) -> str | None:
    """The side of the bound written right before a date ("since 2016": "after"), or None."""
    bound = _DATE_BOUND.search(text[:start])
    return _BOUNDS[bound.group(1).lower()] if bound else None


def _within(stated: DateMention, claimed: DateMention, bound: str) -> bool:
    """The stated date lies on the bound's side of the claimed one, at the precision both give."""

    def key(date: DateMention, fill: int) -> tuple[int, int, int]:
        return (date.year, date.month or fill, date.day or fill)

    if bound == "before":
        return key(stated, 1) < key(claimed, 1) or (key(stated, 12) <= key(claimed, 12) and stated.day is None)
    return key(stated, 12) > key(claimed, 12) or (key(stated, 1) >= key(claimed, 1) and stated.day is None)


def _same_count(a: Quantity, b: Quantity) -> bool:
    """Two figures of one kind: the same unit, or a count and a bare number ("378.9 million people" against "a
    population of 126.3 million"); two counts of different things ("196 countries", "55 parties") are not."""
    return comparable(a, b) or (not (is_measure(a.unit) or is_measure(b.unit)) and not (a.unit and b.unit))


def _date_implies(stated: DateMention, claimed: DateMention) -> bool:
    """The stated date says at least what the claimed one does: "20 July 1969" implies "1969" and "July 1969"; a
    bare "2017" does not imply "23 November 2017"."""
    if claimed.decade:
        return stated.year // 10 == claimed.year // 10
    if stated.decade or stated.year != claimed.year:
        return False
    return (claimed.month is None or stated.month == claimed.month) and (
        claimed.day is None or stated.day == claimed.day
    )


def _contradicts(stated: Quantity, claimed: Quantity) -> bool:
    """The two figures cannot both hold: their intervals, widened by their rounding, do not meet."""
    tolerance = max(stated.tolerance, claimed.tolerance)
    return stated.high + tolerance < claimed.low or claimed.high + tolerance < stated.low


def _same_words(claimed: str, stated: str) -> str:
    """VERBATIM when the claim's words stand as written in the stated value ("1969" in "20 July 1969")."""
    wanted, held = " ".join(claimed.lower().split()), " ".join(stated.lower().split())
    return VERBATIM if re.search(r"(?<!\w)" + re.escape(wanted) + r"(?!\w)", held) else NORMALISED


# --- the gazetteer ----------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _gazetteer() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    """(lower-case spelling → the entries it names, entry → category): every name, alias and demonym. A spelling
    may name several entries ("Indian": India, the British Indian Ocean Territory; "Congolese": both Congos)."""
    data = json.loads(resources.files("factcheck.text").joinpath("data/gazetteer.json").read_text("utf-8"))
    spellings: dict[str, set[str]] = {}
    categories: dict[str, str] = {}
    for name, entry in data["entries"].items():
        categories[name] = entry["category"]
        for spelling in [name, *entry["aliases"], *entry["demonyms"]]:
            spellings.setdefault(_spelling_key(spelling), set()).add(name)
    return {key: frozenset(names) for key, names in spellings.items()}, categories


def _spelling_key(spelling: str) -> str:
    words = [_bare(w.lower()) for w in _WORD.findall(spelling)]
    return " ".join(w for w in words if w != "the")


def _entries(words: Sequence[str]) -> frozenset[str]:
    """The gazetteer entries a name's words spell, a leading qualifier aside ("North Atlantic Ocean")."""
    spellings = _gazetteer()[0]
    entries = spellings.get(_spelling_key(" ".join(words)), frozenset())
    if not entries and len(words) > 1 and words[0] in _QUALIFIERS:
        entries = spellings.get(_spelling_key(" ".join(words[1:])), frozenset())
    return entries


def _name_keys(words: Sequence[str]) -> frozenset[str]:
    return _entries(words)


# Words that may stand before a gazetteer name without making it another one ("the North Atlantic Ocean").
_QUALIFIERS = frozenset("north south east west northern southern eastern western central upper lower greater".split())


def _category(words: Sequence[str]) -> str | None:
    """The gazetteer's category of a name's words (the first entry's, in name order), or None."""
    entries = _entries(words)
    return _gazetteer()[1][min(entries)] if entries else None
