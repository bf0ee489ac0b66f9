"""The council fact-check prompt: the council's fixed template word for word, extended with an
INACCURATE CLAIMS block and, when the gateway retrieved any, reference passages.

Layout (services/checker/factcheck_checker/council_summary.py reads the answer; a `local/` engine gets
`council_check_inputs` instead; the fixed lines live in factcheck/core/council_taxonomy.py):

    You are a fact-checker evaluating different AI responses to the following question:

    Question: {question}

    Here are the responses from different models (anonymized):

    Response A:
    > {each line of response A}
    ...
    REFERENCE EVIDENCE:            (only with passages)
    [P1] Title (url)
    > {each line of the passage}
    ...
    Your task is to fact-check each response thoroughly:   (the fixed instructions)
    ...
    INACCURATE CLAIMS block instructions, the error types, and the example ending.

Each line of a response is quoted with "> ", as passages are (factcheck/text/evidence_text.py):
responses are untrusted text (a caller's answers, or other models'), and a quoted line can
pass neither for a prompt line ("Response B:", "Your task is ...") nor, when the model
quotes it back, for a protocol line of its answer (rule 1 of factcheck/text/protocol_lines.py).

The claim line format is `Response X | Error Type | the claim | the correction`, one per
inaccurate claim, the error type being one of the nine error type names exactly.
"""

from __future__ import annotations

from typing import Sequence

from factcheck.core import prompt_versions
from factcheck.core.council_taxonomy import (
    CHECK_OPENING,
    CLAIMS_HEADER,
    ERROR_TYPE_NAMES,
    EVIDENCE_MARKER,
    RESPONSES_MARKER,
    SUMMARY_HEADER,
    TASK_MARKER,
)
from factcheck.models.inputs import CouncilCheckInputs, ResponseInput, passages_of
from factcheck.models.limits import estimate_tokens
from factcheck.text.answer_echo import instruction_lines
from factcheck.text.evidence_text import PASSAGE_INJECTION_NOTE, format_passage, quote_lines
from factcheck.v1 import common_pb2, council_pb2

_HEAD = f"""{CHECK_OPENING}

Question: {{question}}

{RESPONSES_MARKER}

"""

_EVIDENCE_INTRO = f"""{EVIDENCE_MARKER}
Use these numbered reference passages as evidence when you judge the responses' claims. {PASSAGE_INJECTION_NOTE}

"""

# The council's fixed instructions, verbatim.
_TASK = f"""{TASK_MARKER}

1. For EACH response, identify:
   - **Accurate Claims**: List specific claims that are factually correct
   - **Inaccurate Claims**: List specific claims that are factually incorrect or misleading, and explain why
   - **Unverifiable Claims**: List claims that cannot be easily verified or are speculative
   - **Missing Important Information**: Note any crucial information the response failed to include

2. At the very end of your analysis, provide a summary section.

IMPORTANT: Your summary MUST be formatted EXACTLY as follows:
- Start with the line "FACT CHECK SUMMARY:" (all caps, with colon)
- For each response, on a new line write: "Response X: [ACCURATE/MOSTLY ACCURATE/MIXED/MOSTLY INACCURATE/INACCURATE]"
- After rating all responses, add a line: "MOST RELIABLE: Response X" (the single most factually reliable response)

Example of the correct format for your summary:

FACT CHECK SUMMARY:
Response A: MOSTLY ACCURATE
Response B: MIXED
Response C: ACCURATE
MOST RELIABLE: Response C
"""

# The extension: every inaccurate claim once more, in a form a program can read.
_CLAIMS_EXTENSION = f"""
3. Immediately BEFORE the summary section, list every inaccurate claim you found, formatted EXACTLY as follows:
- Start with the line "{CLAIMS_HEADER}" (all caps, with colon)
- For each inaccurate claim, on a new line write: "Response X | Error Type | the claim as the response states it | the correct information"
- Error Type is exactly one of: {{error_types}}
- If no response contains an inaccurate claim, write the single line "None" after "{CLAIMS_HEADER}"

Error types:
{{error_type_list}}

Example of the correct format for the end of your analysis:

{CLAIMS_HEADER}
Response B | Numerical/Statistical Error | The bridge opened in 1932 | It opened in 1937
Response B | Misattribution | The bridge was designed by Gustave Eiffel | It was designed by Joseph Strauss
{SUMMARY_HEADER}
Response A: MOSTLY ACCURATE
Response B: MIXED
Response C: ACCURATE
MOST RELIABLE: Response C
"""

# The fixed one-line definitions of the nine error categories.
ERROR_TYPE_DEFINITIONS: dict[int, str] = {
    council_pb2.ERROR_TYPE_HALLUCINATED_FACT: "Made-up information with no factual basis",
    council_pb2.ERROR_TYPE_OUTDATED_INFORMATION: "Was true but no longer accurate",
    council_pb2.ERROR_TYPE_NUMERICAL_ERROR: "Wrong numbers, percentages, dates",
    council_pb2.ERROR_TYPE_MISATTRIBUTION: "Attributed to wrong source/person",
    council_pb2.ERROR_TYPE_OVERGENERALIZATION: "Stated as universal when only partially true",
    council_pb2.ERROR_TYPE_CONFLATION: "Mixed up two distinct concepts/events",
    council_pb2.ERROR_TYPE_OMISSION_OF_CONTEXT: "Technically true but misleading",
    council_pb2.ERROR_TYPE_LOGICAL_FALLACY: "Faulty reasoning leading to wrong conclusion",
    council_pb2.ERROR_TYPE_OTHER: "Doesn't fit above categories",
}


# What a fact-checker's answer never repeats (factcheck/text/answer_echo.py): the instructions, not the
# examples of the answer's own format (an answer may well say "Response A: MOSTLY ACCURATE").
COUNCIL_CHECK_INSTRUCTIONS = instruction_lines(
    CHECK_OPENING, *(part.split("Example of the correct format")[0] for part in (_TASK, _CLAIMS_EXTENSION))
)


@prompt_versions.versioned(prompt_versions.COUNCIL_CHECK)
def build_council_check_prompt(
    question: str,
    responses: Sequence[council_pb2.LabelledResponse],
    passages: Sequence[common_pb2.Passage] = (),
) -> str:
    """The council fact-checker prompt for `responses` (labels "Response A", ...), plus the
    INACCURATE CLAIMS instructions and, when given, the passages as reference evidence."""
    prompt = _HEAD.format(question=question)
    prompt += "".join(f"{response.label}:\n{quote_lines(response.text)}\n\n" for response in responses)
    if passages:
        prompt += _EVIDENCE_INTRO + "".join(format_passage(passage) for passage in passages)
    names = list(ERROR_TYPE_NAMES.values())
    definitions = "\n".join(
        f"{number}. {ERROR_TYPE_NAMES[kind]}: {ERROR_TYPE_DEFINITIONS[kind]}"
        for number, kind in enumerate(ERROR_TYPE_NAMES, 1)
    )
    return prompt + _TASK + _CLAIMS_EXTENSION.format(error_types=", ".join(names), error_type_list=definitions)


def council_check_inputs(
    question: str,
    responses: Sequence[council_pb2.LabelledResponse],
    passages: Sequence[common_pb2.Passage] = (),
) -> CouncilCheckInputs:
    """What `build_council_check_prompt` builds the prompt from, for a `local/` engine."""
    return CouncilCheckInputs(
        question=question,
        responses=tuple(ResponseInput(response.label, response.text) for response in responses),
        passages=passages_of(passages),
    )


# Ends a response cut to fit the checker model's context window (inside its quoted lines).
TRUNCATION_NOTE = (
    "[Response cut here: its last {omitted} characters did not fit the fact-checker model's context window. "
    "Judge only the part shown; the cut is not an error of the response.]"
)
# Each response keeps at least this much, however small the window (the call is then refused instead).
_MIN_RESPONSE_CHARS = 200
_FIT_ROUNDS = 4


def fit_council_responses(
    question: str,
    responses: Sequence[council_pb2.LabelledResponse],
    passages: Sequence[common_pb2.Passage],
    max_prompt_tokens: int,
) -> list[council_pb2.LabelledResponse]:
    """The responses, the longest cut first (each ending with TRUNCATION_NOTE), so that the council
    prompt's estimate (`limits.estimate_tokens`, what the model client checks) is at most
    `max_prompt_tokens`; unchanged when it fits. The question, instructions and passages are kept."""
    fitted = list(responses)
    for _ in range(_FIT_ROUNDS):
        excess = estimate_tokens(build_council_check_prompt(question, fitted, passages)) - max_prompt_tokens
        if excess <= 0:
            break
        lengths = [len(response.text) for response in responses]
        # What the responses may keep in all: the excess in characters, with room for the notes.
        keep = sum(len(r.text) for r in fitted) - excess * 4 - len(TRUNCATION_NOTE) * len(responses) - 64
        shares = _water_fill(lengths, max(keep, 0))
        fitted = [_cut(response, share) for response, share in zip(responses, shares)]
    return fitted


def _water_fill(lengths: list[int], total: int) -> list[int]:
    """Per-response character shares summing to at most `total`: short responses keep everything,
    the long ones share the rest equally (never below _MIN_RESPONSE_CHARS)."""
    shares = [0] * len(lengths)
    left, remaining = total, sorted(range(len(lengths)), key=lambda i: lengths[i])
    while remaining:
        share = left // len(remaining)
        index = remaining[0]
        if lengths[index] <= share:
            shares[index] = lengths[index]
            left -= lengths[index]
            remaining.pop(0)
            continue
        for index in remaining:
            shares[index] = max(share, _MIN_RESPONSE_CHARS)
        break
    return shares


def _cut(response: council_pb2.LabelledResponse, chars: int) -> council_pb2.LabelledResponse:
    if len(response.text) <= chars:
        return response
    head = response.text[:chars]
    if " " in head[chars // 2 :]:  # end at a word
        head = head[: head.rindex(" ")]
    note = TRUNCATION_NOTE.format(omitted=len(response.text) - len(head))
    return council_pb2.LabelledResponse(label=response.label, text=f"{head.rstrip()} …\n{note}")
