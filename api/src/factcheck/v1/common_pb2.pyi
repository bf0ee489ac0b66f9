from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ClaimType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLAIM_TYPE_UNSPECIFIED: _ClassVar[ClaimType]
    CLAIM_TYPE_STATISTIC: _ClassVar[ClaimType]
    CLAIM_TYPE_DATE: _ClassVar[ClaimType]
    CLAIM_TYPE_ATTRIBUTION: _ClassVar[ClaimType]
    CLAIM_TYPE_TECHNICAL: _ClassVar[ClaimType]
    CLAIM_TYPE_COMPARISON: _ClassVar[ClaimType]
    CLAIM_TYPE_CAUSAL: _ClassVar[ClaimType]

class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERDICT_UNSPECIFIED: _ClassVar[Verdict]
    VERDICT_VERIFIED: _ClassVar[Verdict]
    VERDICT_DISPUTED: _ClassVar[Verdict]
    VERDICT_UNVERIFIABLE: _ClassVar[Verdict]

class Confidence(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONFIDENCE_UNSPECIFIED: _ClassVar[Confidence]
    CONFIDENCE_HIGH: _ClassVar[Confidence]
    CONFIDENCE_MEDIUM: _ClassVar[Confidence]
    CONFIDENCE_LOW: _ClassVar[Confidence]

class AuditFlagKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIT_FLAG_KIND_UNSPECIFIED: _ClassVar[AuditFlagKind]
    AUDIT_FLAG_KIND_FABRICATED_QUOTE: _ClassVar[AuditFlagKind]
    AUDIT_FLAG_KIND_UNSUPPORTED_DETAIL: _ClassVar[AuditFlagKind]

class AuditStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIT_STATUS_UNSPECIFIED: _ClassVar[AuditStatus]
    AUDIT_STATUS_AUDITED: _ClassVar[AuditStatus]
    AUDIT_STATUS_NO_PASSAGES: _ClassVar[AuditStatus]
    AUDIT_STATUS_DISABLED: _ClassVar[AuditStatus]

class EvidenceOrigin(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVIDENCE_ORIGIN_UNSPECIFIED: _ClassVar[EvidenceOrigin]
    EVIDENCE_ORIGIN_REQUEST: _ClassVar[EvidenceOrigin]
    EVIDENCE_ORIGIN_KNOWLEDGE_STORE: _ClassVar[EvidenceOrigin]
CLAIM_TYPE_UNSPECIFIED: ClaimType
CLAIM_TYPE_STATISTIC: ClaimType
CLAIM_TYPE_DATE: ClaimType
CLAIM_TYPE_ATTRIBUTION: ClaimType
CLAIM_TYPE_TECHNICAL: ClaimType
CLAIM_TYPE_COMPARISON: ClaimType
CLAIM_TYPE_CAUSAL: ClaimType
VERDICT_UNSPECIFIED: Verdict
VERDICT_VERIFIED: Verdict
VERDICT_DISPUTED: Verdict
VERDICT_UNVERIFIABLE: Verdict
CONFIDENCE_UNSPECIFIED: Confidence
CONFIDENCE_HIGH: Confidence
CONFIDENCE_MEDIUM: Confidence
CONFIDENCE_LOW: Confidence
AUDIT_FLAG_KIND_UNSPECIFIED: AuditFlagKind
AUDIT_FLAG_KIND_FABRICATED_QUOTE: AuditFlagKind
AUDIT_FLAG_KIND_UNSUPPORTED_DETAIL: AuditFlagKind
AUDIT_STATUS_UNSPECIFIED: AuditStatus
AUDIT_STATUS_AUDITED: AuditStatus
AUDIT_STATUS_NO_PASSAGES: AuditStatus
AUDIT_STATUS_DISABLED: AuditStatus
EVIDENCE_ORIGIN_UNSPECIFIED: EvidenceOrigin
EVIDENCE_ORIGIN_REQUEST: EvidenceOrigin
EVIDENCE_ORIGIN_KNOWLEDGE_STORE: EvidenceOrigin

class AuditFlag(_message.Message):
    __slots__ = ("kind", "detail", "checker_model")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    kind: AuditFlagKind
    detail: str
    checker_model: str
    def __init__(self, kind: _Optional[_Union[AuditFlagKind, str]] = ..., detail: _Optional[str] = ..., checker_model: _Optional[str] = ...) -> None: ...

class Claim(_message.Message):
    __slots__ = ("id", "claim", "context", "type", "start_offset", "end_offset")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    id: str
    claim: str
    context: str
    type: ClaimType
    start_offset: int
    end_offset: int
    def __init__(self, id: _Optional[str] = ..., claim: _Optional[str] = ..., context: _Optional[str] = ..., type: _Optional[_Union[ClaimType, str]] = ..., start_offset: _Optional[int] = ..., end_offset: _Optional[int] = ...) -> None: ...

class ClaimVerification(_message.Message):
    __slots__ = ("claim_id", "verdict", "evidence", "correction", "confidence", "checker_model", "citations", "cached", "audit_flags", "audit_status", "unresolved_citations", "support_probability", "support_threshold")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    AUDIT_FLAGS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_STATUS_FIELD_NUMBER: _ClassVar[int]
    UNRESOLVED_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    verdict: Verdict
    evidence: str
    correction: str
    confidence: Confidence
    checker_model: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    cached: bool
    audit_flags: _containers.RepeatedCompositeFieldContainer[AuditFlag]
    audit_status: AuditStatus
    unresolved_citations: _containers.RepeatedCompositeFieldContainer[Citation]
    support_probability: float
    support_threshold: float
    def __init__(self, claim_id: _Optional[str] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., evidence: _Optional[str] = ..., correction: _Optional[str] = ..., confidence: _Optional[_Union[Confidence, str]] = ..., checker_model: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., cached: _Optional[bool] = ..., audit_flags: _Optional[_Iterable[_Union[AuditFlag, _Mapping]]] = ..., audit_status: _Optional[_Union[AuditStatus, str]] = ..., unresolved_citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., support_probability: _Optional[float] = ..., support_threshold: _Optional[float] = ...) -> None: ...

class ClaimConsensus(_message.Message):
    __slots__ = ("claim_id", "claim", "context", "type", "verdicts", "consensus_verdict", "consensus_confidence", "agreement_rate", "correction", "citations", "weighted_probability", "audit_note")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    AGREEMENT_RATE_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    WEIGHTED_PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    AUDIT_NOTE_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    claim: str
    context: str
    type: ClaimType
    verdicts: _containers.RepeatedCompositeFieldContainer[ClaimVerification]
    consensus_verdict: Verdict
    consensus_confidence: Confidence
    agreement_rate: float
    correction: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    weighted_probability: float
    audit_note: str
    def __init__(self, claim_id: _Optional[str] = ..., claim: _Optional[str] = ..., context: _Optional[str] = ..., type: _Optional[_Union[ClaimType, str]] = ..., verdicts: _Optional[_Iterable[_Union[ClaimVerification, _Mapping]]] = ..., consensus_verdict: _Optional[_Union[Verdict, str]] = ..., consensus_confidence: _Optional[_Union[Confidence, str]] = ..., agreement_rate: _Optional[float] = ..., correction: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., weighted_probability: _Optional[float] = ..., audit_note: _Optional[str] = ...) -> None: ...

class VerdictSummary(_message.Message):
    __slots__ = ("verified", "disputed", "unverifiable")
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    DISPUTED_FIELD_NUMBER: _ClassVar[int]
    UNVERIFIABLE_FIELD_NUMBER: _ClassVar[int]
    verified: int
    disputed: int
    unverifiable: int
    def __init__(self, verified: _Optional[int] = ..., disputed: _Optional[int] = ..., unverifiable: _Optional[int] = ...) -> None: ...

class TokenUsage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("id", "title", "url", "text", "published_at", "authority")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    url: str
    text: str
    published_at: str
    authority: float
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., url: _Optional[str] = ..., text: _Optional[str] = ..., published_at: _Optional[str] = ..., authority: _Optional[float] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("id", "source_id", "source_title", "source_url", "text", "start_offset", "end_offset", "score", "origin", "published_at", "authority", "section_title")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_AT_FIELD_NUMBER: _ClassVar[int]
    AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    SECTION_TITLE_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_id: str
    source_title: str
    source_url: str
    text: str
    start_offset: int
    end_offset: int
    score: float
    origin: EvidenceOrigin
    published_at: str
    authority: float
    section_title: str
    def __init__(self, id: _Optional[str] = ..., source_id: _Optional[str] = ..., source_title: _Optional[str] = ..., source_url: _Optional[str] = ..., text: _Optional[str] = ..., start_offset: _Optional[int] = ..., end_offset: _Optional[int] = ..., score: _Optional[float] = ..., origin: _Optional[_Union[EvidenceOrigin, str]] = ..., published_at: _Optional[str] = ..., authority: _Optional[float] = ..., section_title: _Optional[str] = ...) -> None: ...

class ClaimEvidence(_message.Message):
    __slots__ = ("claim_id", "passage_ids")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    passage_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, claim_id: _Optional[str] = ..., passage_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("passage_id", "source_id", "source_title", "quote", "start_offset", "end_offset")
    PASSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TITLE_FIELD_NUMBER: _ClassVar[int]
    QUOTE_FIELD_NUMBER: _ClassVar[int]
    START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    passage_id: str
    source_id: str
    source_title: str
    quote: str
    start_offset: int
    end_offset: int
    def __init__(self, passage_id: _Optional[str] = ..., source_id: _Optional[str] = ..., source_title: _Optional[str] = ..., quote: _Optional[str] = ..., start_offset: _Optional[int] = ..., end_offset: _Optional[int] = ...) -> None: ...
