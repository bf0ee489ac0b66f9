import datetime

from factcheck.v1 import citations_pb2 as _citations_pb2
from factcheck.v1 import common_pb2 as _common_pb2
from factcheck.v1 import council_pb2 as _council_pb2
from factcheck.v1 import entailment_pb2 as _entailment_pb2
from factcheck.v1 import evaluation_pb2 as _evaluation_pb2
from factcheck.v1 import investigation_pb2 as _investigation_pb2
from factcheck.v1 import usage_pb2 as _usage_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Mode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODE_UNSPECIFIED: _ClassVar[Mode]
    MODE_FACT_CHECK: _ClassVar[Mode]
    MODE_COUNCIL: _ClassVar[Mode]
    MODE_ENTAILMENT: _ClassVar[Mode]

class ContentSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTENT_SOURCE_UNSPECIFIED: _ClassVar[ContentSource]
    CONTENT_SOURCE_GENERATED: _ClassVar[ContentSource]
    CONTENT_SOURCE_USER_PROVIDED: _ClassVar[ContentSource]

class MessageStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MESSAGE_STATUS_UNSPECIFIED: _ClassVar[MessageStatus]
    MESSAGE_STATUS_RUNNING: _ClassVar[MessageStatus]
    MESSAGE_STATUS_COMPLETE: _ClassVar[MessageStatus]
    MESSAGE_STATUS_PARTIAL: _ClassVar[MessageStatus]
    MESSAGE_STATUS_FAILED: _ClassVar[MessageStatus]
    MESSAGE_STATUS_CANCELLED: _ClassVar[MessageStatus]
MODE_UNSPECIFIED: Mode
MODE_FACT_CHECK: Mode
MODE_COUNCIL: Mode
MODE_ENTAILMENT: Mode
CONTENT_SOURCE_UNSPECIFIED: ContentSource
CONTENT_SOURCE_GENERATED: ContentSource
CONTENT_SOURCE_USER_PROVIDED: ContentSource
MESSAGE_STATUS_UNSPECIFIED: MessageStatus
MESSAGE_STATUS_RUNNING: MessageStatus
MESSAGE_STATUS_COMPLETE: MessageStatus
MESSAGE_STATUS_PARTIAL: MessageStatus
MESSAGE_STATUS_FAILED: MessageStatus
MESSAGE_STATUS_CANCELLED: MessageStatus

class FactCheckConfig(_message.Message):
    __slots__ = ("content_to_check", "generator_model", "extractor_model", "checker_models", "reporter_model", "max_content_length", "timeout_ms", "sources", "use_knowledge_store", "evidence_top_k", "pipelined", "checker_strategy", "citations", "citation_review_model", "investigate", "investigate_batch_size", "investigator_model", "use_cache", "consensus", "consensus_evaluation_id", "threshold_evaluation_id")
    CONTENT_TO_CHECK_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    REPORTER_MODEL_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    USE_KNOWLEDGE_STORE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_TOP_K_FIELD_NUMBER: _ClassVar[int]
    PIPELINED_FIELD_NUMBER: _ClassVar[int]
    CHECKER_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CITATION_REVIEW_MODEL_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATE_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATE_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    USE_CACHE_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    content_to_check: str
    generator_model: str
    extractor_model: str
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    reporter_model: str
    max_content_length: int
    timeout_ms: int
    sources: _containers.RepeatedCompositeFieldContainer[_common_pb2.Source]
    use_knowledge_store: bool
    evidence_top_k: int
    pipelined: bool
    checker_strategy: _entailment_pb2.CheckerStrategy
    citations: bool
    citation_review_model: str
    investigate: bool
    investigate_batch_size: int
    investigator_model: str
    use_cache: bool
    consensus: _evaluation_pb2.Consensus
    consensus_evaluation_id: str
    threshold_evaluation_id: str
    def __init__(self, content_to_check: _Optional[str] = ..., generator_model: _Optional[str] = ..., extractor_model: _Optional[str] = ..., checker_models: _Optional[_Iterable[str]] = ..., reporter_model: _Optional[str] = ..., max_content_length: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[_common_pb2.Source, _Mapping]]] = ..., use_knowledge_store: _Optional[bool] = ..., evidence_top_k: _Optional[int] = ..., pipelined: _Optional[bool] = ..., checker_strategy: _Optional[_Union[_entailment_pb2.CheckerStrategy, str]] = ..., citations: _Optional[bool] = ..., citation_review_model: _Optional[str] = ..., investigate: _Optional[bool] = ..., investigate_batch_size: _Optional[int] = ..., investigator_model: _Optional[str] = ..., use_cache: _Optional[bool] = ..., consensus: _Optional[_Union[_evaluation_pb2.Consensus, str]] = ..., consensus_evaluation_id: _Optional[str] = ..., threshold_evaluation_id: _Optional[str] = ...) -> None: ...

class RunRequest(_message.Message):
    __slots__ = ("question", "mode", "conversation_id", "mode_config", "request_id", "council_config", "entailment_config", "budget")
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_CONFIG_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_CONFIG_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_CONFIG_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    question: str
    mode: Mode
    conversation_id: str
    mode_config: FactCheckConfig
    request_id: str
    council_config: _council_pb2.CouncilConfig
    entailment_config: _entailment_pb2.EntailmentConfig
    budget: _usage_pb2.RunBudget
    def __init__(self, question: _Optional[str] = ..., mode: _Optional[_Union[Mode, str]] = ..., conversation_id: _Optional[str] = ..., mode_config: _Optional[_Union[FactCheckConfig, _Mapping]] = ..., request_id: _Optional[str] = ..., council_config: _Optional[_Union[_council_pb2.CouncilConfig, _Mapping]] = ..., entailment_config: _Optional[_Union[_entailment_pb2.EntailmentConfig, _Mapping]] = ..., budget: _Optional[_Union[_usage_pb2.RunBudget, _Mapping]] = ...) -> None: ...

class RunResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: FactCheckEvent
    def __init__(self, event: _Optional[_Union[FactCheckEvent, _Mapping]] = ...) -> None: ...

class FactCheckEvent(_message.Message):
    __slots__ = ("message_id", "seq", "timestamp", "factcheck_start", "generate_start", "generate_complete", "extract_start", "extract_complete", "evidence_retrieved", "verify_start", "checker_complete", "all_checkers_complete", "report_start", "report_complete", "title_complete", "complete", "error", "cancelled", "claims_extracted", "checker_batch_complete", "respond_start", "response_complete", "response_failed", "responses_anonymised", "council_check_start", "council_check_complete", "council_check_failed", "council_aggregate_complete", "synthesis_start", "synthesis_complete", "entailment_start", "entailment_agent_complete", "entailment_agent_failed", "entailment_item_complete", "entailment_item_failed", "entailment_complete", "claim_verified", "numeric_claim_detected", "citation_corrected", "verification_summary", "investigation_start", "claim_investigated", "investigation_complete", "review_decided")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    FACTCHECK_START_FIELD_NUMBER: _ClassVar[int]
    GENERATE_START_FIELD_NUMBER: _ClassVar[int]
    GENERATE_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    EXTRACT_START_FIELD_NUMBER: _ClassVar[int]
    EXTRACT_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_RETRIEVED_FIELD_NUMBER: _ClassVar[int]
    VERIFY_START_FIELD_NUMBER: _ClassVar[int]
    CHECKER_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ALL_CHECKERS_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    REPORT_START_FIELD_NUMBER: _ClassVar[int]
    REPORT_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    TITLE_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_EXTRACTED_FIELD_NUMBER: _ClassVar[int]
    CHECKER_BATCH_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    RESPOND_START_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FAILED_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_ANONYMISED_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_CHECK_START_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_CHECK_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_CHECK_FAILED_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_AGGREGATE_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIS_START_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIS_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_START_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_AGENT_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_AGENT_FAILED_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_ITEM_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_ITEM_FAILED_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    CLAIM_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    NUMERIC_CLAIM_DETECTED_FIELD_NUMBER: _ClassVar[int]
    CITATION_CORRECTED_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATION_START_FIELD_NUMBER: _ClassVar[int]
    CLAIM_INVESTIGATED_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATION_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    REVIEW_DECIDED_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    seq: int
    timestamp: _timestamp_pb2.Timestamp
    factcheck_start: FactCheckStartPayload
    generate_start: GenerateStartPayload
    generate_complete: GenerateCompletePayload
    extract_start: ExtractStartPayload
    extract_complete: ExtractCompletePayload
    evidence_retrieved: EvidenceRetrievedPayload
    verify_start: VerifyStartPayload
    checker_complete: CheckerCompletePayload
    all_checkers_complete: AllCheckersCompletePayload
    report_start: ReportStartPayload
    report_complete: ReportCompletePayload
    title_complete: TitleCompletePayload
    complete: CompletePayload
    error: ErrorPayload
    cancelled: CancelledPayload
    claims_extracted: ClaimsExtractedPayload
    checker_batch_complete: CheckerBatchCompletePayload
    respond_start: _council_pb2.RespondStartPayload
    response_complete: _council_pb2.ResponseCompletePayload
    response_failed: _council_pb2.ResponseFailedPayload
    responses_anonymised: _council_pb2.ResponsesAnonymisedPayload
    council_check_start: _council_pb2.CouncilCheckStartPayload
    council_check_complete: _council_pb2.CouncilCheckCompletePayload
    council_check_failed: _council_pb2.CouncilCheckFailedPayload
    council_aggregate_complete: _council_pb2.CouncilAggregateCompletePayload
    synthesis_start: _council_pb2.SynthesisStartPayload
    synthesis_complete: _council_pb2.SynthesisCompletePayload
    entailment_start: _entailment_pb2.EntailmentStartPayload
    entailment_agent_complete: _entailment_pb2.EntailmentAgentCompletePayload
    entailment_agent_failed: _entailment_pb2.EntailmentAgentFailedPayload
    entailment_item_complete: _entailment_pb2.EntailmentItemCompletePayload
    entailment_item_failed: _entailment_pb2.EntailmentItemFailedPayload
    entailment_complete: _entailment_pb2.EntailmentCompletePayload
    claim_verified: _citations_pb2.ClaimVerifiedPayload
    numeric_claim_detected: _citations_pb2.NumericClaimDetectedPayload
    citation_corrected: _citations_pb2.CitationCorrectedPayload
    verification_summary: _citations_pb2.VerificationSummaryPayload
    investigation_start: _investigation_pb2.InvestigationStartPayload
    claim_investigated: _investigation_pb2.ClaimInvestigatedPayload
    investigation_complete: _investigation_pb2.InvestigationCompletePayload
    review_decided: _investigation_pb2.ReviewDecidedPayload
    def __init__(self, message_id: _Optional[str] = ..., seq: _Optional[int] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., factcheck_start: _Optional[_Union[FactCheckStartPayload, _Mapping]] = ..., generate_start: _Optional[_Union[GenerateStartPayload, _Mapping]] = ..., generate_complete: _Optional[_Union[GenerateCompletePayload, _Mapping]] = ..., extract_start: _Optional[_Union[ExtractStartPayload, _Mapping]] = ..., extract_complete: _Optional[_Union[ExtractCompletePayload, _Mapping]] = ..., evidence_retrieved: _Optional[_Union[EvidenceRetrievedPayload, _Mapping]] = ..., verify_start: _Optional[_Union[VerifyStartPayload, _Mapping]] = ..., checker_complete: _Optional[_Union[CheckerCompletePayload, _Mapping]] = ..., all_checkers_complete: _Optional[_Union[AllCheckersCompletePayload, _Mapping]] = ..., report_start: _Optional[_Union[ReportStartPayload, _Mapping]] = ..., report_complete: _Optional[_Union[ReportCompletePayload, _Mapping]] = ..., title_complete: _Optional[_Union[TitleCompletePayload, _Mapping]] = ..., complete: _Optional[_Union[CompletePayload, _Mapping]] = ..., error: _Optional[_Union[ErrorPayload, _Mapping]] = ..., cancelled: _Optional[_Union[CancelledPayload, _Mapping]] = ..., claims_extracted: _Optional[_Union[ClaimsExtractedPayload, _Mapping]] = ..., checker_batch_complete: _Optional[_Union[CheckerBatchCompletePayload, _Mapping]] = ..., respond_start: _Optional[_Union[_council_pb2.RespondStartPayload, _Mapping]] = ..., response_complete: _Optional[_Union[_council_pb2.ResponseCompletePayload, _Mapping]] = ..., response_failed: _Optional[_Union[_council_pb2.ResponseFailedPayload, _Mapping]] = ..., responses_anonymised: _Optional[_Union[_council_pb2.ResponsesAnonymisedPayload, _Mapping]] = ..., council_check_start: _Optional[_Union[_council_pb2.CouncilCheckStartPayload, _Mapping]] = ..., council_check_complete: _Optional[_Union[_council_pb2.CouncilCheckCompletePayload, _Mapping]] = ..., council_check_failed: _Optional[_Union[_council_pb2.CouncilCheckFailedPayload, _Mapping]] = ..., council_aggregate_complete: _Optional[_Union[_council_pb2.CouncilAggregateCompletePayload, _Mapping]] = ..., synthesis_start: _Optional[_Union[_council_pb2.SynthesisStartPayload, _Mapping]] = ..., synthesis_complete: _Optional[_Union[_council_pb2.SynthesisCompletePayload, _Mapping]] = ..., entailment_start: _Optional[_Union[_entailment_pb2.EntailmentStartPayload, _Mapping]] = ..., entailment_agent_complete: _Optional[_Union[_entailment_pb2.EntailmentAgentCompletePayload, _Mapping]] = ..., entailment_agent_failed: _Optional[_Union[_entailment_pb2.EntailmentAgentFailedPayload, _Mapping]] = ..., entailment_item_complete: _Optional[_Union[_entailment_pb2.EntailmentItemCompletePayload, _Mapping]] = ..., entailment_item_failed: _Optional[_Union[_entailment_pb2.EntailmentItemFailedPayload, _Mapping]] = ..., entailment_complete: _Optional[_Union[_entailment_pb2.EntailmentCompletePayload, _Mapping]] = ..., claim_verified: _Optional[_Union[_citations_pb2.ClaimVerifiedPayload, _Mapping]] = ..., numeric_claim_detected: _Optional[_Union[_citations_pb2.NumericClaimDetectedPayload, _Mapping]] = ..., citation_corrected: _Optional[_Union[_citations_pb2.CitationCorrectedPayload, _Mapping]] = ..., verification_summary: _Optional[_Union[_citations_pb2.VerificationSummaryPayload, _Mapping]] = ..., investigation_start: _Optional[_Union[_investigation_pb2.InvestigationStartPayload, _Mapping]] = ..., claim_investigated: _Optional[_Union[_investigation_pb2.ClaimInvestigatedPayload, _Mapping]] = ..., investigation_complete: _Optional[_Union[_investigation_pb2.InvestigationCompletePayload, _Mapping]] = ..., review_decided: _Optional[_Union[_investigation_pb2.ReviewDecidedPayload, _Mapping]] = ...) -> None: ...

class RunConfig(_message.Message):
    __slots__ = ("content_source", "generator_model", "extractor_model", "checker_models", "reporter_model", "bias_warning", "max_content_length", "timeout_ms", "pipelined", "consensus", "consensus_evaluation_id", "threshold_evaluation_id")
    CONTENT_SOURCE_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    REPORTER_MODEL_FIELD_NUMBER: _ClassVar[int]
    BIAS_WARNING_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    PIPELINED_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    content_source: ContentSource
    generator_model: str
    extractor_model: str
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    reporter_model: str
    bias_warning: str
    max_content_length: int
    timeout_ms: int
    pipelined: bool
    consensus: _evaluation_pb2.Consensus
    consensus_evaluation_id: str
    threshold_evaluation_id: str
    def __init__(self, content_source: _Optional[_Union[ContentSource, str]] = ..., generator_model: _Optional[str] = ..., extractor_model: _Optional[str] = ..., checker_models: _Optional[_Iterable[str]] = ..., reporter_model: _Optional[str] = ..., bias_warning: _Optional[str] = ..., max_content_length: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., pipelined: _Optional[bool] = ..., consensus: _Optional[_Union[_evaluation_pb2.Consensus, str]] = ..., consensus_evaluation_id: _Optional[str] = ..., threshold_evaluation_id: _Optional[str] = ...) -> None: ...

class FactCheckStartPayload(_message.Message):
    __slots__ = ("conversation_id", "message_id", "config", "mode", "council", "entailment")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    message_id: str
    config: RunConfig
    mode: Mode
    council: _council_pb2.CouncilRunConfig
    entailment: _entailment_pb2.EntailmentRunConfig
    def __init__(self, conversation_id: _Optional[str] = ..., message_id: _Optional[str] = ..., config: _Optional[_Union[RunConfig, _Mapping]] = ..., mode: _Optional[_Union[Mode, str]] = ..., council: _Optional[_Union[_council_pb2.CouncilRunConfig, _Mapping]] = ..., entailment: _Optional[_Union[_entailment_pb2.EntailmentRunConfig, _Mapping]] = ...) -> None: ...

class GenerateStartPayload(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GenerateCompletePayload(_message.Message):
    __slots__ = ("model", "content", "response_time_ms", "fallback_to_question")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_TO_QUESTION_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    response_time_ms: int
    fallback_to_question: bool
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., fallback_to_question: _Optional[bool] = ...) -> None: ...

class ExtractStartPayload(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ExtractCompletePayload(_message.Message):
    __slots__ = ("model", "claims", "total_claims", "type_breakdown", "response_time_ms", "content_truncated")
    class TypeBreakdownEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    TYPE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    model: str
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    total_claims: int
    type_breakdown: _containers.ScalarMap[str, int]
    response_time_ms: int
    content_truncated: bool
    def __init__(self, model: _Optional[str] = ..., claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., total_claims: _Optional[int] = ..., type_breakdown: _Optional[_Mapping[str, int]] = ..., response_time_ms: _Optional[int] = ..., content_truncated: _Optional[bool] = ...) -> None: ...

class ClaimsExtractedPayload(_message.Message):
    __slots__ = ("claims", "batch", "total_claims")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    batch: int
    total_claims: int
    def __init__(self, claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., batch: _Optional[int] = ..., total_claims: _Optional[int] = ...) -> None: ...

class EvidenceRetrievedPayload(_message.Message):
    __slots__ = ("claims", "passages", "method", "response_time_ms")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimEvidence]
    passages: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    method: str
    response_time_ms: int
    def __init__(self, claims: _Optional[_Iterable[_Union[_common_pb2.ClaimEvidence, _Mapping]]] = ..., passages: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ..., method: _Optional[str] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class VerifyStartPayload(_message.Message):
    __slots__ = ("checker_count", "claim_count")
    CHECKER_COUNT_FIELD_NUMBER: _ClassVar[int]
    CLAIM_COUNT_FIELD_NUMBER: _ClassVar[int]
    checker_count: int
    claim_count: int
    def __init__(self, checker_count: _Optional[int] = ..., claim_count: _Optional[int] = ...) -> None: ...

class CheckerCompletePayload(_message.Message):
    __slots__ = ("model", "verifications", "summary", "response_time_ms", "checker_index", "dropped_citations")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    VERIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    DROPPED_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    model: str
    verifications: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimVerification]
    summary: _common_pb2.VerdictSummary
    response_time_ms: int
    checker_index: int
    dropped_citations: int
    def __init__(self, model: _Optional[str] = ..., verifications: _Optional[_Iterable[_Union[_common_pb2.ClaimVerification, _Mapping]]] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., checker_index: _Optional[int] = ..., dropped_citations: _Optional[int] = ...) -> None: ...

class CheckerBatchCompletePayload(_message.Message):
    __slots__ = ("model", "checker_index", "batch", "verifications", "summary", "response_time_ms", "dropped_citations")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    VERIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    model: str
    checker_index: int
    batch: int
    verifications: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimVerification]
    summary: _common_pb2.VerdictSummary
    response_time_ms: int
    dropped_citations: int
    def __init__(self, model: _Optional[str] = ..., checker_index: _Optional[int] = ..., batch: _Optional[int] = ..., verifications: _Optional[_Iterable[_Union[_common_pb2.ClaimVerification, _Mapping]]] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., dropped_citations: _Optional[int] = ...) -> None: ...

class CheckerFailure(_message.Message):
    __slots__ = ("model", "checker_index", "message")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    checker_index: int
    message: str
    def __init__(self, model: _Optional[str] = ..., checker_index: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class AllCheckersCompletePayload(_message.Message):
    __slots__ = ("consensus", "checker_count", "failed_checkers", "consensus_weighting")
    CONSENSUS_FIELD_NUMBER: _ClassVar[int]
    CHECKER_COUNT_FIELD_NUMBER: _ClassVar[int]
    FAILED_CHECKERS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_WEIGHTING_FIELD_NUMBER: _ClassVar[int]
    consensus: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimConsensus]
    checker_count: int
    failed_checkers: _containers.RepeatedCompositeFieldContainer[CheckerFailure]
    consensus_weighting: _evaluation_pb2.ConsensusWeighting
    def __init__(self, consensus: _Optional[_Iterable[_Union[_common_pb2.ClaimConsensus, _Mapping]]] = ..., checker_count: _Optional[int] = ..., failed_checkers: _Optional[_Iterable[_Union[CheckerFailure, _Mapping]]] = ..., consensus_weighting: _Optional[_Union[_evaluation_pb2.ConsensusWeighting, _Mapping]] = ...) -> None: ...

class ReportStartPayload(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReportSummary(_message.Message):
    __slots__ = ("verified", "disputed", "unverifiable", "note")
    VERIFIED_FIELD_NUMBER: _ClassVar[int]
    DISPUTED_FIELD_NUMBER: _ClassVar[int]
    UNVERIFIABLE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    verified: int
    disputed: int
    unverifiable: int
    note: str
    def __init__(self, verified: _Optional[int] = ..., disputed: _Optional[int] = ..., unverifiable: _Optional[int] = ..., note: _Optional[str] = ...) -> None: ...

class ReportCompletePayload(_message.Message):
    __slots__ = ("model", "reliability_score", "summary", "response_time_ms", "report_text", "fallback", "fallback_reason")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_SCORE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    REPORT_TEXT_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_REASON_FIELD_NUMBER: _ClassVar[int]
    model: str
    reliability_score: int
    summary: ReportSummary
    response_time_ms: int
    report_text: str
    fallback: bool
    fallback_reason: str
    def __init__(self, model: _Optional[str] = ..., reliability_score: _Optional[int] = ..., summary: _Optional[_Union[ReportSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., report_text: _Optional[str] = ..., fallback: _Optional[bool] = ..., fallback_reason: _Optional[str] = ...) -> None: ...

class TitleCompletePayload(_message.Message):
    __slots__ = ("title",)
    TITLE_FIELD_NUMBER: _ClassVar[int]
    title: str
    def __init__(self, title: _Optional[str] = ...) -> None: ...

class CompletePayload(_message.Message):
    __slots__ = ("status", "usage", "stop_reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    status: MessageStatus
    usage: _usage_pb2.RunUsage
    stop_reason: str
    def __init__(self, status: _Optional[_Union[MessageStatus, str]] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ..., stop_reason: _Optional[str] = ...) -> None: ...

class ErrorPayload(_message.Message):
    __slots__ = ("message", "failures")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    message: str
    failures: _containers.RepeatedCompositeFieldContainer[StageFailure]
    def __init__(self, message: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[StageFailure, _Mapping]]] = ...) -> None: ...

class StageFailure(_message.Message):
    __slots__ = ("stage", "model", "code", "message")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    stage: str
    model: str
    code: str
    message: str
    def __init__(self, stage: _Optional[str] = ..., model: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class CancelledPayload(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("message_id", "after_seq")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    after_seq: int
    def __init__(self, message_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: FactCheckEvent
    def __init__(self, event: _Optional[_Union[FactCheckEvent, _Mapping]] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("message_id",)
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    def __init__(self, message_id: _Optional[str] = ...) -> None: ...

class CancelResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: MessageStatus
    def __init__(self, status: _Optional[_Union[MessageStatus, str]] = ...) -> None: ...

class GetResultRequest(_message.Message):
    __slots__ = ("message_id",)
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    def __init__(self, message_id: _Optional[str] = ...) -> None: ...

class GetResultResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: FactCheckResult
    def __init__(self, result: _Optional[_Union[FactCheckResult, _Mapping]] = ...) -> None: ...

class ListResultsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "status", "mode")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    status: MessageStatus
    mode: Mode
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., status: _Optional[_Union[MessageStatus, str]] = ..., mode: _Optional[_Union[Mode, str]] = ...) -> None: ...

class ListResultsResponse(_message.Message):
    __slots__ = ("results", "next_page_token")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ResultSummary]
    next_page_token: str
    def __init__(self, results: _Optional[_Iterable[_Union[ResultSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ResultSummary(_message.Message):
    __slots__ = ("message_id", "conversation_id", "question", "title", "status", "created_at", "updated_at", "mode", "usage")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    question: str
    title: str
    status: MessageStatus
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    mode: Mode
    usage: _usage_pb2.RunUsage
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., question: _Optional[str] = ..., title: _Optional[str] = ..., status: _Optional[_Union[MessageStatus, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., mode: _Optional[_Union[Mode, str]] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ...) -> None: ...

class FactCheckResult(_message.Message):
    __slots__ = ("message_id", "conversation_id", "question", "status", "title", "content", "extraction", "verification", "report", "created_at", "updated_at", "evidence", "error_message", "failures", "request_id", "mode", "council", "entailment", "citations", "investigation", "usage")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_FIELD_NUMBER: _ClassVar[int]
    REPORT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    INVESTIGATION_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    conversation_id: str
    question: str
    status: MessageStatus
    title: str
    content: ContentResult
    extraction: ExtractionResult
    verification: VerificationResult
    report: ReportResult
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    evidence: EvidenceResult
    error_message: str
    failures: _containers.RepeatedCompositeFieldContainer[StageFailure]
    request_id: str
    mode: Mode
    council: _council_pb2.CouncilResult
    entailment: _entailment_pb2.EntailmentResult
    citations: _citations_pb2.CitationsResult
    investigation: _investigation_pb2.InvestigationResult
    usage: _usage_pb2.RunUsage
    def __init__(self, message_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., question: _Optional[str] = ..., status: _Optional[_Union[MessageStatus, str]] = ..., title: _Optional[str] = ..., content: _Optional[_Union[ContentResult, _Mapping]] = ..., extraction: _Optional[_Union[ExtractionResult, _Mapping]] = ..., verification: _Optional[_Union[VerificationResult, _Mapping]] = ..., report: _Optional[_Union[ReportResult, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., evidence: _Optional[_Union[EvidenceResult, _Mapping]] = ..., error_message: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[StageFailure, _Mapping]]] = ..., request_id: _Optional[str] = ..., mode: _Optional[_Union[Mode, str]] = ..., council: _Optional[_Union[_council_pb2.CouncilResult, _Mapping]] = ..., entailment: _Optional[_Union[_entailment_pb2.EntailmentResult, _Mapping]] = ..., citations: _Optional[_Union[_citations_pb2.CitationsResult, _Mapping]] = ..., investigation: _Optional[_Union[_investigation_pb2.InvestigationResult, _Mapping]] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ...) -> None: ...

class EvidenceResult(_message.Message):
    __slots__ = ("claims", "passages", "method", "response_time_ms")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimEvidence]
    passages: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    method: str
    response_time_ms: int
    def __init__(self, claims: _Optional[_Iterable[_Union[_common_pb2.ClaimEvidence, _Mapping]]] = ..., passages: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ..., method: _Optional[str] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class ContentResult(_message.Message):
    __slots__ = ("source", "model", "text", "response_time_ms")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    source: ContentSource
    model: str
    text: str
    response_time_ms: int
    def __init__(self, source: _Optional[_Union[ContentSource, str]] = ..., model: _Optional[str] = ..., text: _Optional[str] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class ExtractionResult(_message.Message):
    __slots__ = ("model", "claims", "type_breakdown", "response_time_ms")
    class TypeBreakdownEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    TYPE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    model: str
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    type_breakdown: _containers.ScalarMap[str, int]
    response_time_ms: int
    def __init__(self, model: _Optional[str] = ..., claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., type_breakdown: _Optional[_Mapping[str, int]] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class CheckerResult(_message.Message):
    __slots__ = ("model", "verifications", "summary", "response_time_ms", "threshold")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    VERIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    model: str
    verifications: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimVerification]
    summary: _common_pb2.VerdictSummary
    response_time_ms: int
    threshold: _evaluation_pb2.CheckerThreshold
    def __init__(self, model: _Optional[str] = ..., verifications: _Optional[_Iterable[_Union[_common_pb2.ClaimVerification, _Mapping]]] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., threshold: _Optional[_Union[_evaluation_pb2.CheckerThreshold, _Mapping]] = ...) -> None: ...

class VerificationResult(_message.Message):
    __slots__ = ("checkers", "consensus", "consensus_weighting")
    CHECKERS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_WEIGHTING_FIELD_NUMBER: _ClassVar[int]
    checkers: _containers.RepeatedCompositeFieldContainer[CheckerResult]
    consensus: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimConsensus]
    consensus_weighting: _evaluation_pb2.ConsensusWeighting
    def __init__(self, checkers: _Optional[_Iterable[_Union[CheckerResult, _Mapping]]] = ..., consensus: _Optional[_Iterable[_Union[_common_pb2.ClaimConsensus, _Mapping]]] = ..., consensus_weighting: _Optional[_Union[_evaluation_pb2.ConsensusWeighting, _Mapping]] = ...) -> None: ...

class ReportResult(_message.Message):
    __slots__ = ("model", "reliability_score", "report_text", "summary", "response_time_ms", "fallback", "fallback_reason")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_SCORE_FIELD_NUMBER: _ClassVar[int]
    REPORT_TEXT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_REASON_FIELD_NUMBER: _ClassVar[int]
    model: str
    reliability_score: int
    report_text: str
    summary: _common_pb2.VerdictSummary
    response_time_ms: int
    fallback: bool
    fallback_reason: str
    def __init__(self, model: _Optional[str] = ..., reliability_score: _Optional[int] = ..., report_text: _Optional[str] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., fallback: _Optional[bool] = ..., fallback_reason: _Optional[str] = ...) -> None: ...
