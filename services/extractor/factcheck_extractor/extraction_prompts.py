"""Prompts for the generate and extract phases, word for word from fact-check mode's prompt templates.

The claim parser (`claims.py`) relies on the extraction format shown here, so the
text is kept exactly as specified rather than paraphrased.
"""

from __future__ import annotations

from typing import Sequence

from factcheck.core import prompt_versions
from factcheck.models.inputs import ExtractInputs, GenerateInputs, passages_of
from factcheck.text.answer_echo import instruction_lines
from factcheck.text.evidence_text import PASSAGE_INJECTION_NOTE, format_passage
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


# The templates' own sentences: an answer holding them repeats its prompt (factcheck/text/answer_echo.py).
GENERATE_INSTRUCTIONS = instruction_lines(_GENERATE_TEMPLATE)
EXTRACTION_INSTRUCTIONS = instruction_lines(_EXTRACTION_TEMPLATE)


@prompt_versions.versioned(prompt_versions.GENERATE)
def build_generate_prompt(question: str, passages: Sequence[common_pb2.Passage] = ()) -> str:
    """Phase 0: ask the generator for fact-dense content, used only when no contentToCheck was given.

    With passages from the knowledge store, a SOURCES section (before the last line)
    asks the generator to answer from them; without, it is the plain generation prompt, word for word.
    """
    sources = _SOURCES_INTRO + "".join(format_passage(p) for p in passages) if passages else ""
    return _GENERATE_TEMPLATE.format(question=question, sources=sources)


@prompt_versions.versioned(prompt_versions.EXTRACT)
def build_extraction_prompt(content: str) -> str:
    """Phase 1: ask the extractor for numbered CLAIM / Context / Type blocks that `parse_claims` reads."""
    return _EXTRACTION_TEMPLATE.format(content=content)


# Claim-level citations: appended after the extraction prompt when ExtractRequest.profiles is set,
# so the prompt above stays word for word. `profiles.parse_profiles` reads the two lines.
CLAIM_DETAIL_MARKER = "CLAIM DETAIL:"
_CLAIM_DETAIL = f"""

{CLAIM_DETAIL_MARKER}
After each claim's Type line, add two lines:
Level: [HIGH|MEDIUM|LOW] (HIGH: a direct quote or an exact figure or date; MEDIUM: a paraphrased fact; LOW: a hedged, comparative or synthetic statement)
Entity: [what the claim's figure describes, with its year, e.g. "population of France (2020)"; N/A when the claim has no figure]"""


def build_profiled_extraction_prompt(content: str) -> str:
    """The extraction prompt with the CLAIM DETAIL section (confidence level and entity per claim)."""
    return build_extraction_prompt(content) + _CLAIM_DETAIL


def generate_inputs(question: str, passages: Sequence[common_pb2.Passage] = ()) -> GenerateInputs:
    """What `build_generate_prompt` builds the prompt from, for a `local/` engine."""
    return GenerateInputs(question, passages_of(passages))


def extraction_inputs(content: str, *, claim_detail: bool = False) -> ExtractInputs:
    """What `build_extraction_prompt` (`build_profiled_extraction_prompt` with `claim_detail`) builds the
    prompt from, for a `local/` engine."""
    return ExtractInputs(content, claim_detail=claim_detail)
