"""Council mode's vocabulary: response labels, the five-point rating scale, the error taxonomy,
and the fixed lines of the council prompts and answers.

One place for the names the council prompt lists, the parser reads, the local engines write
and the CLI shows: ratings ACCURATE ... INACCURATE (5 ... 1 in the aggregate) and the
nine error types ("Numerical/Statistical Error", ...). Readers are tolerant: case, spaces,
hyphens, underscores and markdown emphasis do not matter, and common shorter names
("numerical error", "hallucination", "outdated") are understood; an error type nobody
recognises is OTHER, never dropped.
"""

from __future__ import annotations

import re
import string
from typing import cast

from factcheck.v1 import council_pb2

MAX_RESPONSES = 8

# The fixed lines of the council fact-check prompt (services/checker/factcheck_checker/council_prompts.py) and of
# its answer, and of the chairman's synthesis prompt (services/reporter/factcheck_reporter/report_prompts.py): the prompt
# builders write them, the parser and the local engines read them.
CHECK_OPENING = "You are a fact-checker evaluating different AI responses to the following question:"
RESPONSES_MARKER = "Here are the responses from different models (anonymized):"
EVIDENCE_MARKER = "REFERENCE EVIDENCE:"
TASK_MARKER = "Your task is to fact-check each response thoroughly:"
CLAIMS_HEADER = "INACCURATE CLAIMS:"
SUMMARY_HEADER = "FACT CHECK SUMMARY:"
MOST_RELIABLE_PREFIX = "MOST RELIABLE: "
CLAIM_FIELD_SEPARATOR = " | "
SYNTHESIS_OPENING = "You are the chairman of a council of AI models."
SYNTHESIS_RESPONSE_MARKER = "MOST RELIABLE RESPONSE:"
SYNTHESIS_CORRECTIONS_MARKER = "CORRECTIONS TO APPLY:"
SYNTHESIS_CONTEXT_MARKER = "INACCURATE CLAIMS IN THE OTHER RESPONSES (for context only):"
SYNTHESIS_TASK_MARKER = "Write the final answer now."
LABEL_PREFIX = "Response "
LABEL_LETTERS = string.ascii_uppercase
_LABEL = re.compile(r"Response ([A-Z])")

AccuracyRating = council_pb2.AccuracyRating
ErrorType = council_pb2.ErrorType

# The council's rating words, best first, with their aggregate scores.
RATING_NAMES: dict[int, str] = {
    council_pb2.ACCURACY_RATING_ACCURATE: "ACCURATE",
    council_pb2.ACCURACY_RATING_MOSTLY_ACCURATE: "MOSTLY ACCURATE",
    council_pb2.ACCURACY_RATING_MIXED: "MIXED",
    council_pb2.ACCURACY_RATING_MOSTLY_INACCURATE: "MOSTLY INACCURATE",
    council_pb2.ACCURACY_RATING_INACCURATE: "INACCURATE",
}
RATING_SCORES: dict[int, int] = {
    council_pb2.ACCURACY_RATING_ACCURATE: 5,
    council_pb2.ACCURACY_RATING_MOSTLY_ACCURATE: 4,
    council_pb2.ACCURACY_RATING_MIXED: 3,
    council_pb2.ACCURACY_RATING_MOSTLY_INACCURATE: 2,
    council_pb2.ACCURACY_RATING_INACCURATE: 1,
}

# The nine error categories, in their fixed order, by their exact names.
ERROR_TYPE_NAMES: dict[int, str] = {
    council_pb2.ERROR_TYPE_HALLUCINATED_FACT: "Hallucinated Fact",
    council_pb2.ERROR_TYPE_OUTDATED_INFORMATION: "Outdated Information",
    council_pb2.ERROR_TYPE_NUMERICAL_ERROR: "Numerical/Statistical Error",
    council_pb2.ERROR_TYPE_MISATTRIBUTION: "Misattribution",
    council_pb2.ERROR_TYPE_OVERGENERALIZATION: "Overgeneralization",
    council_pb2.ERROR_TYPE_CONFLATION: "Conflation",
    council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT: "Omission of Critical Context",
    council_pb2.ERROR_TYPE_LOGICAL_FALLACY: "Logical Fallacy",
    council_pb2.ERROR_TYPE_OTHER: "Other",
}

_NOT_LETTER = re.compile(r"[^a-z]+")
# Error type names as models write them, after `_key` (letters only, lower case).
_ERROR_TYPE_ALIASES: dict[str, ErrorType] = {
    "hallucinatedfact": council_pb2.ERROR_TYPE_HALLUCINATED_FACT,
    "hallucination": council_pb2.ERROR_TYPE_HALLUCINATED_FACT,
    "hallucinated": council_pb2.ERROR_TYPE_HALLUCINATED_FACT,
    "fabrication": council_pb2.ERROR_TYPE_HALLUCINATED_FACT,
    "fabricatedfact": council_pb2.ERROR_TYPE_HALLUCINATED_FACT,
    "outdatedinformation": council_pb2.ERROR_TYPE_OUTDATED_INFORMATION,
    "outdated": council_pb2.ERROR_TYPE_OUTDATED_INFORMATION,
    "outdatedinfo": council_pb2.ERROR_TYPE_OUTDATED_INFORMATION,
    "numericalstatisticalerror": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "numericalerror": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "statisticalerror": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "numerical": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "numericalstatistical": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "dateerror": council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
    "misattribution": council_pb2.ERROR_TYPE_MISATTRIBUTION,
    "wrongattribution": council_pb2.ERROR_TYPE_MISATTRIBUTION,
    "overgeneralization": council_pb2.ERROR_TYPE_OVERGENERALIZATION,
    "overgeneralisation": council_pb2.ERROR_TYPE_OVERGENERALIZATION,
    "conflation": council_pb2.ERROR_TYPE_CONFLATION,
    "omissionofcriticalcontext": council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT,
    "omissionofcontext": council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT,
    "omission": council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT,
    "missingcontext": council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT,
    "logicalfallacy": council_pb2.ERROR_TYPE_LOGICAL_FALLACY,
    "fallacy": council_pb2.ERROR_TYPE_LOGICAL_FALLACY,
    "other": council_pb2.ERROR_TYPE_OTHER,
}


def response_label(index: int) -> str:
    """ "Response A" for 0, "Response B" for 1, ..."""
    return LABEL_PREFIX + LABEL_LETTERS[index]


def is_response_label(label: str) -> bool:
    """True for "Response A" ... "Response Z" exactly."""
    return _LABEL.fullmatch(label) is not None


def rating_name(rating: int) -> str:
    return RATING_NAMES.get(rating, "UNSPECIFIED")


def rating_from_name(name: str) -> AccuracyRating:
    """The rating a word names ("mostly accurate", "MOSTLY_ACCURATE", "**Mixed**"); UNSPECIFIED if none."""
    key = _NOT_LETTER.sub(" ", name.lower()).split()
    for rating, rating_words in RATING_NAMES.items():
        if key == rating_words.lower().split():
            return cast(AccuracyRating, rating)  # a key of RATING_NAMES (keyed by int to look up any value)
    return council_pb2.ACCURACY_RATING_UNSPECIFIED


def error_type_name(error_type: int) -> str:
    return ERROR_TYPE_NAMES.get(error_type, "Other")


def error_type_from_name(name: str) -> ErrorType:
    """The error type a name means (tolerant, see the module docstring); OTHER when unknown."""
    key = _NOT_LETTER.sub("", name.lower())
    if key.startswith("the"):
        key = key[3:]
    exact = _ERROR_TYPE_ALIASES.get(key)
    if exact is not None:
        return exact
    # "Numerical / statistical error (date)", "Hallucinated facts": the longest known name it starts with.
    for alias in sorted(_ERROR_TYPE_ALIASES, key=len, reverse=True):
        if key.startswith(alias):
            return _ERROR_TYPE_ALIASES[alias]
    return council_pb2.ERROR_TYPE_OTHER
