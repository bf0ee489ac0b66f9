from factcheck.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AccuracyRating(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACCURACY_RATING_UNSPECIFIED: _ClassVar[AccuracyRating]
    ACCURACY_RATING_ACCURATE: _ClassVar[AccuracyRating]
    ACCURACY_RATING_MOSTLY_ACCURATE: _ClassVar[AccuracyRating]
    ACCURACY_RATING_MIXED: _ClassVar[AccuracyRating]
    ACCURACY_RATING_MOSTLY_INACCURATE: _ClassVar[AccuracyRating]
    ACCURACY_RATING_INACCURATE: _ClassVar[AccuracyRating]

class ErrorType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_TYPE_UNSPECIFIED: _ClassVar[ErrorType]
    ERROR_TYPE_HALLUCINATED_FACT: _ClassVar[ErrorType]
    ERROR_TYPE_OUTDATED_INFORMATION: _ClassVar[ErrorType]
    ERROR_TYPE_NUMERICAL_ERROR: _ClassVar[ErrorType]
    ERROR_TYPE_MISATTRIBUTION: _ClassVar[ErrorType]
    ERROR_TYPE_OVERGENERALIZATION: _ClassVar[ErrorType]
    ERROR_TYPE_CONFLATION: _ClassVar[ErrorType]
    ERROR_TYPE_OMISSION_OF_CONTEXT: _ClassVar[ErrorType]
    ERROR_TYPE_LOGICAL_FALLACY: _ClassVar[ErrorType]
    ERROR_TYPE_OTHER: _ClassVar[ErrorType]
ACCURACY_RATING_UNSPECIFIED: AccuracyRating
ACCURACY_RATING_ACCURATE: AccuracyRating
ACCURACY_RATING_MOSTLY_ACCURATE: AccuracyRating
ACCURACY_RATING_MIXED: AccuracyRating
ACCURACY_RATING_MOSTLY_INACCURATE: AccuracyRating
ACCURACY_RATING_INACCURATE: AccuracyRating
ERROR_TYPE_UNSPECIFIED: ErrorType
ERROR_TYPE_HALLUCINATED_FACT: ErrorType
ERROR_TYPE_OUTDATED_INFORMATION: ErrorType
ERROR_TYPE_NUMERICAL_ERROR: ErrorType
ERROR_TYPE_MISATTRIBUTION: ErrorType
ERROR_TYPE_OVERGENERALIZATION: ErrorType
ERROR_TYPE_CONFLATION: ErrorType
ERROR_TYPE_OMISSION_OF_CONTEXT: ErrorType
ERROR_TYPE_LOGICAL_FALLACY: ErrorType
ERROR_TYPE_OTHER: ErrorType

class NamedResponse(_message.Message):
    __slots__ = ("name", "text")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    name: str
    text: str
    def __init__(self, name: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class CouncilConfig(_message.Message):
    __slots__ = ("council_models", "responses", "fact_checker_models", "chairman_model", "reporter_model", "timeout_ms", "exclude_self_ratings", "sources", "use_knowledge_store")
    COUNCIL_MODELS_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    FACT_CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    CHAIRMAN_MODEL_FIELD_NUMBER: _ClassVar[int]
    REPORTER_MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_SELF_RATINGS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    USE_KNOWLEDGE_STORE_FIELD_NUMBER: _ClassVar[int]
    council_models: _containers.RepeatedScalarFieldContainer[str]
    responses: _containers.RepeatedCompositeFieldContainer[NamedResponse]
    fact_checker_models: _containers.RepeatedScalarFieldContainer[str]
    chairman_model: str
    reporter_model: str
    timeout_ms: int
    exclude_self_ratings: bool
    sources: _containers.RepeatedCompositeFieldContainer[_common_pb2.Source]
    use_knowledge_store: bool
    def __init__(self, council_models: _Optional[_Iterable[str]] = ..., responses: _Optional[_Iterable[_Union[NamedResponse, _Mapping]]] = ..., fact_checker_models: _Optional[_Iterable[str]] = ..., chairman_model: _Optional[str] = ..., reporter_model: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., exclude_self_ratings: _Optional[bool] = ..., sources: _Optional[_Iterable[_Union[_common_pb2.Source, _Mapping]]] = ..., use_knowledge_store: _Optional[bool] = ...) -> None: ...

class CouncilRunConfig(_message.Message):
    __slots__ = ("council_models", "response_count", "fact_checker_models", "chairman_model", "reporter_model", "timeout_ms", "exclude_self_ratings", "responses_supplied")
    COUNCIL_MODELS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_COUNT_FIELD_NUMBER: _ClassVar[int]
    FACT_CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    CHAIRMAN_MODEL_FIELD_NUMBER: _ClassVar[int]
    REPORTER_MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_SELF_RATINGS_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_SUPPLIED_FIELD_NUMBER: _ClassVar[int]
    council_models: _containers.RepeatedScalarFieldContainer[str]
    response_count: int
    fact_checker_models: _containers.RepeatedScalarFieldContainer[str]
    chairman_model: str
    reporter_model: str
    timeout_ms: int
    exclude_self_ratings: bool
    responses_supplied: bool
    def __init__(self, council_models: _Optional[_Iterable[str]] = ..., response_count: _Optional[int] = ..., fact_checker_models: _Optional[_Iterable[str]] = ..., chairman_model: _Optional[str] = ..., reporter_model: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., exclude_self_ratings: _Optional[bool] = ..., responses_supplied: _Optional[bool] = ...) -> None: ...

class LabelledResponse(_message.Message):
    __slots__ = ("label", "text")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    label: str
    text: str
    def __init__(self, label: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ResponseRating(_message.Message):
    __slots__ = ("label", "rating")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    label: str
    rating: AccuracyRating
    def __init__(self, label: _Optional[str] = ..., rating: _Optional[_Union[AccuracyRating, str]] = ...) -> None: ...

class InaccurateClaim(_message.Message):
    __slots__ = ("label", "claim", "error_type", "correction")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    label: str
    claim: str
    error_type: ErrorType
    correction: str
    def __init__(self, label: _Optional[str] = ..., claim: _Optional[str] = ..., error_type: _Optional[_Union[ErrorType, str]] = ..., correction: _Optional[str] = ...) -> None: ...

class RespondStartPayload(_message.Message):
    __slots__ = ("response_count",)
    RESPONSE_COUNT_FIELD_NUMBER: _ClassVar[int]
    response_count: int
    def __init__(self, response_count: _Optional[int] = ...) -> None: ...

class ResponseCompletePayload(_message.Message):
    __slots__ = ("label", "text", "response_time_ms")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    label: str
    text: str
    response_time_ms: int
    def __init__(self, label: _Optional[str] = ..., text: _Optional[str] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class ResponseFailedPayload(_message.Message):
    __slots__ = ("label", "message")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    label: str
    message: str
    def __init__(self, label: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ResponsesAnonymisedPayload(_message.Message):
    __slots__ = ("labels",)
    LABELS_FIELD_NUMBER: _ClassVar[int]
    labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, labels: _Optional[_Iterable[str]] = ...) -> None: ...

class CouncilCheckStartPayload(_message.Message):
    __slots__ = ("fact_checker_count", "response_count")
    FACT_CHECKER_COUNT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_COUNT_FIELD_NUMBER: _ClassVar[int]
    fact_checker_count: int
    response_count: int
    def __init__(self, fact_checker_count: _Optional[int] = ..., response_count: _Optional[int] = ...) -> None: ...

class CouncilCheckCompletePayload(_message.Message):
    __slots__ = ("model", "checker_index", "ratings", "most_reliable", "inaccurate_claims", "response_time_ms", "warnings")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    MOST_RELIABLE_FIELD_NUMBER: _ClassVar[int]
    INACCURATE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    model: str
    checker_index: int
    ratings: _containers.RepeatedCompositeFieldContainer[ResponseRating]
    most_reliable: str
    inaccurate_claims: _containers.RepeatedCompositeFieldContainer[InaccurateClaim]
    response_time_ms: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, model: _Optional[str] = ..., checker_index: _Optional[int] = ..., ratings: _Optional[_Iterable[_Union[ResponseRating, _Mapping]]] = ..., most_reliable: _Optional[str] = ..., inaccurate_claims: _Optional[_Iterable[_Union[InaccurateClaim, _Mapping]]] = ..., response_time_ms: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class CouncilCheckFailedPayload(_message.Message):
    __slots__ = ("model", "checker_index", "message")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    checker_index: int
    message: str
    def __init__(self, model: _Optional[str] = ..., checker_index: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class CouncilAggregateCompletePayload(_message.Message):
    __slots__ = ("aggregate",)
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    aggregate: CouncilAggregate
    def __init__(self, aggregate: _Optional[_Union[CouncilAggregate, _Mapping]] = ...) -> None: ...

class SynthesisStartPayload(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SynthesisCompletePayload(_message.Message):
    __slots__ = ("model", "text", "based_on_label", "response_time_ms")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BASED_ON_LABEL_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    model: str
    text: str
    based_on_label: str
    response_time_ms: int
    def __init__(self, model: _Optional[str] = ..., text: _Optional[str] = ..., based_on_label: _Optional[str] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class CheckerRating(_message.Message):
    __slots__ = ("fact_checker_model", "checker_index", "rating", "self_rating")
    FACT_CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    SELF_RATING_FIELD_NUMBER: _ClassVar[int]
    fact_checker_model: str
    checker_index: int
    rating: AccuracyRating
    self_rating: bool
    def __init__(self, fact_checker_model: _Optional[str] = ..., checker_index: _Optional[int] = ..., rating: _Optional[_Union[AccuracyRating, str]] = ..., self_rating: _Optional[bool] = ...) -> None: ...

class ErrorTypeCount(_message.Message):
    __slots__ = ("error_type", "count")
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    error_type: ErrorType
    count: int
    def __init__(self, error_type: _Optional[_Union[ErrorType, str]] = ..., count: _Optional[int] = ...) -> None: ...

class RankedResponse(_message.Message):
    __slots__ = ("rank", "label", "model", "average_score", "ratings", "most_reliable_votes", "inaccurate_claim_count", "error_types", "self_score", "others_score")
    RANK_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_SCORE_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    MOST_RELIABLE_VOTES_FIELD_NUMBER: _ClassVar[int]
    INACCURATE_CLAIM_COUNT_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPES_FIELD_NUMBER: _ClassVar[int]
    SELF_SCORE_FIELD_NUMBER: _ClassVar[int]
    OTHERS_SCORE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    label: str
    model: str
    average_score: float
    ratings: _containers.RepeatedCompositeFieldContainer[CheckerRating]
    most_reliable_votes: int
    inaccurate_claim_count: int
    error_types: _containers.RepeatedCompositeFieldContainer[ErrorTypeCount]
    self_score: float
    others_score: float
    def __init__(self, rank: _Optional[int] = ..., label: _Optional[str] = ..., model: _Optional[str] = ..., average_score: _Optional[float] = ..., ratings: _Optional[_Iterable[_Union[CheckerRating, _Mapping]]] = ..., most_reliable_votes: _Optional[int] = ..., inaccurate_claim_count: _Optional[int] = ..., error_types: _Optional[_Iterable[_Union[ErrorTypeCount, _Mapping]]] = ..., self_score: _Optional[float] = ..., others_score: _Optional[float] = ...) -> None: ...

class CouncilAggregate(_message.Message):
    __slots__ = ("ranking", "counted_fact_checkers", "excluded_fact_checkers", "kendall_w", "error_types", "self_preference", "exclude_self_ratings", "label_to_model")
    class LabelToModelEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RANKING_FIELD_NUMBER: _ClassVar[int]
    COUNTED_FACT_CHECKERS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_FACT_CHECKERS_FIELD_NUMBER: _ClassVar[int]
    KENDALL_W_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPES_FIELD_NUMBER: _ClassVar[int]
    SELF_PREFERENCE_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_SELF_RATINGS_FIELD_NUMBER: _ClassVar[int]
    LABEL_TO_MODEL_FIELD_NUMBER: _ClassVar[int]
    ranking: _containers.RepeatedCompositeFieldContainer[RankedResponse]
    counted_fact_checkers: _containers.RepeatedScalarFieldContainer[str]
    excluded_fact_checkers: _containers.RepeatedCompositeFieldContainer[CouncilCheckFailedPayload]
    kendall_w: float
    error_types: _containers.RepeatedCompositeFieldContainer[ErrorTypeCount]
    self_preference: float
    exclude_self_ratings: bool
    label_to_model: _containers.ScalarMap[str, str]
    def __init__(self, ranking: _Optional[_Iterable[_Union[RankedResponse, _Mapping]]] = ..., counted_fact_checkers: _Optional[_Iterable[str]] = ..., excluded_fact_checkers: _Optional[_Iterable[_Union[CouncilCheckFailedPayload, _Mapping]]] = ..., kendall_w: _Optional[float] = ..., error_types: _Optional[_Iterable[_Union[ErrorTypeCount, _Mapping]]] = ..., self_preference: _Optional[float] = ..., exclude_self_ratings: _Optional[bool] = ..., label_to_model: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CouncilResult(_message.Message):
    __slots__ = ("config", "responses", "fact_checks", "aggregate", "synthesis")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    FACT_CHECKS_FIELD_NUMBER: _ClassVar[int]
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIS_FIELD_NUMBER: _ClassVar[int]
    config: CouncilRunConfig
    responses: _containers.RepeatedCompositeFieldContainer[CouncilResponse]
    fact_checks: _containers.RepeatedCompositeFieldContainer[CouncilCheck]
    aggregate: CouncilAggregate
    synthesis: SynthesisCompletePayload
    def __init__(self, config: _Optional[_Union[CouncilRunConfig, _Mapping]] = ..., responses: _Optional[_Iterable[_Union[CouncilResponse, _Mapping]]] = ..., fact_checks: _Optional[_Iterable[_Union[CouncilCheck, _Mapping]]] = ..., aggregate: _Optional[_Union[CouncilAggregate, _Mapping]] = ..., synthesis: _Optional[_Union[SynthesisCompletePayload, _Mapping]] = ...) -> None: ...

class CouncilResponse(_message.Message):
    __slots__ = ("label", "model", "text", "response_time_ms", "supplied", "error")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    SUPPLIED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    label: str
    model: str
    text: str
    response_time_ms: int
    supplied: bool
    error: str
    def __init__(self, label: _Optional[str] = ..., model: _Optional[str] = ..., text: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., supplied: _Optional[bool] = ..., error: _Optional[str] = ...) -> None: ...

class CouncilCheck(_message.Message):
    __slots__ = ("model", "checker_index", "analysis", "ratings", "most_reliable", "inaccurate_claims", "response_time_ms", "warnings")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_INDEX_FIELD_NUMBER: _ClassVar[int]
    ANALYSIS_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    MOST_RELIABLE_FIELD_NUMBER: _ClassVar[int]
    INACCURATE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    model: str
    checker_index: int
    analysis: str
    ratings: _containers.RepeatedCompositeFieldContainer[ResponseRating]
    most_reliable: str
    inaccurate_claims: _containers.RepeatedCompositeFieldContainer[InaccurateClaim]
    response_time_ms: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, model: _Optional[str] = ..., checker_index: _Optional[int] = ..., analysis: _Optional[str] = ..., ratings: _Optional[_Iterable[_Union[ResponseRating, _Mapping]]] = ..., most_reliable: _Optional[str] = ..., inaccurate_claims: _Optional[_Iterable[_Union[InaccurateClaim, _Mapping]]] = ..., response_time_ms: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class CouncilCheckRequest(_message.Message):
    __slots__ = ("model", "question", "responses", "passages")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    model: str
    question: str
    responses: _containers.RepeatedCompositeFieldContainer[LabelledResponse]
    passages: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    def __init__(self, model: _Optional[str] = ..., question: _Optional[str] = ..., responses: _Optional[_Iterable[_Union[LabelledResponse, _Mapping]]] = ..., passages: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ...) -> None: ...

class CouncilCheckResponse(_message.Message):
    __slots__ = ("model", "raw_text", "ratings", "most_reliable", "inaccurate_claims", "warnings", "response_time_ms", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    MOST_RELIABLE_FIELD_NUMBER: _ClassVar[int]
    INACCURATE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    raw_text: str
    ratings: _containers.RepeatedCompositeFieldContainer[ResponseRating]
    most_reliable: str
    inaccurate_claims: _containers.RepeatedCompositeFieldContainer[InaccurateClaim]
    warnings: _containers.RepeatedScalarFieldContainer[str]
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    def __init__(self, model: _Optional[str] = ..., raw_text: _Optional[str] = ..., ratings: _Optional[_Iterable[_Union[ResponseRating, _Mapping]]] = ..., most_reliable: _Optional[str] = ..., inaccurate_claims: _Optional[_Iterable[_Union[InaccurateClaim, _Mapping]]] = ..., warnings: _Optional[_Iterable[str]] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...

class SynthesizeRequest(_message.Message):
    __slots__ = ("model", "question", "best_response", "inaccurate_claims", "aggregate")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    BEST_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    INACCURATE_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    AGGREGATE_FIELD_NUMBER: _ClassVar[int]
    model: str
    question: str
    best_response: LabelledResponse
    inaccurate_claims: _containers.RepeatedCompositeFieldContainer[InaccurateClaim]
    aggregate: CouncilAggregate
    def __init__(self, model: _Optional[str] = ..., question: _Optional[str] = ..., best_response: _Optional[_Union[LabelledResponse, _Mapping]] = ..., inaccurate_claims: _Optional[_Iterable[_Union[InaccurateClaim, _Mapping]]] = ..., aggregate: _Optional[_Union[CouncilAggregate, _Mapping]] = ...) -> None: ...

class SynthesizeResponse(_message.Message):
    __slots__ = ("model", "text", "response_time_ms", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    text: str
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    def __init__(self, model: _Optional[str] = ..., text: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...
