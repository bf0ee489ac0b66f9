"""Write factcheck/text/data/gazetteer.json: the places and other named kinds the grounding rules know.

    pip download --no-deps --only-binary :all: countryinfo==1.0.1 -d /tmp/countryinfo
    python -m scripts.prepare_gazetteer --wheel /tmp/countryinfo/countryinfo-1.0.1-py3-none-any.whl

What it is for (factcheck/text/specifics.py): a claim's named specific gets a category ("country", "city",
"continent", "ocean", "celestial", "field", "month", "state"), so that "Mount Kilimanjaro is in Kenya" against
"... in Tanzania" is read as another value of the same attribute (both countries), and so that a country, its
demonym and its usual short forms count as the same value ("France" = "French", "UK" = "United Kingdom").

Sources: countries, their capitals, demonyms and longer alternative spellings from the PyPI package countryinfo
1.0.1 (MIT, Copyright (c) 2018 Porimol Chandro; factcheck/text/data/LICENSES/countryinfo.txt); the other lists
are written out below. Two-letter codes and non-Latin spellings are left out (they collide with words: "IT",
"AT"), but for a few short forms everyone writes (US, USA, UK, UAE, DRC, USSR). The output is sorted and
byte-identical on every run.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "factcheck" / "text" / "data" / "gazetteer.json"

SHORT_FORMS = {
    "United States": ["US", "U.S.", "USA", "U.S.A.", "America", "United States of America"],
    "United Kingdom": ["UK", "U.K.", "Britain", "Great Britain"],
    "United Arab Emirates": ["UAE"],
    "Democratic Republic of the Congo": ["DRC", "DR Congo"],
    "Russia": ["Russian Federation"],
    "Netherlands": ["Holland", "The Netherlands"],
    "Czech Republic": ["Czechia"],
    "South Korea": ["Korea"],
    "Ivory Coast": ["Côte d'Ivoire"],
}
# Former states that claims still name.
FORMER_COUNTRIES = {
    "Soviet Union": ["USSR", "U.S.S.R."],
    "East Germany": [],
    "West Germany": [],
    "Yugoslavia": [],
    "Czechoslovakia": [],
    "Prussia": [],
    "Ottoman Empire": [],
}
# Demonyms countryinfo lacks or spells otherwise.
EXTRA_DEMONYMS = {
    "United States": ["American"],
    "United Kingdom": ["British", "English", "Scottish", "Welsh"],
    "Netherlands": ["Dutch"],
    "Soviet Union": ["Soviet"],
    "Argentina": ["Argentine", "Argentinian"],
    "Philippines": ["Filipino", "Philippine"],
}
CONTINENTS = {
    "Africa": ["African"],
    "Antarctica": ["Antarctic"],
    "Asia": ["Asian"],
    "Europe": ["European"],
    "North America": ["North American"],
    "South America": ["South American"],
    "Oceania": [],
    "Central America": ["Central American"],
}
OCEANS = {
    "Pacific Ocean": ["Pacific"],
    "Atlantic Ocean": ["Atlantic"],
    "Indian Ocean": [],
    "Arctic Ocean": [],
    "Southern Ocean": [],
    "Mediterranean Sea": ["Mediterranean"],
    "Baltic Sea": [],
    "North Sea": [],
    "Black Sea": [],
    "Caribbean Sea": ["Caribbean"],
    "Red Sea": [],
    "Caspian Sea": [],
    "Dead Sea": [],
    "South China Sea": [],
    "Arabian Sea": [],
    "Bering Sea": [],
    "Gulf of Mexico": [],
    "Persian Gulf": [],
}
CELESTIAL: dict[str, list[str]] = {
    "Sun": [],
    "Moon": [],
    "Mercury": [],
    "Venus": [],
    "Earth": [],
    "Mars": [],
    "Jupiter": [],
    "Saturn": [],
    "Uranus": [],
    "Neptune": [],
    "Pluto": [],
}
# Fields of study and of prizes ("the Nobel Prize in Chemistry").
FIELDS = {
    "Physics": [],
    "Chemistry": [],
    "Medicine": ["Physiology or Medicine"],
    "Literature": [],
    "Peace": [],
    "Economics": ["Economic Sciences"],
    "Mathematics": [],
    "Biology": [],
    "Astronomy": [],
    "Philosophy": [],
}
MONTHS: dict[str, list[str]] = {
    name: []
    for name in ("January February March April May June July August September October November December".split())
}
WEEKDAYS: dict[str, list[str]] = {
    name: [] for name in "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
}
US_STATES = (
    "Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia Hawaii Idaho "
    "Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland Massachusetts Michigan Minnesota Mississippi "
    "Missouri Montana Nebraska Nevada Ohio Oklahoma Oregon Pennsylvania Tennessee Texas Utah Vermont Virginia "
    "Washington Wisconsin Wyoming"
).split() + [
    "New Hampshire",
    "New Jersey",
    "New Mexico",
    "New York",
    "North Carolina",
    "North Dakota",
    "Rhode Island",
    "South Carolina",
    "South Dakota",
    "West Virginia",
]
REGIONS = US_STATES + [
    # Canada's provinces, Australia's states, the United Kingdom's nations.
    "Ontario",
    "Quebec",
    "British Columbia",
    "Alberta",
    "Manitoba",
    "Saskatchewan",
    "Nova Scotia",
    "New Brunswick",
    "New South Wales",
    "Victoria",
    "Queensland",
    "Tasmania",
    "England",
    "Scotland",
    "Wales",
    "Northern Ireland",
    "Bavaria",
    "Catalonia",
    "Siberia",
]
# Large cities that are not capitals (capitals come from countryinfo).
CITIES = (
    "New York City, Los Angeles, Chicago, Houston, Philadelphia, San Francisco, Boston, Seattle, Miami, Detroit, "
    "Las Vegas, New Orleans, Atlanta, Dallas, San Diego, Toronto, Montreal, Vancouver, Sydney, Melbourne, Brisbane, "
    "Perth, Auckland, Shanghai, Hong Kong, Guangzhou, Shenzhen, Mumbai, Kolkata, Chennai, Bangalore, Karachi, "
    "Lahore, Istanbul, Saint Petersburg, St. Petersburg, Barcelona, Milan, Naples, Venice, Florence, Munich, "
    "Hamburg, Frankfurt, Cologne, Geneva, Zurich, Lyon, Marseille, Manchester, Liverpool, Birmingham, Glasgow, "
    "Edinburgh, Rotterdam, Antwerp, Osaka, Kyoto, Yokohama, Rio de Janeiro, São Paulo, Johannesburg, Cape Town, "
    "Alexandria, Casablanca, Lagos, Dubai, Jeddah, Mecca, Tel Aviv, Ho Chi Minh City, Hollywood"
).split(", ")


def country_rows(wheel: Path) -> list[dict]:
    rows = []
    with zipfile.ZipFile(wheel) as archive:
        for member in sorted(archive.namelist()):
            if not (member.startswith("countryinfo/data/") and member.endswith(".json")):
                continue
            data = json.loads(archive.read(member))
            if not data.get("name"):
                continue
            rows.append(data)
    return rows


def latin_long(spelling: str) -> bool:
    """An alternative spelling worth keeping: Latin letters, longer than a code."""
    return len(spelling) > 3 and all(ord(ch) < 0x250 for ch in spelling) and not spelling.isupper()


def build(wheel: Path) -> dict:
    entries: dict[str, dict] = {}

    def add(name: str, category: str, aliases: list[str] | None = None, demonyms: list[str] | None = None) -> None:
        aliases, demonyms = aliases or [], demonyms or []
        entry = entries.setdefault(name, {"category": category, "aliases": [], "demonyms": []})
        entry["aliases"] = sorted(set(entry["aliases"]) | {a for a in aliases if a and a != name})
        entry["demonyms"] = sorted(set(entry["demonyms"]) | {d for d in demonyms if d})

    for row in country_rows(wheel):
        name = row["name"]
        demonyms = [d.strip() for d in (row.get("demonym") or "").split(",")]
        aliases = [a for a in row.get("altSpellings") or [] if latin_long(a)]
        add(name, "country", aliases + SHORT_FORMS.get(name, []), demonyms + EXTRA_DEMONYMS.get(name, []))
        capitals = row.get("capital") or []
        for capital in [capitals] if isinstance(capitals, str) else capitals:
            add(capital, "city")
    for name, aliases in FORMER_COUNTRIES.items():
        add(name, "country", aliases, EXTRA_DEMONYMS.get(name, []))
    for table, category in (
        (CONTINENTS, "continent"),
        (OCEANS, "ocean"),
        (CELESTIAL, "celestial"),
        (FIELDS, "field"),
        (MONTHS, "month"),
        (WEEKDAYS, "weekday"),
    ):
        for name, aliases in table.items():
            if category == "continent":
                add(name, category, [], aliases)
            else:
                add(name, category, aliases)
    for name in REGIONS:
        if name not in entries:  # Georgia the country, New York the city (below) keep theirs
            add(name, "region")
    for name in CITIES:
        if name not in entries:
            add(name, "city")
    add("New York City", "city", ["New York"])
    return {name: entries[name] for name in sorted(entries)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, required=True, help="countryinfo-1.0.1-py3-none-any.whl")
    args = parser.parse_args(argv)
    gazetteer = {
        "source": "countries, capitals and demonyms: countryinfo 1.0.1 (MIT); the rest: scripts/prepare_gazetteer.py",
        "entries": build(args.wheel),
    }
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(json.dumps(gazetteer, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(gazetteer['entries'])} names")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
