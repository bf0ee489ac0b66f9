"""Prompts for the generate and extract phases, word for word from the spec (section B).

The claim parser (`claims.py`) relies on the extraction format shown here, so the
text is kept exactly as specified rather than paraphrased.
"""

from __future__ import annotations

from typing import Sequence

from factcheck.evidence_text import PASSAGE_INJECTION_NOTE, format_passage
from factcheck.v1 import common_pb2

_GENERATE_TEMPLATE = """Answer the following question comprehensively. Include specific facts, statistics, dates, and claims where relevant. Aim for accuracy, but provide a thorough response.

QUESTION:
{question}

{sources}Provide a detailed, factual response:"""

_SOURCES_INTRO = f"""SOURCES:
Answer from these numbered passages and cite the ones you use as [P1], [P2]. {PASSAGE_INJECTION_NOTE}

"""

_EXTRACTION_TEMPLATE = """You are a claim extraction engine. Analyze the following content and identify ALL verifiable factual claims. A "claim" is a discrete assertion that could theoretically be checked for accuracy.

CONTENT:
{content}

Extract each verifiable claim. Include:
- Specific factual statements (dates, numbers, statistics)
- Cause-and-effect assertions
- Comparisons and rankings
- Attributed statements ("X said Y")
- Technical claims

Do NOT include:
- Opinions or subjective assessments
- Hedged statements ("might", "could", "possibly")
- Tautologies or definitions
- Future predictions

Format:

CLAIM 1: [exact claim as stated in the content]
Context: [surrounding sentence for reference]
Type: [STATISTIC|DATE|ATTRIBUTION|TECHNICAL|COMPARISON|CAUSAL]

CLAIM 2: [exact claim]
Context: [surrounding sentence]
Type: [type]

...

EXTRACTION SUMMARY:
Total claims: [count]
By type: [breakdown]"""


def build_generate_prompt(question: str, passages: Sequence[common_pb2.Passage] = ()) -> str:
    """Phase 0: ask the generator for fact-dense content, used only when no contentToCheck was given.

    With passages from the knowledge store, a SOURCES section (before the last line)
    asks the generator to answer from them; without, the prompt is exactly the spec's.
    """
    sources = _SOURCES_INTRO + "".join(format_passage(p) for p in passages) if passages else ""
    return _GENERATE_TEMPLATE.format(question=question, sources=sources)


def build_extraction_prompt(content: str) -> str:
    """Phase 1: ask the extractor for numbered CLAIM / Context / Type blocks that `parse_claims` reads."""
    return _EXTRACTION_TEMPLATE.format(content=content)
