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

class DubiousFlag(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DUBIOUS_FLAG_UNSPECIFIED: _ClassVar[DubiousFlag]
    DUBIOUS_FLAG_PHANTOM: _ClassVar[DubiousFlag]
    DUBIOUS_FLAG_FOG: _ClassVar[DubiousFlag]
    DUBIOUS_FLAG_ANOMALY: _ClassVar[DubiousFlag]
    DUBIOUS_FLAG_NOISE: _ClassVar[DubiousFlag]

class ImpactTier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IMPACT_TIER_UNSPECIFIED: _ClassVar[ImpactTier]
    IMPACT_TIER_CRITICAL: _ClassVar[ImpactTier]
    IMPACT_TIER_LESS_CRITICAL: _ClassVar[ImpactTier]

class InvestigationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INVESTIGATION_STATUS_UNSPECIFIED: _ClassVar[InvestigationStatus]
    INVESTIGATION_STATUS_CONFIRMED: _ClassVar[InvestigationStatus]
    INVESTIGATION_STATUS_REFUTED: _ClassVar[InvestigationStatus]
    INVESTIGATION_STATUS_SUPERSEDED: _ClassVar[InvestigationStatus]
    INVESTIGATION_STATUS_UNVERIFIABLE: _ClassVar[InvestigationStatus]

class EvidenceStance(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVIDENCE_STANCE_UNSPECIFIED: _ClassVar[EvidenceStance]
    EVIDENCE_STANCE_SUPPORTS: _ClassVar[EvidenceStance]
    EVIDENCE_STANCE_REFUTES: _ClassVar[EvidenceStance]
    EVIDENCE_STANCE_IRRELEVANT: _ClassVar[EvidenceStance]

class ReviewState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REVIEW_STATE_UNSPECIFIED: _ClassVar[ReviewState]
    REVIEW_STATE_NOT_REQUIRED: _ClassVar[ReviewState]
    REVIEW_STATE_PENDING: _ClassVar[ReviewState]
    REVIEW_STATE_APPROVED: _ClassVar[ReviewState]
    REVIEW_STATE_REJECTED: _ClassVar[ReviewState]
    REVIEW_STATE_MODIFIED: _ClassVar[ReviewState]

class ReviewDecision(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REVIEW_DECISION_UNSPECIFIED: _ClassVar[ReviewDecision]
    REVIEW_DECISION_APPROVE: _ClassVar[ReviewDecision]
    REVIEW_DECISION_REJECT: _ClassVar[ReviewDecision]
    REVIEW_DECISION_MODIFY: _ClassVar[ReviewDecision]

class ContradictionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTRADICTION_KIND_UNSPECIFIED: _ClassVar[ContradictionKind]
    CONTRADICTION_KIND_TEMPORAL: _ClassVar[ContradictionKind]
    CONTRADICTION_KIND_FACTUAL: _ClassVar[ContradictionKind]

class ContradictionRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTRADICTION_ROLE_UNSPECIFIED: _ClassVar[ContradictionRole]
    CONTRADICTION_ROLE_WINNER: _ClassVar[ContradictionRole]
    CONTRADICTION_ROLE_LOSER: _ClassVar[ContradictionRole]
DUBIOUS_FLAG_UNSPECIFIED: DubiousFlag
DUBIOUS_FLAG_PHANTOM: DubiousFlag
DUBIOUS_FLAG_FOG: DubiousFlag
DUBIOUS_FLAG_ANOMALY: DubiousFlag
DUBIOUS_FLAG_NOISE: DubiousFlag
IMPACT_TIER_UNSPECIFIED: ImpactTier
IMPACT_TIER_CRITICAL: ImpactTier
IMPACT_TIER_LESS_CRITICAL: ImpactTier
INVESTIGATION_STATUS_UNSPECIFIED: InvestigationStatus
INVESTIGATION_STATUS_CONFIRMED: InvestigationStatus
INVESTIGATION_STATUS_REFUTED: InvestigationStatus
INVESTIGATION_STATUS_SUPERSEDED: InvestigationStatus
INVESTIGATION_STATUS_UNVERIFIABLE: InvestigationStatus
EVIDENCE_STANCE_UNSPECIFIED: EvidenceStance
EVIDENCE_STANCE_SUPPORTS: EvidenceStance
EVIDENCE_STANCE_REFUTES: EvidenceStance
EVIDENCE_STANCE_IRRELEVANT: EvidenceStance
REVIEW_STATE_UNSPECIFIED: ReviewState
REVIEW_STATE_NOT_REQUIRED: ReviewState
REVIEW_STATE_PENDING: ReviewState
REVIEW_STATE_APPROVED: ReviewState
REVIEW_STATE_REJECTED: ReviewState
REVIEW_STATE_MODIFIED: ReviewState
REVIEW_DECISION_UNSPECIFIED: ReviewDecision
REVIEW_DECISION_APPROVE: ReviewDecision
REVIEW_DECISION_REJECT: ReviewDecision
REVIEW_DECISION_MODIFY: ReviewDecision
CONTRADICTION_KIND_UNSPECIFIED: ContradictionKind
CONTRADICTION_KIND_TEMPORAL: ContradictionKind
CONTRADICTION_KIND_FACTUAL: ContradictionKind
CONTRADICTION_ROLE_UNSPECIFIED: ContradictionRole
CONTRADICTION_ROLE_WINNER: ContradictionRole
CONTRADICTION_ROLE_LOSER: ContradictionRole

class AssessEvidenceRequest(_message.Message):
    __slots__ = ("model", "claim", "results")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    model: str
    claim: _common_pb2.Claim
    results: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    def __init__(self, model: _Optional[str] = ..., claim: _Optional[_Union[_common_pb2.Claim, _Mapping]] = ..., results: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ...) -> None: ...

class EvidenceAssessment(_message.Message):
    __slots__ = ("result_id", "stance", "temporal", "reason")
    RESULT_ID_FIELD_NUMBER: _ClassVar[int]
    STANCE_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    result_id: str
    stance: EvidenceStance
    temporal: bool
    reason: str
    def __init__(self, result_id: _Optional[str] = ..., stance: _Optional[_Union[EvidenceStance, str]] = ..., temporal: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class AssessEvidenceResponse(_message.Message):
    __slots__ = ("model", "raw_text", "assessments", "response_time_ms", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    ASSESSMENTS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    raw_text: str
    assessments: _containers.RepeatedCompositeFieldContainer[EvidenceAssessment]
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    def __init__(self, model: _Optional[str] = ..., raw_text: _Optional[str] = ..., assessments: _Optional[_Iterable[_Union[EvidenceAssessment, _Mapping]]] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...

class QueuedClaim(_message.Message):
    __slots__ = ("claim_id", "flags", "impact_tier", "fixability", "priority")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    IMPACT_TIER_FIELD_NUMBER: _ClassVar[int]
    FIXABILITY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    flags: _containers.RepeatedScalarFieldContainer[DubiousFlag]
    impact_tier: ImpactTier
    fixability: float
    priority: float
    def __init__(self, claim_id: _Optional[str] = ..., flags: _Optional[_Iterable[_Union[DubiousFlag, str]]] = ..., impact_tier: _Optional[_Union[ImpactTier, str]] = ..., fixability: _Optional[float] = ..., priority: _Optional[float] = ...) -> None: ...

class InvestigationStartPayload(_message.Message):
    __slots__ = ("queue", "batch_size", "providers", "investigator_model")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    queue: _containers.RepeatedCompositeFieldContainer[QueuedClaim]
    batch_size: int
    providers: _containers.RepeatedScalarFieldContainer[str]
    investigator_model: str
    def __init__(self, queue: _Optional[_Iterable[_Union[QueuedClaim, _Mapping]]] = ..., batch_size: _Optional[int] = ..., providers: _Optional[_Iterable[str]] = ..., investigator_model: _Optional[str] = ...) -> None: ...

class ClaimInvestigatedPayload(_message.Message):
    __slots__ = ("claim_id", "claim", "origin_flags", "status", "reasoning", "confidence", "impact_tier", "pending_review", "succeeded_variant", "searches", "model_calls", "batch", "dropped_results", "reassessed_impact_tier", "contradictions")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FLAGS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    IMPACT_TIER_FIELD_NUMBER: _ClassVar[int]
    PENDING_REVIEW_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    DROPPED_RESULTS_FIELD_NUMBER: _ClassVar[int]
    REASSESSED_IMPACT_TIER_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTIONS_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    claim: str
    origin_flags: _containers.RepeatedScalarFieldContainer[DubiousFlag]
    status: InvestigationStatus
    reasoning: str
    confidence: float
    impact_tier: ImpactTier
    pending_review: bool
    succeeded_variant: str
    searches: int
    model_calls: int
    batch: int
    dropped_results: int
    reassessed_impact_tier: ImpactTier
    contradictions: _containers.RepeatedCompositeFieldContainer[ContradictionLink]
    def __init__(self, claim_id: _Optional[str] = ..., claim: _Optional[str] = ..., origin_flags: _Optional[_Iterable[_Union[DubiousFlag, str]]] = ..., status: _Optional[_Union[InvestigationStatus, str]] = ..., reasoning: _Optional[str] = ..., confidence: _Optional[float] = ..., impact_tier: _Optional[_Union[ImpactTier, str]] = ..., pending_review: _Optional[bool] = ..., succeeded_variant: _Optional[str] = ..., searches: _Optional[int] = ..., model_calls: _Optional[int] = ..., batch: _Optional[int] = ..., dropped_results: _Optional[int] = ..., reassessed_impact_tier: _Optional[_Union[ImpactTier, str]] = ..., contradictions: _Optional[_Iterable[_Union[ContradictionLink, _Mapping]]] = ...) -> None: ...

class InvestigationSummary(_message.Message):
    __slots__ = ("investigated", "confirmed", "refuted", "superseded", "unverifiable", "pending_review", "searches", "model_calls", "batches", "failed", "dropped_results")
    INVESTIGATED_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_FIELD_NUMBER: _ClassVar[int]
    REFUTED_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    UNVERIFIABLE_FIELD_NUMBER: _ClassVar[int]
    PENDING_REVIEW_FIELD_NUMBER: _ClassVar[int]
    SEARCHES_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    DROPPED_RESULTS_FIELD_NUMBER: _ClassVar[int]
    investigated: int
    confirmed: int
    refuted: int
    superseded: int
    unverifiable: int
    pending_review: int
    searches: int
    model_calls: int
    batches: int
    failed: int
    dropped_results: int
    def __init__(self, investigated: _Optional[int] = ..., confirmed: _Optional[int] = ..., refuted: _Optional[int] = ..., superseded: _Optional[int] = ..., unverifiable: _Optional[int] = ..., pending_review: _Optional[int] = ..., searches: _Optional[int] = ..., model_calls: _Optional[int] = ..., batches: _Optional[int] = ..., failed: _Optional[int] = ..., dropped_results: _Optional[int] = ...) -> None: ...

class InvestigationCompletePayload(_message.Message):
    __slots__ = ("summary", "response_time_ms")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    summary: InvestigationSummary
    response_time_ms: int
    def __init__(self, summary: _Optional[_Union[InvestigationSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class ReviewDecidedPayload(_message.Message):
    __slots__ = ("claim_id", "state", "status", "reason")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    state: ReviewState
    status: InvestigationStatus
    reason: str
    def __init__(self, claim_id: _Optional[str] = ..., state: _Optional[_Union[ReviewState, str]] = ..., status: _Optional[_Union[InvestigationStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class ConfidenceBoost(_message.Message):
    __slots__ = ("source", "authority", "boost")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    BOOST_FIELD_NUMBER: _ClassVar[int]
    source: str
    authority: float
    boost: float
    def __init__(self, source: _Optional[str] = ..., authority: _Optional[float] = ..., boost: _Optional[float] = ...) -> None: ...

class InvestigationQuery(_message.Message):
    __slots__ = ("variant", "query", "result_ids", "dropped_results")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESULT_IDS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_RESULTS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    query: str
    result_ids: _containers.RepeatedScalarFieldContainer[str]
    dropped_results: int
    def __init__(self, variant: _Optional[str] = ..., query: _Optional[str] = ..., result_ids: _Optional[_Iterable[str]] = ..., dropped_results: _Optional[int] = ...) -> None: ...

class ContradictionLink(_message.Message):
    __slots__ = ("claim_id", "role", "kind", "reasoning")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    role: ContradictionRole
    kind: ContradictionKind
    reasoning: str
    def __init__(self, claim_id: _Optional[str] = ..., role: _Optional[_Union[ContradictionRole, str]] = ..., kind: _Optional[_Union[ContradictionKind, str]] = ..., reasoning: _Optional[str] = ...) -> None: ...

class AssessedEvidence(_message.Message):
    __slots__ = ("result", "stance", "temporal", "reason", "domain", "owner", "independent", "provider")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    STANCE_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    INDEPENDENT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.Passage
    stance: EvidenceStance
    temporal: bool
    reason: str
    domain: str
    owner: str
    independent: bool
    provider: str
    def __init__(self, result: _Optional[_Union[_common_pb2.Passage, _Mapping]] = ..., stance: _Optional[_Union[EvidenceStance, str]] = ..., temporal: _Optional[bool] = ..., reason: _Optional[str] = ..., domain: _Optional[str] = ..., owner: _Optional[str] = ..., independent: _Optional[bool] = ..., provider: _Optional[str] = ...) -> None: ...

class InvestigatedClaim(_message.Message):
    __slots__ = ("claim_id", "claim", "origin_flags", "impact_tier", "fixability", "priority", "first_pass_verdict", "proposed_status", "status", "reasoning", "base_confidence", "confidence", "confidence_breakdown", "succeeded_variant", "queries", "evidence", "review_state", "review_reason", "reassessed_impact_tier", "impact_reasoning", "contradictions")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FLAGS_FIELD_NUMBER: _ClassVar[int]
    IMPACT_TIER_FIELD_NUMBER: _ClassVar[int]
    FIXABILITY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    FIRST_PASS_VERDICT_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    BASE_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_VARIANT_FIELD_NUMBER: _ClassVar[int]
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    REVIEW_STATE_FIELD_NUMBER: _ClassVar[int]
    REVIEW_REASON_FIELD_NUMBER: _ClassVar[int]
    REASSESSED_IMPACT_TIER_FIELD_NUMBER: _ClassVar[int]
    IMPACT_REASONING_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTIONS_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    claim: str
    origin_flags: _containers.RepeatedScalarFieldContainer[DubiousFlag]
    impact_tier: ImpactTier
    fixability: float
    priority: float
    first_pass_verdict: _common_pb2.Verdict
    proposed_status: InvestigationStatus
    status: InvestigationStatus
    reasoning: str
    base_confidence: float
    confidence: float
    confidence_breakdown: _containers.RepeatedCompositeFieldContainer[ConfidenceBoost]
    succeeded_variant: str
    queries: _containers.RepeatedCompositeFieldContainer[InvestigationQuery]
    evidence: _containers.RepeatedCompositeFieldContainer[AssessedEvidence]
    review_state: ReviewState
    review_reason: str
    reassessed_impact_tier: ImpactTier
    impact_reasoning: str
    contradictions: _containers.RepeatedCompositeFieldContainer[ContradictionLink]
    def __init__(self, claim_id: _Optional[str] = ..., claim: _Optional[str] = ..., origin_flags: _Optional[_Iterable[_Union[DubiousFlag, str]]] = ..., impact_tier: _Optional[_Union[ImpactTier, str]] = ..., fixability: _Optional[float] = ..., priority: _Optional[float] = ..., first_pass_verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., proposed_status: _Optional[_Union[InvestigationStatus, str]] = ..., status: _Optional[_Union[InvestigationStatus, str]] = ..., reasoning: _Optional[str] = ..., base_confidence: _Optional[float] = ..., confidence: _Optional[float] = ..., confidence_breakdown: _Optional[_Iterable[_Union[ConfidenceBoost, _Mapping]]] = ..., succeeded_variant: _Optional[str] = ..., queries: _Optional[_Iterable[_Union[InvestigationQuery, _Mapping]]] = ..., evidence: _Optional[_Iterable[_Union[AssessedEvidence, _Mapping]]] = ..., review_state: _Optional[_Union[ReviewState, str]] = ..., review_reason: _Optional[str] = ..., reassessed_impact_tier: _Optional[_Union[ImpactTier, str]] = ..., impact_reasoning: _Optional[str] = ..., contradictions: _Optional[_Iterable[_Union[ContradictionLink, _Mapping]]] = ...) -> None: ...

class InvestigationResult(_message.Message):
    __slots__ = ("claims", "summary", "response_time_ms", "investigator_model")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[InvestigatedClaim]
    summary: InvestigationSummary
    response_time_ms: int
    investigator_model: str
    def __init__(self, claims: _Optional[_Iterable[_Union[InvestigatedClaim, _Mapping]]] = ..., summary: _Optional[_Union[InvestigationSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., investigator_model: _Optional[str] = ...) -> None: ...

class Review(_message.Message):
    __slots__ = ("message_id", "claim_id", "claim", "origin_flags", "proposed_status", "confidence", "reasoning", "state", "status", "reason", "created_at", "decided_at")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FLAGS_FIELD_NUMBER: _ClassVar[int]
    PROPOSED_STATUS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    claim_id: str
    claim: str
    origin_flags: _containers.RepeatedScalarFieldContainer[DubiousFlag]
    proposed_status: InvestigationStatus
    confidence: float
    reasoning: str
    state: ReviewState
    status: InvestigationStatus
    reason: str
    created_at: _timestamp_pb2.Timestamp
    decided_at: _timestamp_pb2.Timestamp
    def __init__(self, message_id: _Optional[str] = ..., claim_id: _Optional[str] = ..., claim: _Optional[str] = ..., origin_flags: _Optional[_Iterable[_Union[DubiousFlag, str]]] = ..., proposed_status: _Optional[_Union[InvestigationStatus, str]] = ..., confidence: _Optional[float] = ..., reasoning: _Optional[str] = ..., state: _Optional[_Union[ReviewState, str]] = ..., status: _Optional[_Union[InvestigationStatus, str]] = ..., reason: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., decided_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListReviewsRequest(_message.Message):
    __slots__ = ("message_id", "include_decided", "page_size", "page_token")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DECIDED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    include_decided: bool
    page_size: int
    page_token: str
    def __init__(self, message_id: _Optional[str] = ..., include_decided: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListReviewsResponse(_message.Message):
    __slots__ = ("reviews", "next_page_token")
    REVIEWS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    reviews: _containers.RepeatedCompositeFieldContainer[Review]
    next_page_token: str
    def __init__(self, reviews: _Optional[_Iterable[_Union[Review, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DecideReviewRequest(_message.Message):
    __slots__ = ("message_id", "claim_id", "decision", "reason", "status")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    claim_id: str
    decision: ReviewDecision
    reason: str
    status: InvestigationStatus
    def __init__(self, message_id: _Optional[str] = ..., claim_id: _Optional[str] = ..., decision: _Optional[_Union[ReviewDecision, str]] = ..., reason: _Optional[str] = ..., status: _Optional[_Union[InvestigationStatus, str]] = ...) -> None: ...

class DecideReviewResponse(_message.Message):
    __slots__ = ("review",)
    REVIEW_FIELD_NUMBER: _ClassVar[int]
    review: Review
    def __init__(self, review: _Optional[_Union[Review, _Mapping]] = ...) -> None: ...
