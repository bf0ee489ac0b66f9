"""What of a claim's passages the entailment checker reads: every sentence, and a few context windows.

`claim_sentences` gives every sentence of every passage that shares a content word or a figure
with the claim (a sentence that shares none cannot state or contradict it for a model this
small: it reads such pairs as unrelated), scored by the share of the claim's content words it
holds (IDF-weighted stems, as `judge` aligns them). The sentence spans of a passage are cut once
and cached by its text, so a passage listed for several claims is split once.

`claim_windows` gives the best windows of one or two consecutive sentences, widened with their
neighbouring sentences up to `max_words`, so that the model also sees what "it" or "the company"
refers to. `scripts/train_nli.py` cuts its training pairs with the same function, so the model
is trained on what it is shown at run time.

`word_overlap` is the plain baseline the checker must beat (and one of its combiner's inputs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from factcheck.text.sentences import STOPWORDS, sentence_spans
from factcheck_engines.judge import PassageText, term_stems
from factcheck_engines.verifier_model import default_model

# Sentences read per claim at most: a bound on the model's work for a claim listed with very long
# passages (a claim's passages hold about 13 sentences on Factcheck-Bench, 60 for a WiCE article);
# beyond it, the sentences holding the most of the claim's words.
MAX_SENTENCES_PER_CLAIM = 96
# Windows scored by the model per claim, and the longest a widened window may grow.
WINDOWS_PER_CLAIM = 3
MAX_WINDOW_WORDS = 40
# A two-sentence window must beat the single sentences by this much coverage.
TWO_SENTENCE_PENALTY = 0.05


@dataclass(frozen=True)
class EvidenceWindow:
    """A piece of a passage: `text` is `passage.text[start:end]` verbatim."""

    passage: PassageText
    start: int
    end: int
    coverage: float  # the share of the claim's weight the core (unwidened) window holds
    sentence: bool = False  # one whole sentence (claim_sentences), not a widened window

    @property
    def text(self) -> str:
        return self.passage.text[self.start : self.end]


def claim_windows(
    claim: str,
    passages: Sequence[PassageText],
    limit: int = WINDOWS_PER_CLAIM,
    max_words: int = MAX_WINDOW_WORDS,
) -> list[EvidenceWindow]:
    """At most `limit` best windows for `claim` over `passages`, best first, widened to `max_words`
    (fewer when widened windows coincide).

    Every passage contributes its best window first (so a passage with a paraphrase that shares
    few words still gets looked at when there are few passages); remaining places go to the next
    best windows overall that do not overlap one already taken.
    """
    weights = _claim_weights(claim)
    per_passage = [_ranked_windows(weights, passage) for passage in passages]
    chosen = [ranked[0] for ranked in per_passage if ranked]
    chosen.sort(key=lambda w: -w.coverage)
    chosen = chosen[:limit]
    rest = sorted((w for ranked in per_passage for w in ranked[1:]), key=lambda w: -w.coverage)
    for window in rest:
        if len(chosen) >= limit:
            break
        if not any(_overlaps(window, taken) for taken in chosen):
            chosen.append(window)
    widened: dict[tuple[str, int, int], EvidenceWindow] = {}
    for window in chosen:  # two windows of a short passage can widen to the same text: one model call
        wide = _widen(window, max_words)
        widened.setdefault((wide.passage.id, wide.start, wide.end), wide)
    return list(widened.values())


def claim_sentences(
    claim: str, passages: Sequence[PassageText], limit: int = MAX_SENTENCES_PER_CLAIM
) -> list[EvidenceWindow]:
    """Every sentence of `passages` that shares a content word or a figure with `claim`, in passage
    order (at most `limit`: those holding most of the claim's weight)."""
    weights = _claim_weights(claim)
    total = sum(weights.values()) or 1.0
    digits = set(_DIGITS.findall(claim))
    found = []
    for passage in passages:
        for start, end, stems in _sentences(passage.text):
            coverage = sum(w for s, w in weights.items() if s in stems) / total
            if coverage > 0 or (digits and digits & set(_DIGITS.findall(passage.text[start:end]))):
                found.append(EvidenceWindow(passage, start, end, coverage, sentence=True))
    if len(found) > limit:
        kept = set(map(id, sorted(found, key=lambda w: -w.coverage)[:limit]))
        found = [w for w in found if id(w) in kept]
    return found


def word_overlap(claim: str, evidence: str) -> float:
    """The share of the claim's distinct words (lower-cased, stopwords left out) found in `evidence`."""
    words = {w for w in _WORD.findall(claim.lower()) if w not in STOPWORDS}
    return len(words & set(_WORD.findall(evidence.lower()))) / len(words) if words else 0.0


_WORD = re.compile(r"[a-z0-9]+")
_DIGITS = re.compile(r"\d+")


def _claim_weights(claim: str) -> dict[str, float]:
    model = default_model()
    return {s: model.term_weight(s) for s in term_stems(claim)}


def _ranked_windows(weights: dict[str, float], passage: PassageText) -> list[EvidenceWindow]:
    sentences = _sentences(passage.text)
    total = sum(weights.values()) or 1.0
    windows = []
    for size in (1, 2):
        for i in range(len(sentences) - size + 1):
            group = sentences[i : i + size]
            stems = frozenset().union(*(stems for _, _, stems in group))
            coverage = sum(w for s, w in weights.items() if s in stems) / total
            penalty = TWO_SENTENCE_PENALTY if size > 1 else 0.0
            windows.append(EvidenceWindow(passage, group[0][0], group[-1][1], coverage - penalty))
    return sorted(windows, key=lambda w: (-w.coverage, w.start))


@lru_cache(maxsize=512)
def _sentences(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    return tuple((start, end, frozenset(term_stems(text[start:end]))) for start, end in sentence_spans(text))


def _overlaps(a: EvidenceWindow, b: EvidenceWindow) -> bool:
    return a.passage.id == b.passage.id and a.start < b.end and b.start < a.end


def _widen(window: EvidenceWindow, max_words: int) -> EvidenceWindow:
    """Add whole neighbouring sentences (the next one first) while the window stays within max_words."""
    spans = [(start, end) for start, end, _ in _sentences(window.passage.text)]
    text = window.passage.text
    first = next((i for i, (s, _) in enumerate(spans) if s == window.start), None)
    last = next((i for i, (_, e) in enumerate(spans) if e == window.end), None)
    if first is None or last is None:
        return window
    words = len(text[window.start : window.end].split())
    grew = True
    while grew:
        grew = False
        for index in (last + 1, first - 1):
            if 0 <= index < len(spans):
                extra = len(text[spans[index][0] : spans[index][1]].split())
                if words + extra <= max_words:
                    words += extra
                    first, last = min(first, index), max(last, index)
                    grew = True
                    break
    return EvidenceWindow(window.passage, spans[first][0], spans[last][1], window.coverage)
