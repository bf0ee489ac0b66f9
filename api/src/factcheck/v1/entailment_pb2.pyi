from factcheck.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CheckerStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKER_STRATEGY_UNSPECIFIED: _ClassVar[CheckerStrategy]
    CHECKER_STRATEGY_DEFAULT: _ClassVar[CheckerStrategy]
    CHECKER_STRATEGY_ENTAILMENT_AGENTS: _ClassVar[CheckerStrategy]

class EntailmentVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENTAILMENT_VERDICT_UNSPECIFIED: _ClassVar[EntailmentVerdict]
    ENTAILMENT_VERDICT_SUPPORTED: _ClassVar[EntailmentVerdict]
    ENTAILMENT_VERDICT_CONTRADICTED: _ClassVar[EntailmentVerdict]
    ENTAILMENT_VERDICT_NOT_ENOUGH_INFO: _ClassVar[EntailmentVerdict]

class ReliabilityRating(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RELIABILITY_RATING_UNSPECIFIED: _ClassVar[ReliabilityRating]
    RELIABILITY_RATING_HIGH: _ClassVar[ReliabilityRating]
    RELIABILITY_RATING_MEDIUM: _ClassVar[ReliabilityRating]
    RELIABILITY_RATING_LOW: _ClassVar[ReliabilityRating]

class EntailmentAgent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENTAILMENT_AGENT_UNSPECIFIED: _ClassVar[EntailmentAgent]
    ENTAILMENT_AGENT_EXTRACTOR: _ClassVar[EntailmentAgent]
    ENTAILMENT_AGENT_RELIABILITY: _ClassVar[EntailmentAgent]
    ENTAILMENT_AGENT_JUDGE: _ClassVar[EntailmentAgent]
    ENTAILMENT_AGENT_AUDITOR: _ClassVar[EntailmentAgent]

class AuditorVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDITOR_VERDICT_UNSPECIFIED: _ClassVar[AuditorVerdict]
    AUDITOR_VERDICT_UNCHANGED: _ClassVar[AuditorVerdict]
    AUDITOR_VERDICT_SUPPORTED: _ClassVar[AuditorVerdict]
    AUDITOR_VERDICT_CONTRADICTED: _ClassVar[AuditorVerdict]
    AUDITOR_VERDICT_NOT_ENOUGH_INFO: _ClassVar[AuditorVerdict]
CHECKER_STRATEGY_UNSPECIFIED: CheckerStrategy
CHECKER_STRATEGY_DEFAULT: CheckerStrategy
CHECKER_STRATEGY_ENTAILMENT_AGENTS: CheckerStrategy
ENTAILMENT_VERDICT_UNSPECIFIED: EntailmentVerdict
ENTAILMENT_VERDICT_SUPPORTED: EntailmentVerdict
ENTAILMENT_VERDICT_CONTRADICTED: EntailmentVerdict
ENTAILMENT_VERDICT_NOT_ENOUGH_INFO: EntailmentVerdict
RELIABILITY_RATING_UNSPECIFIED: ReliabilityRating
RELIABILITY_RATING_HIGH: ReliabilityRating
RELIABILITY_RATING_MEDIUM: ReliabilityRating
RELIABILITY_RATING_LOW: ReliabilityRating
ENTAILMENT_AGENT_UNSPECIFIED: EntailmentAgent
ENTAILMENT_AGENT_EXTRACTOR: EntailmentAgent
ENTAILMENT_AGENT_RELIABILITY: EntailmentAgent
ENTAILMENT_AGENT_JUDGE: EntailmentAgent
ENTAILMENT_AGENT_AUDITOR: EntailmentAgent
AUDITOR_VERDICT_UNSPECIFIED: AuditorVerdict
AUDITOR_VERDICT_UNCHANGED: AuditorVerdict
AUDITOR_VERDICT_SUPPORTED: AuditorVerdict
AUDITOR_VERDICT_CONTRADICTED: AuditorVerdict
AUDITOR_VERDICT_NOT_ENOUGH_INFO: AuditorVerdict

class EntailmentItem(_message.Message):
    __slots__ = ("claim", "source_excerpt", "source_type")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    claim: str
    source_excerpt: str
    source_type: str
    def __init__(self, claim: _Optional[str] = ..., source_excerpt: _Optional[str] = ..., source_type: _Optional[str] = ...) -> None: ...

class EntailmentConfig(_message.Message):
    __slots__ = ("items", "model", "extractor_model", "reliability_model", "judge_model", "auditor_model", "timeout_ms")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[EntailmentItem]
    model: str
    extractor_model: str
    reliability_model: str
    judge_model: str
    auditor_model: str
    timeout_ms: int
    def __init__(self, items: _Optional[_Iterable[_Union[EntailmentItem, _Mapping]]] = ..., model: _Optional[str] = ..., extractor_model: _Optional[str] = ..., reliability_model: _Optional[str] = ..., judge_model: _Optional[str] = ..., auditor_model: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class EntailmentRunConfig(_message.Message):
    __slots__ = ("extractor_model", "reliability_model", "judge_model", "auditor_model", "item_count", "timeout_ms", "max_parallel_items")
    EXTRACTOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_MODEL_FIELD_NUMBER: _ClassVar[int]
    JUDGE_MODEL_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_MODEL_FIELD_NUMBER: _ClassVar[int]
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_PARALLEL_ITEMS_FIELD_NUMBER: _ClassVar[int]
    extractor_model: str
    reliability_model: str
    judge_model: str
    auditor_model: str
    item_count: int
    timeout_ms: int
    max_parallel_items: int
    def __init__(self, extractor_model: _Optional[str] = ..., reliability_model: _Optional[str] = ..., judge_model: _Optional[str] = ..., auditor_model: _Optional[str] = ..., item_count: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., max_parallel_items: _Optional[int] = ...) -> None: ...

class ExtractorInput(_message.Message):
    __slots__ = ("claim", "source_excerpt")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    claim: str
    source_excerpt: str
    def __init__(self, claim: _Optional[str] = ..., source_excerpt: _Optional[str] = ...) -> None: ...

class ReliabilityInput(_message.Message):
    __slots__ = ("source_type",)
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    source_type: str
    def __init__(self, source_type: _Optional[str] = ...) -> None: ...

class JudgeInput(_message.Message):
    __slots__ = ("claim", "statements")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    STATEMENTS_FIELD_NUMBER: _ClassVar[int]
    claim: str
    statements: _containers.RepeatedCompositeFieldContainer[ExtractedStatement]
    def __init__(self, claim: _Optional[str] = ..., statements: _Optional[_Iterable[_Union[ExtractedStatement, _Mapping]]] = ...) -> None: ...

class AuditorInput(_message.Message):
    __slots__ = ("claim", "source_excerpt", "judge_verdict", "judge_confidence")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    JUDGE_VERDICT_FIELD_NUMBER: _ClassVar[int]
    JUDGE_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    claim: str
    source_excerpt: str
    judge_verdict: EntailmentVerdict
    judge_confidence: int
    def __init__(self, claim: _Optional[str] = ..., source_excerpt: _Optional[str] = ..., judge_verdict: _Optional[_Union[EntailmentVerdict, str]] = ..., judge_confidence: _Optional[int] = ...) -> None: ...

class ExtractedStatement(_message.Message):
    __slots__ = ("id", "text")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    id: int
    text: str
    def __init__(self, id: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class ExtractorOutput(_message.Message):
    __slots__ = ("statements", "dropped_paraphrases")
    STATEMENTS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_PARAPHRASES_FIELD_NUMBER: _ClassVar[int]
    statements: _containers.RepeatedCompositeFieldContainer[ExtractedStatement]
    dropped_paraphrases: int
    def __init__(self, statements: _Optional[_Iterable[_Union[ExtractedStatement, _Mapping]]] = ..., dropped_paraphrases: _Optional[int] = ...) -> None: ...

class ReliabilityOutput(_message.Message):
    __slots__ = ("source_type", "reliability", "confidence")
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    source_type: str
    reliability: ReliabilityRating
    confidence: int
    def __init__(self, source_type: _Optional[str] = ..., reliability: _Optional[_Union[ReliabilityRating, str]] = ..., confidence: _Optional[int] = ...) -> None: ...

class JudgeOutput(_message.Message):
    __slots__ = ("verdict", "confidence", "reasoning", "enforced")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    ENFORCED_FIELD_NUMBER: _ClassVar[int]
    verdict: EntailmentVerdict
    confidence: int
    reasoning: _containers.RepeatedScalarFieldContainer[str]
    enforced: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, verdict: _Optional[_Union[EntailmentVerdict, str]] = ..., confidence: _Optional[int] = ..., reasoning: _Optional[_Iterable[str]] = ..., enforced: _Optional[_Iterable[str]] = ...) -> None: ...

class AuditorOutput(_message.Message):
    __slots__ = ("final_verdict", "confidence_adjustment", "auditor_reasoning", "rejected", "rejection")
    FINAL_VERDICT_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_ADJUSTMENT_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_REASONING_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    REJECTION_FIELD_NUMBER: _ClassVar[int]
    final_verdict: AuditorVerdict
    confidence_adjustment: int
    auditor_reasoning: _containers.RepeatedScalarFieldContainer[str]
    rejected: bool
    rejection: str
    def __init__(self, final_verdict: _Optional[_Union[AuditorVerdict, str]] = ..., confidence_adjustment: _Optional[int] = ..., auditor_reasoning: _Optional[_Iterable[str]] = ..., rejected: _Optional[bool] = ..., rejection: _Optional[str] = ...) -> None: ...

class EntailmentAgentOutput(_message.Message):
    __slots__ = ("extractor", "reliability", "judge", "auditor")
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_FIELD_NUMBER: _ClassVar[int]
    extractor: ExtractorOutput
    reliability: ReliabilityOutput
    judge: JudgeOutput
    auditor: AuditorOutput
    def __init__(self, extractor: _Optional[_Union[ExtractorOutput, _Mapping]] = ..., reliability: _Optional[_Union[ReliabilityOutput, _Mapping]] = ..., judge: _Optional[_Union[JudgeOutput, _Mapping]] = ..., auditor: _Optional[_Union[AuditorOutput, _Mapping]] = ...) -> None: ...

class EntailmentFinal(_message.Message):
    __slots__ = ("claim", "final_verdict", "final_confidence", "entailment_confidence", "reliability_rating", "notes")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    FINAL_VERDICT_FIELD_NUMBER: _ClassVar[int]
    FINAL_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    ENTAILMENT_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_RATING_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    claim: str
    final_verdict: EntailmentVerdict
    final_confidence: int
    entailment_confidence: int
    reliability_rating: ReliabilityRating
    notes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, claim: _Optional[str] = ..., final_verdict: _Optional[_Union[EntailmentVerdict, str]] = ..., final_confidence: _Optional[int] = ..., entailment_confidence: _Optional[int] = ..., reliability_rating: _Optional[_Union[ReliabilityRating, str]] = ..., notes: _Optional[_Iterable[str]] = ...) -> None: ...

class RunEntailmentAgentRequest(_message.Message):
    __slots__ = ("model", "extractor", "reliability", "judge", "auditor")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_FIELD_NUMBER: _ClassVar[int]
    model: str
    extractor: ExtractorInput
    reliability: ReliabilityInput
    judge: JudgeInput
    auditor: AuditorInput
    def __init__(self, model: _Optional[str] = ..., extractor: _Optional[_Union[ExtractorInput, _Mapping]] = ..., reliability: _Optional[_Union[ReliabilityInput, _Mapping]] = ..., judge: _Optional[_Union[JudgeInput, _Mapping]] = ..., auditor: _Optional[_Union[AuditorInput, _Mapping]] = ...) -> None: ...

class RunEntailmentAgentResponse(_message.Message):
    __slots__ = ("model", "agent", "output", "raw_text", "response_time_ms", "usage", "attempts", "structured")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_FIELD_NUMBER: _ClassVar[int]
    model: str
    agent: EntailmentAgent
    output: EntailmentAgentOutput
    raw_text: str
    response_time_ms: int
    usage: _common_pb2.TokenUsage
    attempts: int
    structured: bool
    def __init__(self, model: _Optional[str] = ..., agent: _Optional[_Union[EntailmentAgent, str]] = ..., output: _Optional[_Union[EntailmentAgentOutput, _Mapping]] = ..., raw_text: _Optional[str] = ..., response_time_ms: _Optional[int] = ..., usage: _Optional[_Union[_common_pb2.TokenUsage, _Mapping]] = ..., attempts: _Optional[int] = ..., structured: _Optional[bool] = ...) -> None: ...

class ClaimEntailment(_message.Message):
    __slots__ = ("claim_id", "passage_id", "source_type", "extractor", "reliability", "judge", "auditor", "final", "error", "failures")
    CLAIM_ID_FIELD_NUMBER: _ClassVar[int]
    PASSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    claim_id: str
    passage_id: str
    source_type: str
    extractor: ExtractorOutput
    reliability: ReliabilityOutput
    judge: JudgeOutput
    auditor: AuditorOutput
    final: EntailmentFinal
    error: str
    failures: _containers.RepeatedCompositeFieldContainer[EntailmentAgentFailure]
    def __init__(self, claim_id: _Optional[str] = ..., passage_id: _Optional[str] = ..., source_type: _Optional[str] = ..., extractor: _Optional[_Union[ExtractorOutput, _Mapping]] = ..., reliability: _Optional[_Union[ReliabilityOutput, _Mapping]] = ..., judge: _Optional[_Union[JudgeOutput, _Mapping]] = ..., auditor: _Optional[_Union[AuditorOutput, _Mapping]] = ..., final: _Optional[_Union[EntailmentFinal, _Mapping]] = ..., error: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[EntailmentAgentFailure, _Mapping]]] = ...) -> None: ...

class EntailmentAgentFailure(_message.Message):
    __slots__ = ("agent", "model", "message")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    agent: EntailmentAgent
    model: str
    message: str
    def __init__(self, agent: _Optional[_Union[EntailmentAgent, str]] = ..., model: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class EntailmentStartPayload(_message.Message):
    __slots__ = ("item_count",)
    ITEM_COUNT_FIELD_NUMBER: _ClassVar[int]
    item_count: int
    def __init__(self, item_count: _Optional[int] = ...) -> None: ...

class EntailmentAgentCompletePayload(_message.Message):
    __slots__ = ("item_index", "agent", "model", "output", "response_time_ms")
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    item_index: int
    agent: EntailmentAgent
    model: str
    output: EntailmentAgentOutput
    response_time_ms: int
    def __init__(self, item_index: _Optional[int] = ..., agent: _Optional[_Union[EntailmentAgent, str]] = ..., model: _Optional[str] = ..., output: _Optional[_Union[EntailmentAgentOutput, _Mapping]] = ..., response_time_ms: _Optional[int] = ...) -> None: ...

class EntailmentAgentFailedPayload(_message.Message):
    __slots__ = ("item_index", "agent", "model", "message")
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    item_index: int
    agent: EntailmentAgent
    model: str
    message: str
    def __init__(self, item_index: _Optional[int] = ..., agent: _Optional[_Union[EntailmentAgent, str]] = ..., model: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class EntailmentItemCompletePayload(_message.Message):
    __slots__ = ("item_index", "final")
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    item_index: int
    final: EntailmentFinal
    def __init__(self, item_index: _Optional[int] = ..., final: _Optional[_Union[EntailmentFinal, _Mapping]] = ...) -> None: ...

class EntailmentItemFailedPayload(_message.Message):
    __slots__ = ("item_index", "message")
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    item_index: int
    message: str
    def __init__(self, item_index: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class EntailmentCompletePayload(_message.Message):
    __slots__ = ("supported", "contradicted", "not_enough_info", "failed")
    SUPPORTED_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTED_FIELD_NUMBER: _ClassVar[int]
    NOT_ENOUGH_INFO_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    supported: int
    contradicted: int
    not_enough_info: int
    failed: int
    def __init__(self, supported: _Optional[int] = ..., contradicted: _Optional[int] = ..., not_enough_info: _Optional[int] = ..., failed: _Optional[int] = ...) -> None: ...

class EntailmentItemResult(_message.Message):
    __slots__ = ("item_index", "item", "extractor", "reliability", "judge", "auditor", "final", "error", "failures")
    ITEM_INDEX_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    JUDGE_FIELD_NUMBER: _ClassVar[int]
    AUDITOR_FIELD_NUMBER: _ClassVar[int]
    FINAL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FAILURES_FIELD_NUMBER: _ClassVar[int]
    item_index: int
    item: EntailmentItem
    extractor: ExtractorOutput
    reliability: ReliabilityOutput
    judge: JudgeOutput
    auditor: AuditorOutput
    final: EntailmentFinal
    error: str
    failures: _containers.RepeatedCompositeFieldContainer[EntailmentAgentFailure]
    def __init__(self, item_index: _Optional[int] = ..., item: _Optional[_Union[EntailmentItem, _Mapping]] = ..., extractor: _Optional[_Union[ExtractorOutput, _Mapping]] = ..., reliability: _Optional[_Union[ReliabilityOutput, _Mapping]] = ..., judge: _Optional[_Union[JudgeOutput, _Mapping]] = ..., auditor: _Optional[_Union[AuditorOutput, _Mapping]] = ..., final: _Optional[_Union[EntailmentFinal, _Mapping]] = ..., error: _Optional[str] = ..., failures: _Optional[_Iterable[_Union[EntailmentAgentFailure, _Mapping]]] = ...) -> None: ...

class EntailmentResult(_message.Message):
    __slots__ = ("config", "items", "summary")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    config: EntailmentRunConfig
    items: _containers.RepeatedCompositeFieldContainer[EntailmentItemResult]
    summary: EntailmentCompletePayload
    def __init__(self, config: _Optional[_Union[EntailmentRunConfig, _Mapping]] = ..., items: _Optional[_Iterable[_Union[EntailmentItemResult, _Mapping]]] = ..., summary: _Optional[_Union[EntailmentCompletePayload, _Mapping]] = ...) -> None: ...
