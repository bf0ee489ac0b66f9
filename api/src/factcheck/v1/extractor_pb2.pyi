from factcheck.v1 import citations_pb2 as _citations_pb2
from factcheck.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GenerateRequest(_message.Message):
    __slots__ = ("model", "question", "passages")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    model: str
    question: str
    passages: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    def __init__(self, model: _Optional[str] = ..., question: _Optional[str] = ..., passages: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ...) -> None: ...

class GenerateResponse(_message.Message):
    __slots__ = ("model", "content", "response_time_ms", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ...) -> None: ...

class ExtractRequest(_message.Message):
    __slots__ = ("model", "content", "max_content_length", "profiles")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    max_content_length: int
    profiles: bool
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., max_content_length: _Optional[int] = ..., profiles: _Optional[bool] = ...) -> None: ...

class ExtractResponse(_message.Message):
    __slots__ = ("model", "content", "content_truncated", "raw_text", "claims", "total_claims", "type_breakdown", "response_time_ms", "usage", "profiles")
    class TypeBreakdownEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CLAIMS_FIELD_NUMBER: _ClassVar[int]
    TYPE_BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    content_truncated: bool
    raw_text: str
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    total_claims: int
    type_breakdown: _containers.ScalarMap[str, int]
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    profiles: _containers.RepeatedCompositeFieldContainer[_citations_pb2.ClaimProfile]
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., content_truncated: _Optional[bool] = ..., raw_text: _Optional[str] = ..., claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., total_claims: _Optional[int] = ..., type_breakdown: _Optional[_Mapping[str, int]] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., profiles: _Optional[_Iterable[_Union[_citations_pb2.ClaimProfile, _Mapping]]] = ...) -> None: ...

class ExtractStreamRequest(_message.Message):
    __slots__ = ("model", "content", "max_content_length")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    max_content_length: int
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., max_content_length: _Optional[int] = ...) -> None: ...

class ExtractStreamResponse(_message.Message):
    __slots__ = ("claims", "result", "content")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    result: ExtractResponse
    content: str
    def __init__(self, claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., result: _Optional[_Union[ExtractResponse, _Mapping]] = ..., content: _Optional[str] = ...) -> None: ...
