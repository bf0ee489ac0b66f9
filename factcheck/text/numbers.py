"""Numbers, quantities and dates in text, normalised so a claim and a passage can be compared.

`find_quantities(text)` reads every figure: "1,234", "1.5 million", "$2bn", "45%",
"45 per cent", "12 km", "ten", "between 10 and 20", "10-20", "about 300", "more than
5,000 people". Each becomes a `Quantity` holding an interval [low, high] in base units
(km → metres, tonnes → kilograms, "2 billion" → 2e9), the unit it counts (a known
measure, a currency, "%", or the counted noun: the head of the noun phrase that follows,
singularised: "196 countries" → "country", "14 public libraries" → "library", "a 12-storey
tower" → "storey"), and whether it was hedged ("about", "nearly", "~"). "a third of", "two
thirds of" and "half of" are shares, in %.

`find_dates(text)` reads "March 8, 1841", "8 March 1841", "March 1841", "2019-04-09",
bare years ("in 1969") and decades ("the 1980s") as `DateMention`s. Year-like numbers
are read as dates, not as quantities.

`quantities_agree` and `dates_agree` decide whether two mentions can be the same fact:
a quantity matches within its rounding (a figure written "8.3 million" covers 8,336,817;
a round "200,000" allows 5%; a hedged one 10%) and bounds are intervals ("more than
5,000" agrees with 6,200). `comparable` says whether two quantities count the same thing
at all, so "196 countries" is never contradicted by "55 parties".

Limits: English only; no conversion between unit families (miles and km are compared,
miles and hours are not); fractions other than "<count> <part> of" shares, ordinals and spelled-out
compound numbers beyond "twenty-one" style are not read; a four-digit number from 1000
to 2099 with no unit is taken for a year.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}

_WORD_NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
}

# The second word of "twenty-one" ... "ninety-nine".
_COMPOUND_UNITS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}

_SCALES = {
    "hundred": 1e2,
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
    "mn": 1e6,
    "mln": 1e6,
    "bn": 1e9,
    "tn": 1e12,
}
# Short scales that are also units ("5 m" is five metres): read only after a currency sign.
_CURRENCY_SCALES = {"k": 1e3, "m": 1e6, "b": 1e9}

# unit word → (normalised unit, factor to the family's base unit)
_UNITS = {
    "%": ("%", 1),
    "percent": ("%", 1),
    "per cent": ("%", 1),
    "pct": ("%", 1),
    "percentage points": ("%", 1),
    "percentage point": ("%", 1),
    "mm": ("m", 1e-3),
    "millimetre": ("m", 1e-3),
    "millimeter": ("m", 1e-3),
    "cm": ("m", 1e-2),
    "centimetre": ("m", 1e-2),
    "centimeter": ("m", 1e-2),
    "m": ("m", 1),
    "metre": ("m", 1),
    "meter": ("m", 1),
    "km": ("m", 1e3),
    "kilometre": ("m", 1e3),
    "kilometer": ("m", 1e3),
    "mi": ("m", 1609.344),
    "mile": ("m", 1609.344),
    "ft": ("m", 0.3048),
    "foot": ("m", 0.3048),
    "feet": ("m", 0.3048),
    "inch": ("m", 0.0254),
    "inches": ("m", 0.0254),
    "g": ("kg", 1e-3),
    "gram": ("kg", 1e-3),
    "kg": ("kg", 1),
    "kilogram": ("kg", 1),
    "t": ("kg", 1e3),
    "tonne": ("kg", 1e3),
    "ton": ("kg", 1e3),
    "lb": ("kg", 0.45359237),
    "lbs": ("kg", 0.45359237),
    "pound": ("kg", 0.45359237),
    "m2": ("m2", 1),
    "m²": ("m2", 1),
    "km2": ("m2", 1e6),
    "km²": ("m2", 1e6),
    "sq km": ("m2", 1e6),
    "square kilometre": ("m2", 1e6),
    "square kilometer": ("m2", 1e6),
    "sq mi": ("m2", 2589988.11),
    "mi2": ("m2", 2589988.11),
    "mi²": ("m2", 2589988.11),
    "square mile": ("m2", 2589988.11),
    "hectare": ("m2", 1e4),
    "ha": ("m2", 1e4),
    "acre": ("m2", 4046.8564224),
    "second": ("s", 1),
    "sec": ("s", 1),
    "minute": ("s", 60),
    "min": ("s", 60),
    "hour": ("s", 3600),
    "hr": ("s", 3600),
    "day": ("s", 86400),
    "week": ("s", 604800),
    "month": ("month", 1),
    "year": ("year", 1),
    "yr": ("year", 1),
    "decade": ("year", 10),
    "century": ("year", 100),
    "°c": ("°c", 1),
    "°f": ("°f", 1),
    "degree": ("degree", 1),
    "kw": ("w", 1e3),
    "mw": ("w", 1e6),
    "gw": ("w", 1e9),
    "watt": ("w", 1),
    "kwh": ("wh", 1e3),
    "mph": ("mph", 1),
    "km/h": ("km/h", 1),
}

_CURRENCIES = {
    "$": "usd",
    "us$": "usd",
    "usd": "usd",
    "dollar": "usd",
    "us dollar": "usd",
    "u.s. dollar": "usd",
    "€": "eur",
    "eur": "eur",
    "euro": "eur",
    "£": "gbp",
    "gbp": "gbp",
    "¥": "jpy",
    "yen": "jpy",
    "₹": "inr",
    "rupee": "inr",
}

_HEDGES = (
    "about",
    "approximately",
    "around",
    "roughly",
    "nearly",
    "almost",
    "some",
    "circa",
    "c.",
    "~",
    "an estimated",
    "estimated",
    "close to",
    "approx.",
)
_LOWER_BOUNDS = ("more than", "over", "above", "at least", "exceeding", "upwards of", "greater than")
_UPPER_BOUNDS = ("less than", "fewer than", "under", "below", "at most", "no more than", "up to")

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_WORDNUM = (
    r"(?:" + "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True)) + r")"
    r"(?:-(?:" + "|".join(_COMPOUND_UNITS) + r"))?"
)
_SCALE = r"(?:" + "|".join(sorted(_SCALES, key=len, reverse=True)) + r")\b"
_MEASURE_UNITS = frozenset(unit for unit, _ in _UNITS.values()) | frozenset(_CURRENCIES.values())
_CURRENCY_SIGN = r"(?:US\$|\$|€|£|¥|₹)"
_AMOUNT = rf"(?:{_NUM}|\b{_WORDNUM}\b)(?:\s*{_SCALE})?"
_PREFIXES = sorted(_HEDGES + _LOWER_BOUNDS + _UPPER_BOUNDS + ("between", "from"), key=len, reverse=True)
# A figure: optional hedge or bound, optional currency sign, the amount.
_HEAD = re.compile(
    rf"(?:(?<![\w$])(?P<pre>{'|'.join(re.escape(p) for p in _PREFIXES)})\s+)?"
    rf"(?P<cur>{_CURRENCY_SIGN})?\s?(?<![\w.])(?<![A-Za-z]-)(?P<amount>{_AMOUNT}(?(cur)(?:[kmb]\b)?))",
    re.IGNORECASE,
)
# The second end of a range: "-20", " to 20", " and 20" (the last only after "between").
_RANGE_TAIL = re.compile(rf"\s*(?P<sep>-|–|—|to\b|and\b)\s*{_CURRENCY_SIGN}?\s?(?P<amount>{_AMOUNT})", re.IGNORECASE)
# What the figure counts: a percent sign, a unit, or the next word.
_POST = re.compile(
    r"\s*(?P<post>%|per\s?cent\b|percentage\s+points?\b|°\s?[CF]\b|(?:US|U\.S\.)\s+dollars?\b|"
    r"(?:sq(?:uare)?\.?\s+)?[A-Za-z][A-Za-z/²2]*)",
    re.IGNORECASE,
)

# The unit words of a measure, plural or not, longest first: a figure they follow is no year ("1642 m deep"). Not
# time or "degree(s)": "In 1990 degrees were awarded" is a year.
_MEASURE_WORDS = "|".join(
    re.escape(word) + ("s?" if word[-1].isalpha() and len(word) > 2 else "")
    for word in sorted(
        (w for w, (unit, _) in _UNITS.items() if unit not in ("s", "month", "year", "degree")), key=len, reverse=True
    )
)

_DATE_PATTERNS = [
    # March 8, 1841 / March 8th 1841 / March 1841 / May of 2018
    re.compile(
        r"\b(?P<month>[A-Z][a-z]{2,8})\.?\s+(?:of\s+)?(?:(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+)?(?P<year>\d{4})\b"
    ),
    # 8 March 1841
    re.compile(r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<month>[A-Z][a-z]{2,8})\.?,?\s+(?P<year>\d{4})\b"),
    # 2019-04-09
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
    # the 1980s / 1980's
    re.compile(r"\b(?P<decade>1\d{3}|20\d{2})'?s\b"),
    # bare year, unless it is a count ("2000 people") or a measure ("1642 m deep", "1900 km"); a unit is matched in
    # its own case ("m", not "M") so that "1989 M. Curie" stays a year
    re.compile(
        r"(?<![\d,.$€£])\b(?P<year>1\d{3}|20\d{2})\b(?![,.]?\d)"
        r"(?!\s*(?:%|per\s?cent|million|billion|thousand|people|persons)\b)"
        rf"(?!\s*(?-i:{_MEASURE_WORDS})(?![\w²]))",
        re.IGNORECASE,
    ),
]


@dataclass(frozen=True)
class Quantity:
    """A figure as an interval in base units. `unit` is "" for a bare count."""

    low: float
    high: float
    unit: str
    approximate: bool
    text: str
    start: int
    end: int
    tolerance: float  # how far off a match may be, from the figure's rounding


@dataclass(frozen=True)
class DateMention:
    """A date to the precision it was written: a decade, a year, a month or a day."""

    year: int
    month: int | None
    day: int | None
    decade: bool
    text: str
    start: int
    end: int


def find_dates(text: str) -> list[DateMention]:
    """Dates and years in `text`, in order; the longest reading wins ("8 March 1841" over "March 1841")."""
    candidates = [
        mention
        for pattern in _DATE_PATTERNS
        for match in pattern.finditer(text)
        if (mention := _date_from_match(match)) is not None
    ]
    found: list[DateMention] = []
    for mention in sorted(candidates, key=lambda d: (d.start - d.end, d.start)):
        if not _overlaps((mention.start, mention.end), [(d.start, d.end) for d in found]):
            found.append(mention)
    return sorted(found, key=lambda d: d.start)


def find_quantities(text: str) -> list[Quantity]:
    """Figures in `text` other than dates and years, in order."""
    date_spans = [(d.start, d.end) for d in find_dates(text)]
    fractions = _fractions(text)
    taken = date_spans + [(f.start, f.end) for f in fractions]
    found = list(fractions)
    position = 0
    while head := _HEAD.search(text, position):
        position = head.end()
        if _overlaps(head.span("amount"), taken):
            continue
        quantity = _read_quantity(head)
        if quantity is not None:
            found.append(quantity)
            position = quantity.end
    return sorted(found, key=lambda q: q.start)


_FRACTION_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fifth": 5, "tenth": 10}
_FRACTION = re.compile(
    r"(?<![\w$])(?:(?P<pre>about|nearly|almost|roughly|around|more than|over|less than|under)\s+)?"
    r"(?:(?P<count>a|one|two|three|four|nine)\s+(?P<part>halves|half|thirds?|quarters?|fifths?|tenths?)|(?P<half>half))"
    r"(?=\s+of\b)",
    re.IGNORECASE,
)
_FRACTION_WORD = re.compile(r"\b(?:half|halves|thirds?|quarters?|fifths?|tenths?)\b", re.IGNORECASE)
_FRACTION_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "nine": 9}


def _fractions(text: str) -> list[Quantity]:
    """ "a third of", "two thirds of", "half of": a share, as a percentage (the form a source states it in)."""
    found = []
    for match in _FRACTION.finditer(text):
        if match.group("half"):
            share = 50.0
        else:
            part = match.group("part").lower()
            denominator = _FRACTION_DENOMINATORS.get(part) or _FRACTION_DENOMINATORS[part.rstrip("s")]
            share = 100.0 * _FRACTION_COUNTS[match.group("count").lower()] / denominator
        prefix = (match.group("pre") or "").lower()
        low, high = share, share
        if prefix in _LOWER_BOUNDS:
            high = math.inf
        elif prefix in _UPPER_BOUNDS:
            low = -math.inf
        approximate = prefix in _HEDGES
        # A fraction is a round share: "a third" stands for 30-36%, as a writer rounds.
        tolerance = max(0.1 * share, 1.0) if approximate else max(0.05 * share, 1.0)
        found.append(Quantity(low, high, "%", approximate, match.group(0), *match.span(), tolerance))
    return found


def comparable(a: Quantity, b: Quantity) -> bool:
    """True when `a` and `b` count the same kind of thing, so that different values conflict."""
    return a.unit == b.unit


def is_measure(unit: str) -> bool:
    """True for a unit of measure, a currency or "%"; False for a bare count or a counted noun ("people")."""
    return unit in _MEASURE_UNITS


def may_count_the_same(a: Quantity, b: Quantity) -> bool:
    """True when the same value may state the same figure: the same unit, or two counts whose nouns differ or are
    missing ("126.3 million people" and "a population of 126.3 million"); never a measure against another unit."""
    return a.unit == b.unit or not (is_measure(a.unit) or is_measure(b.unit))


def quantities_agree(a: Quantity, b: Quantity) -> bool:
    """True when the two intervals, widened by their rounding, overlap."""
    tolerance = max(a.tolerance, b.tolerance)
    return a.low - tolerance <= b.high and b.low - tolerance <= a.high


def dates_agree(a: DateMention, b: DateMention) -> bool:
    """True when nothing written in both differs: a year agrees with a full date in that year."""
    if a.decade or b.decade:
        return a.year // 10 == b.year // 10
    if a.year != b.year:
        return False
    if a.month is not None and b.month is not None and a.month != b.month:
        return False
    return a.day is None or b.day is None or a.day == b.day


def _date_from_match(match: re.Match[str]) -> DateMention | None:
    groups = match.groupdict()
    if groups.get("decade"):
        return DateMention(int(groups["decade"]), None, None, True, match.group(0), *match.span())
    month = _month_number(groups.get("month"))
    if groups.get("month") is not None and month is None:
        return None
    day = int(groups["day"]) if groups.get("day") else None
    if day is not None and not 1 <= day <= 31:
        return None
    return DateMention(int(groups["year"]), month, day, False, match.group(0), *match.span())


def _month_number(word: str | None) -> int | None:
    if word is None:
        return None
    if word.isdigit():
        number = int(word)
        return number if 1 <= number <= 12 else None
    return _MONTHS.get(word.lower())


def _read_quantity(head: re.Match[str]) -> Quantity | None:
    """The quantity starting at `head`, with its range end and unit when present."""
    text, prefix = head.string, (head.group("pre") or "").lower()
    currency = _CURRENCIES.get((head.group("cur") or "").lower(), "")
    first = _amount(head.group("amount"), bool(currency))
    if first is None:
        return None
    low, high, end, is_range = first, first, head.end(), False
    tail = _RANGE_TAIL.match(text, end)
    if tail and (tail.group("sep").lower() != "and" or prefix == "between"):
        second = _amount(tail.group("amount"), bool(currency))
        if second is not None and second[0] >= first[0]:
            low, high, end = _inherit_scale(first, head.group("amount"), tail.group("amount")), second, tail.end()
            is_range = True
    post = _POST.match(text, end)
    unit, factor = _unit(post.group("post")) if post and not currency else ("", 1.0)
    if unit in _CURRENCIES.values():
        currency, unit = unit, ""
    if post and (unit or currency and _singular(post.group("post").lower()) in _CURRENCIES):
        end = post.end()
    elif (
        not currency
        and (hyphened := _HYPHEN_UNIT.match(text, end))
        and hyphened.group("word").lower() not in _PHRASE_STOPS
    ):
        # "a 5-kilometre trail", "a 12-storey tower": the hyphened word is what is counted.
        unit, factor = _noun_unit(hyphened.group("word").lower())
        end = hyphened.end()
    elif not currency and (noun := _counted_noun(text, end)) is not None:
        unit, factor = _noun_unit(noun[0])
        end = noun[1]
    tolerance = max(low[1], high[1]) * factor
    low_value, high_value = low[0] * factor, high[0] * factor
    if prefix in _LOWER_BOUNDS:
        high_value = math.inf
    elif prefix in _UPPER_BOUNDS:
        low_value = -math.inf
    approximate = prefix in _HEDGES
    if approximate:
        tolerance = max(tolerance, 0.1 * abs(low_value))
    keeps_prefix = prefix and (is_range or prefix not in ("between", "from"))
    start = head.start() if keeps_prefix else head.start("cur") if head.group("cur") else head.start("amount")
    return Quantity(low_value, high_value, currency or unit, approximate, text[start:end], start, end, tolerance)


# Words that follow a figure without being what it counts ("5 of the", "10 in 2019").
_NOT_UNITS = frozenset(
    "a an and are as at be but by for from had has have in into is it its of on or over per "
    "than that the their then these they this those to under was were which while who with "
    "million billion trillion thousand hundred".split()
)


def _unit(post: str | None) -> tuple[str, float]:
    """(normalised unit, factor to the family's base unit) of a known measure or currency after a figure;
    ("", 1) for any other word (what a figure counts then is `_counted_noun`'s)."""
    if not post:
        return "", 1.0
    word = " ".join(post.lower().split())
    for candidate in (word, _singular(word)):
        if candidate in _UNITS:
            return _UNITS[candidate]
        if candidate in _CURRENCIES:
            return _CURRENCIES[candidate], 1.0
    return "", 1.0


def _noun_unit(word: str) -> tuple[str, float]:
    """A counted word as a unit: a known measure or currency normalised, any other noun singularised."""
    return _unit(word) if word in _KNOWN else (_singular(word), 1.0)


_KNOWN = frozenset({*_UNITS, *_CURRENCIES, *(f"{w}s" for w in _UNITS), *(f"{w}s" for w in _CURRENCIES)})
_HYPHEN_UNIT = re.compile(r"-(?P<word>[A-Za-z]{2,})\b")
_PHRASE_WORD = re.compile(r"[ \t]+(?P<word>[A-Za-z]+(?:-[A-Za-z]+)*)\b(?!')")
# Plurals that do not end in -s, and nouns counted as they are ("4,500 people", "250 staff").
_PLURAL_NOUNS = frozenset(
    "people persons children men women staff personnel police cattle sheep deer fish aircraft data media feet "
    "teeth mice geese".split()
)
# Words after a figure that end the phrase it counts ("14 libraries opened", "5 will be", "30 each").
_PHRASE_STOPS = _NOT_UNITS | frozenset(
    "is are was were be been being has have had will would can could may might must shall should do does did "
    "also still only just each every all both more less most least not no so if when where after before since "
    "until during across between among per via times".split()
)
# A noun phrase counted by a figure holds at most this many words ("3 high-speed electric trains").
_MAX_PHRASE_WORDS = 4


def _plural(word: str) -> bool:
    return word in _PLURAL_NOUNS or (
        len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ous"))
    )


def _verb_after_noun(word: str, text: str, end: int) -> bool:
    """An "-ed" word inside the phrase is a verb that ends it ("1 library opened in 2020") unless a plural
    noun follows it ("14 public trained doctors"); a hyphened one is an adjective ("high-speed")."""
    if not word.endswith("ed") or "-" in word:
        return False
    following = _PHRASE_WORD.match(text, end)
    return following is None or not _plural(following.group("word").lower())


def _counted_noun(text: str, position: int) -> tuple[str, int] | None:
    """The noun a figure counts, the head of the phrase after it, and where that noun ends: "14 public
    libraries" → "libraries", "4,000 maritime objects" → "objects", "250 full-time employees" → "employees".
    English puts the counted noun last in its phrase: the phrase ends at its first plural noun, before a
    function word or a verb-like "-ed" word, or at punctuation; None when no word follows the figure."""
    words: list[tuple[str, int]] = []
    while len(words) < _MAX_PHRASE_WORDS and (match := _PHRASE_WORD.match(text, position)):
        word = match.group("word").lower()
        if word in _PHRASE_STOPS or word in _SCALES or (words and _verb_after_noun(word, text, match.end())):
            break
        words.append((word, match.end()))
        position = match.end()
        if _plural(word) or word in _KNOWN:
            break
    while words and words[-1][0].endswith(("ed", "ing")) and "-" not in words[-1][0] and not _plural(words[-1][0]):
        words.pop()  # "20 trained" / "3 leading": not what is counted
    return words[-1] if words else None


@lru_cache(maxsize=4096)
def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _amount(text: str, has_currency: bool) -> tuple[float, float] | None:
    """(value, rounding tolerance) of "1,234.5", "2.5 million", "twenty-one", "3bn"; None if unreadable."""
    parts = text.lower().replace(",", "").split()
    head, scale_word = parts[0], parts[-1] if len(parts) > 1 else None
    if attached := re.fullmatch(r"([\d.]+)([a-z]+)", head):
        head, scale_word = attached.groups()
    scales = {**_SCALES, **_CURRENCY_SCALES} if has_currency else _SCALES
    if scale_word is not None and scale_word not in scales:
        return None
    scale = scales[scale_word] if scale_word else 1.0
    value = _head_value(head)
    if value is None:
        return None
    return value * scale, _rounding(head, value) * scale


def _head_value(head: str) -> float | None:
    if head in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[head])
    tens, _, unit = head.partition("-")
    if unit and tens in _WORD_NUMBERS and unit in _COMPOUND_UNITS:
        return float(_WORD_NUMBERS[tens] + _COMPOUND_UNITS[unit])
    try:
        return float(head)
    except ValueError:
        return None


def _rounding(head: str, value: float) -> float:
    """Half a unit of the last written decimal; 5% for round integers like 200,000."""
    if "." in head:
        return 0.5 * 10 ** -len(head.partition(".")[2])
    zeros = len(head) - len(head.rstrip("0")) if head.isdigit() else 0
    if zeros and value:
        return min(0.5 * 10**zeros, 0.05 * value)
    return 0.5


def _inherit_scale(first: tuple[float, float], first_text: str, second_text: str) -> tuple[float, float]:
    """In "2 to 3 million" the first figure takes the second's scale."""
    value, tolerance = first
    first_parts, second_parts = first_text.lower().split(), second_text.lower().split()
    if len(first_parts) == 1 and len(second_parts) == 2 and second_parts[1] in _SCALES:
        scale = _SCALES[second_parts[1]]
        return value * scale, tolerance * scale
    return value, tolerance


def _overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in spans)


# --- normalised figures for claim-level citations ------------------------------------------------
#
# One figure of a claim or a span, normalised: value and interval in base units, the unit spelled
# out ("USD", "%", "m"), and every assumption made to get there, so a stored comparison says why it
# matched. A figure the claim derives from another (a change with no result, a share of another figure,
# a difference, a sum) is computed; a figure stated outright is not (`find_derivation`).

CURRENCY_CODES = {"usd": "USD", "eur": "EUR", "gbp": "GBP", "jpy": "JPY", "inr": "INR"}
# Relative tolerance of a QA comparison, on top of each figure's own rounding.
QA_RELATIVE_TOLERANCE = 0.02

_SCALE_WORD = re.compile(r"\b(hundred|thousand|million|billion|trillion|mn|mln|bn|tn)\b|\d(k|m|b)\b", re.IGNORECASE)
_GROWTH = re.compile(
    r"\b(?P<verb>grew|grown|grow|grows|rose|risen|rise|rises|increased|increases|increase|climbed|jumped|"
    r"fell|fallen|falls|dropped|drops|declined|declines|decreased|decreases|shrank|shrunk)\b"
    r"(?:\s+by)?\s+(?P<amount>(?:about\s+|nearly\s+|almost\s+|roughly\s+)?\d+(?:\.\d+)?)\s*(?:%|per\s?cent\b|percent\b)",
    re.IGNORECASE,
)
# "grew 12%", "fell by 3 per cent": a rate of change (public: the claim profile cuts it from an entity).
GROWTH_PHRASE = _GROWTH
_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k))?)\s+to\s+"
    r"(?P<b>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k))?)",
    re.IGNORECASE,
)
_MULTIPLIERS = {
    "doubled": 2.0,
    "doubles": 2.0,
    "tripled": 3.0,
    "triples": 3.0,
    "quadrupled": 4.0,
    "halved": 0.5,
    "halves": 0.5,
}
_MULTIPLIER = re.compile(r"\b(" + "|".join(_MULTIPLIERS) + r")\b", re.IGNORECASE)
_DOWN_VERBS = frozenset("fell fallen falls dropped drops declined declines decreased decreases shrank shrunk".split())


@dataclass(frozen=True)
class Figure:
    """A normalised figure: `value` (the interval's centre), [low, high], unit and the assumptions made."""

    raw: str
    value: float
    low: float
    high: float
    unit: str
    tolerance: float
    assumptions: dict[str, str]
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Derivation:
    """A computed figure: how it is derived (`operation` and its operands, as text)."""

    operation: str
    details: dict[str, str]


def figure_of(quantity: Quantity) -> Figure:
    """A quantity as a Figure, spelling out what reading it assumed."""
    assumptions: dict[str, str] = {}
    text = quantity.text
    unit = CURRENCY_CODES.get(quantity.unit, quantity.unit)
    if unit in CURRENCY_CODES.values():
        sign = next((s for s in ("US$", "$", "€", "£", "¥", "₹") if s in text), None)
        assumptions["currency"] = f"{sign} read as {unit}" if sign else f"currency word read as {unit}"
        if sign == "$":
            assumptions["currency_ambiguity"] = "$ assumed to be US dollars (not CAD, AUD, ...)"
    if scale := _SCALE_WORD.search(text):
        word = (scale.group(1) or scale.group(2)).lower()
        assumptions["scale"] = f"'{word}' read on the short scale (billion = 1e9)"
    low, high = quantity.low, quantity.high
    if math.isinf(high):
        assumptions["bound"] = "lower bound: only the minimum is stated"
        value = low
    elif math.isinf(low):
        assumptions["bound"] = "upper bound: only the maximum is stated"
        value = high
    elif low != high:
        assumptions["range"] = "range: compared as the whole interval; value is its midpoint"
        value = (low + high) / 2
    else:
        value = low
    if quantity.approximate:
        assumptions["approximation"] = "hedged figure: ±10% allowed"
    if unit == "%" and _FRACTION_WORD.search(text):
        assumptions["fraction"] = f"'{text}' read as a share of {value:.3g}%"
    elif unit == "%":
        assumptions["percent"] = "percent kept as a number of percent (45% → 45)"
    if unit in ("m", "kg", "m2", "s", "w", "wh") and _unit_word(text):
        assumptions["unit"] = f"converted to base unit {unit}"
    return Figure(text, value, low, high, unit, quantity.tolerance, assumptions, quantity.start, quantity.end)


def _unit_word(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]", re.sub(r"(?i)\b(million|billion|thousand|trillion|hundred)\b", "", text)))


def normalise_figure(text: str) -> Figure | None:
    """The first figure of `text` (a claim's value, an answer), normalised; None when it has none."""
    quantities = find_quantities(text)
    if not quantities:
        return None
    return figure_of(quantities[0])


def main_figure(text: str) -> Figure | None:
    """The figure a claim asserts: for "grew 20% to 1.2 million" and "rose from 8 to 10 million" the
    result, not the rate or the starting point."""
    quantities = find_quantities(text)
    if not quantities:
        return None
    growth = _GROWTH.search(text)
    if growth and len(quantities) > 1:
        rest = [q for q in quantities if not (growth.start() <= q.start < growth.end())]
        if rest:
            return figure_of(rest[-1])
    change = _FROM_TO.search(text)
    if change and _CHANGE_VERB.search(text, 0, change.start()):
        # "rose from 8 to 10 million" is a change, not a range: the claim asserts where it ended.
        offset = change.start("b")
        result = find_quantities(change.group("b"))
        if result:
            q = result[0]
            shifted = Quantity(
                q.low, q.high, q.unit, q.approximate, q.text, q.start + offset, q.end + offset, q.tolerance
            )
            return figure_of(shifted)
    if summed := _sum_of(text, quantities):
        return figure_of(summed[1])
    return figure_of(quantities[-1] if change else quantities[0])


_CHANGE_VERB = re.compile(
    r"\b(?:grew|grown|rose|risen|increased|climbed|jumped|fell|fallen|dropped|declined|decreased|shrank|shrunk|"
    r"went|changed|moved|soared|plunged|slipped|edged|expanded|contracted|cut|raised|lowered|reduced)\b",
    re.IGNORECASE,
)
_SHARE_OF = re.compile(
    r"(?P<share>\d+(?:\.\d+)?\s*(?:%|per\s?cent\b|percent\b))\s+of\s+(?:the\s+|its\s+|their\s+|a\s+)?"
    r"(?:\w+\s+){0,2}?(?P<whole>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k)\b)?)",
    re.IGNORECASE,
)
_DIFFERENCE = re.compile(
    r"(?P<diff>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k)\b)?(?:\s*%)?)\s+"
    r"(?:\w+\s+)?(?:more|fewer|less|higher|lower|above|below)\s+than\s+(?:the\s+)?(?:\w+\s+){0,2}?"
    r"(?P<base>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k)\b)?)|"
    r"\b(?:up|down)\s+(?P<diff2>[$€£¥₹]?\s?\d[\d,.]*(?:\s*(?:million|billion|thousand|trillion|bn|m|k)\b)?)\s+"
    r"(?:from|on)\s+(?:the\s+)?(?:\w+\s+){0,2}?(?P<base2>[$€£¥₹]?\s?\d[\d,.]*"
    r"(?:\s*(?:million|billion|thousand|trillion|bn|m|k)\b)?)",
    re.IGNORECASE,
)
_TOTAL = re.compile(r"\b(?:combined|in total|altogether|together|a total of|totalling|totaling|sum of)\b", re.I)


def find_derivation(text: str) -> Derivation | None:
    """How the figure a claim asserts is computed, when the text derives it from other figures rather than
    stating it: a change with no result stated ("doubled", "grew 20%"), a percentage of another figure
    ("25% of the $4bn budget"), a difference ("$2m more than the $5m of 2019", "up 3 from 12") or a sum
    ("3 in Lyon and 4 in Nice, 7 in total"). A figure stated outright is direct, whatever else the claim
    says about it: in "revenue grew 12% to $1.2 billion" the $1.2 billion is stated, and in "rose from 8
    to 10 million" the 10 million is."""
    asserted = main_figure(text)
    if match := _MULTIPLIER.search(text):
        if asserted is None:
            word = match.group(1).lower()
            return Derivation(
                "multiply", {"operation": "multiply", "factor": f"{_MULTIPLIERS[word]:g}", "phrase": word}
            )
    if (match := _GROWTH.search(text)) and (asserted is None or match.start() <= asserted.start < match.end()):
        rate = float(re.sub(r"[^\d.]", "", match.group("amount")))
        sign = -1 if match.group("verb").lower() in _DOWN_VERBS else 1
        factor = 1 + sign * rate / 100
        return Derivation(
            "percent_change",
            {
                "operation": "percent_change",
                "rate_percent": f"{sign * rate:g}",
                "factor": f"{factor:g}",
                "phrase": match.group(0),
            },
        )
    if match := _SHARE_OF.search(text):
        share, whole = normalise_figure(match.group("share")), normalise_figure(match.group("whole"))
        if share is not None and whole is not None and whole.unit != "%":
            return Derivation(
                "percent_of",
                {
                    "operation": "percent_of",
                    "percent": match.group("share").strip(),
                    "of": match.group("whole").strip(),
                    "result": f"{share.value / 100 * whole.value:.6g}",
                    "phrase": match.group(0),
                },
            )
    if (match := _DIFFERENCE.search(text)) and (
        asserted is None
        or match.start() <= asserted.start < (match.end("diff") if match.group("diff") else match.end("diff2"))
    ):
        difference = match.group("diff") or match.group("diff2")
        base = match.group("base") or match.group("base2")
        return Derivation(
            "difference",
            {
                "operation": "difference",
                "difference": difference.strip(),
                "from": base.strip(),
                "phrase": match.group(0),
            },
        )
    if summed := _sum_of(text, find_quantities(text)):
        parts, total = summed
        return Derivation("sum", {"operation": "sum", "parts": " + ".join(p.text for p in parts), "total": total.text})
    return None


def _sum_of(text: str, quantities: list[Quantity]) -> tuple[list[Quantity], Quantity] | None:
    """(parts, total) when the claim adds figures up ("3 ... and 4 ..., 7 in total"): its last figure is
    the sum of the others, and a word says so."""
    if not _TOTAL.search(text) or len(quantities) < 3:
        return None
    *parts, total = quantities
    if not all(p.unit in (total.unit, "") and p.low == p.high for p in parts) or total.low != total.high:
        return None
    added = sum(p.low for p in parts)
    return (parts, total) if abs(added - total.low) <= max(total.tolerance, sum(p.tolerance for p in parts)) else None


@dataclass(frozen=True)
class FigureComparison:
    match: bool
    tolerance: float  # the relative tolerance stated for the comparison
    explanation: str


def compare_figures(
    claimed: Figure | None, stated: Figure | None, relative: float = QA_RELATIVE_TOLERANCE
) -> FigureComparison:
    """Whether two normalised figures state the same value: same unit, and intervals that overlap
    once widened by their rounding and by `relative` of the larger magnitude."""
    if claimed is None or stated is None:
        return FigureComparison(
            False, relative, "no figure to compare" if claimed is None else "the evidence gives no figure"
        )
    if claimed.unit != stated.unit and not (claimed.unit == "" or stated.unit == ""):
        return FigureComparison(
            False, relative, f"different units ({claimed.unit or 'count'} vs {stated.unit or 'count'})"
        )
    finite = [abs(v) for v in (claimed.low, claimed.high, stated.low, stated.high) if not math.isinf(v)]
    slack = max(claimed.tolerance, stated.tolerance, relative * max(finite, default=0.0))
    agree = claimed.low - slack <= stated.high and stated.low - slack <= claimed.high
    if agree:
        return FigureComparison(
            True, relative, f"{claimed.raw} ≈ {stated.raw} (within ±{slack:g} {claimed.unit})".rstrip()
        )
    return FigureComparison(False, relative, f"{claimed.raw} ≠ {stated.raw} (differs by more than ±{slack:g})")
