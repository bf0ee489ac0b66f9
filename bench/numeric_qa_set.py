"""The generated numeric QA set (claim-level citations): numeric claims with evidence passages and known answers.

Every item is a claim stating one figure about one entity (and usually a year) and an evidence
passage; `match` says whether the passage states the same figure for the same entity and year.
Variants (the `variant` field):

match = true: `same` (identical wording), `pronoun` (the entity named in the sentence before: "its
population"), `words` ("sixty-seven million"), `scale` ("67 million" / "67,000,000"), `rounding`
("67.4 million" / "about 67 million"), `units` ("12 km" / "12,000 metres", "5 miles" / "8.05 km"),
`range` ("15%" / "between 10 and 20 per cent"), `currency` ("$3bn" / "US$3,000 million" /
"3 billion US dollars"), `percent` ("45%" / "45 per cent").
match = false: `wrong_value` (off by 15-60%), `wrong_entity` (the figure is another entity's),
`wrong_year` (the entity's figure for another year), `wrong_currency` (€ for $), `wrong_unit`
(kilograms for kilometres).

Generated deterministically (a fixed seed) from small tables of entities and figures; the set is
also written to bench/data/numeric_qa.jsonl. Every passage has a second, distracting sentence
about another entity, as retrieved passages do.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SEED = 17
OUT = Path(__file__).resolve().parent / "data" / "numeric_qa.jsonl"

COUNTRIES = [
    "France",
    "Germany",
    "Spain",
    "Italy",
    "Poland",
    "Canada",
    "Japan",
    "Brazil",
    "Kenya",
    "Chile",
    "Norway",
    "Egypt",
    "Vietnam",
    "Peru",
    "Greece",
]
COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Wonka", "Tyrell"]
RIVERS = ["Danube", "Rhine", "Loire", "Volga", "Elbe", "Tagus", "Vistula", "Oder", "Seine", "Rhone"]
YEARS = [2015, 2016, 2017, 2018, 2019, 2020, 2021, 2022]


_UNITS = "zero one two three four five six seven eight nine".split()
_TENS = "zero ten twenty thirty forty fifty sixty seventy eighty ninety".split()
_TEENS = "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()


def _words(value: int) -> str:
    """1-99 in words ("sixty-seven"); larger values as digits."""
    if value >= 100:
        return str(value)
    if value < 10:
        return _UNITS[value]
    if value < 20:
        return _TEENS[value - 10]
    tens, units = divmod(value, 10)
    return _TENS[tens] + (f"-{_UNITS[units]}" if units else "")


def _millions(value: float) -> str:
    return f"{value:g} million"


def _digits(value: float) -> str:
    return f"{int(round(value * 1_000_000)):,}"


def _population(rng: random.Random) -> list[dict]:
    items = []
    for country in COUNTRIES:
        other = rng.choice([c for c in COUNTRIES if c != country])
        year = rng.choice(YEARS)
        other_year = rng.choice([y for y in YEARS if y != year])
        value = rng.randint(5, 140)
        precise = value + rng.randint(1, 4) / 10
        claim = f"The population of {country} was {value} million in {year}."
        distract = f"{other} had {rng.randint(5, 140)} million inhabitants in {year}."

        def ev(text: str) -> str:
            return f"{text} {distract}"

        items += [
            _item(claim, ev(f"In {year} the population of {country} was {value} million."), True, "same"),
            _item(claim, ev(f"In {year}, {country} had a population of {_digits(value)} people."), True, "scale"),
            _item(claim, ev(f"{country}'s population reached {precise:g} million in {year}."), True, "rounding"),
            # Harder wordings the built-in answerer is not built for (kept to show its limits):
            _item(
                claim, f"{country} lies in its region. In {year} its population was {value} million.", True, "pronoun"
            ),
            _item(claim, ev(f"In {year} the population of {country} was {_words(value)} million."), True, "words"),
            _item(
                claim,
                ev(f"In {year} the population of {country} was {_off(value, rng)} million."),
                False,
                "wrong_value",
            ),
            _item(
                claim,
                f"In {year} the population of {other} was {value} million. {country} is a republic.",
                False,
                "wrong_entity",
            ),
            _item(
                claim,
                ev(f"In {other_year} the population of {country} was {value} million.").replace(
                    f" in {year}.", f" in {other_year}."
                ),
                False,
                "wrong_year",
            ),
        ]
    return items


def _revenue(rng: random.Random) -> list[dict]:
    items = []
    for company in COMPANIES:
        other = rng.choice([c for c in COMPANIES if c != company])
        year = rng.choice(YEARS)
        other_year = rng.choice([y for y in YEARS if y != year])
        billions = rng.randint(2, 90)
        claim = f"{company} reported revenue of ${billions}bn in {year}."
        distract = f"{other} reported ${rng.randint(2, 90)}bn in {year}."

        def ev(text: str) -> str:
            return f"{text} {distract}"

        items += [
            _item(
                claim, ev(f"In {year} {company} reported revenue of US${billions * 1000:,} million."), True, "currency"
            ),
            _item(claim, ev(f"{company}'s revenue was {billions} billion US dollars in {year}."), True, "currency"),
            _item(claim, ev(f"{company} had revenue of ${billions},000,000,000 in {year}."), True, "scale"),
            _item(claim, ev(f"{company} reported revenue of €{billions}bn in {year}."), False, "wrong_currency"),
            _item(
                claim, ev(f"{company} reported revenue of ${_off(billions, rng)}bn in {year}."), False, "wrong_value"
            ),
            _item(
                claim,
                f"{other} reported revenue of ${billions}bn in {year}. {company} is based in Ohio.",
                False,
                "wrong_entity",
            ),
            _item(claim, ev(f"{company} reported revenue of ${billions}bn in {other_year}."), False, "wrong_year"),
        ]
    return items


def _rates(rng: random.Random) -> list[dict]:
    items = []
    for country in COUNTRIES:
        other = rng.choice([c for c in COUNTRIES if c != country])
        year = rng.choice(YEARS)
        other_year = rng.choice([y for y in YEARS if y != year])
        rate = rng.randint(12, 80)
        low, high = rate - rng.randint(2, 5), rate + rng.randint(2, 5)
        claim = f"In {year}, {rate}% of adults in {country} owned a car."
        distract = f"In {other}, {rng.randint(12, 80)}% did in {year}."

        def ev(text: str) -> str:
            return f"{text} {distract}"

        items += [
            _item(claim, ev(f"In {year}, {rate} per cent of adults in {country} owned a car."), True, "percent"),
            _item(claim, ev(f"In {year}, {rate} percent of adults in {country} owned a car."), True, "percent"),
            _item(
                claim,
                ev(f"In {year}, between {low} and {high} per cent of adults in {country} owned a car."),
                True,
                "range",
            ),
            _item(
                claim, ev(f"In {year}, {_off(rate, rng)}% of adults in {country} owned a car."), False, "wrong_value"
            ),
            _item(
                claim,
                f"In {year}, {rate}% of adults in {other} owned a car. {country} has trains.",
                False,
                "wrong_entity",
            ),
            _item(claim, ev(f"In {other_year}, {rate}% of adults in {country} owned a car."), False, "wrong_year"),
        ]
    return items


def _lengths(rng: random.Random) -> list[dict]:
    items = []
    for river in RIVERS:
        other = rng.choice([r for r in RIVERS if r != river])
        km = rng.randint(120, 2900)
        miles = round(km / 1.609344)
        claim = f"The {river} is {km:,} km long."
        distract = f"The {other} is {rng.randint(120, 2900):,} km long."

        def ev(text: str) -> str:
            return f"{text} {distract}"

        items += [
            _item(claim, ev(f"The {river} is {km * 1000:,} metres long."), True, "units"),
            _item(claim, ev(f"The {river} runs for about {miles:,} miles."), True, "units"),
            _item(claim, ev(f"The {river} is {km:,} kilometres long."), True, "units"),
            _item(claim, ev(f"The {river} is {_off(km, rng):,} km long."), False, "wrong_value"),
            _item(claim, f"The {other} is {km:,} km long. The {river} flows east.", False, "wrong_entity"),
            _item(claim, ev(f"The {river} carries {km:,} kg of sediment per second."), False, "wrong_unit"),
        ]
    return items


def _off(value: int, rng: random.Random) -> int:
    """A value at least 15% away from `value` (and never equal after rounding)."""
    factor = rng.choice([1.25, 1.35, 1.5, 0.6, 0.7, 0.8])
    wrong = round(value * factor)
    if abs(wrong - value) < max(1, 0.15 * value):
        wrong = value + max(1, round(0.3 * value))
    return wrong


def _item(claim: str, evidence: str, match: bool, variant: str) -> dict:
    return {"claim": claim, "evidence": evidence, "match": match, "variant": variant}


def generate() -> list[dict]:
    rng = random.Random(SEED)
    items = _population(rng) + _revenue(rng) + _rates(rng) + _lengths(rng)
    # A second pass with other draws doubles the set while keeping every variant's share.
    items += _population(rng) + _revenue(rng) + _rates(rng) + _lengths(rng)
    return items


def write(items: list[dict]) -> Path:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items), encoding="utf-8")
    return OUT


if __name__ == "__main__":
    items = generate()
    print(f"{len(items)} items written to {write(items)}")
