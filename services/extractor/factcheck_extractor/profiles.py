"""Each claim's confidence level and numeric detail (claim-level citations).

The model's "Level:" and "Entity:" lines (asked by the CLAIM DETAIL section) are read per
CLAIM block and matched to the parsed claims by their text; the first of each label in a
block wins, and quoted or code lines and copies of the content are ignored (the rules of
factcheck/text/protocol_lines.py, as for the claims themselves). Whatever the model does not say,
or says unreadably, the built-in rules of factcheck/core/claim_profile.py decide; the figure,
its normalisation and any derivation are always computed here from the claim's own words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from factcheck.core.claim_profile import LEVELS, profile
from factcheck.core.domain import ExtractedClaim
from factcheck.text.protocol_lines import is_quoted_or_code, lines_of
from factcheck.text.text_safety import clean_text
from factcheck.v1 import citations_pb2

_LEAD = r"^[\s>#*_+\-]*"
_MARKER = re.compile(_LEAD + r"CLAIM\s+#?\d+[*_]*\s*:(.*)$", re.IGNORECASE)
_LEVEL = re.compile(_LEAD + r"(?:Confidence\s+)?Level[*_]*\s*:[\s*_\[]*(HIGH|MEDIUM|LOW)\b", re.IGNORECASE)
_ENTITY = re.compile(_LEAD + r"Entity[*_]*\s*:(.*)$", re.IGNORECASE)
_NO_ENTITY = {"", "n/a", "na", "none", "-", "\u2014"}
MAX_ENTITY_CHARS = 200
# Profiling costs about a millisecond a claim; an answer with more claims than any real content has
# (the gateway caps content at 50,000 characters) gets the rest as plain MEDIUM, general claims.
MAX_PROFILED_CLAIMS = 1000

LEVEL_TO_PROTO = {
    "HIGH": citations_pb2.CONFIDENCE_LEVEL_HIGH,
    "MEDIUM": citations_pb2.CONFIDENCE_LEVEL_MEDIUM,
    "LOW": citations_pb2.CONFIDENCE_LEVEL_LOW,
}


def read_detail_lines(text: str, content: str = "") -> dict[str, tuple[str | None, str | None]]:
    """Claim text → (level, entity) as the model wrote them (None where it wrote nothing usable)."""
    found: dict[str, tuple[str | None, str | None]] = {}
    current: str | None = None
    level: str | None = None
    entity: str | None = None

    def close() -> None:
        if current is not None and current not in found:
            found[current] = (level, entity)

    for line in lines_of(text):
        if is_quoted_or_code(line) or (content and line.strip() and line.strip() in content):
            continue
        if marker := _MARKER.match(line):
            close()
            current, level, entity = marker.group(1).strip().strip('*`"').strip(), None, None
        elif current is None:
            continue
        elif (match := _LEVEL.match(line)) and level is None:
            level = match.group(1).upper()
        elif (match := _ENTITY.match(line)) and entity is None:
            value = match.group(1).strip().strip('*`"[]').strip()
            entity = None if value.lower() in _NO_ENTITY else clean_text(value)[:MAX_ENTITY_CHARS]
    close()
    return found


def claim_profiles(claims: Sequence[ExtractedClaim], text: str, content: str = "") -> list[citations_pb2.ClaimProfile]:
    """One ClaimProfile per claim, in order."""
    stated = read_detail_lines(text, content)
    return [
        profile_proto(claim, *stated.get(claim.claim, (None, None)))
        if index < MAX_PROFILED_CLAIMS
        else citations_pb2.ClaimProfile(
            claim_id=claim.id,
            confidence_level=citations_pb2.CONFIDENCE_LEVEL_MEDIUM,
            claim_type=citations_pb2.CITATION_CLAIM_TYPE_GENERAL,
        )
        for index, claim in enumerate(claims)
    ]


def profile_proto(
    claim: ExtractedClaim, level: str | None = None, entity: str | None = None
) -> citations_pb2.ClaimProfile:
    found = profile(claim.claim, level if level in LEVELS else None, entity)
    message = citations_pb2.ClaimProfile(
        claim_id=claim.id,
        confidence_level=LEVEL_TO_PROTO[found.level],
        claim_type=citations_pb2.CITATION_CLAIM_TYPE_GENERAL,
    )
    if found.numeric is not None:
        message.claim_type = citations_pb2.CITATION_CLAIM_TYPE_NUMERIC
        message.numeric.CopyFrom(numeric_detail(found.numeric))
    return message


def numeric_detail(numeric) -> citations_pb2.NumericDetail:
    detail = citations_pb2.NumericDetail(
        entity_reference=numeric.entity,
        derivation_type=(
            citations_pb2.DERIVATION_TYPE_COMPUTED if numeric.derivation else citations_pb2.DERIVATION_TYPE_DIRECT
        ),
        number=number_proto(numeric.figure, numeric.raw),
    )
    if numeric.derivation is not None:
        detail.computation_details.update(numeric.derivation.details)
    return detail


def number_proto(figure, raw: str = "") -> citations_pb2.NormalisedNumber:
    """A normalised figure on the wire (infinite bounds are left unset)."""
    import math

    message = citations_pb2.NormalisedNumber(raw_value=figure.raw if figure is not None else raw)
    if figure is None:
        return message
    message.value, message.unit = figure.value, figure.unit
    if not math.isinf(figure.low):
        message.low = figure.low
    if not math.isinf(figure.high):
        message.high = figure.high
    message.assumptions.update(figure.assumptions)
    return message
