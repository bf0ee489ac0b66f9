"""A hard retrieval corpus of its own making, and an exact BM25 to judge a store's answers against.

Generated, not read: documents of short invented-word paragraphs, with facts about made-up entities
planted in them, and one paraphrased question per fact (bench/retrieval.py asks
a knowledge store these questions next to this module's exact BM25 over the whole corpus).

Why these shapes. A store that picks its candidates from the index by rare terms (a quorum of them, a
cap, a share of the passages) can miss what an exact BM25 finds when the question's rare words are not
rare enough to pick the fact out on their own:

- Vocabulary: invented pronounceable words with Zipfian frequencies (rank r weighs r**-ZIPF_EXPONENT),
  mixed with real English function words (stopwords to the search) and common English nouns and verbs,
  among them every kind of thing, every verb and their synonyms, so those are common words too; place
  names are moderately common. Each paragraph (10-25 words, one or two sentences) is one passage.
- Facts: "Records show that the Chuktrakour Thoumplair museum near Reagrai was restored in 1718 after a
  storm." The entity's two name words are invented for it; each also occurs in other passages (at a
  million passages 70-450 of them, median about 140; the same share of a smaller corpus, at least
  MIN_NAME_PASSAGES), alone or naming another thing ("the Thoumplair tower"), but the two occur together
  only in the fact's passage.
- Questions, one per fact, in shapes drawn from the seed: "What year did they get the Chuktrakour
  Thoumplair museum renovated storm?", "When was the factory of Malan Bratwais demolished?", "In what
  year was the Salim bridge mapped belkik?": the full name or (about a third) only one of its words, then
  with the kind word itself and the place, which an exact BM25 needs to tell the fact from the name's
  other passages; synonyms for the kind and the verb (words the fact's passage does not hold);
  sometimes the place, sometimes a stray word (the fact's own, or any common word).

Everything is drawn from one random.Random(seed): the same arguments give the same corpus.
exact_bm25_top is Okapi BM25 with the gateway's own terms, k1, b and IDF over every passage.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.ranking import K1, B, idf
from factcheck_gateway.knowledge.retrieval import CANDIDATE_FACTOR, MIN_COVERAGE
from factcheck_gateway.knowledge.tokens import STOPWORDS, search_terms, term_counts
from factcheck_gateway.request_validation import MAX_SOURCE_CHARS

ZIPF_EXPONENT = 1.07
VOCABULARY_SIZE = 20_000
PLACE_COUNT = 150
# A paragraph's words, drawn from the mixed vocabulary (a decoy's name adds one to three).
PARAGRAPH_WORDS = (10, 25)
# Documents of at most this many paragraphs (about the size of bench.retrieval's easy corpus's documents),
# and within AddDocuments' limit on a document's characters.
DOCUMENT_PARAGRAPHS = 500
DOCUMENT_CHARS = MAX_SOURCE_CHARS - 5_000
# How many other passages a name word is in, at a million passages (log-normal, median 139, clipped);
# a smaller corpus gets the same share of its passages, but at least MIN_NAME_PASSAGES.
NAME_PASSAGES_MEDIAN, NAME_PASSAGES_SIGMA, NAME_PASSAGES_RANGE = 139, 0.45, (70, 450)
MIN_NAME_PASSAGES = 3
REFERENCE_PASSAGES = 1_000_000
# Shares of a filler word's draws: invented words, English stopwords, common English words, place names.
WORD_MIX = {"invented": 0.56, "function": 0.27, "english": 0.15, "place": 0.02}

# The kinds of thing a fact is about, each with the synonym a question may use instead.
KIND_SYNONYMS = {
    "museum": "gallery",
    "mill": "factory",
    "bridge": "crossing",
    "tower": "spire",
    "chapel": "church",
    "library": "archive",
    "school": "academy",
    "harbour": "port",
    "castle": "fortress",
    "theatre": "playhouse",
    "station": "depot",
    "market": "bazaar",
}
# What happened to it (a participle), each with the synonym a question may use instead.
VERB_SYNONYMS = {
    "restored": "renovated",
    "destroyed": "demolished",
    "surveyed": "mapped",
    "built": "constructed",
    "opened": "inaugurated",
    "closed": "shut",
    "rebuilt": "reconstructed",
    "damaged": "wrecked",
    "founded": "established",
    "extended": "enlarged",
    "sold": "auctioned",
    "painted": "decorated",
}
ROLES = ["botanist", "architect", "merchant", "engineer", "painter", "bishop", "mayor", "surveyor"]
# A fact's circumstance: its words (storm, fire, ...) are the stray words a question may borrow.
EVENTS = ["storm", "fire", "flood", "war", "famine", "riot", "drought", "gale"]
FUNCTION_WORDS = "the of a and was in to by with from at on for is it that were as".split()
ENGLISH_WORDS = (
    "records show near after storm year river town village old new road hill water stone north south "
    "east west people local history century family house street farm field bank wall gate king queen "
    "council land winter summer trade money fire war flood years first long great small white black red "
    "green early late part work later city county valley lake forest island coast rail canal walls "
    "roof bell clock garden square church report papers"
).split()
# Kinds, verbs, their synonyms and roles are common words of the filler too.
_TOPIC_WORDS = [*KIND_SYNONYMS, *KIND_SYNONYMS.values(), *VERB_SYNONYMS, *VERB_SYNONYMS.values(), *ROLES, *EVENTS]
ENGLISH_WORDS = list(dict.fromkeys(ENGLISH_WORDS + _TOPIC_WORDS))

# Fact sentences; {place} only in those marked True (a half-name question needs a place to go with it).
FACT_TEMPLATES = [
    ("Records show that the {name} {kind} near {place} was {verb} in {year} after a {event}.", True),
    ("The {name} {kind} was {verb} in {year} by the {role} {person}.", False),
    ("In {year} the {name} {kind} near {place} was {verb} after the {event}.", True),
    ("Local papers report that the {name} {kind} was {verb} in {year} during a {event}.", False),
    ("The {name} {kind} at {place} was {verb} in {year} by the {role} {person}.", True),
]
# Questions: {subject} is "the <name> <kind>" or "the <kind> of <name>"; {tail}: place and stray word.
QUESTION_TEMPLATES = [
    "When was {subject} {verb}{tail}?",
    "In what year was {subject} {verb}{tail}?",
    "What year did they get {subject} {verb}{tail}?",
    "Which year was {subject} {verb}{tail}?",
]
HALF_NAME_SHARE = 1 / 3  # of all questions; only facts with a place are asked by half their name
KIND_SYNONYM_SHARE = 0.5  # full-name questions only: a half name keeps the kind word itself
VERB_SYNONYM_SHARE = 0.6
PLACE_SHARE = 0.35  # full-name questions about a fact with a place; half-name ones always name it
STRAY_SHARE = 0.4

_ONSETS = "b br ch d dr f g gr k kl l m n p pl pr r s sh st t th tr v w z".split()
_VOWELS = "a e i o u ai ou ea ei oo".split()
_CODAS = ["", "", "", "n", "r", "l", "k", "m", "s", "st", "nt"]


@dataclass(frozen=True)
class HardCorpus:
    # (id, text): documents of paragraphs separated by "\n\n"; each paragraph is one passage after chunk_text
    documents: list[tuple[str, str]]
    # every passage text, as factcheck_gateway.knowledge.chunking.chunk_text makes them, in load order
    passages: list[str]
    questions: list[str]
    # per question, the index in `passages` of the fact's passage
    answers: list[int]


@dataclass(frozen=True)
class _Fact:
    names: tuple[str, str]
    kind: str
    verb: str
    place: str | None
    event: str | None
    sentence: str


def hard_corpus(passages: int, facts: int = 300, seed: int = 11) -> HardCorpus:
    """`passages` passages in documents, `facts` of them holding a planted fact, and a question per fact."""
    if passages < 2 * facts + 10:
        raise ValueError(f"{passages} passages are too few for {facts} facts")
    rng = random.Random(seed)
    words = _Words(rng)
    filler_count = passages - facts
    fact_slots = sorted(rng.sample(range(passages), facts))
    planted = [_fact(words, rng) for _ in range(facts)]
    # Each name word also goes into its own number of filler passages; a fact's two name words into
    # disjoint ones, so that they meet only in the fact's passage.
    decoys: dict[int, list[str]] = {}
    for fact in planted:
        counts = [_name_passages(passages, rng) for _ in fact.names]
        chosen = rng.sample(range(filler_count), sum(counts))
        for name, ordinals in zip(fact.names, (chosen[: counts[0]], chosen[counts[0] :])):
            for ordinal in ordinals:
                # Alone, or naming another thing of some kind ("the Thoumplair tower").
                phrase = name if rng.random() < 0.5 else f"the {name} {rng.choice(list(KIND_SYNONYMS))}"
                decoys.setdefault(ordinal, []).append(phrase)
    paragraphs: list[str] = []
    answers_by_fact = {}
    fact_at = dict(zip(fact_slots, range(facts)))
    filler_words = words.filler_draws(rng)
    ordinal = 0
    for index in range(passages):
        if index in fact_at:
            fact = planted[fact_at[index]]
            answers_by_fact[fact_at[index]] = index
            # Half the facts go on with a short filler sentence, so fact passages vary in length as others do.
            tail = " " + _sentence(next(filler_words)[: rng.randint(5, 10)]) if rng.random() < 0.5 else ""
            paragraphs.append(fact.sentence + tail)
            continue
        drawn = next(filler_words)
        for phrase in decoys.get(ordinal, []):
            drawn.insert(rng.randrange(len(drawn) + 1), phrase)
        paragraphs.append(_paragraph(drawn, rng))
        ordinal += 1
    documents = pack_documents(paragraphs, "hard", DOCUMENT_CHARS, DOCUMENT_PARAGRAPHS)
    chunked = [chunk.text for _, text in documents for chunk in chunk_text(text)]
    assert chunked == paragraphs, "every paragraph must be exactly one passage"
    questions = [_question(fact, words, rng) for fact in planted]
    return HardCorpus(documents, paragraphs, questions, [answers_by_fact[f] for f in range(facts)])


class _Words:
    """The corpus's invented words (all distinct from each other and from the English ones) and its filler."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._taken = set(STOPWORDS) | set(ENGLISH_WORDS) | set(FUNCTION_WORDS)
        self.vocabulary = [self.invent(1, 3) for _ in range(VOCABULARY_SIZE)]
        self.places = [self.invent(2, 2).capitalize() for _ in range(PLACE_COUNT)]
        population: list[str] = []
        weights: list[float] = []
        for group, share in (
            (self.vocabulary, WORD_MIX["invented"]),
            (FUNCTION_WORDS, WORD_MIX["function"]),
            (ENGLISH_WORDS, WORD_MIX["english"]),
            (self.places, WORD_MIX["place"]),
        ):
            # Zipfian within each group (places flatter: the first are not the corpus's commonest words).
            offset = 10 if group is self.places else 0
            group_weights = [(rank + offset) ** -ZIPF_EXPONENT for rank in range(1, len(group) + 1)]
            total = sum(group_weights)
            population += group
            weights += [share * w / total for w in group_weights]
        self._population = population
        self._cumulative = list(itertools.accumulate(weights))

    def invent(self, shortest: int, longest: int) -> str:
        while True:
            syllables = self._rng.randint(shortest, longest)
            word = "".join(
                self._rng.choice(_ONSETS) + self._rng.choice(_VOWELS) + self._rng.choice(_CODAS)
                for _ in range(syllables)
            )
            if len(word) > 2 and word not in self._taken:
                self._taken.add(word)
                return word

    def common_word(self) -> str:
        """An invented word among the 2,000 commonest (a stray word in a question)."""
        rank = min(int(self._rng.paretovariate(0.6)) + 20, 2_000)
        return self.vocabulary[rank - 1]

    def filler_draws(self, rng: random.Random) -> Iterator[list[str]]:
        """Lists of PARAGRAPH_WORDS words drawn from the mixed vocabulary, without end."""
        low, high = PARAGRAPH_WORDS
        batch = 50_000
        while True:
            sizes = [rng.randint(low, high) for _ in range(batch)]
            drawn = rng.choices(self._population, cum_weights=self._cumulative, k=sum(sizes))
            start = 0
            for size in sizes:
                yield drawn[start : start + size]
                start += size


def _fact(words: _Words, rng: random.Random) -> _Fact:
    template, has_place = rng.choice(FACT_TEMPLATES)
    names = (words.invent(2, 2).capitalize(), words.invent(2, 2).capitalize())
    kind = rng.choice(list(KIND_SYNONYMS))
    verb = rng.choice(list(VERB_SYNONYMS))
    place = rng.choice(words.places) if has_place else None
    event = rng.choice(EVENTS) if "{event}" in template else None
    person = " ".join(rng.choice(words.vocabulary[200:]).capitalize() for _ in range(2))
    sentence = template.format(
        name=" ".join(names),
        kind=kind,
        verb=verb,
        place=place,
        year=rng.randint(1600, 1950),
        event=event,
        role=rng.choice(ROLES),
        person=person,
    )
    return _Fact(names, kind, verb, place, event, sentence)


def _question(fact: _Fact, words: _Words, rng: random.Random) -> str:
    # Half names only where a place goes with them: share among those facts, so a third of all questions.
    with_place = sum(1 for t, has_place in FACT_TEMPLATES if has_place) / len(FACT_TEMPLATES)
    half = fact.place is not None and rng.random() < HALF_NAME_SHARE / with_place
    name = rng.choice(fact.names) if half else " ".join(fact.names)
    kind = KIND_SYNONYMS[fact.kind] if not half and rng.random() < KIND_SYNONYM_SHARE else fact.kind
    verb = VERB_SYNONYMS[fact.verb] if rng.random() < VERB_SYNONYM_SHARE else fact.verb
    subject = f"the {kind} of {name}" if rng.random() < 0.3 else f"the {name} {kind}"
    tail = ""
    if fact.place is not None and (half or rng.random() < PLACE_SHARE):
        tail += f" near {fact.place}" if rng.random() < 0.5 else f" {fact.place.lower()}"
    if rng.random() < STRAY_SHARE:
        tail += " " + (fact.event if fact.event is not None and rng.random() < 0.5 else words.common_word())
    return rng.choice(QUESTION_TEMPLATES).format(subject=subject, verb=verb, tail=tail)


def _name_passages(passages: int, rng: random.Random) -> int:
    """How many other passages one name word goes into, in a corpus of `passages`."""
    low, high = NAME_PASSAGES_RANGE
    at_million = min(max(rng.lognormvariate(math.log(NAME_PASSAGES_MEDIAN), NAME_PASSAGES_SIGMA), low), high)
    return max(MIN_NAME_PASSAGES, round(at_million * passages / REFERENCE_PASSAGES))


def _sentence(words: list[str]) -> str:
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def _paragraph(words: list[str], rng: random.Random) -> str:
    """One or two sentences (a long paragraph is split), sometimes with a comma."""
    if len(words) >= 16 and rng.random() < 0.5:
        cut = rng.randint(6, len(words) - 6)
        return _sentence(words[:cut]) + " " + _sentence(words[cut:])
    if rng.random() < 0.3:
        comma = rng.randint(3, len(words) - 3)
        words = words[:comma] + [words[comma] + ","] + words[comma + 1 :]
    return _sentence(words)


def pack_documents(
    paragraphs: list[str], prefix: str, max_chars: int, max_paragraphs: int | None = None
) -> list[tuple[str, str]]:
    """The paragraphs in order as documents (id, text) named prefix-0, prefix-1, ...: each as many paragraphs
    (separated by a blank line) as fit in max_chars, and at most max_paragraphs."""
    documents: list[tuple[str, str]] = []
    current: list[str] = []
    size = 0
    for paragraph in paragraphs:
        full = max_paragraphs is not None and len(current) == max_paragraphs
        if current and (full or size + len(paragraph) + 2 > max_chars):
            documents.append((f"{prefix}-{len(documents)}", "\n\n".join(current)))
            current, size = [], 0
        current.append(paragraph)
        size += len(paragraph) + 2
    if current:
        documents.append((f"{prefix}-{len(documents)}", "\n\n".join(current)))
    return documents


class ExactBM25:
    """Okapi BM25 of some questions against every passage, exactly, with the gateway's terms, K1, B and IDF.

    Query terms: search_terms(question) (distinct); a passage's term frequencies: term_counts(text), its
    length their sum; IDF: ranking.idf(df, N) over all N passages; avgdl: the mean length. Only the questions'
    terms get postings, so a million passages take one pass over their texts and little memory. Scores are
    added term by term in the question's order with numpy's float64, which gives the very floats the formula
    written out in Python gives: passages with the same terms and length score exactly the same, and equal
    scores are ties (broken by passage index, the lower first).
    """

    def __init__(self, passages: Sequence[str], questions: Sequence[str]) -> None:
        self.question_terms = [search_terms(question) for question in questions]
        wanted = {term for terms in self.question_terms for term in terms}
        postings: dict[str, tuple[list[int], list[int]]] = {term: ([], []) for term in wanted}
        lengths = []
        for index, text in enumerate(passages):
            counts = term_counts(text)
            lengths.append(sum(counts.values()))
            for term in wanted.intersection(counts):
                postings[term][0].append(index)
                postings[term][1].append(counts[term])
        self._count = len(lengths)
        average = sum(lengths) / len(lengths) if lengths else 0.0
        norms = np.array([K1 * (1 - B + B * length / average) for length in lengths], dtype=np.float64)
        # Per term: the passages holding it (ascending) and what it adds to each one's score.
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, (where, frequencies) in postings.items():
            at = np.array(where, dtype=np.int64)
            tf = np.array(frequencies, dtype=np.float64)
            weight = idf(len(where), self._count)
            self._postings[term] = (at, weight * tf * (K1 + 1) / (tf + norms[at]))
        self._tops: dict[int, tuple[int, list[int]]] = {}  # question -> (k, its k best), once worked out

    def scores(self, question: int) -> np.ndarray:
        """Every passage's score for the question (its index in the questions), by passage index."""
        totals = np.zeros(self._count, dtype=np.float64)
        for term in self.question_terms[question]:
            at, adds = self._postings[term]
            totals[at] += adds
        return totals

    def score(self, question: int, index: int) -> float:
        """One passage's score for the question: the same sum, in the same order, as `scores` gives it."""
        score = 0.0
        for term in self.question_terms[question]:
            at, adds = self._postings[term]
            position = int(np.searchsorted(at, index))
            if position < len(at) and at[position] == index:
                score += float(adds[position])
        return score

    def _holds(self, term: str, index: int) -> bool:
        at = self._postings[term][0]
        position = int(np.searchsorted(at, index))
        return position < len(at) and int(at[position]) == index

    def top(self, question: int, k: int = 3) -> list[int]:
        """The k best passages (fewer when fewer hold a term), best first; equal scores in passage order."""
        cached = self._tops.get(question)
        if cached is None or cached[0] < k:
            totals = self.scores(question)
            held = np.flatnonzero(totals > 0)
            values = totals[held]
            if len(held) > k:
                # Every passage scoring at least the k-th best score (ties included), then ordered.
                kth = np.partition(values, len(values) - k)[len(values) - k]
                held, values = held[values >= kth], values[values >= kth]
            order = np.lexsort((held, -values))[:k]
            cached = (k, [int(i) for i in held[order]])
            self._tops[question] = cached
        return cached[1][:k]

    def gateway_top(self, question: int, k: int = 3) -> list[int]:
        """What the gateway's Search (top k) returns from a store that ranks every passage exactly: the store's
        k * CANDIDATE_FACTOR best passages are the pool, and those covering less than MIN_COVERAGE of the
        question's IDF weight (over its terms found in the pool, as ranking.BM25.coverage counts it) are left
        out (factcheck_gateway.knowledge.retrieval). So a store may return fewer than k passages."""
        pool = self.top(question, k * CANDIDATE_FACTOR)
        terms = self.question_terms[question]
        weights = {term: idf(len(self._postings[term][0]), self._count) for term in terms}
        present = {term: [self._holds(term, index) for index in pool] for term in terms}
        total = sum(weight for term, weight in weights.items() if any(present[term]))

        def coverage(position: int) -> float:
            return sum(weight for term, weight in weights.items() if present[term][position]) / total if total else 0

        return [index for position, index in enumerate(pool) if coverage(position) >= MIN_COVERAGE][:k]


def exact_bm25_top(passages: list[str], questions: list[str], k: int = 3) -> list[list[int]]:
    """Per question, the indices of its k best passages under exact BM25 over all of `passages` (ExactBM25)."""
    reference = ExactBM25(passages, questions)
    return [reference.top(q, k) for q in range(len(questions))]


def same_top(reference: ExactBM25, question: int, found: Sequence[int], best: Sequence[int]) -> bool:
    """Whether `found` is as good as exact BM25's `best` for the question, ties aside: as many passages, with
    the same exact scores (a passage tied with one of the best may stand in for it; order is not compared)."""
    if len(found) != len(best):
        return False
    found_scores = sorted(reference.score(question, i) for i in found)
    best_scores = sorted(reference.score(question, i) for i in best)
    return all(math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) for a, b in zip(found_scores, best_scores))
