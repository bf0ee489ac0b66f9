from factcheck.v1 import citations_pb2 as _citations_pb2
from factcheck.v1 import common_pb2 as _common_pb2
from factcheck.v1 import council_pb2 as _council_pb2
from factcheck.v1 import entailment_pb2 as _entailment_pb2
from factcheck.v1 import investigation_pb2 as _investigation_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VerifyRequest(_message.Message):
    __slots__ = ("model", "content", "claims", "passages", "evidence", "strategy", "support_tiers", "profiles", "support_threshold")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_TIERS_FIELD_NUMBER: _ClassVar[int]
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    model: str
    content: str
    claims: _containers.RepeatedCompositeFieldContainer[_common_pb2.Claim]
    passages: _containers.RepeatedCompositeFieldContainer[_common_pb2.Passage]
    evidence: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimEvidence]
    strategy: _entailment_pb2.CheckerStrategy
    support_tiers: bool
    profiles: _containers.RepeatedCompositeFieldContainer[_citations_pb2.ClaimProfile]
    support_threshold: float
    def __init__(self, model: _Optional[str] = ..., content: _Optional[str] = ..., claims: _Optional[_Iterable[_Union[_common_pb2.Claim, _Mapping]]] = ..., passages: _Optional[_Iterable[_Union[_common_pb2.Passage, _Mapping]]] = ..., evidence: _Optional[_Iterable[_Union[_common_pb2.ClaimEvidence, _Mapping]]] = ..., strategy: _Optional[_Union[_entailment_pb2.CheckerStrategy, str]] = ..., support_tiers: _Optional[bool] = ..., profiles: _Optional[_Iterable[_Union[_citations_pb2.ClaimProfile, _Mapping]]] = ..., support_threshold: _Optional[float] = ...) -> None: ...

class VerifyResponse(_message.Message):
    __slots__ = ("model", "raw_text", "verifications", "summary", "response_time_ms", "usage", "dropped_citations", "entailment", "supports", "engine_revision")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    VERIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    DROPPED_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_FIELD_NUMBER: _ClassVar[int]
    SUPPORTS_FIELD_NUMBER: _ClassVar[int]
    ENGINE_REVISION_FIELD_NUMBER: _ClassVar[int]
    model: str
    raw_text: str
    verifications: _containers.RepeatedCompositeFieldContainer[_common_pb2.ClaimVerification]
    summary: _common_pb2.VerdictSummary
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    dropped_citations: int
    entailment: _containers.RepeatedCompositeFieldContainer[_entailment_pb2.ClaimEntailment]
    supports: _containers.RepeatedCompositeFieldContainer[_citations_pb2.ClaimSupport]
    engine_revision: str
    def __init__(self, model: _Optional[str] = ..., raw_text: _Optional[str] = ..., verifications: _Optional[_Iterable[_Union[_common_pb2.ClaimVerification, _Mapping]]] = ..., summary: _Optional[_Union[_common_pb2.VerdictSummary, _Mapping]] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., dropped_citations: _Optional[int] = ..., entailment: _Optional[_Iterable[_Union[_entailment_pb2.ClaimEntailment, _Mapping]]] = ..., supports: _Optional[_Iterable[_Union[_citations_pb2.ClaimSupport, _Mapping]]] = ..., engine_revision: _Optional[str] = ...) -> None: ...

class GetEngineRevisionRequest(_message.Message):
    __slots__ = ("model",)
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: str
    def __init__(self, model: _Optional[str] = ...) -> None: ...

class GetEngineRevisionResponse(_message.Message):
    __slots__ = ("model", "engine_revision")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ENGINE_REVISION_FIELD_NUMBER: _ClassVar[int]
    model: str
    engine_revision: str
    def __init__(self, model: _Optional[str] = ..., engine_revision: _Optional[str] = ...) -> None: ...

class GetServableModelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetServableModelsResponse(_message.Message):
    __slots__ = ("local_engines", "engine_families", "onnx_models", "providers", "dialects")
    LOCAL_ENGINES_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FAMILIES_FIELD_NUMBER: _ClassVar[int]
    ONNX_MODELS_FIELD_NUMBER: _ClassVar[int]
    PROVIDERS_FIELD_NUMBER: _ClassVar[int]
    DIALECTS_FIELD_NUMBER: _ClassVar[int]
    local_engines: _containers.RepeatedCompositeFieldContainer[ServableEngine]
    engine_families: _containers.RepeatedScalarFieldContainer[str]
    onnx_models: _containers.RepeatedScalarFieldContainer[str]
    providers: _containers.RepeatedScalarFieldContainer[str]
    dialects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, local_engines: _Optional[_Iterable[_Union[ServableEngine, _Mapping]]] = ..., engine_families: _Optional[_Iterable[str]] = ..., onnx_models: _Optional[_Iterable[str]] = ..., providers: _Optional[_Iterable[str]] = ..., dialects: _Optional[_Iterable[str]] = ...) -> None: ...

class ServableEngine(_message.Message):
    __slots__ = ("name", "roles")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLES_FIELD_NUMBER: _ClassVar[int]
    name: str
    roles: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., roles: _Optional[_Iterable[str]] = ...) -> None: ...
