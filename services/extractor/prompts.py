"""Prompts for the generate and extract phases, word for word from the spec (section B).

The claim parser (`claims.py`) relies on the extraction format shown here, so the
text is kept exactly as specified rather than paraphrased.
"""

from __future__ import annotations

_GENERATE_TEMPLATE = """Answer the following question comprehensively. Include specific facts, statistics, dates, and claims where relevant. Aim for accuracy, but provide a thorough response.

QUESTION:
{question}

Provide a detailed, factual response:"""

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


def build_generate_prompt(question: str) -> str:
    """Phase 0: ask the generator for fact-dense content, used only when no contentToCheck was given."""
    return _GENERATE_TEMPLATE.format(question=question)


def build_extraction_prompt(content: str) -> str:
    """Phase 1: ask the extractor for numbered CLAIM / Context / Type blocks that `parse_claims` reads."""
    return _EXTRACTION_TEMPLATE.format(content=content)
