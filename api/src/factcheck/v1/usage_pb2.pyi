import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UsageGroupBy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    USAGE_GROUP_BY_UNSPECIFIED: _ClassVar[UsageGroupBy]
    USAGE_GROUP_BY_MODEL: _ClassVar[UsageGroupBy]
    USAGE_GROUP_BY_STAGE: _ClassVar[UsageGroupBy]
    USAGE_GROUP_BY_MODE: _ClassVar[UsageGroupBy]
    USAGE_GROUP_BY_DAY: _ClassVar[UsageGroupBy]
USAGE_GROUP_BY_UNSPECIFIED: UsageGroupBy
USAGE_GROUP_BY_MODEL: UsageGroupBy
USAGE_GROUP_BY_STAGE: UsageGroupBy
USAGE_GROUP_BY_MODE: UsageGroupBy
USAGE_GROUP_BY_DAY: UsageGroupBy

class RunBudget(_message.Message):
    __slots__ = ("max_cost_usd", "max_tokens")
    MAX_COST_USD_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    max_cost_usd: float
    max_tokens: int
    def __init__(self, max_cost_usd: _Optional[float] = ..., max_tokens: _Optional[int] = ...) -> None: ...

class ModelCall(_message.Message):
    __slots__ = ("model", "provider", "prompt_tokens", "completion_tokens", "cached_tokens", "attempts", "latency_ms", "outcome", "prompt_version", "usage_estimated")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PROMPT_VERSION_FIELD_NUMBER: _ClassVar[int]
    USAGE_ESTIMATED_FIELD_NUMBER: _ClassVar[int]
    model: str
    provider: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    attempts: int
    latency_ms: int
    outcome: str
    prompt_version: str
    usage_estimated: bool
    def __init__(self, model: _Optional[str] = ..., provider: _Optional[str] = ..., prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., attempts: _Optional[int] = ..., latency_ms: _Optional[int] = ..., outcome: _Optional[str] = ..., prompt_version: _Optional[str] = ..., usage_estimated: _Optional[bool] = ...) -> None: ...

class ModelCalls(_message.Message):
    __slots__ = ("calls",)
    CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: _containers.RepeatedCompositeFieldContainer[ModelCall]
    def __init__(self, calls: _Optional[_Iterable[_Union[ModelCall, _Mapping]]] = ...) -> None: ...

class RunUsage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens", "cost_usd", "calls", "failed_calls", "cache_hits", "estimated_calls")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    FAILED_CALLS_FIELD_NUMBER: _ClassVar[int]
    CACHE_HITS_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_CALLS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    total_tokens: int
    cost_usd: float
    calls: int
    failed_calls: int
    cache_hits: int
    estimated_calls: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., calls: _Optional[int] = ..., failed_calls: _Optional[int] = ..., cache_hits: _Optional[int] = ..., estimated_calls: _Optional[int] = ...) -> None: ...

class GetUsageRequest(_message.Message):
    __slots__ = ("start_time", "end_time", "group_by")
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    GROUP_BY_FIELD_NUMBER: _ClassVar[int]
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    group_by: _containers.RepeatedScalarFieldContainer[UsageGroupBy]
    def __init__(self, start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., group_by: _Optional[_Iterable[_Union[UsageGroupBy, str]]] = ...) -> None: ...

class UsageRow(_message.Message):
    __slots__ = ("model", "stage", "mode", "day", "usage", "runs")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STAGE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    DAY_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    model: str
    stage: str
    mode: str
    day: str
    usage: RunUsage
    runs: int
    def __init__(self, model: _Optional[str] = ..., stage: _Optional[str] = ..., mode: _Optional[str] = ..., day: _Optional[str] = ..., usage: _Optional[_Union[RunUsage, _Mapping]] = ..., runs: _Optional[int] = ...) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ("rows", "total")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[UsageRow]
    total: RunUsage
    def __init__(self, rows: _Optional[_Iterable[_Union[UsageRow, _Mapping]]] = ..., total: _Optional[_Union[RunUsage, _Mapping]] = ...) -> None: ...

class PurgeCacheRequest(_message.Message):
    __slots__ = ("expired_only",)
    EXPIRED_ONLY_FIELD_NUMBER: _ClassVar[int]
    expired_only: bool
    def __init__(self, expired_only: _Optional[bool] = ...) -> None: ...

class PurgeCacheResponse(_message.Message):
    __slots__ = ("purged",)
    PURGED_FIELD_NUMBER: _ClassVar[int]
    purged: int
    def __init__(self, purged: _Optional[int] = ...) -> None: ...
