"""The audit of a checker's answer, and what a verification counts as in the consensus.

Whatever checker answered (a model or a built-in engine), when a claim was checked against passages the gateway
holds the answer to them, with no model:

- Every quote the checker gives as evidence must occur in a passage it could cite: a `Sources:` citation's
  quote in the passage it names (`ClaimVerification.citations` and `unresolved_citations`: those its checker
  service could not resolve), and each double-quoted span of three words or more in its Evidence line in one of
  the passages it was given (or in the claim, its sentence or the checked content, which a checker may quote).
  Occurrence is compared on words: case, whitespace, punctuation and quote marks (curly or straight) aside; a
  quote cut with "..." or "…" is checked piece by piece. A quote that occurs nowhere is a FABRICATED_QUOTE.
- A VERIFIED verdict on a claim with a specific (a figure, a date, a name, a contrast term:
  `factcheck.text.specifics`) that none of the claim's passages states, in its text or its source's title
  (the grounding rules count a title as evidence), is an UNSUPPORTED_DETAIL, one flag per specific
  ("unsupported detail: 1972").

A claim checked without passages (the checker's own knowledge) is not audited: there is nothing to hold the
answer to, and its status says so (NO_PASSAGES).

`counted_as` is the one place that decides what a verification counts as in the consensus: a VERIFIED the
audit flagged (either kind) counts as UNVERIFIABLE at LOW confidence, with the reason; every other verification
counts as what it says. The consensus (majority and weighted), the claim-level tiers and the reporter's input all
read verdicts through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from factcheck.core.domain import AuditFlag, Citation, ClaimVerification
from factcheck.text.shorten import shorten
from factcheck.text.specifics import missing_from

FABRICATED_QUOTE, UNSUPPORTED_DETAIL = "FABRICATED_QUOTE", "UNSUPPORTED_DETAIL"
AUDITED, NO_PASSAGES, DISABLED = "AUDITED", "NO_PASSAGES", "DISABLED"
# What the reports say of answers the audit did not read.
NOT_AUDITED_REASONS = {
    NO_PASSAGES: "no passages: checked from the checkers' own knowledge",
    DISABLED: "the audit is off (FACTCHECK_AUDIT=false)",
}
# An Evidence line's quoted span is read as a quote from three words on ("first" in quotes is emphasis).
MIN_EVIDENCE_QUOTE_WORDS = 3
# A piece of a quote cut with an ellipsis is checked from two words on.
MIN_PIECE_WORDS = 2
DETAIL_QUOTE_CHARS = 120

_EVIDENCE_QUOTE = re.compile(r'"([^"\n]+)"|\u201c([^\u201c\u201d\n]+)\u201d')
_ELLIPSIS = re.compile(r"\.\.\.+|\u2026|\[\s*(?:\.\.\.|\u2026)\s*\]")
# Apostrophes are dropped inside words ("Eiffel's" = "Eiffel’s" = "Eiffels"); any other run of what is not a
# letter or digit separates words.
_APOSTROPHES = re.compile(r"['\u2018\u2019\u02bc`\u00b4]")
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class AuditPassage:
    """A passage as the audit reads it: its label, its text and the titles it comes under."""

    id: str
    text: str
    titles: tuple[str, ...] = ()


@dataclass(frozen=True)
class Counted:
    """What a verification counts as in the consensus, and why when that is not what it says."""

    verdict: str
    confidence: str
    reason: str = ""


def audit(
    verification: ClaimVerification,
    claim: str,
    claim_passages: Sequence[AuditPassage],
    given: Mapping[str, AuditPassage],
    quotable: Sequence[str] = (),
) -> tuple[AuditFlag, ...]:
    """The flags of one checker's answer on one claim checked against `claim_passages` (not empty).

    `given`: every passage the checker was shown, by label (a citation may name another claim's passage);
    `quotable`: other text the checker may quote in its Evidence line (the claim's sentence, the content)."""
    model = verification.checker_model
    flags = [AuditFlag(FABRICATED_QUOTE, detail, model) for detail in _fabricated_quotes(verification, given, quotable)]
    if verification.verdict == "VERIFIED":
        texts = [text for passage in claim_passages for text in (passage.text, *passage.titles) if text]
        flags += [
            AuditFlag(UNSUPPORTED_DETAIL, f"unsupported detail: {s.text}", model) for s in missing_from(claim, texts)
        ]
    return tuple(flags)


def counted_as(verification: ClaimVerification) -> Counted:
    """What `verification` counts as in the consensus (see the module docstring)."""
    if verification.verdict == "VERIFIED" and verification.audit_flags:
        details = "; ".join(flag.detail for flag in verification.audit_flags)
        return Counted(
            "UNVERIFIABLE", "LOW", f"{verification.checker_model}'s VERIFIED counted as UNVERIFIABLE: {details}"
        )
    return Counted(verification.verdict, verification.confidence)


def _fabricated_quotes(
    verification: ClaimVerification, given: Mapping[str, AuditPassage], quotable: Sequence[str]
) -> list[str]:
    found: list[str] = []
    flagged: set[str] = set()  # a quote flagged in the Sources line is not flagged again in the Evidence line
    for citation in (*verification.citations, *verification.unresolved_citations):
        if citation.quote and (detail := _citation_problem(citation, given)):
            found.append(detail)
            flagged.add(_words(citation.quote))
    texts = [_words(text) for passage in given.values() for text in (passage.text, *passage.titles)]
    texts += [_words(text) for text in quotable]
    for match in _EVIDENCE_QUOTE.finditer(verification.evidence):
        quote = match.group(1) or match.group(2) or ""
        words = _words(quote)
        if len(words.split()) >= MIN_EVIDENCE_QUOTE_WORDS and words not in flagged and not _occurs(quote, texts):
            found.append(f'quote in the evidence not in the passages: "{shorten(quote, DETAIL_QUOTE_CHARS)}"')
            flagged.add(words)
    return found


def _citation_problem(citation: Citation, given: Mapping[str, AuditPassage]) -> str | None:
    quote = f'"{shorten(citation.quote, DETAIL_QUOTE_CHARS)}"'
    passage = given.get(citation.passage_id)
    if passage is None:
        return f"quote cites {citation.passage_id or 'no passage'}, which the checker was not given: {quote}"
    if not _occurs(citation.quote, [_words(passage.text)]):
        return f"quote not in {citation.passage_id}: {quote}"
    return None


def _occurs(quote: str, texts: Sequence[str]) -> bool:
    """Whether every piece of `quote` (cut at ellipses; pieces of fewer than two words aside) occurs, as whole
    words, in one of `texts` (each given as `_words`)."""
    pieces = [_words(piece) for piece in _ELLIPSIS.split(quote)]
    pieces = [piece for piece in pieces if len(piece.split()) >= MIN_PIECE_WORDS] or [
        piece for piece in pieces if piece.strip()
    ]
    return all(any(piece in text for text in texts) for piece in pieces)


def _words(text: str) -> str:
    """`text` as its lower-case words between single spaces, with a space at each end."""
    return " " + _NOT_WORD.sub(" ", _APOSTROPHES.sub("", text).casefold()).strip() + " "
