"""Council mode's stage rows: their names, orders and roles (documented in docs/modes.md), and the labels.

Orders: respond 100-107, anonymise 150, council_retrieve 160, council_check 200-207,
council_aggregate 300, synthesis 400 (fact-check mode uses 0-99).
"""

from __future__ import annotations

import hashlib
import random
import string

RESPOND_PREFIX, RESPOND_BASE_ORDER = "respond_", 100
STAGE_ANONYMISE = ("anonymise", 150)
STAGE_COUNCIL_RETRIEVE = ("council_retrieve", 160)
COUNCIL_CHECK_PREFIX, COUNCIL_CHECK_BASE_ORDER = "council_check_", 200
STAGE_COUNCIL_AGGREGATE = ("council_aggregate", 300)
STAGE_SYNTHESIS = ("synthesis", 400)

ROLE_RESPONDENT = "respondent"
ROLE_ANONYMISER = "anonymiser"
ROLE_FACT_CHECKER = "fact_checker"
ROLE_AGGREGATOR = "aggregator"
ROLE_CHAIRMAN = "chairman"

MAX_COUNCIL = 8  # responses and fact-checkers alike


def respond_stage(index: int) -> tuple[str, int]:
    """Stage of council member (or supplied response) `index`, in request order."""
    if not 0 <= index < MAX_COUNCIL:
        raise ValueError(f"response index out of range: {index}")
    return f"{RESPOND_PREFIX}{index}", RESPOND_BASE_ORDER + index


def council_check_stage(index: int) -> tuple[str, int]:
    """Stage of fact-checker `index`, in request order."""
    if not 0 <= index < MAX_COUNCIL:
        raise ValueError(f"fact-checker index out of range: {index}")
    return f"{COUNCIL_CHECK_PREFIX}{index}", COUNCIL_CHECK_BASE_ORDER + index


def response_labels(message_id: str, count: int) -> list[str]:
    """ "Response A", "Response B", ... for responses 0..count-1, in an order drawn at random per run.

    Seeded by the message id, so a resumed run (or GetResult) draws the same order; the order
    hides which model wrote which answer until the aggregate reveals it.
    """
    letters = list(string.ascii_uppercase[:count])
    random.Random(hashlib.sha256(message_id.encode()).digest()).shuffle(letters)
    return [f"Response {letter}" for letter in letters]
