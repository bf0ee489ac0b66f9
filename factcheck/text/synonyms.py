"""Words that say the same thing, for comparing a claim's wording with a passage's (one table for the suite).

`fold(stem)` maps a stemmed word to its group's first word ("awarded" and "won" meet as "win"); the lexical judge
aligns claims and passages with it, and the grounding rules compare the words a claim binds its figures, dates
and places to ("birthed in 1994" / "born November 10, 1994").
"""

from __future__ import annotations

from factcheck.text.sentences import stem

# Each group's words say the same thing; each maps to the group's first word.
SYNONYM_GROUPS = [
    "win won awarded received earned",
    "die died death",
    "found founded established created",
    "begin began beginning started start",
    "big large huge",
    "small little tiny",
    "buy bought purchased acquired",
    "make made produced manufactured",
    "country nation",
    "city town",
    "film movie",
    "job occupation profession career",
    "build built constructed",
    "write wrote written authored",
    "locate located situated",
    "usa america american",
    "uk britain british",
    "people persons population",
    "spouse wife husband",
    "child children kids",
    "leader chief",
    "study research",
]
_FOLDED = {stem(word): stem(group.split()[0]) for group in SYNONYM_GROUPS for word in group.split()}
# Only for the words a grounding rule binds a value to: the lexical judge's verifier was fitted on the table
# above, so additions that would move its features live here.
BINDING_GROUPS = [
    "born birth birthed",
    "release released premiered debuted",
    "held occurred hosted",
]
_BINDING = {**_FOLDED, **{stem(word): stem(group.split()[0]) for group in BINDING_GROUPS for word in group.split()}}


def fold(stemmed: str) -> str:
    """The group word for a stemmed word (itself when it has no group)."""
    return _FOLDED.get(stemmed, stemmed)


def fold_binding(stemmed: str) -> str:
    """`fold`, with the binding words' groups too (grounding only)."""
    return _BINDING.get(stemmed, stemmed)
