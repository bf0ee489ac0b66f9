"""`local/extractor`: rule-based claim extraction in fact-check mode's CLAIM / Context / Type format
(docs/modes.md#fact-check-mode, Extraction).

Approach, per sentence of the call's content (`ExtractInputs.content`, see `sentences.py`):

1. Clean: drop headings; strip list markers, quote marks ("> ") and leading discourse
   words ("However,", "Therefore,") so that what remains is a verbatim part of the text.
2. Reject whole sentences that are questions or imperatives.
3. Split compounds into atomic claims, only where both halves stay full clauses:
   - two independent clauses ("X grew, and Y fell"; "X grew; Y fell") become the two
     verbatim halves;
   - a shared-subject coordination of verbs in one tense ("He was born in 1898 and
     served from 1939 until 1975") becomes "He was born in 1898" and "He served from
     1939 until 1975": the second repeats the subject, so it is a whole sentence but
     not a verbatim substring of the content (its Context line is the full sentence).
     A modal second verb ("... and would have been ...") also splits: that half is
     then dropped as a hedge and the first half kept.
   Coordinations of nouns ("between 1939 and 1975", "Kansas and Kenya") are never split
   because the right half must start with a verb or be a subject-verb clause.
4. Reject, per claim (`rejection_reason`): opinions (evaluative adjectives, "I think",
   "should", first-person statements), hedges ("might", "could", "possibly", "may", "perhaps", "likely", "would"),
   predictions ("will", "is expected to", "by 2050" with a future year), definitions and
   tautologies ("X is a Y that ..." with no number or name after the subject, "X is
   defined as", "X is X") and fragments (fewer than three words, a trailing ":", or
   neither a verb cue nor a full stop). A claim that attributes a statement ("X said
   ...", "according to X") is kept even if the statement is an opinion or a
   prediction: that X said it is checkable.
5. Type each claim (`claim_type`, factcheck/core/claim_typing.py: by cues, first match wins).

Limits: English only and lexical; no pronoun resolution ("He served ..." keeps "He");
an evaluative word makes a whole clause an opinion even when it also states a fact.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from factcheck.core.claim_profile import profile
from factcheck.core.claim_typing import ATTRIBUTION, claim_type
from factcheck.core.domain import CLAIM_TYPES
from factcheck.engines.generator import NO_SOURCES_MESSAGE
from factcheck.models.inputs import ExtractInputs, unanswerable
from factcheck.text.sentences import sentence_spans

__all__ = ["Claim", "answer", "answer_stream", "claim_type", "extract_claims", "format_claims", "rejection_reason"]

NO_CLAIMS_TEXT = "No verifiable factual claims were identified in this content."
MIN_CLAIM_WORDS = 3
MAX_SUBJECT_WORDS = 12


@dataclass(frozen=True)
class Claim:
    text: str
    context: str
    type: str


def answer(inputs: object) -> str:
    """The extraction call's answer: CLAIM blocks plus the EXTRACTION SUMMARY.

    `local/generator`'s empty-store notice is a message to the user, not content, so it
    yields no claims.
    """
    return "".join(answer_stream(inputs))


def answer_stream(inputs: object) -> Iterator[str]:
    """The same answer in pieces, written as the content is read: one CLAIM block per piece
    as soon as its sentence is done, then the summary."""
    if not isinstance(inputs, ExtractInputs):
        raise unanswerable(inputs, "local/extractor", (ExtractInputs,))
    content = inputs.content
    claims: list[Claim] = []
    if content.strip() != NO_SOURCES_MESSAGE:
        for claim in iter_claims(content):
            yield _claim_block(len(claims) + 1, claim, first=not claims, detail=inputs.claim_detail)
            claims.append(claim)
    yield _summary(claims)


def extract_claims(content: str) -> list[Claim]:
    """The verifiable, atomic claims of `content`, in order, without exact duplicates."""
    return list(iter_claims(content))


def iter_claims(content: str) -> Iterator[Claim]:
    """`extract_claims`, one sentence at a time."""
    seen: set[str] = set()
    for start, end in sentence_spans(content):
        sentence = _clean_sentence(content[start:end])
        if not sentence or _is_question_or_imperative(sentence):
            continue
        for clause in split_compound(sentence):
            if clause not in seen and rejection_reason(clause) is None:
                seen.add(clause)
                yield Claim(clause, sentence, claim_type(clause))


def format_claims(claims: list[Claim]) -> str:
    """The extraction prompt's claim format; with no claims, a plain note and a zero summary."""
    blocks = [_claim_block(n, claim, first=n == 1) for n, claim in enumerate(claims, 1)]
    return "".join(blocks) + _summary(claims)


def _claim_block(number: int, claim: Claim, *, first: bool, detail: bool = False) -> str:
    """One CLAIM block; blocks after the first start with the blank line that separates them.
    With `detail` (`ExtractInputs.claim_detail`, claim-level citations) it adds the Level and
    Entity lines, decided by the built-in rules of factcheck/core/claim_profile.py."""
    block = f"CLAIM {number}: {claim.text}\nContext: {claim.context}\nType: {claim.type}\n"
    if detail:
        found = profile(claim.text)
        entity = found.numeric.entity if found.numeric is not None else "N/A"
        block += f"Level: {found.level}\nEntity: {entity}\n"
    return block if first else "\n" + block


def _summary(claims: list[Claim]) -> str:
    """What follows the blocks: the note when there are none, then the EXTRACTION SUMMARY."""
    counts = Counter(claim.type for claim in claims)
    ordered = sorted(counts, key=lambda name: (-counts[name], CLAIM_TYPES.index(name)))
    breakdown = ", ".join(f"{name}: {counts[name]}" for name in ordered) or "none"
    body = "" if claims else NO_CLAIMS_TEXT + "\n"
    return f"{body}\nEXTRACTION SUMMARY:\nTotal claims: {len(claims)}\nBy type: {breakdown}"


# --- cleaning -----------------------------------------------------------------------

_LEADING_MARKUP = re.compile(r"^(?:>\s*)*(?:[-*•+]\s+|\d+[.)]\s*(?=[A-Za-z\"'“]))?")
_DISCOURSE = re.compile(
    r"^(?:However|Therefore|Additionally|Moreover|Furthermore|Also|Overall|Thus|Hence|Indeed|"
    r"Meanwhile|Consequently|Notably|Finally|In addition|In fact|As a result|For example|"
    r"For instance|In summary|In conclusion|Similarly|Likewise|Nevertheless|Still),\s+"
)


def _clean_sentence(sentence: str) -> str:
    """One-line sentence without list markers or a leading discourse word; empty for headings."""
    text = " ".join(sentence.split())
    if text.startswith("#"):
        return ""
    text = _LEADING_MARKUP.sub("", text)
    stripped = _DISCOURSE.sub("", text)
    if stripped != text and stripped:
        text = stripped[0].upper() + stripped[1:]
    return text


_IMPERATIVE_VERBS = frozenset(
    "note consider remember imagine let let's please see check click try make add remove ensure avoid "
    "keep read visit contact call ask look find go don't refer follow install run open enter select "
    "choose compare learn discover join start stop get".split()
)


def _is_question_or_imperative(sentence: str) -> bool:
    if sentence.rstrip("\"'”’)] ").endswith("?"):
        return True
    words = sentence.split(maxsplit=2)
    first = words[0].lower().strip(",")
    second = words[1].lower() if len(words) > 1 else ""
    return first in _IMPERATIVE_VERBS and second not in {"of", "is", "was", "are", "were", "has", "had"}


# --- clause analysis ----------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9](?:[\w'’%-]|\.(?=\w))*|[,;:()\"“”]")
_AUXILIARIES = frozenset(
    "is are was were be been being am has have had do does did can cannot could would should shall will may "
    "might must isn't aren't wasn't weren't hasn't haven't hadn't doesn't didn't won't can't couldn't".split()
)
_IRREGULAR_VERBS = frozenset(
    "became began begun born bore bought brought built came caught chose drew drove ate fell felt fought found "
    "flew gave got went grew held hid kept knew laid led left lent lost made meant met paid put ran rang rose "
    "said saw sold sent set shot shut sang sank sat slept spoke spent stood stole struck swam took taught tore "
    "told thought threw understood woke wore won wrote arose forgot forbade sought".split()
)
_NOT_VERBS_ED = frozenset("hundred indeed speed breed creed greed embed bred".split())
_NOT_VERBS_S = frozenset(
    "this his its thus always perhaps various famous previous news series species physics economics "
    "mathematics politics less unless across plus whereas towards besides afterwards sometimes nevertheless "
    "numerous serious obvious enormous dangerous continuous tremendous anonymous ridiculous gas bus yes "
    "does has was is".split()
)
# Words after which a word is a noun or adjective, not a verb ("the advanced system", "two terms").
_BEFORE_NOUNS = frozenset(
    "the a an this that these those its his her their our my your some many several few all each every two "
    "three four five six seven eight nine ten of in on for with from by to at about among between into "
    "such no any more most other".split()
)
_PRESENT_FORMS = frozenset("is are am has have do does".split())
_PAST_FORMS = frozenset("was were had did".split())
_MODALS = frozenset("can cannot could would should shall will may might must".split())
_RELATIVE_PRONOUNS = frozenset("who which that whom whose".split())
_SUBORDINATORS = frozenset("unless because if when although though while since until before after whereas".split())
_SUBJECT_STARTERS = frozenset("he she it they we i this these those there the a an its his her their".split())


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def _is_verb(words: list[re.Match[str]], i: int, *, strong: bool) -> bool:
    """Whether word i reads as a verb: auxiliaries, irregular pasts and -ed forms (strong),
    plus lower-case -s forms (weak; only for the fragment test). Except for auxiliaries,
    a word after a determiner or preposition is not a verb."""
    word = words[i].group()
    low = word.lower()
    if low in _AUXILIARIES:
        return True
    previous = words[i - 1].group().lower() if i else ""
    if word != low or previous in _BEFORE_NOUNS or not low.isalpha():
        return False
    if low in _IRREGULAR_VERBS:
        return True
    if low.endswith("ed") and len(low) >= 5 and low not in _NOT_VERBS_ED:
        return True
    return (
        not strong
        and low.endswith("s")
        and len(low) > 3
        and not low.endswith(("ss", "us", "is"))
        and low not in _NOT_VERBS_S
    )


def _main_verb(words: list[re.Match[str]]) -> int | None:
    """Index of the first verb outside a relative clause, or None.

    A relative clause opens at "who/which/that" and closes at a comma ("Obama, who
    served two terms, was ...") or where a verb follows a non-verb after the clause's
    own verb chain ("The man who founded the company was ...").
    """
    relative: bool | None = None  # None: outside; False: before its verb; True: its verb seen
    for i, word in enumerate(words):
        token = word.group().lower()
        if token in _RELATIVE_PRONOUNS and i > 0:
            relative = False
        elif token == ",":
            relative = None
        elif _is_verb(words, i, strong=True):
            if relative is None or (relative and not _is_verb(words, i - 1, strong=True)):
                return i
            relative = True
    return None


def _is_clause(text: str) -> bool:
    """A subject (at least one word, no subordinator) followed by a main verb."""
    words = _words(text)
    verb = _main_verb(words)
    if verb is None:
        return False
    subject = [w.group().lower() for w in words[:verb]]
    return any(w[0].isalnum() for w in subject) and not _SUBORDINATORS.intersection(subject)


def _leading_verb_tense(text: str) -> str | None:
    """Tense of the verb that opens text, optionally after an -ly adverb ("previously served")."""
    words = _words(text)
    first = 1 if words and words[0].group().endswith("ly") else 0
    if len(words) <= first or not words[first].group().islower() or not _is_verb(words, first, strong=True):
        return None
    return _tense(words[first].group())


# --- compound splitting -------------------------------------------------------------

_INDEPENDENT_JOINS = re.compile(
    r";\s+|,\s+(?:and|but|while|whereas)\s+"
    r"|\s+(?:and|but)\s+(?=(?:he|she|it|they|we|the|this|its|his|her|their)\b)"
)
_VERB_PHRASE_JOINS = re.compile(r",?\s+(?:and|but)\s+")


def split_compound(sentence: str) -> list[str]:
    """The atomic claims of one sentence: the sentence itself when no safe split exists."""
    for match in _INDEPENDENT_JOINS.finditer(sentence):
        left, right = sentence[: match.start()], sentence[match.end() :]
        if _outside_brackets(sentence, match.start()) and _both_clauses(left, right):
            return split_compound(left.rstrip(",; ")) + split_compound(_capitalised(right))
    for match in _VERB_PHRASE_JOINS.finditer(sentence):
        left, right = sentence[: match.start()], sentence[match.end() :]
        subject, tense = _subject_and_tense(left)
        if (
            subject
            and _outside_brackets(sentence, match.start())
            and tense is not None
            and _leading_verb_tense(right) in (tense, "modal")
            and len(_words(right)) >= 3
        ):
            return split_compound(left) + split_compound(f"{subject} {right}")
    return [sentence]


def _both_clauses(left: str, right: str) -> bool:
    first = right.split(maxsplit=1)[0] if right.strip() else ""
    subject_like = first.lower() in _SUBJECT_STARTERS or first[:1].isupper() or first[:1].isdigit()
    return subject_like and _is_clause(left) and _is_clause(right)


def _subject_and_tense(clause: str) -> tuple[str, str | None]:
    """The words before the main verb of a clause (if a short subject) and that verb's tense."""
    words = _words(clause)
    verb = _main_verb(words)
    if verb is None or verb == 0 or verb > MAX_SUBJECT_WORDS or _has_later_clause(words, verb):
        return "", None
    return clause[: words[verb].start()].rstrip(", "), _tense(words[verb].group())


def _has_later_clause(words: list[re.Match[str]], verb: int) -> bool:
    """Whether another verb follows the main verb's chain ("held that the law was ..."):
    a verb after it might be the one the coordinated verb shares a subject with."""
    chain_end = verb
    while chain_end + 1 < len(words) and _is_verb(words, chain_end + 1, strong=True):
        chain_end += 1
    return any(_is_verb(words, i, strong=True) for i in range(chain_end + 1, len(words)))


def _tense(verb: str) -> str | None:
    """ "past", "present" or "modal" for a verb form; None when unknown."""
    low = verb.lower()
    if low in _MODALS:
        return "modal"
    if low in _PRESENT_FORMS:
        return "present"
    if low in _PAST_FORMS or low in _IRREGULAR_VERBS or low.endswith("ed"):
        return "past"
    return None


def _outside_brackets(text: str, position: int) -> bool:
    before = text[:position]
    quotes = before.count('"') + before.count("“") + before.count("”")
    return before.count("(") <= before.count(")") and quotes % 2 == 0


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


# --- filters ------------------------------------------------------------------------

_EVALUATIVE = frozenset(
    "best worst beautiful ugly amazing awesome wonderful terrible horrible awful great excellent fantastic "
    "incredible remarkable impressive stunning brilliant boring interesting fascinating delightful lovely nice "
    "gorgeous magnificent superb outstanding overrated underrated disappointing pathetic stupid silly ridiculous "
    "absurd perfect ideal greatest finest nicest favorite favourite breathtaking charming elegant good bad easy "
    "difficult important unfortunately fortunately sadly hopefully luckily".split()
)
_OPINION_PHRASES = re.compile(
    r"\b(?:I|we)\s+(?:think|believe|feel|guess|suppose|reckon|consider|find)\b|\bin (?:my|our) (?:opinion|view)\b"
    r"|\bpersonally\b|\bshould\b|\bought to\b|\bmust\b",
    re.IGNORECASE,
)
# "I" before a lower-case word; the word before it tells a pronoun from a numeral.
_FIRST_PERSON = re.compile(r"\bI(?= [a-z])")
_WORD_BEFORE = re.compile(r"(\S+)\s+$")
# Lower-case "may" only: "May 1990" is a month.
_HEDGES = re.compile(
    r"\bmay\b|(?i:\b(?:might|could|possibly|perhaps|likely|unlikely|probably|maybe|presumably|potentially|"
    r"potential|seemingly|apparently|arguably|conceivably|supposedly|would|seems?|seemed|appears? to|appeared to)\b)"
)
# Lower-case "will" only, and not the noun ("free will", "the will of"): "Will Smith" is a name.
_PREDICTIONS = re.compile(
    r"(?<!\bthe )(?<!\bfree )(?<!\bgood )(?<!\bown )(?<!\bpolitical )\bwill\s+(?:not\s+)?[a-z]+|\bwon't\b|\w'll\b"
    r"|\bshall\b|\b(?:is|are|was|were)\s+(?:expected|projected|forecast|forecasted|predicted|set|going|poised)\s+to\b"
    r"|(?i:\bin the (?:coming|next) (?:years?|decades?|months?)\b|\bnext (?:year|decade|month)\b)"
)
_FUTURE_YEAR_CONTEXT = re.compile(r"\b(?:by|in|until|before|after)\s+((?:19|20|21)\d{2})\b", re.IGNORECASE)
_DEFINITION = re.compile(
    r"\b(?:is|are)\s+(?:defined as|a term for|the term for|a type of|a kind of|a form of|a class of|a branch of)\b"
    r"|\brefers? to\b"
    r"|^[\w\s'-]{1,60}?\b(?:is|are)\s+(?:an?|the)\s+[\w\s,'-]*?"
    r"\b(?:that|which|who|whose|where|in which|by which|used to|consisting of)\b",
    re.IGNORECASE,
)
_TAUTOLOGY = re.compile(r"^(?:an?\s+|the\s+)?(\w[\w\s]*?)\s+(?:is|are)\s+(?:an?\s+|the\s+)?\1\W*$", re.IGNORECASE)


def rejection_reason(claim: str) -> str | None:
    """Why `claim` is not a verifiable factual claim ("opinion", "hedge", "prediction",
    "definition", "fragment"), or None when it is one."""
    if _is_fragment(claim):
        return "fragment"
    if _HEDGES.search(claim):
        return "hedge"
    attributed = ATTRIBUTION.search(claim) is not None
    if not attributed and _is_opinion(claim):
        return "opinion"
    if not attributed and _is_prediction(claim):
        return "prediction"
    if _is_definition(claim):
        return "definition"
    return None


def _is_fragment(claim: str) -> bool:
    words = _words(claim)
    alphanumeric = [w.group().lower() for w in words if w.group()[0].isalnum()]
    if len(alphanumeric) < MIN_CLAIM_WORDS or claim.rstrip().endswith(":"):
        return True
    if alphanumeric[0] in _RELATIVE_PRONOUNS | {"and", "but", "or"}:
        return True
    # Plural present verbs ("people visit") carry no cue, so a verbless-looking claim
    # still counts as a sentence when it ends like one; list items and headings do not.
    has_verb = any(_is_verb(words, i, strong=False) for i in range(len(words)))
    return not has_verb and not claim.rstrip("\"'”’)] ").endswith((".", "!"))


def _is_opinion(claim: str) -> bool:
    if _OPINION_PHRASES.search(claim) or _is_first_person(claim):
        return True
    words = _words(claim)
    # Capitalised evaluative words are names ("Great Wall", "Best Paper Award") unless
    # they open the sentence before a lower-case word ("Best of all, ...").
    return any(
        w.group().lower() in _EVALUATIVE
        and (w.group().islower() or (i == 0 and len(words) > 1 and words[1].group().islower()))
        for i, w in enumerate(words)
    )


def _is_first_person(claim: str) -> bool:
    """ "I" as a subject ("As a language model, I do not ..."), not a numeral ("World War I ended")."""
    for match in _FIRST_PERSON.finditer(claim):
        before = _WORD_BEFORE.search(claim[: match.start()])
        if before is None or not before.group(1)[0].isupper() or not before.group(1)[-1].isalnum():
            return True
    return False


def _is_prediction(claim: str) -> bool:
    if _PREDICTIONS.search(claim):
        return True
    this_year = datetime.date.today().year
    return any(int(m.group(1)) > this_year for m in _FUTURE_YEAR_CONTEXT.finditer(claim))


def _is_definition(claim: str) -> bool:
    if _TAUTOLOGY.match(claim):
        return True
    return _DEFINITION.search(claim) is not None and not _has_specifics(claim)


def _has_specifics(claim: str) -> bool:
    """A digit, or a capitalised word after the first word (a name, place or date)."""
    words = [w.group() for w in _words(claim)]
    return any(ch.isdigit() for ch in claim) or any(w[0].isupper() and w != "I" for w in words[1:])
