"""The MiniCheck dialect: Bespoke-MiniCheck-7B's own prompt, and P(support) read from its answer token.

The prompt is the model's own, as its authors run it: github.com/Liyan06/MiniCheck, module minicheck.utils
(SYSTEM_PROMPT, USER_PROMPT "Document: [DOCUMENT]\\nClaim: [CLAIM]"), sent by minicheck.inference
(LLMCheck.apply_chat_template) as a system and a user message through the model's chat template, which an
OpenAI-compatible server (vLLM) applies. LLMCheck asks for one token (max_tokens 1) with its 5 most likely
alternatives (logprobs=5) and sums the probabilities of the alternatives that read "yes" in any case
(LLMCheck.get_support_prob): that is P(support), and a chunk is supported from 0.5 (its pred_label).
A document longer than the model's window is cut into chunks of sentences of the window less 300 tokens
(LLMCheck.default_chunk_size: "reserve some space for the claim"); the best chunk decides.

A server that sends no log-probabilities (or refuses to) leaves the answer token itself: "Yes" reads as
P(support) 1, "No" as 0, and the verification says so; any other answer is a chunk not read.
"""

from __future__ import annotations

import math

from factcheck.core.domain import Completion
from factcheck.core.prompt_versions import MINICHECK, versioned
from factcheck.text.text_safety import excerpt

# minicheck.utils.SYSTEM_PROMPT, word for word.
SYSTEM_PROMPT = (
    "Determine whether the provided claim is consistent with the corresponding document. Consistency in this "
    "context implies that all information presented in the claim is substantiated by the document. If not, it "
    "should be considered inconsistent. Please assess the claim's consistency with the document by responding "
    'with either "Yes" or "No".'
)
# LLMCheck's SamplingParams(logprobs=5), and its threshold (pred_label: max support prob > 0.5).
TOP_LOGPROBS = 5
THRESHOLD = 0.5
# Tokens of the window kept for the claim and the chat template (LLMCheck: max_model_len - 300).
CLAIM_RESERVE_TOKENS = 300
# LLMCheck's max_model_len when none is given; the window assumed when the provider's context_window is unset.
DEFAULT_WINDOW_TOKENS = 32768
# Marks a tokenizer puts before a token that starts a word (SentencePiece, byte-level BPE).
_WORD_MARKS = " \u2581\u0120"


@versioned(MINICHECK)
def build_minicheck_prompt(document: str, claim: str) -> str:
    """minicheck.utils.USER_PROMPT for one chunk and one claim."""
    return f"Document: {document}\nClaim: {claim}"


def support_probability(completion: Completion) -> tuple[float | None, str]:
    """(P(support), how it was read: "" from the log-probabilities) of one answer; (None, why) when it
    cannot be read."""
    alternatives = completion.top_logprobs
    if alternatives:
        probability = sum(math.exp(logprob) for token, logprob in alternatives if _word(token) == "yes")
        return min(probability, 1.0), ""
    answer = _word(completion.text)
    note = "P(supported) read from the answer token, Yes 1 and No 0: the server returned no log-probabilities"
    if answer.startswith("yes"):
        return 1.0, note
    if answer.startswith("no"):
        return 0.0, note
    return None, f"an answer that is neither Yes nor No ({excerpt(completion.text, 40)!r})"


def _word(token: str) -> str:
    return token.strip().lstrip(_WORD_MARKS).strip().lower()
