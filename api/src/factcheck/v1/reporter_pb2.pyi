from factcheck.v1 import common_pb2 as _common_pb2
from factcheck.v1 import council_pb2 as _council_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReportRequest(_message.Message):
    __slots__ = ("model", "content", "consensus", "total_claims", "checker_count", "extractor_model", "checker_models")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    CHECKER_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODELS_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    consensus: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimConsensus]
    total_claims: int
    checker_count: int
    extractor_model: str
    checker_models: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., consensus: _Optional[_Iterable[_Union[_common_pb2.ClaimConsensus, _Mapping]]] = ..., total_claims: _Optional[int] = ..., checker_count: _Optional[int] = ..., extractor_model: _Optional[str] = ..., checker_models: _Optional[_Iterable[str]] = ...) -> None: ...

class ReportResponse(_message.Message):
    __slots__ = ("model", "report_text", "reliability_score", "summary", "note", "fallback", "average_agreement_rate", "response_time_ms", "usage", "fallback_reason")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    REPORT_TEXT_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_SCORE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    AVERAGE_AGREEMENT_RATE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_REASON_FIELD_NUMBER: _ClassVar[int]
    model: str
    report_text: str
    reliability_score: int
    summary: _common_pb2.VerdictSummary
    note: str
    fallback: bool
    average_agreement_rate: float
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    fallback_reason: str
    def __init__(self, model: _Optional[str] = ..., report_text: _Optional[str] = ..., reliability_score: _Optional[int] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., note: _Optional[str] = ..., fallback: _Optional[bool] = ..., average_agreement_rate: _Optional[float] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., fallback_reason: _Optional[str] = ...) -> None: ...

class TitleRequest(_message.Message):
    __slots__ = ("model", "question", "content")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    model: str
    question: str
    content: str
    def __init__(self, model: _Optional[str] = ..., question: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class TitleResponse(_message.Message):
    __slots__ = ("model", "title", "response_time_ms", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    title: str
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    def __init__(self, model: _Optional[str] = ..., title: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...
