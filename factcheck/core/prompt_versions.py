"""Every prompt template's version: one place, read by the services that build the prompts and by
the gateway's verification cache (a cached verification is reused only under the same version).

Bump a template's version whenever its wording or format changes: stored results name the
versions they were produced with (ledger rows, stage rows' parsedData.promptVersions), and
the cache stops serving verifications made with the old wording.

A builder decorated with `versioned(name)` returns a `VersionedPrompt`: the prompt text (a
str) that also carries "name@version"; the model client reports it with the call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec

GENERATE = "generate"
EXTRACT = "extract"
VERIFY = "verify"
REPORT = "report"
TITLE = "title"
COUNCIL_CHECK = "council_check"
SYNTHESIZE = "synthesize"
# The entailment agents (services/checker/factcheck_checker/entailment/agent_prompts.py), and the retry that shows an agent its invalid answer.
ENTAILMENT_EXTRACTOR = "entailment_extractor"
ENTAILMENT_RELIABILITY = "entailment_reliability"
ENTAILMENT_JUDGE = "entailment_judge"
ENTAILMENT_AUDITOR = "entailment_auditor"
ENTAILMENT_REPAIR = "entailment_repair"
# The MiniCheck dialect's prompt (a grounding model's own, services/checker/factcheck_checker/minicheck.py):
# what a dialect checker's verify calls send instead of the verify template.
MINICHECK = "minicheck"

PROMPT_VERSIONS: dict[str, int] = {
    GENERATE: 1,
    EXTRACT: 1,
    VERIFY: 1,
    REPORT: 2,  # 2: each checker's verdict as it counted in the consensus, and the audit's note
    TITLE: 1,
    COUNCIL_CHECK: 1,
    SYNTHESIZE: 1,
    ENTAILMENT_EXTRACTOR: 1,
    ENTAILMENT_RELIABILITY: 1,
    ENTAILMENT_JUDGE: 1,
    ENTAILMENT_AUDITOR: 1,
    ENTAILMENT_REPAIR: 1,
    MINICHECK: 1,
}


def version_label(name: str) -> str:
    """ "verify@1": how a template's version is stored and compared."""
    return f"{name}@{PROMPT_VERSIONS[name]}"


class VersionedPrompt(str):
    """A prompt's text that also knows which template (and version) built it."""

    prompt_version: str = ""

    def __new__(cls, text: str, prompt_version: str) -> VersionedPrompt:
        prompt = super().__new__(cls, text)
        prompt.prompt_version = prompt_version
        return prompt

    def __add__(self, section: str) -> VersionedPrompt:
        """The prompt with `section` appended, still its template's version: the services append
        their optional sections (CLAIM DETAIL, SUPPORT) to a built prompt, and a plain str would
        lose the version the ledger and the cache read."""
        return VersionedPrompt(str.__add__(self, section), self.prompt_version)


def prompt_version_of(prompt: str) -> str:
    """The "name@version" of a prompt built by a versioned template; "" for any other text."""
    return getattr(prompt, "prompt_version", "")


P = ParamSpec("P")


def versioned(name: str) -> Callable[[Callable[P, str]], Callable[P, VersionedPrompt]]:
    """Mark a prompt builder as template `name` (which must have a version above)."""
    label = version_label(name)

    def decorate(build: Callable[P, str]) -> Callable[P, VersionedPrompt]:
        @functools.wraps(build)
        def built(*args: P.args, **kwargs: P.kwargs) -> VersionedPrompt:
            return VersionedPrompt(build(*args, **kwargs), label)

        built.prompt_version = label  # type: ignore[attr-defined]
        return built

    return decorate
