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
    __slots__ = ("claim_id", "verdict", "evidence", "correction", "confidence", "checker_model")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CHECKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    verdict: Verdict
    evidence: str
    correction: str
    confidence: Confidence
    checker_model: str
    def __init__(self, claim_id: _Optional[str] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., evidence: _Optional[str] = ..., correction: _Optional[str] = ..., confidence: _Optional[_Union[Confidence, str]] = ..., checker_model: _Optional[str] = ...) -> None: ...

class ClaimConsensus(_message.Message):
    __slots__ = ("claim_id", "claim", "context", "type", "verdicts", "consensus_verdict", "consensus_confidence", "agreement_rate", "correction")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VERDICTS_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONSENSUS_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    AGREEMENT_RATE_FIELD_NUMBER: _ClassVar[int]
    CORRECTION_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    claim: str
    context: str
    type: ClaimType
    verdicts: _containers.RepeatedCompositeFieldContainer[ClaimVerification]
    consensus_verdict: Verdict
    consensus_confidence: Confidence
    agreement_rate: float
    correction: str
    def __init__(self, claim_id: _Optional[str] = ..., claim: _Optional[str] = ..., context: _Optional[str] = ..., type: _Optional[_Union[ClaimType, str]] = ..., verdicts: _Optional[_Iterable[_Union[ClaimVerification, _Mapping]]] = ..., consensus_verdict: _Optional[_Union[Verdict, str]] = ..., consensus_confidence: _Optional[_Union[Confidence, str]] = ..., agreement_rate: _Optional[float] = ..., correction: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("prompt_tokens", "completion_tokens", "total_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ...) -> None: ...
