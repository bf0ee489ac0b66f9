"""The evidence-assessment prompt's wire format (the verification loop), shared by the
checker service's prompt builder and parser (services/checker/factcheck_checker/assessment.py) and the built-in
engine that answers it (engines/factcheck_engines/investigator.py).

The prompt opens with ASSESS_OPENING, quotes the claim after CLAIM_MARKER, then lists the
results after RESULTS_MARKER: a heading `[R1] Title (url) {published 2020-01-01}` and the
result's text quoted with "> " (factcheck/text/evidence_text.py), so nothing inside a result can
pass for a heading or an answer line. The model answers one block per result:

    ASSESSMENT R1: SUPPORTS | REFUTES | IRRELEVANT
    Temporal: YES | NO
    Reason: one line
"""

from __future__ import annotations

import re

ASSESS_OPENING = "You are assessing search results as evidence for one claim."
CLAIM_MARKER = "CLAIM:"
RESULTS_MARKER = "RESULTS:"
ANSWER_MARKER = "For EACH result, answer with exactly these three lines:"

SUPPORTS, REFUTES, IRRELEVANT = "SUPPORTS", "REFUTES", "IRRELEVANT"
STANCES = (SUPPORTS, REFUTES, IRRELEVANT)

RESULT_HEADING = re.compile(r"^\[(R\d+)\] (.*?)(?: \((\S*)\))?(?: \{published ([0-9T:\-+Z.]{4,40})\})?$")
ASSESSMENT_LINE = re.compile(r"^\W*ASSESSMENT\W+(R\d+)\W+(SUPPORTS|REFUTES|IRRELEVANT)\b", re.IGNORECASE)
TEMPORAL_LINE = re.compile(r"^\W*Temporal\W+(YES|NO)\b", re.IGNORECASE)
REASON_LINE = re.compile(r"^\W*Reason\W+(.+)$", re.IGNORECASE)
