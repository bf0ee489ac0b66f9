"""How much a search result counts: its authority, its owner, and whether it is a copy.

Authority comes from the result's own `authority` (a knowledge-store document or request source
that has one), else from the domain table: wire services 0.9, .gov/.edu 0.85, .org 0.7,
other news and web sites 0.5, social media 0.3. Operators extend or override the table with
FACTCHECK_INVESTIGATE_AUTHORITY (a JSON object, domain → authority; a domain matches itself and
its subdomains).

Independence: results count once per owner (a media group's outlets share one; a domain's
owner is its registrable domain unless the owner table names another), the same story
syndicated to several outlets counts once (texts whose word shingles overlap by
NEAR_DUPLICATE or more are one story), and sources citing each other (a text that names
another result's site) count once: each such group is credited to its most authoritative member.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

WIRE, HIGH, ORG, NEWS, SOCIAL = 0.9, 0.85, 0.7, 0.5, 0.3
HIGH_AUTHORITY = 0.85  # one source at or above this settles a claim alone
NEAR_DUPLICATE = 0.6
SHINGLE = 4

WIRE_DOMAINS = ("apnews.com", "ap.org", "reuters.com", "afp.com", "bloomberg.com", "upi.com", "dpa.com")
SOCIAL_DOMAINS = (
    "twitter.com",
    "x.com",
    "facebook.com",
    "instagram.com",
    "tiktok.com",
    "reddit.com",
    "youtube.com",
    "threads.net",
    "bsky.app",
    "mastodon.social",
    "t.me",
    "medium.com",
    "substack.com",
)
# Outlets of one owner count once (a small table; operators' FACTCHECK_INVESTIGATE_OWNERS extends it).
OWNERS = {
    "cnn.com": "warner-bros-discovery",
    "tbs.com": "warner-bros-discovery",
    "foxnews.com": "fox-corporation",
    "foxbusiness.com": "fox-corporation",
    "wsj.com": "news-corp",
    "nypost.com": "news-corp",
    "thetimes.co.uk": "news-corp",
    "nbcnews.com": "comcast",
    "msnbc.com": "comcast",
    "cnbc.com": "comcast",
    "abcnews.go.com": "disney",
    "bbc.co.uk": "bbc",
    "bbc.com": "bbc",
}
_SECOND_LEVEL = {"co", "com", "org", "gov", "ac", "edu", "net"}


def domain_of(url: str) -> str:
    try:
        host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    except ValueError:
        return ""
    return host[4:] if host.startswith("www.") else host


def registrable(domain: str) -> str:
    """example.co.uk from news.example.co.uk; example.com from a.b.example.com."""
    parts = domain.split(".")
    if len(parts) >= 3 and parts[-2] in _SECOND_LEVEL and len(parts[-1]) == 2:
        return ".".join(parts[-3:])
    return ".".join(parts[-2:])


def _matches(domain: str, entry: str) -> bool:
    return domain == entry or domain.endswith("." + entry)


def domain_authority(domain: str, table: Mapping[str, float] = {}) -> float:
    for entry, value in sorted(table.items(), key=lambda item: -len(item[0])):
        if _matches(domain, entry.lower()):
            return value
    if any(_matches(domain, d) for d in WIRE_DOMAINS):
        return WIRE
    if any(_matches(domain, d) for d in SOCIAL_DOMAINS):
        return SOCIAL
    suffix = domain.rsplit(".", 1)[-1] if domain else ""
    parts = domain.split(".")
    if suffix in ("gov", "edu", "mil") or any(p in ("gov", "ac", "edu") for p in parts[-3:-1]):
        return HIGH
    if suffix == "int":
        return HIGH
    if suffix == "org":
        return ORG
    return NEWS


def authority_of(url: str, own: float | None, table: Mapping[str, float] = {}) -> float:
    """The result's own authority when it has one, else its domain's."""
    if own is not None:
        return max(0.0, min(1.0, own))
    return domain_authority(domain_of(url), table)


def owner_of(domain: str, source_id: str, owners: Mapping[str, str] = {}) -> str:
    """Who owns the outlet; a result with no URL is owned by its own document."""
    if not domain:
        return f"document:{source_id}"
    for table in (owners, OWNERS):
        for entry, owner in table.items():
            if _matches(domain, entry.lower()):
                return owner
    return registrable(domain)


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    if len(words) < SHINGLE:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))


def near_duplicates(a: frozenset, b: frozenset) -> bool:
    """One story: the shorter text's shingles are mostly in the other's (a syndicated copy, maybe trimmed)."""
    if not a or not b:
        return False
    return len(a & b) / min(len(a), len(b)) >= NEAR_DUPLICATE


def cites(text: str, domain: str) -> bool:
    """True when `text` names the outlet `domain` ("... according to example-blog.com", a link to it)."""
    site = registrable(domain) if domain else ""
    return bool(site) and re.search(rf"(?<![\w-]){re.escape(site)}(?![\w-])", text.lower()) is not None


def independent_groups(items: Sequence[tuple[str, float, str] | tuple[str, float, str, str]]) -> list[int]:
    """Given (owner, authority, text[, domain]) per result, the indexes that count: one per group, each the
    most authoritative of its group (earlier wins ties). Results are one group when they share an owner,
    are copies of one story (syndicated, maybe trimmed), or one cites the other's outlet (blog posts
    quoting each other are one voice), and so on transitively."""
    count = len(items)
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    stories = [shingles(item[2]) for item in items]
    domains = [item[3] if len(item) > 3 else "" for item in items]
    for i in range(count):
        for j in range(i + 1, count):
            if (
                items[i][0] == items[j][0]
                or near_duplicates(stories[i], stories[j])
                or cites(items[i][2], domains[j])
                or cites(items[j][2], domains[i])
            ):
                parent[root(j)] = root(i)
    best: dict[int, int] = {}
    for index in sorted(range(count), key=lambda i: (-items[i][1], i)):
        best.setdefault(root(index), index)
    return sorted(best.values())
