import datetime

from factcheck.v1 import common_pb2 as _common_pb2
from factcheck.v1 import usage_pb2 as _usage_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EvaluationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVALUATION_STATUS_UNSPECIFIED: _ClassVar[EvaluationStatus]
    EVALUATION_STATUS_RUNNING: _ClassVar[EvaluationStatus]
    EVALUATION_STATUS_COMPLETE: _ClassVar[EvaluationStatus]
    EVALUATION_STATUS_PARTIAL: _ClassVar[EvaluationStatus]
    EVALUATION_STATUS_FAILED: _ClassVar[EvaluationStatus]
    EVALUATION_STATUS_CANCELLED: _ClassVar[EvaluationStatus]

class ThresholdCriterion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    THRESHOLD_CRITERION_UNSPECIFIED: _ClassVar[ThresholdCriterion]
    THRESHOLD_CRITERION_BALANCED_ACCURACY: _ClassVar[ThresholdCriterion]

class Consensus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONSENSUS_UNSPECIFIED: _ClassVar[Consensus]
    CONSENSUS_MAJORITY: _ClassVar[Consensus]
    CONSENSUS_WEIGHTED: _ClassVar[Consensus]

class ConsensusFallback(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONSENSUS_FALLBACK_UNSPECIFIED: _ClassVar[ConsensusFallback]
    CONSENSUS_FALLBACK_NO_EVALUATION: _ClassVar[ConsensusFallback]
    CONSENSUS_FALLBACK_EVALUATION_UNUSABLE: _ClassVar[ConsensusFallback]
EVALUATION_STATUS_UNSPECIFIED: EvaluationStatus
EVALUATION_STATUS_RUNNING: EvaluationStatus
EVALUATION_STATUS_COMPLETE: EvaluationStatus
EVALUATION_STATUS_PARTIAL: EvaluationStatus
EVALUATION_STATUS_FAILED: EvaluationStatus
EVALUATION_STATUS_CANCELLED: EvaluationStatus
THRESHOLD_CRITERION_UNSPECIFIED: ThresholdCriterion
THRESHOLD_CRITERION_BALANCED_ACCURACY: ThresholdCriterion
CONSENSUS_UNSPECIFIED: Consensus
CONSENSUS_MAJORITY: Consensus
CONSENSUS_WEIGHTED: Consensus
CONSENSUS_FALLBACK_UNSPECIFIED: ConsensusFallback
CONSENSUS_FALLBACK_NO_EVALUATION: ConsensusFallback
CONSENSUS_FALLBACK_EVALUATION_UNUSABLE: ConsensusFallback

class LabelledEvidence(_message.Message):
    __slots__ = ("title", "text")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    title: str
    text: str
    def __init__(self, title: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class LabelledClaim(_message.Message):
    __slots__ = ("id", "claim", "evidence", "label")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    id: str
    claim: str
    evidence: _containers.RepeatedCompositeFieldContainer[LabelledEvidence]
    label: _common_pb2.Verdict
    def __init__(self, id: _Optional[str] = ..., claim: _Optional[str] = ..., evidence: _Optional[_Iterable[_Union[LabelledEvidence, _Mapping]]] = ..., label: _Optional[_Union[_common_pb2.Verdict, str]] = ...) -> None: ...

class CustomEvaluationSet(_message.Message):
    __slots__ = ("name", "items")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    name: str
    items: _containers.RepeatedCompositeFieldContainer[LabelledClaim]
    def __init__(self, name: _Optional[str] = ..., items: _Optional[_Iterable[_Union[LabelledClaim, _Mapping]]] = ...) -> None: ...

class EvaluationConfig(_message.Message):
    __slots__ = ("checker_models", "sets", "custom_sets", "limit", "seed", "budget", "use_cache", "concurrency", "fit_thresholds", "threshold_evaluation_id")
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_SETS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    USE_CACHE_FIELD_NUMBER: _ClassVar[int]
    CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    FIT_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    sets: _containers.RepeatedScalarFieldContainer[str]
    custom_sets: _containers.RepeatedCompositeFieldContainer[CustomEvaluationSet]
    limit: int
    seed: int
    budget: _usage_pb2.RunBudget
    use_cache: bool
    concurrency: int
    fit_thresholds: bool
    threshold_evaluation_id: str
    def __init__(self, checker_models: _Optional[_Iterable[str]] = ..., sets: _Optional[_Iterable[str]] = ..., custom_sets: _Optional[_Iterable[_Union[CustomEvaluationSet, _Mapping]]] = ..., limit: _Optional[int] = ..., seed: _Optional[int] = ..., budget: _Optional[_Union[_usage_pb2.RunBudget, _Mapping]] = ..., use_cache: _Optional[bool] = ..., concurrency: _Optional[int] = ..., fit_thresholds: _Optional[bool] = ..., threshold_evaluation_id: _Optional[str] = ...) -> None: ...

class RunEvaluationRequest(_message.Message):
    __slots__ = ("config",)
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    config: EvaluationConfig
    def __init__(self, config: _Optional[_Union[EvaluationConfig, _Mapping]] = ...) -> None: ...

class RunEvaluationResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: EvaluationEvent
    def __init__(self, event: _Optional[_Union[EvaluationEvent, _Mapping]] = ...) -> None: ...

class ResumeEvaluationRequest(_message.Message):
    __slots__ = ("evaluation_id", "budget")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    budget: _usage_pb2.RunBudget
    def __init__(self, evaluation_id: _Optional[str] = ..., budget: _Optional[_Union[_usage_pb2.RunBudget, _Mapping]] = ...) -> None: ...

class ResumeEvaluationResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: EvaluationEvent
    def __init__(self, event: _Optional[_Union[EvaluationEvent, _Mapping]] = ...) -> None: ...

class EvaluationEvent(_message.Message):
    __slots__ = ("evaluation_id", "timestamp", "seq", "started", "progress", "score", "finished")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    timestamp: _timestamp_pb2.Timestamp
    seq: int
    started: EvaluationStartedPayload
    progress: EvaluationProgressPayload
    score: CheckerScore
    finished: Evaluation
    def __init__(self, evaluation_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seq: _Optional[int] = ..., started: _Optional[_Union[EvaluationStartedPayload, _Mapping]] = ..., progress: _Optional[_Union[EvaluationProgressPayload, _Mapping]] = ..., score: _Optional[_Union[CheckerScore, _Mapping]] = ..., finished: _Optional[_Union[Evaluation, _Mapping]] = ...) -> None: ...

class EvaluationStartedPayload(_message.Message):
    __slots__ = ("checker_models", "sets", "total", "done")
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    sets: _containers.RepeatedCompositeFieldContainer[EvaluationSetSummary]
    total: int
    done: int
    def __init__(self, checker_models: _Optional[_Iterable[str]] = ..., sets: _Optional[_Iterable[_Union[EvaluationSetSummary, _Mapping]]] = ..., total: _Optional[int] = ..., done: _Optional[int] = ...) -> None: ...

class EvaluationProgressPayload(_message.Message):
    __slots__ = ("done", "total", "checker_model", "set", "item_id", "verdict", "label", "cached", "unreadable", "failed")
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    done: int
    total: int
    checker_model: str
    set: str
    item_id: str
    verdict: _common_pb2.Verdict
    label: _common_pb2.Verdict
    cached: bool
    unreadable: bool
    failed: bool
    def __init__(self, done: _Optional[int] = ..., total: _Optional[int] = ..., checker_model: _Optional[str] = ..., set: _Optional[str] = ..., item_id: _Optional[str] = ..., verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., label: _Optional[_Union[_common_pb2.Verdict, str]] = ..., cached: _Optional[bool] = ..., unreadable: _Optional[bool] = ..., failed: _Optional[bool] = ...) -> None: ...

class EvaluationSetSummary(_message.Message):
    __slots__ = ("name", "custom", "items", "available")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    name: str
    custom: bool
    items: int
    available: int
    def __init__(self, name: _Optional[str] = ..., custom: _Optional[bool] = ..., items: _Optional[int] = ..., available: _Optional[int] = ...) -> None: ...

class Evaluation(_message.Message):
    __slots__ = ("evaluation_id", "status", "checker_models", "sets", "limit", "seed", "scores", "done", "total", "usage", "created_at", "updated_at", "error_message", "headlines", "last_seq", "fit_thresholds", "fitted_thresholds", "threshold_evaluation_id", "checker_thresholds")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    HEADLINES_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    FIT_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    FITTED_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKER_THRESHOLDS_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    status: EvaluationStatus
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    sets: _containers.RepeatedCompositeFieldContainer[EvaluationSetSummary]
    limit: int
    seed: int
    scores: _containers.RepeatedCompositeFieldContainer[CheckerScore]
    done: int
    total: int
    usage: _usage_pb2.RunUsage
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    error_message: str
    headlines: _containers.RepeatedCompositeFieldContainer[ScoreHeadline]
    last_seq: int
    fit_thresholds: bool
    fitted_thresholds: _containers.RepeatedCompositeFieldContainer[FittedThreshold]
    threshold_evaluation_id: str
    checker_thresholds: _containers.RepeatedCompositeFieldContainer[CheckerThreshold]
    def __init__(self, evaluation_id: _Optional[str] = ..., status: _Optional[_Union[EvaluationStatus, str]] = ..., checker_models: _Optional[_Iterable[str]] = ..., sets: _Optional[_Iterable[_Union[EvaluationSetSummary, _Mapping]]] = ..., limit: _Optional[int] = ..., seed: _Optional[int] = ..., scores: _Optional[_Iterable[_Union[CheckerScore, _Mapping]]] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., error_message: _Optional[str] = ..., headlines: _Optional[_Iterable[_Union[ScoreHeadline, _Mapping]]] = ..., last_seq: _Optional[int] = ..., fit_thresholds: _Optional[bool] = ..., fitted_thresholds: _Optional[_Iterable[_Union[FittedThreshold, _Mapping]]] = ..., threshold_evaluation_id: _Optional[str] = ..., checker_thresholds: _Optional[_Iterable[_Union[CheckerThreshold, _Mapping]]] = ...) -> None: ...

class FittedThreshold(_message.Message):
    __slots__ = ("checker_model", "set", "threshold", "criterion", "balanced_accuracy", "evaluated_threshold", "evaluated_balanced_accuracy", "items", "verified_items", "fixed_items", "candidates", "error")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    CRITERION_FIELD_NUMBER: _ClassVar[int]
    BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    EVALUATED_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    EVALUATED_BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    VERIFIED_ITEMS_FIELD_NUMBER: _ClassVar[int]
    FIXED_ITEMS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    threshold: float
    criterion: ThresholdCriterion
    balanced_accuracy: float
    evaluated_threshold: float
    evaluated_balanced_accuracy: float
    items: int
    verified_items: int
    fixed_items: int
    candidates: int
    error: str
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., threshold: _Optional[float] = ..., criterion: _Optional[_Union[ThresholdCriterion, str]] = ..., balanced_accuracy: _Optional[float] = ..., evaluated_threshold: _Optional[float] = ..., evaluated_balanced_accuracy: _Optional[float] = ..., items: _Optional[int] = ..., verified_items: _Optional[int] = ..., fixed_items: _Optional[int] = ..., candidates: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class CheckerThreshold(_message.Message):
    __slots__ = ("checker_model", "threshold", "evaluation_id", "fitted_on")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    FITTED_ON_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    threshold: float
    evaluation_id: str
    fitted_on: str
    def __init__(self, checker_model: _Optional[str] = ..., threshold: _Optional[float] = ..., evaluation_id: _Optional[str] = ..., fitted_on: _Optional[str] = ...) -> None: ...

class ScoreHeadline(_message.Message):
    __slots__ = ("checker_model", "set", "items", "total", "balanced_accuracy", "failed")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    items: int
    total: int
    balanced_accuracy: float
    failed: int
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., items: _Optional[int] = ..., total: _Optional[int] = ..., balanced_accuracy: _Optional[float] = ..., failed: _Optional[int] = ...) -> None: ...

class CheckerScore(_message.Message):
    __slots__ = ("checker_model", "set", "items", "total", "balanced_accuracy", "accuracy", "verdicts", "confusion", "expected_calibration_error", "calibration", "disputed_rate_on_supported", "unreadable_rate", "latency", "usage", "cached", "failed")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    ACCURACY_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    CONFUSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CALIBRATION_ERROR_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_FIELD_NUMBER: _ClassVar[int]
    DISPUTED_RATE_ON_SUPPORTED_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_RATE_FIELD_NUMBER: _ClassVar[int]
    LATENCY_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    items: int
    total: int
    balanced_accuracy: float
    accuracy: float
    verdicts: _containers.RepeatedCompositeFieldContainer[VerdictScore]
    confusion: _containers.RepeatedScalarFieldContainer[int]
    expected_calibration_error: float
    calibration: _containers.RepeatedCompositeFieldContainer[CalibrationBin]
    disputed_rate_on_supported: float
    unreadable_rate: float
    latency: LatencyPercentiles
    usage: _usage_pb2.RunUsage
    cached: int
    failed: int
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., items: _Optional[int] = ..., total: _Optional[int] = ..., balanced_accuracy: _Optional[float] = ..., accuracy: _Optional[float] = ..., verdicts: _Optional[_Iterable[_Union[VerdictScore, _Mapping]]] = ..., confusion: _Optional[_Iterable[int]] = ..., expected_calibration_error: _Optional[float] = ..., calibration: _Optional[_Iterable[_Union[CalibrationBin, _Mapping]]] = ..., disputed_rate_on_supported: _Optional[float] = ..., unreadable_rate: _Optional[float] = ..., latency: _Optional[_Union[LatencyPercentiles, _Mapping]] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ..., cached: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class VerdictScore(_message.Message):
    __slots__ = ("verdict", "precision", "recall", "support", "predicted")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    RECALL_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_FIELD_NUMBER: _ClassVar[int]
    verdict: _common_pb2.Verdict
    precision: float
    recall: float
    support: int
    predicted: int
    def __init__(self, verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., precision: _Optional[float] = ..., recall: _Optional[float] = ..., support: _Optional[int] = ..., predicted: _Optional[int] = ...) -> None: ...

class CalibrationBin(_message.Message):
    __slots__ = ("confidence", "stated", "observed", "count")
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    STATED_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    confidence: _common_pb2.Confidence
    stated: float
    observed: float
    count: int
    def __init__(self, confidence: _Optional[_Union[_common_pb2.Confidence, str]] = ..., stated: _Optional[float] = ..., observed: _Optional[float] = ..., count: _Optional[int] = ...) -> None: ...

class LatencyPercentiles(_message.Message):
    __slots__ = ("p50", "p90", "p95", "p99", "max", "count")
    P50_FIELD_NUMBER: _ClassVar[int]
    P90_FIELD_NUMBER: _ClassVar[int]
    P95_FIELD_NUMBER: _ClassVar[int]
    P99_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    p50: int
    p90: int
    p95: int
    p99: int
    max: int
    count: int
    def __init__(self, p50: _Optional[int] = ..., p90: _Optional[int] = ..., p95: _Optional[int] = ..., p99: _Optional[int] = ..., max: _Optional[int] = ..., count: _Optional[int] = ...) -> None: ...

class CancelEvaluationRequest(_message.Message):
    __slots__ = ("evaluation_id",)
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    def __init__(self, evaluation_id: _Optional[str] = ...) -> None: ...

class CancelEvaluationResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: EvaluationStatus
    def __init__(self, status: _Optional[_Union[EvaluationStatus, str]] = ...) -> None: ...

class GetEvaluationRequest(_message.Message):
    __slots__ = ("evaluation_id",)
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    def __init__(self, evaluation_id: _Optional[str] = ...) -> None: ...

class GetEvaluationResponse(_message.Message):
    __slots__ = ("evaluation",)
    EVALUATION_FIELD_NUMBER: _ClassVar[int]
    evaluation: Evaluation
    def __init__(self, evaluation: _Optional[_Union[Evaluation, _Mapping]] = ...) -> None: ...

class ListEvaluationsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEvaluationsResponse(_message.Message):
    __slots__ = ("evaluations", "next_page_token")
    EVALUATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    evaluations: _containers.RepeatedCompositeFieldContainer[Evaluation]
    next_page_token: str
    def __init__(self, evaluations: _Optional[_Iterable[_Union[Evaluation, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WatchEvaluationRequest(_message.Message):
    __slots__ = ("evaluation_id", "after_seq")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    after_seq: int
    def __init__(self, evaluation_id: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchEvaluationResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: EvaluationEvent
    def __init__(self, event: _Optional[_Union[EvaluationEvent, _Mapping]] = ...) -> None: ...

class ListEvaluationItemsRequest(_message.Message):
    __slots__ = ("evaluation_id", "page_size", "page_token", "checker_model", "set", "label", "wrong_only", "failed_only")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    WRONG_ONLY_FIELD_NUMBER: _ClassVar[int]
    FAILED_ONLY_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    page_size: int
    page_token: str
    checker_model: str
    set: str
    label: _common_pb2.Verdict
    wrong_only: bool
    failed_only: bool
    def __init__(self, evaluation_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., checker_model: _Optional[str] = ..., set: _Optional[str] = ..., label: _Optional[_Union[_common_pb2.Verdict, str]] = ..., wrong_only: _Optional[bool] = ..., failed_only: _Optional[bool] = ...) -> None: ...

class ListEvaluationItemsResponse(_message.Message):
    __slots__ = ("items", "next_page_token")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[EvaluationItem]
    next_page_token: str
    def __init__(self, items: _Optional[_Iterable[_Union[EvaluationItem, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class EvaluationItem(_message.Message):
    __slots__ = ("checker_model", "set", "item_id", "claim", "label", "verdict", "confidence", "correct", "unreadable", "failed", "error", "answer", "correction", "latency_ms", "cached", "usage", "evidence_passages", "created_at", "support_probability", "support_threshold")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECT_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_PASSAGES_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    item_id: str
    claim: str
    label: _common_pb2.Verdict
    verdict: _common_pb2.Verdict
    confidence: _common_pb2.Confidence
    correct: bool
    unreadable: bool
    failed: bool
    error: str
    answer: str
    correction: str
    latency_ms: int
    cached: bool
    usage: _usage_pb2.RunUsage
    evidence_passages: int
    created_at: _timestamp_pb2.Timestamp
    support_probability: float
    support_threshold: float
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., item_id: _Optional[str] = ..., claim: _Optional[str] = ..., label: _Optional[_Union[_common_pb2.Verdict, str]] = ..., verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., confidence: _Optional[_Union[_common_pb2.Confidence, str]] = ..., correct: _Optional[bool] = ..., unreadable: _Optional[bool] = ..., failed: _Optional[bool] = ..., error: _Optional[str] = ..., answer: _Optional[str] = ..., correction: _Optional[str] = ..., latency_ms: _Optional[int] = ..., cached: _Optional[bool] = ..., usage: _Optional[_Union[_usage_pb2.RunUsage, _Mapping]] = ..., evidence_passages: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., support_probability: _Optional[float] = ..., support_threshold: _Optional[float] = ...) -> None: ...

class CompareEvaluationsRequest(_message.Message):
    __slots__ = ("evaluation_id", "other_evaluation_id", "max_disagreements")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    OTHER_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_DISAGREEMENTS_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    other_evaluation_id: str
    max_disagreements: int
    def __init__(self, evaluation_id: _Optional[str] = ..., other_evaluation_id: _Optional[str] = ..., max_disagreements: _Optional[int] = ...) -> None: ...

class CompareEvaluationsResponse(_message.Message):
    __slots__ = ("evaluation_id", "other_evaluation_id", "comparisons", "disagreements", "resamples")
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    OTHER_EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    COMPARISONS_FIELD_NUMBER: _ClassVar[int]
    DISAGREEMENTS_FIELD_NUMBER: _ClassVar[int]
    RESAMPLES_FIELD_NUMBER: _ClassVar[int]
    evaluation_id: str
    other_evaluation_id: str
    comparisons: _containers.RepeatedCompositeFieldContainer[ScoreComparison]
    disagreements: _containers.RepeatedCompositeFieldContainer[ItemDisagreement]
    resamples: int
    def __init__(self, evaluation_id: _Optional[str] = ..., other_evaluation_id: _Optional[str] = ..., comparisons: _Optional[_Iterable[_Union[ScoreComparison, _Mapping]]] = ..., disagreements: _Optional[_Iterable[_Union[ItemDisagreement, _Mapping]]] = ..., resamples: _Optional[int] = ...) -> None: ...

class ScoreComparison(_message.Message):
    __slots__ = ("checker_model", "set", "shared_items", "balanced_accuracy", "other_balanced_accuracy", "difference", "difference_low", "difference_high", "disagreements")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    SHARED_ITEMS_FIELD_NUMBER: _ClassVar[int]
    BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    OTHER_BALANCED_ACCURACY_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCE_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCE_LOW_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCE_HIGH_FIELD_NUMBER: _ClassVar[int]
    DISAGREEMENTS_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    shared_items: int
    balanced_accuracy: float
    other_balanced_accuracy: float
    difference: float
    difference_low: float
    difference_high: float
    disagreements: int
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., shared_items: _Optional[int] = ..., balanced_accuracy: _Optional[float] = ..., other_balanced_accuracy: _Optional[float] = ..., difference: _Optional[float] = ..., difference_low: _Optional[float] = ..., difference_high: _Optional[float] = ..., disagreements: _Optional[int] = ...) -> None: ...

class ItemDisagreement(_message.Message):
    __slots__ = ("checker_model", "set", "item_id", "claim", "label", "verdict", "other_verdict")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    SET_FIELD_NUMBER: _ClassVar[int]
    ITEM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    OTHER_VERDICT_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    set: str
    item_id: str
    claim: str
    label: _common_pb2.Verdict
    verdict: _common_pb2.Verdict
    other_verdict: _common_pb2.Verdict
    def __init__(self, checker_model: _Optional[str] = ..., set: _Optional[str] = ..., item_id: _Optional[str] = ..., claim: _Optional[str] = ..., label: _Optional[_Union[_common_pb2.Verdict, str]] = ..., verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ..., other_verdict: _Optional[_Union[_common_pb2.Verdict, str]] = ...) -> None: ...

class ListEvaluationSetsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListEvaluationSetsResponse(_message.Message):
    __slots__ = ("sets",)
    SETS_FIELD_NUMBER: _ClassVar[int]
    sets: _containers.RepeatedCompositeFieldContainer[EvaluationSet]
    def __init__(self, sets: _Optional[_Iterable[_Union[EvaluationSet, _Mapping]]] = ...) -> None: ...

class EvaluationSet(_message.Message):
    __slots__ = ("name", "title", "description", "licence", "items", "dev_items", "test_items")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    LICENCE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    DEV_ITEMS_FIELD_NUMBER: _ClassVar[int]
    TEST_ITEMS_FIELD_NUMBER: _ClassVar[int]
    name: str
    title: str
    description: str
    licence: str
    items: int
    dev_items: int
    test_items: int
    def __init__(self, name: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., licence: _Optional[str] = ..., items: _Optional[int] = ..., dev_items: _Optional[int] = ..., test_items: _Optional[int] = ...) -> None: ...

class ConsensusWeighting(_message.Message):
    __slots__ = ("requested", "used", "evaluation_id", "checkers", "note", "fallback")
    REQUESTED_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKERS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    requested: Consensus
    used: Consensus
    evaluation_id: str
    checkers: _containers.RepeatedCompositeFieldContainer[CheckerReliability]
    note: str
    fallback: ConsensusFallback
    def __init__(self, requested: _Optional[_Union[Consensus, str]] = ..., used: _Optional[_Union[Consensus, str]] = ..., evaluation_id: _Optional[str] = ..., checkers: _Optional[_Iterable[_Union[CheckerReliability, _Mapping]]] = ..., note: _Optional[str] = ..., fallback: _Optional[_Union[ConsensusFallback, str]] = ...) -> None: ...

class CheckerReliability(_message.Message):
    __slots__ = ("checker_model", "items", "verdict_given_label", "verdict_weights", "unmeasured_verdicts")
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    VERDICT_GIVEN_LABEL_FIELD_NUMBER: _ClassVar[int]
    VERDICT_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    UNMEASURED_VERDICTS_FIELD_NUMBER: _ClassVar[int]
    checker_model: str
    items: int
    verdict_given_label: _containers.RepeatedScalarFieldContainer[float]
    verdict_weights: _containers.RepeatedScalarFieldContainer[float]
    unmeasured_verdicts: _containers.RepeatedScalarFieldContainer[_common_pb2.Verdict]
    def __init__(self, checker_model: _Optional[str] = ..., items: _Optional[int] = ..., verdict_given_label: _Optional[_Iterable[float]] = ..., verdict_weights: _Optional[_Iterable[float]] = ..., unmeasured_verdicts: _Optional[_Iterable[_Union[_common_pb2.Verdict, str]]] = ...) -> None: ...
