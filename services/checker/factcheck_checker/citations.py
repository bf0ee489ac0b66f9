"""Resolve a checker's cited passages, keeping only quotes that really occur in them.

A citation names a passage label from the request and, usually, a quote. A quote must
be found in that passage's text (exactly, or ignoring case and whitespace); otherwise
the citation is dropped from the evidence and counted, and kept as the checker gave it in
`unresolved_citations`, where the gateway's audit flags its quote (factcheck/core/audit.py).
A citation without a quote cites the whole passage. Offsets are turned into offsets in the
source's own text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from factcheck.core.domain import Citation, ClaimVerification
from factcheck.text.spans import locate
from factcheck.v1 import common_pb2


def resolve_citations(
    verifications: Sequence[ClaimVerification], passages: Mapping[str, common_pb2.Passage]
) -> tuple[list[ClaimVerification], int]:
    """Verifications with resolved citations (the others as unresolved_citations), and how many were dropped."""
    resolved, dropped = [], 0
    for verification in verifications:
        kept, unresolved = [], []
        for citation in verification.citations:
            located = _resolve(citation, passages.get(citation.passage_id))
            if located is None:
                dropped += 1
                unresolved.append(citation)
            else:
                kept.append(located)
        resolved.append(replace(verification, citations=tuple(kept), unresolved_citations=tuple(unresolved)))
    return resolved, dropped


def _resolve(citation: Citation, passage: common_pb2.Passage | None) -> Citation | None:
    if passage is None:
        return None  # a label that was never sent
    if citation.quote:
        span = locate(passage.text, citation.quote)
        if span is None:
            return None  # quoted words that are not in the passage
        start, end = span
        quote = passage.text[start:end]
    else:
        start, end, quote = 0, len(passage.text), ""
    return Citation(
        passage_id=passage.id,
        source_id=passage.source_id,
        source_title=passage.source_title,
        quote=quote,
        start=passage.start_offset + start,
        end=passage.start_offset + end,
    )
