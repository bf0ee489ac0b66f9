"""The structured inputs of a model call, handed to a `local/` engine together with its prompt.

A service that calls a model passes what it built the prompt from as `inputs=` of
`ModelClient.complete` / `ModelClient.stream`: one small frozen dataclass per kind of call. The
built-in engines (`factcheck_engines`) answer from these and never read the prompt, so a prompt's
wording can change without breaking them. An HTTP provider never sees them: only the prompt goes
on the wire, and a real model's answer is read by the same parsers as an engine's.

Values are the caller's own, not as the prompt quotes or escapes them; each engine reads them the
way a model reads the prompt (e.g. a passage line by line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Union

from factcheck.text.evidence_text import passage_title
from factcheck.v1 import common_pb2

__all__ = [
    "AssessInputs",
    "AuditorAgentInputs",
    "CheckerVerdict",
    "ClaimInput",
    "CouncilCheckInputs",
    "ExtractInputs",
    "ExtractorAgentInputs",
    "GenerateInputs",
    "InputsMissing",
    "JudgeAgentInputs",
    "ModelInputs",
    "Passage",
    "ReliabilityAgentInputs",
    "ReportEntry",
    "ReportInputs",
    "ResponseInput",
    "ReviewClaim",
    "ReviewInputs",
    "Statement",
    "SynthesisCorrection",
    "SynthesisInputs",
    "TitleInputs",
    "VerifyInputs",
    "passages_of",
    "unanswerable",
]


@dataclass(frozen=True)
class Passage:
    """A numbered passage (evidence, a source, a search result, a pool span) as the prompt shows it:
    its id, title (the source's title, else its id), url, text and publication date ("" if none)."""

    id: str
    title: str
    text: str
    url: str = ""
    published: str = ""

    @classmethod
    def from_proto(cls, passage: common_pb2.Passage) -> Passage:
        return cls(
            id=passage.id,
            title=passage_title(passage),
            text=passage.text,
            url=passage.source_url,
            published=passage.published_at,
        )


def passages_of(passages: Iterable[common_pb2.Passage]) -> tuple[Passage, ...]:
    """`Passage.from_proto` of each common.v1 Passage, in order."""
    return tuple(Passage.from_proto(passage) for passage in passages)


@dataclass(frozen=True)
class ClaimInput:
    """A claim to verify: its id ("claim_1") and text."""

    id: str
    text: str


# --- extractor service -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GenerateInputs:
    """The generate call: the question, and the knowledge store's passages to answer from (none: empty store)."""

    question: str
    passages: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class ExtractInputs:
    """The extraction call: the content shown to the model; `claim_detail`: each claim's level and entity asked too."""

    content: str
    claim_detail: bool = False


# --- checker service ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyInputs:
    """The verification call: the claims, the content they come from, and (with evidence) the passages and
    which claim gets which. `support_tiers`: the four-tier Support line is asked too, the
    `low_confidence` claims to abstain unless a passage states or contradicts them."""

    content: str
    claims: tuple[ClaimInput, ...]
    passages: tuple[Passage, ...] = ()
    claim_passages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    support_tiers: bool = False
    low_confidence: frozenset[str] = frozenset()
    # A binary checker's decision threshold instead of its own (VerifyRequest.support_threshold); None: its own.
    support_threshold: float | None = None


@dataclass(frozen=True)
class ResponseInput:
    """One anonymised answer of a council: its label ("Response A") and text."""

    label: str
    text: str


@dataclass(frozen=True)
class CouncilCheckInputs:
    """The council fact-check call: the question, the responses as shown (cut to fit, if they were) and
    the reference passages."""

    question: str
    responses: tuple[ResponseInput, ...]
    passages: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class AssessInputs:
    """The evidence-assessment call: one claim and the search results (ids R1, R2, ...) to judge it by."""

    claim: str
    results: tuple[Passage, ...]


@dataclass(frozen=True)
class ReviewClaim:
    """A claim of the citation review: its id, text, the pool spans it cites and, for a numeric claim,
    the entity its figure describes ("" when not known); None for other claims."""

    id: str
    text: str
    cited: tuple[str, ...] = ()
    entity: str | None = None


@dataclass(frozen=True)
class ReviewInputs:
    """The citation review call: the claims and the evidence pool."""

    claims: tuple[ReviewClaim, ...]
    pool: tuple[Passage, ...]


@dataclass(frozen=True)
class ExtractorAgentInputs:
    """The entailment EXTRACTOR agent: the claim and the source excerpt."""

    claim: str
    source_excerpt: str


@dataclass(frozen=True)
class ReliabilityAgentInputs:
    """The entailment RELIABILITY agent: the source-type description only."""

    source_type: str


@dataclass(frozen=True)
class Statement:
    """An extracted statement: its id (1, 2, ...) and text."""

    id: int
    text: str


@dataclass(frozen=True)
class JudgeAgentInputs:
    """The ENTAILMENT JUDGE agent: the claim and the extracted statements."""

    claim: str
    statements: tuple[Statement, ...]


@dataclass(frozen=True)
class AuditorAgentInputs:
    """The ADVERSARIAL AUDITOR agent: the claim, the source excerpt and the judge's verdict (its wire
    name: "SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO") and confidence."""

    claim: str
    source_excerpt: str
    judge_verdict: str
    judge_confidence: int


# --- reporter service --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckerVerdict:
    """One checker's verdict on a claim of the report."""

    model: str
    verdict: str
    confidence: str
    evidence: str


@dataclass(frozen=True)
class ReportEntry:
    """One claim of the report: its consensus (agreement in whole percent, 0-100), each checker's
    verdict and, when the run had evidence, the sources the consensus cites ("; "-joined titles)."""

    claim_id: str
    claim: str
    type: str
    verdict: str
    agreement: int
    correction: str | None = None
    verdicts: tuple[CheckerVerdict, ...] = ()
    sources: str | None = None


@dataclass(frozen=True)
class ReportInputs:
    """The report call: the content, the claims' consensus, how many checkers ran and the models' names
    (`checker_models` as one ", "-joined line)."""

    content: str
    entries: tuple[ReportEntry, ...]
    checker_count: int = 0
    extractor_model: str = ""
    checker_models: str = ""
    reporter_model: str = ""


@dataclass(frozen=True)
class TitleInputs:
    """The title call: the question (may be "") and the content's opening (may be "")."""

    question: str
    content: str


@dataclass(frozen=True)
class SynthesisCorrection:
    """An inaccurate claim of the most reliable response, its error type's name and correction ("" if none)."""

    error_type: str
    claim: str
    correction: str


@dataclass(frozen=True)
class SynthesisInputs:
    """The council chairman's call: the question, the most reliable response and its corrections."""

    question: str
    response: str
    corrections: tuple[SynthesisCorrection, ...] = ()


ModelInputs = Union[
    GenerateInputs,
    ExtractInputs,
    VerifyInputs,
    CouncilCheckInputs,
    AssessInputs,
    ReviewInputs,
    ExtractorAgentInputs,
    ReliabilityAgentInputs,
    JudgeAgentInputs,
    AuditorAgentInputs,
    ReportInputs,
    TitleInputs,
    SynthesisInputs,
]


class InputsMissing(ValueError):
    """A `local/` engine was called without inputs it answers (the model client reports it as the engine's failure)."""


# What each kind of call asks, in the words a user reads when an engine is named for a call it cannot answer
# (the message reaches a run's or an evaluation's stored failure: no class names).
_TASKS: dict[type, str] = {
    GenerateInputs: "answer a question",
    ExtractInputs: "extract claims",
    VerifyInputs: "verify claims",
    CouncilCheckInputs: "rate council responses",
    AssessInputs: "assess search results for a claim",
    ReviewInputs: "review citations",
    ExtractorAgentInputs: "list a response's statements",
    ReliabilityAgentInputs: "rate a source's reliability",
    JudgeAgentInputs: "judge statements against a source",
    AuditorAgentInputs: "audit a judgement",
    ReportInputs: "write a report",
    TitleInputs: "write a title",
    SynthesisInputs: "write a council synthesis",
}


def _task(kind: type) -> str:
    return _TASKS.get(kind, "answer this kind of call")


def unanswerable(inputs: object, engine: str, kinds: tuple[type, ...]) -> InputsMissing:
    """The error for `engine` called with `inputs` that are none of the `kinds` it answers: what the call asked and
    what the engine can do, in words (the role that named it needs another model)."""
    asked = "answer a plain prompt" if inputs is None else _task(type(inputs))
    can = list(dict.fromkeys(_task(kind) for kind in kinds))
    able = can[0] if len(can) == 1 else ", ".join(can[:-1]) + " or " + can[-1]
    return InputsMissing(
        f"{engine} cannot {asked}: it can only {able}; name another model for the part of the run that asks this"
    )
