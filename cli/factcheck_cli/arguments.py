"""Argument types the commands share: argparse reports their errors as usage errors (exit 2), on one
line naming the option (`factcheck kb search: error: argument --top-k: must be between 1 and 50 (got 0)`).

The bounds the gateway enforces are checked here too, before anything is sent, with the same numbers
(tests/test_cli_bounds.py compares them with the gateway's).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

# Listings: ListResults, ListDocuments, ListClaims, ListReviews, ListEvaluations (0 sends the default, 20).
PAGE_SIZE = (1, 100)
# KnowledgeService.Search.
TOP_K = (1, 50)
# FactCheckConfig.timeout_ms and the other modes' per-stage timeouts.
TIMEOUT_MS = (30_000, 180_000)
# FactCheckConfig.max_content_length.
MAX_CONTENT_LENGTH = (500, 50_000)
# FactCheckConfig.investigate_batch_size.
INVESTIGATE_BATCH_SIZE = (1, 20)
# EvaluationConfig.limit (items drawn from each set) and concurrency.
EVAL_LIMIT = (1, 20_000)
EVAL_CONCURRENCY = (1, 16)
# CompareEvaluationsRequest.max_disagreements (not given: the gateway's 100).
MAX_DISAGREEMENTS = (0, 1_000)
# `serve` and `demo` listen on the base port and the next three.
BASE_PORT = (1, 65_532)


def whole_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {text})")
    return value


def non_negative_int(text: str) -> int:
    value = whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative (got {text})")
    return value


def int_between(bounds: tuple[int, int]) -> Callable[[str], int]:
    """A whole number from `bounds[0]` to `bounds[1]`, both included."""
    low, high = bounds

    def parse(text: str) -> int:
        value = whole_number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:,} and {high:,} (got {text})")
        return value

    return parse


def non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must not be negative (got {text})")
    return value


def bounded(bounds: tuple[int, int]) -> str:
    """ "1-100": a bound as the help texts write it."""
    return f"{bounds[0]}-{bounds[1]}"
