"""How long each kind of model answer may be: the one table of output limits.

Every model call sends an output limit (`max_tokens`), so a model that ignores its format
(or never stops) costs a bounded number of tokens and seconds. The limit is what the
role's answer needs, with room to spare: a title is a few tokens; an extraction, a
verification or a report grows with the content and the claims. A format with a natural
end also stops there (`stop`).

The services ask here (`output_limits.title()`, `output_limits.verify(claims=5)`, ...) and
pass the result to `ModelClient.complete` / `.stream` as `limit`. The client applies the
settings: FACTCHECK_MODEL_OUTPUT_TOKENS overrides a role's limit ({"report": 6000}),
FACTCHECK_MODEL_OUTPUT_TOKENS_SCALE scales every role's, and FACTCHECK_MODEL_MAX_OUTPUT_TOKENS
(or a provider's "max_output_tokens") caps them all (`resolve`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from factcheck.kit.settings import MODEL_OUTPUT_ROLES
from factcheck.models.limits import estimate_tokens

# Roles (the keys FACTCHECK_MODEL_OUTPUT_TOKENS takes), named once in the settings that check them.
ROLES = MODEL_OUTPUT_ROLES
GENERATE, EXTRACT, VERIFY, REPORT, TITLE, COUNCIL_CHECK, SYNTHESIZE, ASSESS, REVIEW, ENTAILMENT_AGENT = ROLES
# A call that names no role (the client's default: the cap).
DEFAULT = "default"


@dataclass(frozen=True)
class OutputLimit:
    """What one call's answer may be: at most `max_tokens` tokens, ending early at any of `stop`."""

    role: str
    max_tokens: int
    stop: tuple[str, ...] = ()
    # The answer's length is the format's (one Yes/No token): no setting scales or overrides it.
    fixed: bool = False


def _scaled(base: int, per_unit: int, units: int, ceiling: int) -> int:
    return min(base + per_unit * max(units, 0), ceiling)


def generate() -> OutputLimit:
    """An answer to the question: a few paragraphs."""
    return OutputLimit(GENERATE, 1024)


def extract(content: str) -> OutputLimit:
    """Claims with their quotes: at most the content twice over (each claim restates its sentence)."""
    return OutputLimit(EXTRACT, _scaled(256, 2, estimate_tokens(content), 8192))


def verify(claims: int) -> OutputLimit:
    """One VERIFICATION block per claim (verdict, evidence, correction, sources, support)."""
    return OutputLimit(VERIFY, _scaled(256, 300, claims, 16384))


def report(claims: int, content: str) -> OutputLimit:
    """The report: a line or two per claim and the annotated content."""
    return OutputLimit(REPORT, _scaled(768 + 2 * estimate_tokens(content), 200, claims, 16384))


def title() -> OutputLimit:
    """At most eight words, on one line."""
    return OutputLimit(TITLE, 32, ("\n",))


def council_check(responses: int) -> OutputLimit:
    """Accurate / inaccurate / unverifiable claims per response, the claims block and the summary."""
    return OutputLimit(COUNCIL_CHECK, _scaled(384, 512, responses, 8192))


def synthesize(best_response: str) -> OutputLimit:
    """The corrected answer: about the best response's length, with room for corrections."""
    return OutputLimit(SYNTHESIZE, _scaled(512, 2, estimate_tokens(best_response), 8192))


def assess(results: int) -> OutputLimit:
    """One stance line (with reason) per search result."""
    return OutputLimit(ASSESS, _scaled(128, 96, results, 4096))


def review(claims: int) -> OutputLimit:
    """Citation corrections and numeric questions, a few lines per claim."""
    return OutputLimit(REVIEW, _scaled(256, 160, claims, 8192))


def entailment_agent(statements: int = 0) -> OutputLimit:
    """One agent's JSON answer (the judge's grows with the statements it judges)."""
    return OutputLimit(ENTAILMENT_AGENT, _scaled(512, 128, statements, 4096))


def resolve(limit: OutputLimit | None, *, overrides: dict[str, int], scale: float, ceiling: int) -> OutputLimit:
    """The limit a call sends: the role's override, else its limit times `scale` (a `fixed` limit as it
    is); never above `ceiling` (the setting, or the provider's own), never below one token. No limit:
    the ceiling."""
    if limit is None:
        return OutputLimit(DEFAULT, ceiling)
    if limit.fixed:
        return OutputLimit(limit.role, max(1, min(limit.max_tokens, ceiling)), limit.stop, fixed=True)
    tokens = overrides.get(limit.role)
    if tokens is None:
        tokens = math.ceil(limit.max_tokens * scale)
    return OutputLimit(limit.role, max(1, min(tokens, ceiling)), limit.stop)
