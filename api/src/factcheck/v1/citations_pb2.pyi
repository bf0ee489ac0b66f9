import datetime

from factcheck.v1 import common_pb2 as _common_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SupportTier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUPPORT_TIER_UNSPECIFIED: _ClassVar[SupportTier]
    SUPPORT_TIER_SUPPORTED: _ClassVar[SupportTier]
    SUPPORT_TIER_PARTIAL: _ClassVar[SupportTier]
    SUPPORT_TIER_UNSUPPORTED: _ClassVar[SupportTier]
    SUPPORT_TIER_CONTRADICTED: _ClassVar[SupportTier]

class ConfidenceLevel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONFIDENCE_LEVEL_UNSPECIFIED: _ClassVar[ConfidenceLevel]
    CONFIDENCE_LEVEL_HIGH: _ClassVar[ConfidenceLevel]
    CONFIDENCE_LEVEL_MEDIUM: _ClassVar[ConfidenceLevel]
    CONFIDENCE_LEVEL_LOW: _ClassVar[ConfidenceLevel]

class CitationClaimType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CITATION_CLAIM_TYPE_UNSPECIFIED: _ClassVar[CitationClaimType]
    CITATION_CLAIM_TYPE_GENERAL: _ClassVar[CitationClaimType]
    CITATION_CLAIM_TYPE_NUMERIC: _ClassVar[CitationClaimType]

class DerivationType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DERIVATION_TYPE_UNSPECIFIED: _ClassVar[DerivationType]
    DERIVATION_TYPE_DIRECT: _ClassVar[DerivationType]
    DERIVATION_TYPE_COMPUTED: _ClassVar[DerivationType]

class CorrectionType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CORRECTION_TYPE_UNSPECIFIED: _ClassVar[CorrectionType]
    CORRECTION_TYPE_KEEP: _ClassVar[CorrectionType]
    CORRECTION_TYPE_REPLACE: _ClassVar[CorrectionType]
    CORRECTION_TYPE_REMOVE: _ClassVar[CorrectionType]
    CORRECTION_TYPE_ADD_ALTERNATE: _ClassVar[CorrectionType]
SUPPORT_TIER_UNSPECIFIED: SupportTier
SUPPORT_TIER_SUPPORTED: SupportTier
SUPPORT_TIER_PARTIAL: SupportTier
SUPPORT_TIER_UNSUPPORTED: SupportTier
SUPPORT_TIER_CONTRADICTED: SupportTier
CONFIDENCE_LEVEL_UNSPECIFIED: ConfidenceLevel
CONFIDENCE_LEVEL_HIGH: ConfidenceLevel
CONFIDENCE_LEVEL_MEDIUM: ConfidenceLevel
CONFIDENCE_LEVEL_LOW: ConfidenceLevel
CITATION_CLAIM_TYPE_UNSPECIFIED: CitationClaimType
CITATION_CLAIM_TYPE_GENERAL: CitationClaimType
CITATION_CLAIM_TYPE_NUMERIC: CitationClaimType
DERIVATION_TYPE_UNSPECIFIED: DerivationType
DERIVATION_TYPE_DIRECT: DerivationType
DERIVATION_TYPE_COMPUTED: DerivationType
CORRECTION_TYPE_UNSPECIFIED: CorrectionType
CORRECTION_TYPE_KEEP: CorrectionType
CORRECTION_TYPE_REPLACE: CorrectionType
CORRECTION_TYPE_REMOVE: CorrectionType
CORRECTION_TYPE_ADD_ALTERNATE: CorrectionType

class NormalisedNumber(_message.Message):
    __slots__ = ("raw_value", "value", "low", "high", "unit", "assumptions")
    class AssumptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RAW_VALUE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    LOW_FIELD_NUMBER: _ClassVar[int]
    HIGH_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    ASSUMPTIONS_FIELD_NUMBER: _ClassVar[int]
    raw_value: str
    value: float
    low: float
    high: float
    unit: str
    assumptions: _containers.ScalarMap[str, str]
    def __init__(self, raw_value: _Optional[str] = ..., value: _Optional[float] = ..., low: _Optional[float] = ..., high: _Optional[float] = ..., unit: _Optional[str] = ..., assumptions: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ClaimProfile(_message.Message):
    __slots__ = ("claim_id", "confidence_level", "claim_type", "numeric")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TYPE_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    confidence_level: ConfidenceLevel
    claim_type: CitationClaimType
    numeric: NumericDetail
    def __init__(self, claim_id: _Optional[str] = ..., confidence_level: _Optional[_Union[ConfidenceLevel, str]] = ..., claim_type: _Optional[_Union[CitationClaimType, str]] = ..., numeric: _Optional[_Union[NumericDetail, _Mapping]] = ...) -> None: ...

class NumericDetail(_message.Message):
    __slots__ = ("number", "entity_reference", "derivation_type", "computation_details", "qa_verification")
    class ComputationDetailsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    ENTITY_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    COMPUTATION_DETAILS_FIELD_NUMBER: _ClassVar[int]
    QA_VERIFICATION_FIELD_NUMBER: _ClassVar[int]
    number: NormalisedNumber
    entity_reference: str
    derivation_type: DerivationType
    computation_details: _containers.ScalarMap[str, str]
    qa_verification: _containers.RepeatedCompositeFieldContainer[QAVerification]
    def __init__(self, number: _Optional[_Union[NormalisedNumber, _Mapping]] = ..., entity_reference: _Optional[str] = ..., derivation_type: _Optional[_Union[DerivationType, str]] = ..., computation_details: _Optional[_Mapping[str, str]] = ..., qa_verification: _Optional[_Iterable[_Union[QAVerification, _Mapping]]] = ...) -> None: ...

class ClaimSupport(_message.Message):
    __slots__ = ("claim_id", "tier", "abstained")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    ABSTAINED_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    tier: SupportTier
    abstained: bool
    def __init__(self, claim_id: _Optional[str] = ..., tier: _Optional[_Union[SupportTier, str]] = ..., abstained: _Optional[bool] = ...) -> None: ...

class QAVerification(_message.Message):
    __slots__ = ("question", "claim_answer", "evidence_answer", "match", "claim_normalised", "evidence_normalised", "tolerance", "explanation")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ANSWER_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_ANSWER_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    CLAIM_NORMALISED_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_NORMALISED_FIELD_NUMBER: _ClassVar[int]
    TOLERANCE_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    question: str
    claim_answer: str
    evidence_answer: str
    match: bool
    claim_normalised: NormalisedNumber
    evidence_normalised: NormalisedNumber
    tolerance: float
    explanation: str
    def __init__(self, question: _Optional[str] = ..., claim_answer: _Optional[str] = ..., evidence_answer: _Optional[str] = ..., match: _Optional[bool] = ..., claim_normalised: _Optional[_Union[NormalisedNumber, _Mapping]] = ..., evidence_normalised: _Optional[_Union[NormalisedNumber, _Mapping]] = ..., tolerance: _Optional[float] = ..., explanation: _Optional[str] = ...) -> None: ...

class EvidenceSpan(_message.Message):
    __slots__ = ("id", "source_id", "source_title", "source_url", "quote_text", "start_offset", "end_offset", "section_heading", "relevance_score", "has_numeric_content")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_URL_FIELD_NUMBER: _ClassVar[int]
    QUOTE_TEXT_FIELD_NUMBER: _ClassVar[int]
    START_OFFSET_FIELD_NUMBER: _ClassVar[int]
    END_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SECTION_HEADING_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_SCORE_FIELD_NUMBER: _ClassVar[int]
    HAS_NUMERIC_CONTENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_id: str
    source_title: str
    source_url: str
    quote_text: str
    start_offset: int
    end_offset: int
    section_heading: str
    relevance_score: float
    has_numeric_content: bool
    def __init__(self, id: _Optional[str] = ..., source_id: _Optional[str] = ..., source_title: _Optional[str] = ..., source_url: _Optional[str] = ..., quote_text: _Optional[str] = ..., start_offset: _Optional[int] = ..., end_offset: _Optional[int] = ..., section_heading: _Optional[str] = ..., relevance_score: _Optional[float] = ..., has_numeric_content: _Optional[bool] = ...) -> None: ...

class CitationLink(_message.Message):
    __slots__ = ("evidence_span", "confidence_score", "is_primary")
    EVIDENCE_SPAN_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_SCORE_FIELD_NUMBER: _ClassVar[int]
    IS_PRIMARY_FIELD_NUMBER: _ClassVar[int]
    evidence_span: EvidenceSpan
    confidence_score: float
    is_primary: bool
    def __init__(self, evidence_span: _Optional[_Union[EvidenceSpan, _Mapping]] = ..., confidence_score: _Optional[float] = ..., is_primary: _Optional[bool] = ...) -> None: ...

class CitationCorrection(_message.Message):
    __slots__ = ("id", "claim_id", "correction_type", "original_evidence", "corrected_evidence", "reasoning")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_TYPE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    id: str
    claim_id: str
    correction_type: CorrectionType
    original_evidence: EvidenceSpan
    corrected_evidence: EvidenceSpan
    reasoning: str
    def __init__(self, id: _Optional[str] = ..., claim_id: _Optional[str] = ..., correction_type: _Optional[_Union[CorrectionType, str]] = ..., original_evidence: _Optional[_Union[EvidenceSpan, _Mapping]] = ..., corrected_evidence: _Optional[_Union[EvidenceSpan, _Mapping]] = ..., reasoning: _Optional[str] = ...) -> None: ...

class ClaimRecord(_message.Message):
    __slots__ = ("id", "message_id", "claim_key", "claim_text", "claim_type", "confidence_level", "position_start", "position_end", "support", "spec_verdict", "verification_reasoning", "abstained", "citations", "corrections", "numeric_detail", "created_at", "spec_type", "audit_flags")
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_KEY_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TEXT_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    POSITION_START_FIELD_NUMBER: _ClassVar[int]
    POSITION_END_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_FIELD_NUMBER: _ClassVar[int]
    SPEC_VERDICT_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_REASONING_FIELD_NUMBER: _ClassVar[int]
    ABSTAINED_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CORRECTIONS_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_DETAIL_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SPEC_TYPE_FIELD_NUMBER: _ClassVar[int]
    AUDIT_FLAGS_FIELD_NUMBER: _ClassVar[int]
    id: str
    message_id: str
    claim_key: str
    claim_text: str
    claim_type: CitationClaimType
    confidence_level: ConfidenceLevel
    position_start: int
    position_end: int
    support: SupportTier
    spec_verdict: _common_pb2.Verdict
    verification_reasoning: str
    abstained: bool
    citations: _containers.RepeatedCompositeFieldContainer[CitationLink]
    corrections: _containers.RepeatedCompositeFieldContainer[CitationCorrection]
    numeric_detail: NumericDetail
    created_at: _timestamp_pb2.Timestamp
    spec_type: _common_pb2.ClaimType
    audit_flags: _containers.RepeatedCompositeFieldContainer[_common_pb2.AuditFlag]
    def __init__(self, id: _Optional[str] = ..., message_id: _Optional[str] = ..., claim_key: _Optional[str] = ..., claim_text: _Optional[str] = ..., claim_type: _Optional[_Union[CitationClaimType, str]] = ..., confidence_level: _Optional[_Union[ConfidenceLevel, str]] = ..., position_start: _Optional[int] = ..., position_end: _Optional[int] = ..., support: _Optional[_Union[SupportTier, str]] = ..., spec_verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., verification_reasoning: _Optional[str] = ..., abstained: _Optional[bool] = ..., citations: _Optional[_Iterable[_Union[CitationLink, _Mapping]]] = ..., corrections: _Optional[_Iterable[_Union[CitationCorrection, _Mapping]]] = ..., numeric_detail: _Optional[_Union[NumericDetail, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., spec_type: _Optional[_Union[_common_pb2.ClaimType, str]] = ..., audit_flags: _Optional[_Iterable[_Union[_common_pb2.AuditFlag, _Mapping]]] = ...) -> None: ...

class VerificationSummary(_message.Message):
    __slots__ = ("total_claims", "supported", "partial", "unsupported", "contradicted", "abstained_count", "unsupported_rate", "contradicted_rate", "warning", "citation_corrections")
    TOTAL_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    SUPPORTED_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTED_FIELD_NUMBER: _ClassVar[int]
    ABSTAINED_COUNT_FIELD_NUMBER: _ClassVar[int]
    UNSUPPORTED_RATE_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTED_RATE_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    CITATION_CORRECTIONS_FIELD_NUMBER: _ClassVar[int]
    total_claims: int
    supported: int
    partial: int
    unsupported: int
    contradicted: int
    abstained_count: int
    unsupported_rate: float
    contradicted_rate: float
    warning: bool
    citation_corrections: int
    def __init__(self, total_claims: _Optional[int] = ..., supported: _Optional[int] = ..., partial: _Optional[int] = ..., unsupported: _Optional[int] = ..., contradicted: _Optional[int] = ..., abstained_count: _Optional[int] = ..., unsupported_rate: _Optional[float] = ..., contradicted_rate: _Optional[float] = ..., warning: _Optional[bool] = ..., citation_corrections: _Optional[int] = ...) -> None: ...

class CitationsResult(_message.Message):
    __slots__ = ("claims", "summary")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[ClaimRecord]
    summary: VerificationSummary
    def __init__(self, claims: _Optional[_Iterable[_Union[ClaimRecord, _Mapping]]] = ..., summary: _Optional[_Union[VerificationSummary, _Mapping]] = ...) -> None: ...

class ClaimVerifiedPayload(_message.Message):
    __slots__ = ("claim_id", "claim_key", "claim_text", "position_start", "position_end", "verdict", "confidence_level", "evidence_preview", "reasoning", "abstained", "spec_verdict")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_KEY_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TEXT_FIELD_NUMBER: _ClassVar[int]
    POSITION_START_FIELD_NUMBER: _ClassVar[int]
    POSITION_END_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_PREVIEW_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    ABSTAINED_FIELD_NUMBER: _ClassVar[int]
    SPEC_VERDICT_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    claim_key: str
    claim_text: str
    position_start: int
    position_end: int
    verdict: SupportTier
    confidence_level: ConfidenceLevel
    evidence_preview: str
    reasoning: str
    abstained: bool
    spec_verdict: _common_pb2.Verdict
    def __init__(self, claim_id: _Optional[str] = ..., claim_key: _Optional[str] = ..., claim_text: _Optional[str] = ..., position_start: _Optional[int] = ..., position_end: _Optional[int] = ..., verdict: _Optional[_Union[SupportTier, str]] = ..., confidence_level: _Optional[_Union[ConfidenceLevel, str]] = ..., evidence_preview: _Optional[str] = ..., reasoning: _Optional[str] = ..., abstained: _Optional[bool] = ..., spec_verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ...) -> None: ...

class NumericClaimDetectedPayload(_message.Message):
    __slots__ = ("claim_id", "raw_value", "normalized_value", "unit", "derivation_type", "qa_verified", "entity_reference")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    RAW_VALUE_FIELD_NUMBER: _ClassVar[int]
    NORMALIZED_VALUE_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    DERIVATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    QA_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    ENTITY_REFERENCE_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    raw_value: str
    normalized_value: float
    unit: str
    derivation_type: DerivationType
    qa_verified: bool
    entity_reference: str
    def __init__(self, claim_id: _Optional[str] = ..., raw_value: _Optional[str] = ..., normalized_value: _Optional[float] = ..., unit: _Optional[str] = ..., derivation_type: _Optional[_Union[DerivationType, str]] = ..., qa_verified: _Optional[bool] = ..., entity_reference: _Optional[str] = ...) -> None: ...

class CitationCorrectedPayload(_message.Message):
    __slots__ = ("claim_id", "correction_type", "reasoning", "index", "original_evidence", "corrected_evidence", "claim_abstained")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_TYPE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ABSTAINED_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    correction_type: CorrectionType
    reasoning: str
    index: int
    original_evidence: EvidenceSpan
    corrected_evidence: EvidenceSpan
    claim_abstained: bool
    def __init__(self, claim_id: _Optional[str] = ..., correction_type: _Optional[_Union[CorrectionType, str]] = ..., reasoning: _Optional[str] = ..., index: _Optional[int] = ..., original_evidence: _Optional[_Union[EvidenceSpan, _Mapping]] = ..., corrected_evidence: _Optional[_Union[EvidenceSpan, _Mapping]] = ..., claim_abstained: _Optional[bool] = ...) -> None: ...

class VerificationSummaryPayload(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: VerificationSummary
    def __init__(self, summary: _Optional[_Union[VerificationSummary, _Mapping]] = ...) -> None: ...

class ReviewClaim(_message.Message):
    __slots__ = ("claim", "confidence_level", "support", "cited_span_ids", "numeric")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_FIELD_NUMBER: _ClassVar[int]
    CITED_SPAN_IDS_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_FIELD_NUMBER: _ClassVar[int]
    claim: _common_pb2.Claim
    confidence_level: ConfidenceLevel
    support: SupportTier
    cited_span_ids: _containers.RepeatedScalarFieldContainer[str]
    numeric: NumericDetail
    def __init__(self, claim: _Optional[_Union[_common_pb2.Claim, _Mapping]] = ..., confidence_level: _Optional[_Union[ConfidenceLevel, str]] = ..., support: _Optional[_Union[SupportTier, str]] = ..., cited_span_ids: _Optional[_Iterable[str]] = ..., numeric: _Optional[_Union[NumericDetail, _Mapping]] = ...) -> None: ...

class PoolSpan(_message.Message):
    __slots__ = ("id", "source_id", "source_title", "text")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_id: str
    source_title: str
    text: str
    def __init__(self, id: _Optional[str] = ..., source_id: _Optional[str] = ..., source_title: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ReviewCitationsRequest(_message.Message):
    __slots__ = ("model", "claims", "pool")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    model: str
    claims: _containers.RepeatedCompositeFieldContainer[ReviewClaim]
    pool: _containers.RepeatedCompositeFieldContainer[PoolSpan]
    def __init__(self, model: _Optional[str] = ..., claims: _Optional[_Iterable[_Union[ReviewClaim, _Mapping]]] = ..., pool: _Optional[_Iterable[_Union[PoolSpan, _Mapping]]] = ...) -> None: ...

class ReviewedCorrection(_message.Message):
    __slots__ = ("claim_id", "correction_type", "original_span_id", "corrected_span_id", "corrected_quote", "reasoning")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_TYPE_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    CORRECTED_QUOTE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    correction_type: CorrectionType
    original_span_id: str
    corrected_span_id: str
    corrected_quote: str
    reasoning: str
    def __init__(self, claim_id: _Optional[str] = ..., correction_type: _Optional[_Union[CorrectionType, str]] = ..., original_span_id: _Optional[str] = ..., corrected_span_id: _Optional[str] = ..., corrected_quote: _Optional[str] = ..., reasoning: _Optional[str] = ...) -> None: ...

class ReviewedQuestion(_message.Message):
    __slots__ = ("claim_id", "question", "claim_answer", "evidence_answer", "span_id")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ANSWER_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_ANSWER_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    question: str
    claim_answer: str
    evidence_answer: str
    span_id: str
    def __init__(self, claim_id: _Optional[str] = ..., question: _Optional[str] = ..., claim_answer: _Optional[str] = ..., evidence_answer: _Optional[str] = ..., span_id: _Optional[str] = ...) -> None: ...

class ReviewCitationsResponse(_message.Message):
    __slots__ = ("model", "raw_text", "corrections", "questions", "response_time_ms", "usage", "dropped")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    CORRECTIONS_FIELD_NUMBER: _ClassVar[int]
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    model: str
    raw_text: str
    corrections: _containers.RepeatedCompositeFieldContainer[ReviewedCorrection]
    questions: _containers.RepeatedCompositeFieldContainer[ReviewedQuestion]
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    dropped: int
    def __init__(self, model: _Optional[str] = ..., raw_text: _Optional[str] = ..., corrections: _Optional[_Iterable[_Union[ReviewedCorrection, _Mapping]]] = ..., questions: _Optional[_Iterable[_Union[ReviewedQuestion, _Mapping]]] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., dropped: _Optional[int] = ...) -> None: ...

class ListClaimsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "message_id", "support", "spec_verdict", "claim_type", "numeric", "warning", "source_id", "created_after", "created_before", "confidence_level")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_FIELD_NUMBER: _ClassVar[int]
    SPEC_VERDICT_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TYPE_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_FIELD_NUMBER: _ClassVar[int]
    WARNING_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    message_id: str
    support: SupportTier
    spec_verdict: _common_pb2.Verdict
    claim_type: CitationClaimType
    numeric: bool
    warning: bool
    source_id: str
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    confidence_level: ConfidenceLevel
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., message_id: _Optional[str] = ..., support: _Optional[_Union[SupportTier, str]] = ..., spec_verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., claim_type: _Optional[_Union[CitationClaimType, str]] = ..., numeric: _Optional[bool] = ..., warning: _Optional[bool] = ..., source_id: _Optional[str] = ..., created_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., confidence_level: _Optional[_Union[ConfidenceLevel, str]] = ...) -> None: ...

class ListClaimsResponse(_message.Message):
    __slots__ = ("claims", "next_page_token")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[ClaimRecord]
    next_page_token: str
    def __init__(self, claims: _Optional[_Iterable[_Union[ClaimRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetClaimRequest(_message.Message):
    __slots__ = ("claim_id",)
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    def __init__(self, claim_id: _Optional[str] = ...) -> None: ...

class GetClaimResponse(_message.Message):
    __slots__ = ("claim",)
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    claim: ClaimRecord
    def __init__(self, claim: _Optional[_Union[ClaimRecord, _Mapping]] = ...) -> None: ...
