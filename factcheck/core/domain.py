"""Fact-check mode's data shapes (ExtractedClaim, ClaimVerification, ClaimConsensus) and their conversions.

Services work on these plain values; `to_proto`/`from_proto` cross the wire and
`to_json`/`from_json` give the camelCase shapes stored in `parsed_data` (deliberation_stages rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, cast

from factcheck.v1 import common_pb2

CLAIM_TYPES = ("STATISTIC", "DATE", "ATTRIBUTION", "TECHNICAL", "COMPARISON", "CAUSAL")
VERDICTS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
CONFIDENCES = ("HIGH", "MEDIUM", "LOW")


def is_known_enum(enum_type, value: int) -> bool:
    """True for a defined, non-UNSPECIFIED value: proto3 keeps unknown numbers, so callers must check."""
    return value != 0 and value in enum_type.values()


# The casts: protoc's .pyi make each enum's Value() return a plain int, where fields take the enum's type.
def claim_type_to_proto(name: str) -> common_pb2.ClaimType:
    return cast(common_pb2.ClaimType, common_pb2.ClaimType.Value(f"CLAIM_TYPE_{name}"))


def claim_type_from_proto(value: int) -> str:
    return common_pb2.ClaimType.Name(value).removeprefix("CLAIM_TYPE_")


def verdict_to_proto(name: str) -> common_pb2.Verdict:
    return cast(common_pb2.Verdict, common_pb2.Verdict.Value(f"VERDICT_{name}"))


def verdict_from_proto(value: int) -> str:
    return common_pb2.Verdict.Name(value).removeprefix("VERDICT_")


def confidence_to_proto(name: str) -> common_pb2.Confidence:
    return cast(common_pb2.Confidence, common_pb2.Confidence.Value(f"CONFIDENCE_{name}"))


def confidence_from_proto(value: int) -> str:
    return common_pb2.Confidence.Name(value).removeprefix("CONFIDENCE_")


@dataclass(frozen=True)
class ExtractedClaim:
    id: str
    claim: str
    context: str
    type: str
    # Character offsets [start, end) of the claim in the analysed content, when found.
    start: int | None = None
    end: int | None = None

    def to_proto(self) -> common_pb2.Claim:
        msg = common_pb2.Claim(id=self.id, claim=self.claim, context=self.context, type=claim_type_to_proto(self.type))
        if self.start is not None and self.end is not None:
            msg.start_offset, msg.end_offset = self.start, self.end
        return msg

    @classmethod
    def from_proto(cls, msg: common_pb2.Claim) -> ExtractedClaim:
        has_span = msg.HasField("start_offset") and msg.HasField("end_offset")
        return cls(
            id=msg.id,
            claim=msg.claim,
            context=msg.context,
            type=claim_type_from_proto(msg.type),
            start=msg.start_offset if has_span else None,
            end=msg.end_offset if has_span else None,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "claim": self.claim, "context": self.context, "type": self.type}
        if self.start is not None:
            data["startOffset"], data["endOffset"] = self.start, self.end
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ExtractedClaim:
        return cls(
            id=data["id"],
            claim=data["claim"],
            context=data.get("context", ""),
            type=data["type"],
            start=data.get("startOffset"),
            end=data.get("endOffset"),
        )


@dataclass(frozen=True)
class Citation:
    """A passage a checker cited; offsets are of the quote (or the whole passage) in the source's text."""

    passage_id: str
    source_id: str = ""
    source_title: str = ""
    quote: str = ""
    start: int = 0
    end: int = 0

    def to_proto(self) -> common_pb2.Citation:
        return common_pb2.Citation(
            passage_id=self.passage_id,
            source_id=self.source_id,
            source_title=self.source_title,
            quote=self.quote,
            start_offset=self.start,
            end_offset=self.end,
        )

    @classmethod
    def from_proto(cls, msg: common_pb2.Citation) -> Citation:
        return cls(msg.passage_id, msg.source_id, msg.source_title, msg.quote, msg.start_offset, msg.end_offset)

    def to_json(self) -> dict[str, Any]:
        return {
            "passageId": self.passage_id,
            "sourceId": self.source_id,
            "sourceTitle": self.source_title,
            "quote": self.quote,
            "startOffset": self.start,
            "endOffset": self.end,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Citation:
        return cls(
            passage_id=data["passageId"],
            source_id=data.get("sourceId", ""),
            source_title=data.get("sourceTitle", ""),
            quote=data.get("quote", ""),
            start=data.get("startOffset", 0),
            end=data.get("endOffset", 0),
        )


@dataclass(frozen=True)
class AuditFlag:
    """One thing the gateway's audit found wrong with a checker's answer on a claim (factcheck/core/audit.py decides
    the flags and names their kinds and the statuses: the protos' names without their prefix)."""

    kind: str  # FABRICATED_QUOTE or UNSUPPORTED_DETAIL
    detail: str
    checker_model: str = ""

    def to_proto(self) -> common_pb2.AuditFlag:
        return common_pb2.AuditFlag(
            kind=cast(common_pb2.AuditFlagKind, common_pb2.AuditFlagKind.Value(f"AUDIT_FLAG_KIND_{self.kind}")),
            detail=self.detail,
            checker_model=self.checker_model,
        )

    @classmethod
    def from_proto(cls, msg: common_pb2.AuditFlag) -> AuditFlag:
        kind = common_pb2.AuditFlagKind.Name(msg.kind) if msg.kind in common_pb2.AuditFlagKind.values() else ""
        return cls(kind.removeprefix("AUDIT_FLAG_KIND_"), msg.detail, msg.checker_model)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "detail": self.detail, "checkerModel": self.checker_model}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AuditFlag:
        return cls(str(data["kind"]), str(data.get("detail", "")), str(data.get("checkerModel", "")))


def audit_status_to_proto(name: str) -> common_pb2.AuditStatus:
    if not name:
        return common_pb2.AUDIT_STATUS_UNSPECIFIED
    return cast(common_pb2.AuditStatus, common_pb2.AuditStatus.Value(f"AUDIT_STATUS_{name}"))


def audit_status_from_proto(value: int) -> str:
    """The status's name; "" when unset or unknown (a verification no gateway audited)."""
    if not is_known_enum(common_pb2.AuditStatus, value):
        return ""
    return common_pb2.AuditStatus.Name(value).removeprefix("AUDIT_STATUS_")


# The evidence of a verification the checker's answer did not contain (so it is never cached).
NOT_ADDRESSED_EVIDENCE = "Checker did not address this claim"
# The reason added when the checker's answer (or the claim's block in it) could not be read at all.
NOT_IN_FORMAT = "answer not in the required format"


def not_addressed_evidence(reason: str | None = None) -> str:
    """The evidence of a claim the checker did not address: "Checker did not address this claim (reason)"."""
    return f"{NOT_ADDRESSED_EVIDENCE} ({reason})" if reason else NOT_ADDRESSED_EVIDENCE


def is_not_addressed(evidence: str) -> bool:
    return evidence.startswith(NOT_ADDRESSED_EVIDENCE)


def _optional_float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class ClaimVerification:
    claim_id: str
    verdict: str
    evidence: str
    correction: str | None
    confidence: str
    checker_model: str
    citations: tuple[Citation, ...] = ()
    # Reused from the verification cache instead of a model call.
    cached: bool = False
    # The gateway's audit (factcheck/core/audit.py): what it found, and whether it audited ("" when no gateway did).
    audit_flags: tuple[AuditFlag, ...] = ()
    audit_status: str = ""
    # Citations the checker gave that its service could not resolve (a label never sent, a quote not in the
    # passage): never evidence, kept for the audit.
    unresolved_citations: tuple[Citation, ...] = ()
    # A binary checker's (onnx/, grounding dialect) threshold, and the P(supported) it decided the verdict on
    # (None when it did not: common.proto ClaimVerification.support_probability).
    support_probability: float | None = None
    support_threshold: float | None = None

    def to_proto(self) -> common_pb2.ClaimVerification:
        msg = common_pb2.ClaimVerification(
            claim_id=self.claim_id,
            verdict=verdict_to_proto(self.verdict),
            evidence=self.evidence,
            confidence=confidence_to_proto(self.confidence),
            checker_model=self.checker_model,
            citations=[c.to_proto() for c in self.citations],
            cached=self.cached,
            audit_flags=[f.to_proto() for f in self.audit_flags],
            audit_status=audit_status_to_proto(self.audit_status),
            unresolved_citations=[c.to_proto() for c in self.unresolved_citations],
        )
        if self.correction is not None:
            msg.correction = self.correction
        if self.support_probability is not None:
            msg.support_probability = self.support_probability
        if self.support_threshold is not None:
            msg.support_threshold = self.support_threshold
        return msg

    @classmethod
    def from_proto(cls, msg: common_pb2.ClaimVerification) -> ClaimVerification:
        return cls(
            claim_id=msg.claim_id,
            verdict=verdict_from_proto(msg.verdict),
            evidence=msg.evidence,
            correction=msg.correction if msg.HasField("correction") else None,
            confidence=confidence_from_proto(msg.confidence),
            checker_model=msg.checker_model,
            citations=tuple(Citation.from_proto(c) for c in msg.citations),
            cached=msg.cached,
            audit_flags=tuple(AuditFlag.from_proto(f) for f in msg.audit_flags),
            audit_status=audit_status_from_proto(msg.audit_status),
            unresolved_citations=tuple(Citation.from_proto(c) for c in msg.unresolved_citations),
            support_probability=msg.support_probability if msg.HasField("support_probability") else None,
            support_threshold=msg.support_threshold if msg.HasField("support_threshold") else None,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "claimId": self.claim_id,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "correction": self.correction,
            "confidence": self.confidence,
            "checkerModel": self.checker_model,
        }
        if self.citations:  # options add keys, never change a row: runs without evidence store none
            data["citations"] = [c.to_json() for c in self.citations]
        if self.cached:  # likewise: uncached verifications store no key
            data["cached"] = True
        if self.audit_status:  # likewise: only what the gateway's audit added
            data["auditStatus"] = self.audit_status
        if self.audit_flags:
            data["auditFlags"] = [f.to_json() for f in self.audit_flags]
        if self.unresolved_citations:
            data["unresolvedCitations"] = [c.to_json() for c in self.unresolved_citations]
        if self.support_probability is not None:  # binary checkers only
            data["supportProbability"] = self.support_probability
        if self.support_threshold is not None:
            data["supportThreshold"] = self.support_threshold
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], checker_model: str | None = None) -> ClaimVerification:
        return cls(
            claim_id=data["claimId"],
            verdict=data["verdict"],
            evidence=data.get("evidence", ""),
            correction=data.get("correction"),
            confidence=data["confidence"],
            checker_model=data.get("checkerModel") or checker_model or "",
            citations=tuple(Citation.from_json(c) for c in data.get("citations", ())),
            cached=bool(data.get("cached", False)),
            audit_flags=tuple(AuditFlag.from_json(f) for f in data.get("auditFlags", ())),
            audit_status=str(data.get("auditStatus", "")),
            unresolved_citations=tuple(Citation.from_json(c) for c in data.get("unresolvedCitations", ())),
            support_probability=_optional_float(data.get("supportProbability")),
            support_threshold=_optional_float(data.get("supportThreshold")),
        )


@dataclass(frozen=True)
class VerdictSummary:
    verified: int = 0
    disputed: int = 0
    unverifiable: int = 0

    @classmethod
    def count(cls, verdicts: Iterable[str]) -> VerdictSummary:
        verdicts = list(verdicts)
        return cls(
            verified=verdicts.count("VERIFIED"),
            disputed=verdicts.count("DISPUTED"),
            unverifiable=verdicts.count("UNVERIFIABLE"),
        )

    def to_proto(self) -> common_pb2.VerdictSummary:
        return common_pb2.VerdictSummary(verified=self.verified, disputed=self.disputed, unverifiable=self.unverifiable)

    @classmethod
    def from_proto(cls, msg: common_pb2.VerdictSummary) -> VerdictSummary:
        return cls(verified=msg.verified, disputed=msg.disputed, unverifiable=msg.unverifiable)

    def to_json(self) -> dict[str, int]:
        return {"verified": self.verified, "disputed": self.disputed, "unverifiable": self.unverifiable}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> VerdictSummary:
        data = data or {}
        return cls(data.get("verified", 0), data.get("disputed", 0), data.get("unverifiable", 0))


@dataclass(frozen=True)
class ClaimConsensus:
    claim_id: str
    claim: str
    context: str
    type: str
    verdicts: tuple[ClaimVerification, ...]
    consensus_verdict: str
    consensus_confidence: str
    agreement_rate: float
    correction: str | None = None
    citations: tuple[Citation, ...] = ()
    # CONSENSUS_WEIGHTED only: the posterior probability of the consensus verdict
    # (factcheck_gateway/consensus/weighted.py).
    weighted_probability: float | None = None
    # Why a checker's verdict counted as another (factcheck/core/audit.py: counted_as); "" when none did.
    audit_note: str = ""

    def to_proto(self) -> common_pb2.ClaimConsensus:
        msg = common_pb2.ClaimConsensus(
            claim_id=self.claim_id,
            claim=self.claim,
            context=self.context,
            type=claim_type_to_proto(self.type),
            verdicts=[v.to_proto() for v in self.verdicts],
            consensus_verdict=verdict_to_proto(self.consensus_verdict),
            consensus_confidence=confidence_to_proto(self.consensus_confidence),
            agreement_rate=self.agreement_rate,
            citations=[c.to_proto() for c in self.citations],
            audit_note=self.audit_note,
        )
        if self.correction is not None:
            msg.correction = self.correction
        if self.weighted_probability is not None:
            msg.weighted_probability = self.weighted_probability
        return msg

    @classmethod
    def from_proto(cls, msg: common_pb2.ClaimConsensus) -> ClaimConsensus:
        return cls(
            claim_id=msg.claim_id,
            claim=msg.claim,
            context=msg.context,
            type=claim_type_from_proto(msg.type),
            verdicts=tuple(ClaimVerification.from_proto(v) for v in msg.verdicts),
            consensus_verdict=verdict_from_proto(msg.consensus_verdict),
            consensus_confidence=confidence_from_proto(msg.consensus_confidence),
            agreement_rate=msg.agreement_rate,
            correction=msg.correction if msg.HasField("correction") else None,
            citations=tuple(Citation.from_proto(c) for c in msg.citations),
            weighted_probability=msg.weighted_probability if msg.HasField("weighted_probability") else None,
            audit_note=msg.audit_note,
        )


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    # Prompt tokens the provider served from its prompt cache (part of prompt_tokens).
    cached_tokens: int = 0

    def to_proto(self) -> common_pb2.TokenUsage:
        return common_pb2.TokenUsage(
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            total_tokens=self.total_tokens,
            cached_tokens=self.cached_tokens,
        )


@dataclass(frozen=True)
class Completion:
    """One model answer: the text, what it cost and how long it took."""

    text: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    latency_ms: int = 0
    model: str = ""
    # Why the model stopped, as the provider said ("stop", "length": cut at the output limit, ...);
    # "" when it did not say (local engines).
    finish_reason: str = ""
    # The first answer token's most likely alternatives, (token, log-probability), most likely first: only
    # for a call that asked for them (`logprobs=`) of a provider that sent them; None otherwise.
    top_logprobs: tuple[tuple[str, float], ...] | None = None

    @property
    def cut_at_limit(self) -> bool:
        """The answer ended because it reached its output limit, not because the model finished it."""
        return self.finish_reason == "length"
