"""Grounding: which of a claim's specifics its passages state about the claim's subject, and which they give
another value for.

A verdict may vouch only for what its evidence says. `ground(claim, passages)` reads every specific of the claim
(`factcheck.text.specifics`: figures, dates, names, contrast terms) against the sentences of the passages that
are about the claim's subject, and returns a `Grounding`:

- `found`: each specific stated in such a sentence (verbatim, normalised or by a known equivalence);
- `missing`: the others, the reason a claim cannot be VERIFIED ("the sources do not mention Mars");
- `conflicts`: a missing specific for which such a sentence gives another value of the same attribute: another
  year for the same event, another country for the same mountain, another member of the same contrast set;
- `citation`: the sentence that grounds the claim: the one about its subject holding most of its specifics.

About the subject. The claim's subject is its first name ("Apollo 11" in "Apollo 11 landed on the Moon in
1969"). A sentence is about it when it names it (any of its distinctive words: "Curie" for "Marie Curie"), when
its passage's title names it and the sentence does not open with another name ("Neil Armstrong was ..." is about
Armstrong), or when it refers back ("It ...", "The lunar module Eagle ...") to a sentence that is. The subject
itself is held by every such sentence. A claim without a name has no subject: every sentence counts.

The same attribute. A figure or date binds to the word before it in the claim ("Chemistry in 1911"): where a
sentence holds several values of that kind ("the Nobel Prize in Physics in 1903 and the Nobel Prize in
Chemistry in 1911"), a value counts for the claim only when that word comes between the previous value and it,
and the rival that replaces a missing value is the one so bound: the Chemistry prize is never corrected with the
Physics prize's year. A name of a known category (two countries, two oceans) rivals a name of the same category
in a sentence about the subject, bound the same way when there are several; a name of no known category is
rivalled by the name that stands in its place in the sentence (after the same word: "land on Mars" / "land on
the Moon"). A contrast term is rivalled by another value of its set in such a sentence ("smallest" for
"largest").

The same event. A sentence that lacks another of the claim's specifics, which another sentence states, and gives
its own value there tells of another event: it corrects nothing ("the 1903 Nobel Prize in Physics" for "Medicine
in 1911" beside "In 1911 she won the Nobel Prize in Chemistry"). A specific stated only apart from the sentence
holding most of its clause's specifics, where that sentence gives another value for it, is another event's: a
conflict ("Chemistry in 1903" against the same two). Either conflict is not explicit when the sentences disagree.

Pure and deterministic; no model.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Sequence

from factcheck.text.numbers import may_count_the_same
from factcheck.text.sentences import STOPWORDS, refers_back, sentence_spans, stem
from factcheck.text.specifics import (
    KIND_DATE,
    KIND_FIGURE,
    KIND_NAME,
    KIND_TERM,
    NORMALISED,
    VERBATIM,
    Occurrence,
    Specific,
    TextFacts,
    claim_specifics,
    occurrences,
    rivals,
    text_facts,
)
from factcheck.text.synonyms import fold, fold_binding

# Words of a name too common to say which thing it is ("Mount Kilimanjaro" is named by "Kilimanjaro").
_GENERIC_NAME_WORDS = frozenset(
    "mount mt lake river sea ocean saint st university college city county state republic kingdom empire "
    "national international company corporation inc ltd group the of de and tower bridge museum island".split()
)
# Words skipped when reading what stands after a word in the claim and in the sentence ("on the Moon").
_DETERMINERS = frozenset("the a an its their his her this that".split())


@dataclass(frozen=True)
class PassageText:
    """One evidence passage: its label ("P1"), its text and its source's title."""

    id: str
    text: str
    title: str = ""


@dataclass(frozen=True)
class SentenceRef:
    """A sentence of a passage: passage.text[start:end]."""

    passage: PassageText
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.passage.text[self.start : self.end]


@dataclass(frozen=True)
class Conflict:
    """A claim's specific and what a sentence about the claim's subject states in its place."""

    specific: Specific
    stated: str  # the sentence's value, verbatim
    sentence: SentenceRef
    # The value stands where the claim's does: after the same word, or beside the word the claim binds it to. A
    # conflict that only shares the sentence (one other year in a sentence about the subject) is not explicit.
    explicit: bool = True


@dataclass(frozen=True)
class Grounding:
    """What the passages say of the claim's specifics (see the module docstring)."""

    specifics: tuple[Specific, ...]
    found: tuple[Specific, ...]
    missing: tuple[Specific, ...]
    conflicts: tuple[Conflict, ...]
    citation: SentenceRef | None  # the sentence about the subject holding most of the claim's specifics
    verbatim: bool  # every specific found is stated in the claim's own words
    # One of the claim and its cited sentence is negated and the other not ("was not" / "was"), the sentence saying
    # the same thing otherwise: they say opposite things of the same specifics.
    polarity_differs: bool = False
    # The claim denies something ("is not", "never") that its cited sentence does not deny: whatever else the
    # sentence states, it does not state the denial.
    denial_unstated: bool = False
    # Every content word of the claim (synonyms folded) stands in its cited sentence or that passage's title: the
    # sentence says the claim in its own words.
    worded: bool = False

    @property
    def grounded(self) -> bool:
        """Every specific is stated in a sentence about the claim's subject (true of a claim without any)."""
        return not self.missing

    def missing_reason(self) -> str:
        """ "the sources do not mention Mars" (every missing specific named)."""
        names = [s.text for s in self.missing]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        return f"the sources do not mention {listed}" if names else ""

    def correction(self, claim: str) -> str | None:
        """The claim with each conflicting specific replaced by the value its sentence states ("Apollo 11 landed
        on the Moon in 1969 (not 1972) [P1]"), or None without a conflict."""
        if not self.conflicts:
            return None
        corrected = claim
        for conflict in sorted(self.conflicts, key=lambda c: c.specific.start, reverse=True):
            specific = conflict.specific
            corrected = (
                corrected[: specific.start] + f"{conflict.stated} (not {specific.text})" + corrected[specific.end :]
            )
        labels = sorted({c.sentence.passage.id for c in self.conflicts})
        return f"{corrected.rstrip('. ')} [{', '.join(labels)}]"


def ground(claim: str, passages: Sequence[PassageText]) -> Grounding:
    """The claim's specifics read against the passages' sentences about its subject."""
    specifics = tuple(claim_specifics(claim))
    subject = _subject(claim, specifics, passages)
    if (unmentioned := _unmentioned_opening(claim, specifics, passages)) is not None:
        specifics = (unmentioned, *specifics)
        subject = unmentioned
    sentences = [s for passage in passages for s in _about_subject(passage, subject)]
    wanted = [s for s in specifics if s is not subject]
    subject_stated = subject is not None and bool(sentences) and _stated_anywhere(subject, passages)
    found: list[Specific] = [subject] if subject is not None and subject_stated else []
    missing: list[Specific] = [subject] if subject is not None and not subject_stated else []
    how: dict[int, str] = {}
    holders: dict[int, list[SentenceRef]] = {}
    titled: set[int] = set()  # the specifics a passage's title states
    titles = [text_facts(p.title) for p in passages if p.title]
    for specific in wanted:
        for sentence in sentences:
            stated = _bound_occurrences(claim, specific, sentence) or _life_term_by_lifespan(specific, sentence)
            if stated:
                holders.setdefault(id(specific), []).append(sentence)
                how[id(specific)] = _best_how(how.get(id(specific)), stated)
        # A source's title states what its page is about ("Burbank, California").
        by_title = [o for title in titles for o in occurrences(specific, title)] if sentences else []
        if by_title:
            how[id(specific)] = _best_how(how.get(id(specific)), by_title)
        (found if id(specific) in holders or by_title else missing).append(specific)
        if by_title:
            titled.add(id(specific))
    if subject is not None and sentences:
        how[id(subject)] = VERBATIM if any(_subject_verbatim(subject, s) for s in sentences) else "referred"
    # Without a name, what a claim is about is its first content word ("The museum holds ..."): a sentence that only
    # says "It holds ..." does not say which thing, so it contradicts nothing.
    about = sentences if subject is not None else _about_unnamed_subject(claim, sentences)
    # A specific held only apart from the sentence of its event, which gives another value: another event's.
    split = _split_from_event(claim, wanted, subject, sentences, about, holders, found, titled)
    for moved in split:
        found.remove(moved.specific)
        missing.append(moved.specific)
    moved_ids = {id(c.specific) for c in split}
    rest = [_event_conflict(claim, s, about, subject, wanted, holders) for s in missing if id(s) not in moved_ids]
    conflicts = _distinct((*split, *(c for c in rest if c is not None)))
    citation = _citation(claim, specifics, subject, sentences, holders, conflicts)
    return Grounding(
        specifics=specifics,
        found=tuple(sorted(found, key=lambda s: s.start)),
        missing=tuple(sorted(missing, key=lambda s: s.start)),
        conflicts=conflicts,
        citation=citation,
        verbatim=all(how.get(id(s)) == VERBATIM for s in found),
        polarity_differs=citation is not None and _polarity_differs(claim, citation.text, subject),
        denial_unstated=citation is not None and _denial_unstated(claim, citation.text),
        worded=citation is not None and _worded(claim, citation),
    )


def _worded(claim: str, sentence: SentenceRef) -> bool:
    wanted = {fold(s) for s in _content_stems(claim)}
    held = {fold(s) for s in _content_stems(sentence.text) | _content_stems(sentence.passage.title)}
    return bool(wanted) and wanted <= held


_NEGATIONS = frozenset("not never cannot".split())
# How far after a negation the word it denies may stand.
_NEGATION_REACH = 3


def _negated(text: str, shared: frozenset[str]) -> bool:
    """The text denies something both sides say: a negation ("not", "never", "n't") with one of the `shared` content
    words at most _NEGATION_REACH words after it ("was not the first"; not "who do not have" of another thing)."""
    tokens = text_facts(text).tokens
    for index, token in enumerate(tokens):
        if token.lower in _NEGATIONS or token.lower.endswith("n't"):
            following = tokens[index + 1 : index + 1 + _NEGATION_REACH]
            if following and following[0].lower == "only":  # "not only ... but also" denies nothing
                continue
            if any(stem(t.lower) in shared for t in following):
                return True
    return False


# The share of the claim's content words a sentence must hold to say the same thing (but for a negation).
_SAME_WORDING = 0.7


def _polarity_differs(claim: str, sentence: str, subject: Specific | None) -> bool:
    """The sentence says what the claim says of its subject (most of its other content words: the sentence is
    about the subject already) and one of them denies it: a negation before one of the claim's content words in
    the claim; before a word both share in the sentence (a sentence's other negations are about other things)."""
    subject_stems = _content_stems(subject.text) if subject is not None else set()
    claim_stems = frozenset(_content_stems(claim) - _NEGATIONS - subject_stems)
    shared = frozenset(claim_stems & _content_stems(sentence))
    if not claim_stems or len(shared) < _SAME_WORDING * len(claim_stems):
        return False
    return _negated(claim, claim_stems) != _negated(sentence, shared)


def _denial_unstated(claim: str, sentence: str) -> bool:
    claim_stems = frozenset(_content_stems(claim) - _NEGATIONS)
    shared = frozenset(claim_stems & _content_stems(sentence))
    return _negated(claim, claim_stems) and not _negated(sentence, shared)


def _content_stems(text: str) -> set[str]:
    return {stem(t.lower) for t in text_facts(text).tokens if t.lower not in STOPWORDS and len(t.lower) > 1}


def _about_unnamed_subject(claim: str, sentences: Sequence[SentenceRef]) -> list[SentenceRef]:
    """The sentences that name the first content word of a claim without a name (or whose passage's title does), or
    refer back ("It ...") to one that does, as `_about_subject` follows a named one."""
    first = next((t for t in text_facts(claim).tokens if t.lower not in STOPWORDS and t.lower.isalpha()), None)
    if first is None:
        return list(sentences)
    about: list[SentenceRef] = []
    previous: SentenceRef | None = None
    wanted = stem(first.lower)
    for sentence in sentences:
        # A sentence of the subject's own page (its title names it) is about it, as with a named subject.
        names_it = wanted in text_facts(sentence.text).stems or wanted in text_facts(sentence.passage.title).stems
        follows = (
            previous is not None
            and previous.passage is sentence.passage
            and previous in about
            and refers_back(sentence.text)
        )
        if names_it or follows:
            about.append(sentence)
        previous = sentence
    return about


def _best_how(known: str | None, stated: Sequence[Occurrence]) -> str:
    return VERBATIM if known == VERBATIM or any(o.how == VERBATIM for o in stated) else stated[0].how


# --- about the subject -----------------------------------------------------------------------------------


# Words that open a claim with a phrase about when, where or by whose account, before its subject ("In 2019,
# Japan had ...", "According to Rotten Tomatoes, ...").
_OPENING_PHRASE = re.compile(r"^(?:in|on|at|as of|during|after|before|by|since|until|according to|for)\b[^,]*,", re.I)


def _subject(claim: str, specifics: Sequence[Specific], passages: Sequence[PassageText]) -> Specific | None:
    """The claim's subject: its name that a passage's title names, else its first name outside an opening phrase
    ("In the country Germany, Blank Space is ..." is about Blank Space), else its first name."""
    names = [s for s in specifics if s.kind == KIND_NAME]
    for name in names:
        if any(p.title and _states(name, p.title) for p in passages):
            return name
    opening = _OPENING_PHRASE.match(claim)
    after_opening = [n for n in names if opening is None or n.start >= opening.end()]
    return (after_opening or names)[0] if names else None


# Capitalised words that open a claim without naming what it is about.
_OPENERS = frozenset(
    "according nowadays today currently recently later also however meanwhile one two three several many some "
    "most another each every both either neither such early late during following".split()
)


def _unmentioned_opening(claim: str, specifics: Sequence[Specific], passages: Sequence[PassageText]) -> Specific | None:
    """A claim whose first word is capitalised, no part of a name, and appears nowhere in the passages or their
    titles ("Sennacherib was released in 2005", "Electric chair starred in Room" against pages about others): what
    the claim is about is never mentioned, so that word is its subject, and a missing one."""
    tokens = text_facts(claim).tokens
    if not tokens or not tokens[0].capital or tokens[0].lower in STOPWORDS:
        return None
    word = tokens[0]
    if not word.lower.replace("-", "").isalpha() or any(s.start <= word.start < s.end for s in specifics):
        return None
    if word.lower in _OPENERS or claim[word.end : word.end + 1] == ",":
        return None  # "According to ...", "Nowadays, ...": a way into the sentence, not what it is about
    wanted = {word.lower, stem(word.lower)}
    for passage in passages:
        for text in (passage.text, passage.title):
            facts = text_facts(text)
            if wanted & (facts.words | facts.stems):
                return None
    return Specific(KIND_NAME, word.word, word.start, word.end, (word.lower,))


def _about_subject(passage: PassageText, subject: Specific | None) -> list[SentenceRef]:
    """The passage's sentences about the claim's subject (see the module docstring), in order."""
    spans = sentence_spans(passage.text)
    sentences = [SentenceRef(passage, start, end) for start, end in spans]
    if subject is None:
        return sentences
    marks = _distinctive(subject)
    title_names_it = bool(marks & _capital_words(passage.title)) or _states(subject, passage.title)
    named = [bool(marks & _capital_words(s.text)) or _states(subject, s.text) for s in sentences]
    if title_names_it and not any(named):
        return sentences  # a passage of the subject's page that never names it: all of it is about the subject
    about: list[SentenceRef] = []
    previous = False
    for sentence, names_it in zip(sentences, named):
        text = sentence.text
        current = (
            names_it
            or (previous and refers_back(text))
            or (title_names_it and not _opens_with_another_name(text, marks))
        )
        if current:
            about.append(sentence)
        previous = current
    return about


def _distinctive(subject: Specific) -> frozenset[str]:
    """The word of the subject's name a later sentence calls it by: its head ("Curie" of "Marie Curie",
    "Kilimanjaro" of "Mount Kilimanjaro", "Bank" of "Bank of America"; a generic word only when it is all)."""
    head_part = re.split(r"\s+(?:of|de|del|von|van)\s+", subject.text, maxsplit=1)[0]
    words = [t.lower for t in text_facts(head_part).tokens if t.lower != "the"]
    distinctive = [w for w in words if w not in _GENERIC_NAME_WORDS and not w[0].isdigit() and len(w) > 1]
    return frozenset(distinctive[-1:] or words[-1:] or subject.words)


def _stated_anywhere(subject: Specific, passages: Sequence[PassageText]) -> bool:
    """A passage's text or title names the subject in full (or by an equivalent), or, for a person's name of two
    or three words, by its last one with a capital ("Rice" for "Anne Rice": how a text names someone after its
    first mention). A name built on "of" needs all of it: "Bank of America" does not state "Bank of Nations"."""
    if any(_states(subject, p.text) or _states(subject, p.title) for p in passages):
        return True
    surname = _surname(subject)
    return surname is not None and any(surname in _capital_words(p.text) for p in passages)


def _surname(subject: Specific) -> str | None:
    """The last word of a name of two or three capitalised words and no joiner ("Colin Kaepernick"), else None."""
    words = subject.text.split()
    if not 2 <= len(words) <= 3 or subject.category is not None or any(w.lower() in _JOINED for w in words):
        return None
    last = words[-1].rstrip(".,")
    return last.lower() if last[:1].isupper() and last.isalpha() and len(last) > 2 else None


_JOINED = frozenset("of de del von van the and for".split())


def _capital_words(text: str) -> frozenset[str]:
    facts = text_facts(text)
    return frozenset(t.lower for t in facts.tokens if t.capital)


def _states(subject: Specific, text: str) -> bool:
    return bool(text) and bool(occurrences(subject, text_facts(text)))


def _opens_with_another_name(text: str, marks: frozenset[str]) -> bool:
    """The sentence starts with a name (after "The", if any) that is not the subject's: it is about that."""
    facts = text_facts(text)
    tokens = facts.tokens
    first = 1 if tokens and tokens[0].lower == "the" else 0
    if first >= len(tokens) or not tokens[first].capital or tokens[first].lower in STOPWORDS:
        return False
    name = next((n for n in facts.names if n.start == tokens[first].start), None)
    return name is not None and not (marks & set(name.words))


def _subject_verbatim(subject: Specific, sentence: SentenceRef) -> bool:
    return any(o.how == VERBATIM for o in occurrences(subject, text_facts(sentence.text)))


# --- stated, and bound to the same attribute -------------------------------------------------------------


def _bound_occurrences(claim: str, specific: Specific, sentence: SentenceRef) -> list[Occurrence]:
    """Where the sentence states `specific`, leaving out a figure, date or categorised name that the sentence
    binds to another word than the claim does, or that a clause about another name holds ("until the Chrysler
    Building was finished in 1930": not the Eiffel Tower's year; see the module docstring)."""
    facts = text_facts(sentence.text)
    stated = occurrences(specific, facts)
    if not stated or not _bindable(specific):
        return stated
    claim_names = _name_words(claim)
    stated = [o for o in stated if not _in_another_names_clause(facts, o.start, claim_names)]
    if not stated:
        return stated
    heads = _heads(claim, specific)
    if heads is None:
        return stated
    values = _same_kind_spans(specific, facts)
    # A value is another thing's only on positive evidence: the word the claim binds it to stands by another value
    # of the kind, and its own stretch of the sentence names something the claim does not ("in Physics in 1903 and
    # ... in Chemistry in 1911": 1903 is not the Chemistry prize's year).
    claimed_elsewhere = [(start, end) for start, end in values if _binds(heads, facts, values, start, end)]
    return [
        o
        for o in stated
        if _binds(heads, facts, values, o.start, o.end)
        or not any(v != (o.start, o.end) for v in claimed_elsewhere)
        or not _names_another(facts, values, o, claim_names)
    ]


def _life_term_by_lifespan(specific: Specific, sentence: SentenceRef) -> list[Occurrence]:
    """ "born" or "died" stated the encyclopedic way: a lifespan's first or second date ("(April 15, 1894 -
    September 26, 1937)")."""
    if specific.kind != KIND_TERM or specific.category != "life":
        return []
    facts = text_facts(sentence.text)
    role = _bound_word("born" if specific.value == "born" else "died")
    return [
        Occurrence(d.start, d.end, NORMALISED, d.text) for d in facts.dates if role in _lifespan_roles(facts, d.start)
    ]


def _bindable(specific: Specific) -> bool:
    """A value that belongs to something in a sentence: a figure, a date, or a name of a known category."""
    return specific.kind in (KIND_FIGURE, KIND_DATE) or (specific.kind == KIND_NAME and specific.category is not None)


# Words that open a clause of its own within a sentence ("... until the Chrysler Building was finished in 1930").
_CLAUSE_OPENERS = frozenset(
    "until when while whereas although though because since after before and but which who".split()
)


def _in_another_names_clause(facts: TextFacts, start: int, claim_names: frozenset[str]) -> bool:
    """The value at `start` stands in a clause whose subject is a name the claim does not have: the clause opens
    (after "until", "and", "which", a semicolon ...) with that name, determiners aside."""
    before = [t for t in facts.tokens if t.end <= start]
    opener = max((i for i, t in enumerate(before) if t.lower in _CLAUSE_OPENERS), default=None)
    if opener is None or _beside_claim_name(facts, start, claim_names):
        return False
    rest = [t for t in before[opener + 1 :] if t.lower not in _DETERMINERS]
    if not rest or not rest[0].capital:
        return False
    name = next((n for n in facts.names if n.start == rest[0].start), None)
    return name is not None and not (set(name.words) & claim_names)


def _beside_claim_name(facts: TextFacts, start: int, claim_names: frozenset[str]) -> bool:
    """One of the claim's names stands right by the value ("the 2012 NBA Finals"): it is that name's value."""
    near = [n for n in facts.names if abs(n.start - start) <= 24 and set(n.words) & claim_names]
    return bool(near)


def _name_words(claim: str) -> frozenset[str]:
    return frozenset(w for s in claim_specifics(claim) if s.kind == KIND_NAME for w in s.words)


def _same_kind_spans(specific: Specific, facts: TextFacts) -> list[tuple[int, int]]:
    if specific.kind == KIND_DATE:
        return [(d.start, d.end) for d in facts.dates]
    if specific.kind == KIND_FIGURE and specific.quantity is not None:
        claimed = specific.quantity
        return [(q.start, q.end) for q in facts.quantities if may_count_the_same(claimed, q)]
    return [(n.start, n.end) for n in facts.names if n.category == specific.category]


@dataclass(frozen=True)
class _Heads:
    """The content words around a specific in the claim (`_bound_word`): the one before it ("Chemistry" in "in
    Chemistry in 1911") and the one after it ("team" in "the Italian national team", "novel" in "the 2003 novel")."""

    before: str | None
    after: str | None


# How far from the specific a head may stand in the claim, in words, and what ends its clause.
_HEAD_REACH = 4
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]\"“”‘’]|\s'|'\s")


def _heads(claim: str, specific: Specific) -> _Heads | None:
    """The content words beside the specific in its clause of the claim, at most _HEAD_REACH words away: what binds
    it ("in Chemistry in 1911", "the Italian national team"); None when nothing close does."""
    tokens = text_facts(claim).tokens
    before_tokens = [t for t in tokens if t.end <= specific.start][-_HEAD_REACH:]
    after_tokens = [t for t in tokens if t.start >= specific.end][:_HEAD_REACH]

    def head(candidates: Sequence, edge: int, forward: bool) -> str | None:
        for token in candidates:
            between = claim[specific.end : token.start] if forward else claim[token.end : edge]
            if _CLAUSE_BREAK.search(between):
                return None
            if token.lower not in STOPWORDS and len(token.lower) > 1 and not token.lower[0].isdigit():
                return _bound_word(token.lower)
        return None

    before = head(list(reversed(before_tokens)), specific.start, False)
    after = head(after_tokens, specific.end, True)
    return _Heads(before, after) if before or after else None


def _bound_word(word: str) -> str:
    """A word as values are bound by it: stemmed, synonyms folded ("birthed" and "born" alike)."""
    return fold_binding(stem(word))


def _head(claim: str, specific: Specific) -> str | None:
    heads = _heads(claim, specific)
    return heads.before if heads else None


# What may stand between two values of one list ("Austria, Czech Republic and Germany").
_LIST_SEPARATORS = frozenset({",", "and", ", and", "or", ", or", "&", ";"})


def _binds(heads: _Heads, facts: TextFacts, values: list[tuple[int, int]], start: int, end: int) -> bool:
    """The value at [start, end) is the one the claim's heads describe (`_head_stands_by`); with one value of the
    kind in the sentence, it is."""
    return len(values) < 2 or _head_stands_by(heads, facts, values, start, end)


def _head_stands_by(heads: _Heads, facts: TextFacts, values: list[tuple[int, int]], start: int, end: int) -> bool:
    """The word before the value in the claim stands between the previous value of the kind (or the sentence's
    start) and it, or the word after it (a name's) between it and the next. Values of one list ("such as Austria,
    Czech Republic, Germany") share the words around the list."""
    ordered = sorted(values) or [(start, end)]
    text = facts.text
    first, last = _list_around(ordered, text, start, end)
    previous_end = max((e for s, e in ordered if e <= first), default=0)
    next_start = min((s for s, e in ordered if s >= last), default=len(text))
    before = {_bound_word(t.lower) for t in facts.tokens if previous_end <= t.start and t.end <= first}
    after = {_bound_word(t.lower) for t in facts.tokens if last <= t.start and t.end <= next_start}
    before |= _lifespan_roles(facts, start)
    if len(ordered) == 1:  # the sentence's only value of the kind: a head anywhere in it binds it ("a 1986 ... film")
        before = after = before | after
    return (heads.before is not None and heads.before in before) or (heads.after is not None and heads.after in after)


# The dates of a lifespan in brackets ("(20 September 1758 - 17 October 1806)", "(born June 22, 1964)"): the
# encyclopedic way of saying when someone was born and died.
_LIFESPAN_DASH = re.compile(r"^\s*(?:-|–|—|to)\s*$")


def _lifespan_roles(facts: TextFacts, start: int) -> set[str]:
    """ "born" for the first date of a lifespan, "die" for the second (as `_bound_word` spells them): two full dates
    joined by a dash or "to" ("14 April 1891 to 6 December 1986", in brackets or not)."""
    text = facts.text
    dates = [d for d in facts.dates if d.day is not None]
    pairs = [(a, b) for a, b in zip(dates, dates[1:]) if _LIFESPAN_DASH.match(text[a.end : b.start])]
    inside = next((list(pair) for pair in pairs if start in (pair[0].start, pair[1].start)), [])
    if len(inside) != 2:
        return set()
    return (
        {_bound_word("born")}
        if inside[0].start == start
        else {_bound_word("died")}
        if inside[1].start == start
        else set()
    )


def _names_another(
    facts: TextFacts, values: list[tuple[int, int]], occurrence: Occurrence, claim_names: frozenset[str]
) -> bool:
    """The stretch between the previous value of the kind and this one names something the claim does not."""
    first, _ = _list_around(sorted(values), facts.text, occurrence.start, occurrence.end)
    previous_end = max((e for s, e in values if e <= first), default=0)
    return any(previous_end <= n.start and n.end <= first and not (set(n.words) & claim_names) for n in facts.names)


def _list_around(values: list[tuple[int, int]], text: str, start: int, end: int) -> tuple[int, int]:
    """The start of the first and the end of the last value of the list the value at [start, end) stands in."""
    first, last = start, end
    for s, e in reversed([v for v in values if v[1] <= start]):
        if text[e:first].strip() in _LIST_SEPARATORS:
            first = s
        else:
            break
    for s, e in [v for v in values if v[0] >= end]:
        if text[last:s].strip() in _LIST_SEPARATORS:
            last = e
        else:
            break
    return first, last


# --- conflicts ---------------------------------------------------------------------------------------------


def _conflict(
    claim: str, specific: Specific, sentences: Sequence[SentenceRef], subject: Specific | None = None
) -> Conflict | None:
    """A value of the same attribute that a sentence about the subject states instead of `specific`: one that
    stands where the claim's does (after the same words: "in Kenya" / "in Tanzania", "released on June 28"), a full
    date off by its year alone, a lifespan's date for "born"/"died"; or one beside the word the claim binds it to or
    by the claim's predicate, in a sentence that says most of what the claim says (one that shares only the subject
    and a verb tells of something else: "served as a senator from 2005" is no term as president). A name of a known
    category needs its place: "an American author" does not say where an author lives."""
    heads = _heads(claim, specific)
    claim_names = _name_words(claim)
    predicate = _Heads(_predicate(claim), None)
    for sentence in sentences:
        facts = text_facts(sentence.text)
        if specific.kind == KIND_TERM:
            terms = [
                t
                for t in rivals(specific, facts)
                if specific.category not in _PLACED_TERM_SETS or _same_place_either_side(claim, specific, facts, t)
            ]
            if terms:
                return Conflict(specific, _term_as(specific, terms[0], facts), sentence)
            continue
        if specific.kind == KIND_NAME and specific.category is None:
            slot = _slot_rival(claim, specific, facts)
            if slot is not None:
                return Conflict(specific, _stated_as(claim, specific, facts, slot), sentence)
            continue
        candidates = [
            c
            for c in rivals(specific, facts)
            if not _in_another_names_clause(facts, c.start, claim_names)
            and not _counts_another_thing(claim, specific, facts, c)
        ]
        if not candidates:
            continue
        values = _same_kind_spans(specific, facts)
        says_most = _says_most_of(claim, specific, subject, sentence)

        def placed(c: Occurrence) -> bool:
            # Where the value stands says it is the claim's attribute ...
            if specific.kind == KIND_NAME:
                if _same_place(claim, specific, facts, c):
                    return True
                if (
                    len(candidates) == 1
                    and _both_located(claim, specific, facts, c)
                    and _same_event(claim, specific, facts)
                ):
                    return True
            elif _same_distinctive_place(claim, specific, facts, c) or _same_day_another_year(specific, facts, c):
                return True
            if heads is not None and heads.before in _lifespan_roles(facts, c.start):
                return True
            # ... or a word beside it does, in a sentence that says most of what the claim says.
            bound = heads is not None and _head_stands_by(heads, facts, values, c.start, c.end)
            by_predicate = (
                specific.kind != KIND_NAME
                and predicate.before is not None
                and _head_stands_by(predicate, facts, values, c.start, c.end)
            )
            return says_most and (bound or by_predicate)

        chosen = _nearest_to_neighbour(claim, specific, facts, [c for c in candidates if placed(c)])
        if chosen is not None:
            return Conflict(specific, _stated_as(claim, specific, facts, chosen), sentence)
    return None


# --- one event: the specifics held together ---------------------------------------------------------------


def _split_from_event(
    claim: str,
    wanted: Sequence[Specific],
    subject: Specific | None,
    sentences: Sequence[SentenceRef],
    about: Sequence[SentenceRef],
    holders: dict[int, list[SentenceRef]],
    found: Sequence[Specific],
    titled: set[int],
) -> list[Conflict]:
    """The conflicts of specifics found only apart from their event: where the sentence holding most of the
    specifics of their clause of the claim ("In 1911 she won the Nobel Prize in Chemistry" for "... in Chemistry in
    1903") states another value of one that only another sentence holds ("... the 1903 Nobel Prize in Physics"),
    that value is another event's: the claim's specifics are not held together. Never explicit: the sentences
    disagree."""
    split = []
    for specific in (s for s in wanted if s in found and id(s) in holders and id(s) not in titled):
        event = _citation(claim, _same_clause(claim, specific, wanted), subject, sentences, holders, ())
        if event is not None and event in about and event not in holders[id(specific)]:
            if (conflict := _conflict(claim, specific, [event], subject)) is not None:
                split.append(replace(conflict, explicit=False))
    return split


def _event_conflict(
    claim: str,
    specific: Specific,
    sentences: Sequence[SentenceRef],
    subject: Specific | None,
    wanted: Sequence[Specific],
    holders: dict[int, list[SentenceRef]],
) -> Conflict | None:
    """`_conflict`, from the first sentence that tells of the claim's event: not one that `_tells_another_event`
    ("the 1903 Nobel Prize in Physics" is no correction of "Medicine in 1911" where "In 1911 she won the Nobel Prize
    in Chemistry"). Not explicit when the sentences give different values: which is the claim's is not certain."""
    found = [c for sentence in sentences if (c := _conflict(claim, specific, [sentence], subject)) is not None]
    same_event = [c for c in found if not _tells_another_event(claim, specific, c.sentence, wanted, holders)]
    if not same_event:
        return None
    chosen = same_event[0]
    return chosen if len({c.stated for c in found}) == 1 else replace(chosen, explicit=False)


def _tells_another_event(
    claim: str,
    specific: Specific,
    sentence: SentenceRef,
    wanted: Sequence[Specific],
    holders: dict[int, list[SentenceRef]],
) -> bool:
    """The sentence lacks another specific of the same clause of the claim that another sentence holds, and gives
    a value of its own in its place (another year, another field): it tells of another event than that sentence.
    A value the claim itself states ("1903" of "... in 1867 and ... in 1903") is none."""
    facts = text_facts(sentence.text)
    claimed = [o for other in wanted if sentence in holders.get(id(other), []) for o in occurrences(other, facts)]
    for other in _same_clause(claim, specific, wanted):
        held = holders.get(id(other), [])
        if other is specific or not held or sentence in held:
            continue
        if other.kind == KIND_NAME and other.category is None:
            if _slot_rival(claim, other, facts) is not None:
                return True
        elif any(not any(c.start <= r.start < c.end for c in claimed) for r in rivals(other, facts)):
            return True
    return False


def _same_clause(claim: str, specific: Specific, wanted: Sequence[Specific]) -> list[Specific]:
    """The claim's specifics in the clause that holds `specific` ("born in Warsaw in 1867" / "won ... in 1903")."""
    start, end = _clause_of(claim, specific)
    return [s for s in wanted if start <= s.start < end]


def _counts_another_thing(claim: str, specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """A figure followed by another noun than the claim's ("21% oxygen" against "79% nitrogen"), or a date by a
    noun that is none of the claim's words beside its date ("the 1818 novel" against "a movie from 2004"): it
    measures or dates something else, so it is no value of the claim's attribute."""
    stated = _word_right_after(facts.text, candidate.end)
    if specific.kind == KIND_FIGURE:
        claimed = _word_right_after(claim, specific.end)
        return claimed is not None and stated is not None and claimed != stated
    if specific.kind == KIND_DATE and stated is not None and facts.text[candidate.end :].lstrip()[:1].islower():
        heads = _heads(claim, specific)
        return heads is not None and stated not in (heads.before, heads.after)
    return False


def _word_right_after(text: str, end: int) -> str | None:
    """The content word right after `end` ("of" skipped), as `_bound_word` spells it; None at a comma or a stop."""
    match = re.match(r"\s+(?:of\s+)?([A-Za-z][\w-]*)", text[end:])
    if match is None or match.group(1).lower() in STOPWORDS:
        return None
    return _bound_word(match.group(1).lower())


def _predicate(claim: str) -> str | None:
    """What the claim says its subject did or is (`_bound_word`): its first content word outside its names and
    other specifics ("landed" in "Apollo 11 landed on the Moon in 1972"). A value that word stands by in a
    sentence about the subject ("The lunar module Eagle landed on 20 July 1969") is that event's."""
    spans = [(s.start, s.end) for s in claim_specifics(claim)]
    for token in text_facts(claim).tokens:
        inside = any(a <= token.start < b for a, b in spans)
        if not inside and token.lower not in STOPWORDS and token.lower.isalpha() and len(token.lower) > 2:
            return _bound_word(token.lower)
    return None


# Term sets whose words are everywhere ("after leaving"): a rival counts only in the claim's place.
_PLACED_TERM_SETS = frozenset({"sequence"})


def _same_place_either_side(claim: str, specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """The candidate has the claim's word before it, or the claim's content word after it ("assembled after use" /
    "assembled before use")."""
    if _same_place(claim, specific, facts, candidate):
        return True
    after_claim = [t.lower for t in text_facts(claim).tokens if t.start >= specific.end and t.lower not in STOPWORDS]
    after_sentence = [t.lower for t in facts.tokens if t.start >= candidate.end and t.lower not in STOPWORDS]
    return bool(after_claim and after_sentence) and stem(after_claim[0]) == stem(after_sentence[0])


# Words that put a place where something is, comes from or goes to.
_LOCATIVE = frozenset("in to from at near into inside within".split())


def _both_located(claim: str, specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """The claim puts its subject somewhere ("was in Alabama") and the sentence about it somewhere else of the same
    category ("returned to England"): its one place of that kind, after a word of place on both sides (not "an
    American author" for "an author in Kenya")."""
    claim_before = [
        t.lower for t in text_facts(claim).tokens if t.end <= specific.start and t.lower not in _DETERMINERS
    ]
    sentence_before = [t.lower for t in facts.tokens if t.end <= candidate.start and t.lower not in _DETERMINERS]
    return bool(claim_before and sentence_before) and claim_before[-1] in _LOCATIVE and sentence_before[-1] in _LOCATIVE


def _same_event(claim: str, specific: Specific, facts: TextFacts) -> bool:
    """The sentence tells of the claim's event: it states another of the claim's specifics (its year, say) or holds
    the claim's predicate ("debuted as a singer in South Korea in 1972" for "started in New Caledonia in 1972"; not
    "born in Warsaw in 1867" for "moved to Paris in 1891")."""
    start, end = _clause_of(claim, specific)
    others = [
        o
        for o in claim_specifics(claim)
        if o.start != specific.start and o.kind != KIND_NAME and start <= o.start < end
    ]
    if any(occurrences(other, facts) for other in others):
        return True
    predicate = _predicate(claim[start:end])
    return predicate is not None and predicate in {_bound_word(t.lower) for t in facts.tokens}


# Where a claim's clauses meet ("born in Warsaw in 1867 and moved to Paris in 1891").
_CLAUSE_SEAM = re.compile(r",?\s+(?:and|but|while|whereas|then)\s+|;\s*|,\s+")


def _clause_of(claim: str, specific: Specific) -> tuple[int, int]:
    """The span of the claim's clause that holds the specific."""
    start, end = 0, len(claim)
    for seam in _CLAUSE_SEAM.finditer(claim):
        if seam.end() <= specific.start:
            start = seam.end()
        elif seam.start() >= specific.end:
            end = seam.start()
            break
    return start, end


def _same_distinctive_place(claim: str, specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """`_same_place`, for a figure or date, where the words before it say something ("released in", "as of"); a
    lone "in" stands before almost every year."""
    context = _context(text_facts(claim).tokens, specific.start)
    distinctive = any(w not in STOPWORDS for w in context) or context == ("as", "of")
    return distinctive and _same_place(claim, specific, facts, candidate)


def _same_day_another_year(specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """A full date that differs from the claim's in its year alone ("March 17, 2025" / "On March 17, 2014")."""
    claimed = specific.date
    if specific.kind != KIND_DATE or claimed is None or claimed.day is None or claimed.month is None:
        return False
    stated = next((d for d in facts.dates if d.start == candidate.start), None)
    return (
        stated is not None
        and (stated.month, stated.day) == (claimed.month, claimed.day) != ()
        and stated.year != claimed.year
    )


def _term_as(specific: Specific, rival: Occurrence, facts: TextFacts) -> str:
    """The rival term in the claim's form: its set's own word where the claim uses its own ("lost" → "won", not
    "winning"), else as the sentence writes it ("northern" → "southern")."""
    if specific.words and specific.words[0] == specific.value:
        value = next((v for t, _, v in facts.terms if t.start == rival.start), None)
        if value is not None:
            return value
    return rival.text


def _same_place(claim: str, specific: Specific, facts: TextFacts, candidate: Occurrence) -> bool:
    """The candidate follows the same words in the sentence as the specific does in the claim, determiners aside:
    the word before it, and when that is a function word ("in", "on", "by") the one before that too ("land on
    Mars" / "land on the Moon", "Kilimanjaro is in Kenya" / "Kilimanjaro is ... in Tanzania" does not hold)."""
    return _context(text_facts(claim).tokens, specific.start) == _context(facts.tokens, candidate.start) != ()


def _context(tokens: Sequence, start: int) -> tuple[str, ...]:
    before = [stem(t.lower) for t in tokens if t.end <= start and t.lower not in _DETERMINERS]
    if not before:
        return ()
    return tuple(before[-2:]) if before[-1] in STOPWORDS else (before[-1],)


# The share of the claim's other content words a sentence must hold for its value to stand in for the claim's.
_SAYS_MOST = 0.5


def _says_most_of(claim: str, specific: Specific, subject: Specific | None, sentence: SentenceRef) -> bool:
    """The sentence holds at least _SAYS_MOST of the claim's content words outside `specific` (synonyms folded; the
    subject's words count as held: the sentence is about the subject)."""
    own = {_bound_word(w) for w in _content_stems(specific.text)}
    named = {_bound_word(w) for w in _content_stems(subject.text)} if subject is not None else set()
    wanted = {_bound_word(w) for w in _content_stems(claim)} - own - named
    if not wanted:
        return True
    held = {_bound_word(w) for w in _content_stems(sentence.text)}
    return len(wanted & held) >= _SAYS_MOST * len(wanted)


def _distinct(conflicts: tuple[Conflict, ...]) -> tuple[Conflict, ...]:
    """The conflicts, less any two that put one stated value in place of two of the claim's ("from 2005 (not 2009)
    to 2005 (not 2017)"): one value cannot be both, so neither is known to be the claim's attribute."""
    stated = Counter((c.stated, c.sentence.start, c.sentence.passage.id) for c in conflicts)
    return tuple(c for c in conflicts if stated[(c.stated, c.sentence.start, c.sentence.passage.id)] == 1)


def _nearest_to_neighbour(
    claim: str, specific: Specific, facts: TextFacts, candidates: Sequence[Occurrence]
) -> Occurrence | None:
    """Of several bound rivals, the one closest to the claim's other specifics in the sentence ("in Medicine in
    1911" against "... in Physics in 1903 and ... in Chemistry in 1911": Chemistry, beside 1911); None when that
    does not settle it."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    places = [
        found
        for other in claim_specifics(claim)
        if other.start != specific.start and (found := occurrences(other, facts))
    ]
    if not places:
        return None

    def distance(candidate: Occurrence) -> int:
        return sum(min(max(p.start - candidate.end, candidate.start - p.end, 0) for p in found) for found in places)

    ranked = sorted(candidates, key=distance)
    return ranked[0] if distance(ranked[0]) < distance(ranked[1]) else None


def _stated_as(claim: str, specific: Specific, facts: TextFacts, stated: Occurrence | str) -> str:
    """The sentence's value as the correction writes it: a bare year where the claim gives one ("1969" from "20 July
    1969"), and a name with the determiner the sentence puts before it where the claim has none ("the Moon")."""
    if isinstance(stated, str):
        start = facts.text.find(stated)
        stated = Occurrence(start, start + len(stated), "rival", stated)
    if specific.kind == KIND_DATE and specific.date is not None and specific.date.month is None:
        dates = [d for d in facts.dates if d.start == stated.start]
        if dates:
            return f"{dates[0].year}s" if dates[0].decade else str(dates[0].year)
    if specific.kind == KIND_NAME and stated.start >= 0:
        before = facts.text[: stated.start].rstrip().rsplit(" ", 1)[-1].lower()
        claim_before = claim[: specific.start].rstrip().rsplit(" ", 1)[-1].lower()
        if before == "the" and claim_before not in _DETERMINERS:
            return f"the {stated.text}"
    return stated.text


def _same_thing_said(claim: str, specific: Specific, facts: TextFacts) -> bool:
    """The sentence holds the word the specific binds to in the claim ("landed ... in 1972": "landed"), or, for a
    claim whose head is its subject, any of the claim's other content words: it says the same thing of the
    subject, with another value."""
    head = _head(claim, specific)
    if head is None:
        return True
    if head in {fold_binding(stem_) for stem_ in facts.stems}:
        return True
    claim_stems = {stem(t.lower) for t in text_facts(claim).tokens if t.lower not in STOPWORDS}
    spans = [(s.start, s.end) for s in claim_specifics(claim)]
    content = {
        stem(t.lower)
        for t in text_facts(claim).tokens
        if t.lower not in STOPWORDS and not any(a <= t.start < b for a, b in spans)
    }
    return bool((content or claim_stems) & facts.stems)


def _slot_rival(claim: str, specific: Specific, facts: TextFacts) -> str | None:
    """The name that stands where the claim has `specific`: after the same word ("land on Mars" / "land on the
    Moon", "in Medicine" / "in Physics"), when exactly one does."""
    claim_words = {_bare_lower(t.lower) for t in text_facts(claim).tokens}
    wanted = _context(text_facts(claim).tokens, specific.start)
    found: set[str] = set()
    for name in facts.names:
        if _context(facts.tokens, name.start) != wanted or not wanted:
            continue
        if not set(specific.words) <= set(name.words) and not set(name.words) <= claim_words:
            found.add(name.text)
    return found.pop() if len(found) == 1 else None


def _bare_lower(word: str) -> str:
    return word.split("'")[0].split("’")[0]


# --- the citation ------------------------------------------------------------------------------------------


def _citation(
    claim: str,
    specifics: Sequence[Specific],
    subject: Specific | None,
    sentences: Sequence[SentenceRef],
    holders: dict[int, list[SentenceRef]],
    conflicts: Sequence[Conflict],
) -> SentenceRef | None:
    """The sentence the verdict rests on: for a conflict, the one stating the other value; else the sentence
    about the subject holding most of the claim's specifics (then most of its words; the first on a tie)."""
    if conflicts:
        return conflicts[0].sentence
    if not sentences:
        return None
    counts = {id(s): 0 for s in sentences}
    for specific in specifics:
        for sentence in holders.get(id(specific), []):
            counts[id(sentence)] += 1
    named = {id(s): subject is not None and _states(subject, s.text) for s in sentences}
    claim_stems = {stem(t.lower) for t in text_facts(claim).tokens if t.lower not in STOPWORDS}
    return max(
        sentences,
        key=lambda s: (counts[id(s)], named[id(s)], len(claim_stems & text_facts(s.text).stems), -sentences.index(s)),
    )
