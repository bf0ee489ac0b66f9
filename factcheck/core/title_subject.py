"""What a run's title is about: the question, unless it only asks to check the content.

Clients that check supplied content still send the required question, usually a bare
instruction ("Fact-check this content"); titling that instruction gives
"Fact-check: Fact-check this content". Such a question says nothing about the subject,
so the title comes from the content instead.
"""

from __future__ import annotations

import re

_BARE_INSTRUCTION = re.compile(
    r"^(?:please\s+)?(?:fact[\s-]*check|check|verify|review|assess|evaluate|analy[sz]e)"
    r"(?:\s+(?:the\s+)?(?:following|this|these|that|those|my|the|it))?"
    r"(?:\s+(?:content|text|paragraph|passage|article|claims?|statements?|facts|answer|response|document|essay|"
    r"post|piece|summary))?"
    r"(?:\s+for\s+(?:me|accuracy|facts|errors))?\s*[.!?:]*$",
    re.IGNORECASE,
)


def is_bare_instruction(question: str) -> bool:
    """True for a question that only asks to check the content ("Fact-check this content", "Verify the text.")."""
    return bool(_BARE_INSTRUCTION.match(" ".join(question.split())))


def title_question(question: str) -> str:
    """The question as a title should see it: empty when it is a bare instruction (title the content)."""
    return "" if is_bare_instruction(question) else question
