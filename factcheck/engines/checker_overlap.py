"""`local/checker-overlap`: word overlap as a checker, the plain baseline every checker must beat.

`plain_overlap` is word overlap alone (bench/checker_accuracy.py's word-overlap baseline); the engine holds it to
the grounding rules as every built-in checker is (grounded.py: never VERIFIED with a specific its passages do not
state, DISPUTED on a stated conflict of the same attribute). A claim's plain verdict rests on its best passage: the one holding the largest share of the claim's words
(`evidence_windows.word_overlap`: lower-cased, stopwords left out). VERIFIED at or above
OVERLAP_THRESHOLD, else UNVERIFIABLE; it never says DISPUTED (shared words cannot tell a
contradiction). Confidence: HIGH from HIGH_CONFIDENCE_OVERLAP up (nearly every word of the claim is
in the passage), MEDIUM between the threshold and that, LOW for UNVERIFIABLE. Without a passage (or
a claim without content words) UNVERIFIABLE, LOW.

It answers the same calls as `local/checker` through the same machinery (`checker.answer`), so
`factcheck eval` and the benchmarks score it through the real CheckerService and its parser. Loads
no model; the quote is the passage's sentence holding most of the claim's words.
"""

from __future__ import annotations

from typing import Sequence

from factcheck.engines import checker
from factcheck.engines.evidence_windows import word_overlap
from factcheck.engines.grounded import grounded
from factcheck.engines.judge import NOTHING_TO_READ, UNVERIFIABLE, VERIFIED, Judgement, PassageText, window_quote
from factcheck.engines.judges import Judges, isolated
from factcheck.text.sentences import sentence_spans

# bench/checker_accuracy.fit_overlap_threshold on Factcheck-Bench's TRAIN split (the overlap with the best
# balanced accuracy of VERIFIED-at-or-above over its 2,320 pairs), computed once and fixed here; the public
# evaluation sets play no part. tests/test_checker_overlap.py recomputes it when
# Factcheck-Bench is at hand (not in the repository: docs/benchmarks.md says where bench reads it).
OVERLAP_THRESHOLD = 0.6
# Overlap from which a VERIFIED is HIGH: nine words in ten of the claim's are in the passage.
HIGH_CONFIDENCE_OVERLAP = 0.9


@isolated
def overlap_judge(claim: str, passages: Sequence[PassageText]) -> Judgement:
    """Word overlap's verdict, grounded (grounded.py: a VERIFIED needs every specific of the claim stated)."""
    return grounded(plain_overlap(claim, passages), claim, passages)


def plain_overlap(claim: str, passages: Sequence[PassageText]) -> Judgement:
    """VERIFIED when the best passage holds at least OVERLAP_THRESHOLD of the claim's words, else UNVERIFIABLE.
    `score` is the overlap for VERIFIED and one minus it for UNVERIFIABLE (how far it is from verifying)."""
    if not passages:
        return NOTHING_TO_READ
    overlap, passage = max(((word_overlap(claim, p.text), p) for p in passages), key=lambda pair: pair[0])
    if overlap < OVERLAP_THRESHOLD:
        return Judgement(UNVERIFIABLE, "LOW", None, None, None, 1.0 - overlap)
    confidence = "HIGH" if overlap >= HIGH_CONFIDENCE_OVERLAP else "MEDIUM"
    return Judgement(VERIFIED, confidence, None, passage.id, _quote(claim, passage.text), overlap)


def _quote(claim: str, text: str) -> str | None:
    """The passage's sentence holding most of the claim's words (the first on a tie), quoted as the lexical
    judge quotes: verbatim, without line breaks or double quotes, at most its MAX_QUOTE_CHARS."""
    spans = sentence_spans(text) or [(0, len(text))]
    start, end = max(spans, key=lambda span: word_overlap(claim, text[span[0] : span[1]]))
    return window_quote(claim, text, start, end)


def overlap_judge_claims(items: Sequence[tuple[str, Sequence[PassageText]]]) -> list[Judgement]:
    return [overlap_judge(claim, passages) for claim, passages in items]


OVERLAP_JUDGES = Judges(overlap_judge, overlap_judge_claims)


def answer(inputs: object) -> str:
    return checker.answer(inputs, OVERLAP_JUDGES, "local/checker-overlap")
