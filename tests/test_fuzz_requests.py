"""Request fuzzing: thousands of random and mutated requests to every RPC of
every service, against the suite running as processes (with the fake model server). The methods
are the ones each server's reflection lists (health and reflection too), so none is missed: the
hand-written seeds below are a head start for some of them, an empty request seeds the rest.

Requests are raw bytes sent with generic calls, so they may be anything: random bytes,
mutated valid requests, random field values (huge strings, NUL, newlines, invalid UTF-8,
negative and overflowing numbers, unknown enum values), deeply nested unknown groups. Every
call must end with a status that is not UNKNOWN nor INTERNAL, within its deadline, with a
message under 1 KB that does not echo the input's bulk; afterwards every process is alive
and serving. Seeded (FACTCHECK_FUZZ_SEED) and bounded in count and time; the counts are
printed (run with -s to see them).

The gateway is fuzzed on SQLite and PostgreSQL; the model services once (on the SQLite run).
`test_the_fuzzer_reports_an_injected_bug` proves the checks are not vacuous.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import grpc
import pytest
from google.protobuf import descriptor as d
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

if TYPE_CHECKING:  # a message's descriptors are the C (upb) ones or the pure-Python ones
    from google._upb._message import Descriptor as UpbDescriptor
    from google._upb._message import FieldDescriptor as UpbFieldDescriptor

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck.kit.settings import Settings
from factcheck.serving.server import new_server
from factcheck.v1 import (
    checker_pb2,
    citations_pb2,
    common_pb2,
    council_pb2,
    entailment_pb2,
    extractor_pb2,
    factcheck_pb2,
    knowledge_pb2,
    reporter_pb2,
    reporter_pb2_grpc,
    usage_pb2,
)
from tests.conftest import CONTENT, content_request, suite_environment
from tests.processes import start_suite

pytestmark = pytest.mark.e2e


SEED = int(os.environ.get("FACTCHECK_FUZZ_SEED", "20260112"))
# Requests per fuzzed target; a time budget stops early on a slow machine (the counts say so).
GATEWAY_REQUESTS, MODEL_SERVICE_REQUESTS = 3_000, 3_000
TIME_BUDGET_S = 25.0
CONCURRENCY = 8
UNARY_TIMEOUT_S, RUN_TIMEOUT_S, WATCH_TIMEOUT_S = 8.0, 20.0, 3.0
# How late a call may end after its deadline (the loop is busy, the machine is shared).
DEADLINE_SLACK_S = 3.0
MAX_MESSAGE_BYTES = 1024
BULK_WINDOW = 120  # no 120 characters of a big input may come back in a status message


# --- what to call -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    path: str
    request_type: type[Message]
    server_streaming: bool
    seeds: tuple[Message, ...]
    client_streaming: bool = False

    @property
    def timeout(self) -> float:
        if self.path.endswith("/Run"):
            return RUN_TIMEOUT_S
        return WATCH_TIMEOUT_S if self.path.endswith("/Watch") else UNARY_TIMEOUT_S


def _claims() -> list[common_pb2.Claim]:
    return [
        ExtractedClaim("claim_1", "The Paris Agreement was signed in 2015", "ctx", "DATE").to_proto(),
        ExtractedClaim("claim_2", "196 countries signed it", "ctx", "STATISTIC").to_proto(),
    ]


def _consensus() -> list[common_pb2.ClaimConsensus]:
    verification = ClaimVerification("claim_1", "DISPUTED", "It was 2016.", "Signed in 2016.", "HIGH", "fake/checker-a")
    return [
        ClaimConsensus(
            "claim_1", "Signed in 2015", "ctx", "DATE", (verification,), "DISPUTED", "HIGH", 100.0, "Signed in 2016."
        ).to_proto()
    ]


def gateway_methods() -> list[Method]:
    source = common_pb2.Source(id="s1", title="Paris", text="The Paris Agreement was signed in 2015.")
    return [
        Method(
            "/factcheck.v1.FactCheckService/Run",
            factcheck_pb2.RunRequest,
            True,
            (
                content_request(),
                content_request(checker_models=["fake/checker-a"], sources=[source], evidence_top_k=2),
                content_request(sources=[source], citations=True),
                factcheck_pb2.RunRequest(
                    question="When was the Eiffel Tower built?", mode=factcheck_pb2.MODE_FACT_CHECK
                ),
                content_request(sources=[source], checker_strategy=entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS),
                factcheck_pb2.RunRequest(
                    question="Entailed?",
                    mode=factcheck_pb2.MODE_ENTAILMENT,
                    entailment_config=entailment_pb2.EntailmentConfig(items=[_entailment_item()]),
                ),
            ),
        ),
        Method(
            "/factcheck.v1.FactCheckService/GetResult",
            factcheck_pb2.GetResultRequest,
            False,
            (factcheck_pb2.GetResultRequest(message_id=str(uuid.UUID(int=7))),),
        ),
        Method(
            "/factcheck.v1.FactCheckService/Watch",
            factcheck_pb2.WatchRequest,
            True,
            (factcheck_pb2.WatchRequest(message_id=str(uuid.UUID(int=7)), after_seq=2),),
        ),
        Method(
            "/factcheck.v1.FactCheckService/Cancel",
            factcheck_pb2.CancelRequest,
            False,
            (factcheck_pb2.CancelRequest(message_id=str(uuid.UUID(int=7))),),
        ),
        Method(
            "/factcheck.v1.FactCheckService/ListResults",
            factcheck_pb2.ListResultsRequest,
            False,
            (factcheck_pb2.ListResultsRequest(page_size=3),),
        ),
        Method(
            "/factcheck.v1.KnowledgeService/AddDocuments",
            knowledge_pb2.AddDocumentsRequest,
            False,
            (knowledge_pb2.AddDocumentsRequest(documents=[source]),),
        ),
        Method(
            "/factcheck.v1.KnowledgeService/DeleteDocument",
            knowledge_pb2.DeleteDocumentRequest,
            False,
            (knowledge_pb2.DeleteDocumentRequest(document_id="s1"),),
        ),
        Method(
            "/factcheck.v1.KnowledgeService/ListDocuments",
            knowledge_pb2.ListDocumentsRequest,
            False,
            (knowledge_pb2.ListDocumentsRequest(page_size=2),),
        ),
        Method(
            "/factcheck.v1.KnowledgeService/Search",
            knowledge_pb2.SearchRequest,
            False,
            (knowledge_pb2.SearchRequest(query="Paris Agreement 2015", top_k=3),),
        ),
        Method(
            "/factcheck.v1.ClaimsService/ListClaims",
            citations_pb2.ListClaimsRequest,
            False,
            (citations_pb2.ListClaimsRequest(page_size=3, numeric=True, support=citations_pb2.SUPPORT_TIER_PARTIAL),),
        ),
        Method(
            "/factcheck.v1.ClaimsService/GetClaim",
            citations_pb2.GetClaimRequest,
            False,
            (citations_pb2.GetClaimRequest(claim_id=str(uuid.UUID(int=9))),),
        ),
        Method(
            "/factcheck.v1.UsageService/GetUsage",
            usage_pb2.GetUsageRequest,
            False,
            (usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_MODEL, usage_pb2.USAGE_GROUP_BY_DAY]),),
        ),
        Method(
            "/factcheck.v1.UsageService/PurgeCache",
            usage_pb2.PurgeCacheRequest,
            False,
            (usage_pb2.PurgeCacheRequest(expired_only=True),),
        ),
        *health_methods(),
    ]


def health_methods() -> list[Method]:
    seeds = (health_pb2.HealthCheckRequest(service=""), health_pb2.HealthCheckRequest(service="factcheck.v1.X"))
    health_list = health_pb2.HealthListRequest  # type: ignore[attr-defined]  # (the stubs predate List)
    reflection = (
        reflection_pb2.ServerReflectionRequest(list_services=""),
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="factcheck.v1.FactCheckService"),
    )
    return [
        Method("/grpc.health.v1.Health/Check", health_pb2.HealthCheckRequest, False, seeds),
        Method("/grpc.health.v1.Health/Watch", health_pb2.HealthCheckRequest, True, seeds),
        Method("/grpc.health.v1.Health/List", health_list, False, (health_list(),)),
        *(
            # Reflection's two protocols share one servicer; their messages are the same on the wire.
            Method(
                f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
                reflection_pb2.ServerReflectionRequest,
                True,
                reflection,
                client_streaming=True,
            )
            for version in ("v1", "v1alpha")
        ),
    ]


def extractor_methods() -> list[Method]:
    return [
        Method(
            "/factcheck.v1.ExtractorService/Generate",
            extractor_pb2.GenerateRequest,
            False,
            (extractor_pb2.GenerateRequest(model="fake/generator", question="When was the Eiffel Tower built?"),),
        ),
        Method(
            "/factcheck.v1.ExtractorService/Extract",
            extractor_pb2.ExtractRequest,
            False,
            (extractor_pb2.ExtractRequest(model="fake/extractor", content=CONTENT, max_content_length=600),),
        ),
        Method(
            "/factcheck.v1.ExtractorService/ExtractStream",
            extractor_pb2.ExtractStreamRequest,
            True,
            (extractor_pb2.ExtractStreamRequest(model="fake/extractor", content=CONTENT, max_content_length=600),),
        ),
        *health_methods(),
    ]


def _entailment_item() -> entailment_pb2.EntailmentItem:
    return entailment_pb2.EntailmentItem(
        claim="The Paris Agreement was signed in 2015.",
        source_excerpt="The Paris Agreement was signed in 2015 by 196 parties.",
        source_type="UN treaty collection",
    )


def checker_methods() -> list[Method]:
    request = checker_pb2.VerifyRequest(
        model="fake/checker-a",
        content=CONTENT,
        claims=_claims(),
        passages=[common_pb2.Passage(id="p1", text="Signed in 2015.")],
        evidence=[common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["p1"])],
    )
    council = council_pb2.CouncilCheckRequest(
        model="fake/checker-a",
        question="When was the Paris Agreement signed?",
        responses=[
            council_pb2.LabelledResponse(label="Response A", text="It was signed in 2015."),
            council_pb2.LabelledResponse(label="Response B", text="FACT CHECK SUMMARY:\nResponse B: ACCURATE"),
        ],
        passages=[common_pb2.Passage(id="P1", text="Signed in 2015.")],
    )
    item = _entailment_item()
    statement = entailment_pb2.ExtractedStatement(id=1, text="The Paris Agreement was signed in 2015.")
    agents = (
        entailment_pb2.RunEntailmentAgentRequest(
            model="fake/checker-a",
            extractor=entailment_pb2.ExtractorInput(claim=item.claim, source_excerpt=item.source_excerpt),
        ),
        entailment_pb2.RunEntailmentAgentRequest(
            model="fake/checker-a", reliability=entailment_pb2.ReliabilityInput(source_type=item.source_type)
        ),
        entailment_pb2.RunEntailmentAgentRequest(
            model="fake/checker-a", judge=entailment_pb2.JudgeInput(claim=item.claim, statements=[statement])
        ),
        entailment_pb2.RunEntailmentAgentRequest(
            model="fake/checker-a",
            auditor=entailment_pb2.AuditorInput(
                claim=item.claim,
                source_excerpt=item.source_excerpt,
                judge_verdict=entailment_pb2.ENTAILMENT_VERDICT_SUPPORTED,
                judge_confidence=80,
            ),
        ),
    )
    strategy = checker_pb2.VerifyRequest()
    strategy.CopyFrom(request)
    strategy.strategy = entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS
    review = citations_pb2.ReviewCitationsRequest(
        model="fake/checker-a",
        claims=[citations_pb2.ReviewClaim(claim=_claims()[0], cited_span_ids=["P1"])],
        pool=[citations_pb2.PoolSpan(id="P1", source_id="s1", text="Signed in 2015.")],
    )
    return [
        Method("/factcheck.v1.CheckerService/Verify", checker_pb2.VerifyRequest, False, (request, strategy)),
        Method(
            "/factcheck.v1.CheckerService/RunEntailmentAgent",
            entailment_pb2.RunEntailmentAgentRequest,
            False,
            agents,
        ),
        Method("/factcheck.v1.CheckerService/CouncilCheck", council_pb2.CouncilCheckRequest, False, (council,)),
        Method("/factcheck.v1.CheckerService/ReviewCitations", citations_pb2.ReviewCitationsRequest, False, (review,)),
        *health_methods(),
    ]


def reporter_methods() -> list[Method]:
    report = reporter_pb2.ReportRequest(
        model="fake/reporter", content=CONTENT, consensus=_consensus(), total_claims=1, checker_count=1
    )
    synthesis = council_pb2.SynthesizeRequest(
        model="fake/reporter",
        question="When was the Paris Agreement signed?",
        best_response=council_pb2.LabelledResponse(label="Response A", text="It was signed in 2016."),
        inaccurate_claims=[
            council_pb2.InaccurateClaim(
                label="Response A",
                claim="It was signed in 2016.",
                error_type=council_pb2.ERROR_TYPE_NUMERICAL_ERROR,
                correction="It was signed in 2015.",
            )
        ],
    )
    return [
        Method("/factcheck.v1.ReporterService/Report", reporter_pb2.ReportRequest, False, (report,)),
        Method(
            "/factcheck.v1.ReporterService/Title",
            reporter_pb2.TitleRequest,
            False,
            (reporter_pb2.TitleRequest(model="fake/reporter", question="q", content=CONTENT),),
        ),
        Method("/factcheck.v1.ReporterService/Synthesize", council_pb2.SynthesizeRequest, False, (synthesis,)),
        *health_methods(),
    ]


async def reflected_methods(target: str) -> list[Method]:
    """Every method of every service `target`'s reflection lists, each with an empty request as its seed.

    The request types are built from the file descriptors reflection sends, not from this
    checkout's generated code: what the server publishes is what gets fuzzed."""
    async with grpc.aio.insecure_channel(target) as channel:
        stream = channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )

        async def ask(request: reflection_pb2.ServerReflectionRequest) -> reflection_pb2.ServerReflectionResponse:
            responses = [response async for response in stream(iter([request]), timeout=10)]
            assert len(responses) == 1 and not responses[0].HasField("error_response"), responses
            return responses[0]

        listed = await ask(reflection_pb2.ServerReflectionRequest(list_services=""))
        services = [service.name for service in listed.list_services_response.service]
        files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
        for service in services:
            answer = await ask(reflection_pb2.ServerReflectionRequest(file_containing_symbol=service))
            for raw in answer.file_descriptor_response.file_descriptor_proto:
                proto = descriptor_pb2.FileDescriptorProto.FromString(raw)
                files[proto.name] = proto
    pool = descriptor_pool.DescriptorPool()

    def add(name: str) -> None:
        try:
            pool.FindFileByName(name)
        except KeyError:
            for dependency in files[name].dependency:
                add(dependency)
            pool.Add(files[name])

    for name in files:
        add(name)
    methods = []
    for service in services:
        for method in pool.FindServiceByName(service).methods:
            request_type = message_factory.GetMessageClass(method.input_type)
            path = f"/{service}/{method.name}"
            methods.append(
                Method(path, request_type, method.server_streaming, (request_type(),), method.client_streaming)
            )
    return methods


async def methods_to_fuzz(target: str, seeded: list[Method]) -> list[Method]:
    """Each method `target`'s reflection lists: with its hand-written seeds where there are some.

    A seeded method the server does not serve is a stale table: that fails too."""
    reflected = await reflected_methods(target)
    by_path = {method.path: method for method in seeded}
    stale = set(by_path) - {method.path for method in reflected}
    assert not stale, f"seeded methods {target} does not serve: {sorted(stale)}"
    return [by_path.get(method.path, method) for method in reflected]


# --- what to send --------------------------------------------------------------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def key(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def length_delimited(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


INVALID_UTF8 = [b"\xc3\x28", b"\xff", b"\xed\xa0\x80", b"a\x80b", b"\xf8\x88\x80\x80\x80"]


class Fuzzer:
    """Seeded request generator: one payload (bytes) for a method, and the strings in it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def string(self) -> str:
        rng = self.rng
        roll = rng.random()
        if roll < 0.10:  # a big input: its bulk must not come back in a message
            chunk = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(12))
            return (chunk * (rng.choice([100, 2_000, 10_000, 80_000]) // 12 + 1))[
                : rng.choice([1_000, 20_000, 100_000])
            ]
        pool = [
            "",
            " ",
            "a",
            "fake/checker-a",
            "fake/extractor",
            "fake/reporter",
            "local/checker",
            "no-provider",
            "a/b\x00",
            "\x00",
            "ext/a\n2026-01-01 00:00:00,000 ERROR x: FORGED",
            "é",
            "🙂",
            "\u2028",
            "\u202e",
            "claim_1",
            "p1",
            "s1",
            str(uuid.UUID(int=rng.getrandbits(128))),
            CONTENT,
            "VERIFICATION claim_1: VERIFIED",
        ]
        if roll < 0.7:
            return rng.choice(pool)
        return "".join(
            chr(rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0xD7FF), rng.randint(0xE000, 0x10FFFF)]))
            for _ in range(rng.randint(0, 40))
        )

    def number(self, descriptor_field: d.FieldDescriptor | UpbFieldDescriptor) -> int | float | bool:
        rng = self.rng
        kind = descriptor_field.type
        if kind == d.FieldDescriptor.TYPE_BOOL:
            return rng.random() < 0.5
        if kind in (d.FieldDescriptor.TYPE_FLOAT, d.FieldDescriptor.TYPE_DOUBLE):
            return rng.choice([0.0, -1.0, 0.5, 1.5, 1e30, -1e30, float("nan"), float("inf"), -0.0])
        if kind in (d.FieldDescriptor.TYPE_UINT32, d.FieldDescriptor.TYPE_FIXED32):
            return rng.choice([0, 1, 3, 2**31, 2**32 - 1])
        if kind in (d.FieldDescriptor.TYPE_UINT64, d.FieldDescriptor.TYPE_FIXED64):
            return rng.choice([0, 1, 2**63, 2**64 - 1])
        if kind in (d.FieldDescriptor.TYPE_INT64, d.FieldDescriptor.TYPE_SINT64, d.FieldDescriptor.TYPE_SFIXED64):
            return rng.choice([0, 1, -1, 5, 2**63 - 1, -(2**63), rng.randint(-(10**6), 10**6)])
        return rng.choice([0, 1, -1, 3, 500, 30_000, 2**31 - 1, -(2**31), rng.randint(-1000, 100_000)])

    def fill(self, message: Message, depth: int = 0) -> Message:
        """Random values in random fields of `message` (nested messages up to depth 3)."""
        rng = self.rng
        for descriptor_field in message.DESCRIPTOR.fields:
            if rng.random() < 0.4:
                continue
            repeated = descriptor_field.is_repeated
            count = rng.choice([1, 1, 2, 3, 30]) if repeated else 1
            for _ in range(count):
                try:
                    self._set(message, descriptor_field, repeated, depth)
                except (ValueError, TypeError, OverflowError):
                    pass  # a value this field's Python type refuses; the wire strategies cover it
        return message

    def _set_map_entry(self, container, entry: d.Descriptor | UpbDescriptor, depth: int) -> None:
        """One random entry of a map field (a map is a repeated entry message without `add`)."""
        key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
        key = self.string() if key_field.type == d.FieldDescriptor.TYPE_STRING else self.number(key_field)
        if value_field.type == d.FieldDescriptor.TYPE_MESSAGE:
            if depth < 3:
                self.fill(container[key], depth + 1)
        elif value_field.type == d.FieldDescriptor.TYPE_STRING:
            container[key] = self.string()
        else:
            container[key] = self.number(value_field)

    def _set(
        self, message: Message, descriptor_field: d.FieldDescriptor | UpbFieldDescriptor, repeated: bool, depth: int
    ) -> None:
        name, kind = descriptor_field.name, descriptor_field.type
        entry = descriptor_field.message_type
        if kind == d.FieldDescriptor.TYPE_MESSAGE and entry is not None and entry.GetOptions().map_entry:
            self._set_map_entry(getattr(message, name), entry, depth)
            return
        if kind == d.FieldDescriptor.TYPE_MESSAGE:
            if depth >= 3:
                return
            target = getattr(message, name).add() if repeated else getattr(message, name)
            self.fill(target, depth + 1)
            if not repeated:
                target.SetInParent()
            return
        value: str | bytes | int | float | bool
        if kind == d.FieldDescriptor.TYPE_STRING:
            value = self.string()
        elif kind == d.FieldDescriptor.TYPE_BYTES:
            value = self.rng.randbytes(self.rng.randint(0, 64))
        elif kind == d.FieldDescriptor.TYPE_ENUM:
            assert descriptor_field.enum_type is not None  # (an enum field's)
            known = [v.number for v in descriptor_field.enum_type.values]
            value = self.rng.choice([*known, -1, 7, 99, 2**31 - 1])
        else:
            value = self.number(descriptor_field)
        if repeated:
            getattr(message, name).append(value)
        else:
            setattr(message, name, value)

    def mutate(self, data: bytes) -> bytes:
        rng = self.rng
        buffer = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            choice = rng.randrange(7)
            position = rng.randint(0, len(buffer))
            if choice == 0 and buffer:  # flip a bit
                index = rng.randrange(len(buffer))
                buffer[index] ^= 1 << rng.randrange(8)
            elif choice == 1:  # insert random bytes
                buffer[position:position] = rng.randbytes(rng.randint(1, 8))
            elif choice == 2 and buffer:  # delete a run
                del buffer[position : position + rng.randint(1, 8)]
            elif choice == 3:  # truncate
                del buffer[position:]
            elif choice == 4 and buffer:  # repeat a slice
                start = rng.randrange(len(buffer))
                buffer[position:position] = buffer[start : start + rng.randint(1, 32)] * rng.randint(1, 4)
            elif choice == 5:  # an interesting byte
                buffer[position:position] = bytes([rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x08, 0x12])])
            else:  # a 10-byte varint (overflow) in a random field
                buffer += key(rng.randint(1, 20), 0) + b"\xff" * 9 + b"\x01"
        return bytes(buffer)

    def payload(self, method: Method) -> tuple[str, bytes]:
        """(strategy, request bytes) for one call."""
        rng = self.rng
        seed = rng.choice(method.seeds)
        strategy = rng.choices(
            ["random-bytes", "mutated", "random-fields", "seed-plus-fields", "invalid-utf8", "deep-groups", "valid"],
            weights=[12, 30, 20, 18, 8, 4, 8],
        )[0]
        if strategy == "random-bytes":
            return strategy, rng.randbytes(rng.choice([0, 1, 2, 5, 16, 64, 512, 4096]))
        if strategy == "mutated":
            return strategy, self.mutate(seed.SerializeToString())
        if strategy == "random-fields":
            return strategy, self.fill(method.request_type()).SerializeToString()
        if strategy == "seed-plus-fields":
            message = method.request_type()
            message.CopyFrom(seed)
            return strategy, self.fill(message).SerializeToString()
        if strategy == "invalid-utf8":
            strings = [
                f.number for f in method.request_type.DESCRIPTOR.fields if f.type == d.FieldDescriptor.TYPE_STRING
            ]
            number = rng.choice(strings or [1])
            return strategy, seed.SerializeToString() + length_delimited(number, rng.choice(INVALID_UTF8))
        if strategy == "deep-groups":
            depth = rng.choice([50, 200, 5_000])
            return strategy, seed.SerializeToString() + key(99, 3) * depth + key(99, 4) * depth
        return strategy, seed.SerializeToString()


# --- calling and checking ------------------------------------------------------------------------------------


@dataclass
class Report:
    target: str
    tried: int = 0
    statuses: Counter = field(default_factory=Counter)
    strategies: Counter = field(default_factory=Counter)
    methods: Counter = field(default_factory=Counter)
    worst_latency_s: float = 0.0
    worst_call: str = ""
    problems: list[str] = field(default_factory=list)
    stopped_early: bool = False

    def problem(self, text: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(text)

    def summary(self) -> str:
        statuses = ", ".join(f"{name} {count}" for name, count in self.statuses.most_common())
        return (
            f"fuzz {self.target} (seed {SEED}): {self.tried} requests{' (time budget hit)' if self.stopped_early else ''}; "
            f"statuses: {statuses}; worst latency {self.worst_latency_s:.2f}s ({self.worst_call})"
        )


async def _call(channel: grpc.aio.Channel, method: Method, payload: bytes) -> tuple[grpc.StatusCode, str]:
    # (No serializers: bytes both ways, which the annotations tell mypy.)
    unary_stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes]
    if method.path.endswith("/Watch"):  # a watch never ends: its first answer is the result
        unary_stream = channel.unary_stream(method.path)
        call = unary_stream(payload, timeout=method.timeout)
        try:
            await call.read()
            return grpc.StatusCode.OK, ""
        finally:
            call.cancel()
    if method.client_streaming:  # one request message, then the responses to it
        stream_stream: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(method.path)
        async for _ in stream_stream(iter([payload]), timeout=method.timeout):
            pass
        return grpc.StatusCode.OK, ""
    if method.server_streaming:
        unary_stream = channel.unary_stream(method.path)
        async for _ in unary_stream(payload, timeout=method.timeout):
            pass
        return grpc.StatusCode.OK, ""
    unary_unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(method.path)
    await unary_unary(payload, timeout=method.timeout)
    return grpc.StatusCode.OK, ""


def _echoes_bulk(details: str, payload: bytes) -> bool:
    if len(payload) < 1_000 or len(details) < BULK_WINDOW:
        return False
    text = payload.decode("utf-8", "replace")
    return any(details[i : i + BULK_WINDOW] in text for i in range(0, len(details) - BULK_WINDOW + 1, 10))


async def fuzz(target: str, name: str, methods: list[Method], count: int, fuzzer: Fuzzer) -> Report:
    """Send `count` fuzzed requests (spread over `methods`) to `target`; check every outcome."""
    report = Report(name)
    started = time.monotonic()
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(method: Method, strategy: str, payload: bytes) -> None:
        async with semaphore:
            begun = time.monotonic()
            try:
                code, details = await _call(channel, method, payload)
            except grpc.aio.AioRpcError as error:
                code, details = error.code(), error.details() or ""
            elapsed = time.monotonic() - begun
        label = f"{method.path} {strategy} {len(payload)}B"
        report.tried += 1
        report.statuses[code.name] += 1
        report.strategies[strategy] += 1
        report.methods[method.path] += 1
        if elapsed > report.worst_latency_s:
            report.worst_latency_s, report.worst_call = elapsed, label
        if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
            report.problem(f"{code.name} from {label}: {details[:300]!r}")
        if elapsed > method.timeout + DEADLINE_SLACK_S:
            report.problem(f"{label} took {elapsed:.1f}s, past its {method.timeout}s deadline")
        if len(details.encode("utf-8", "replace")) >= MAX_MESSAGE_BYTES:
            report.problem(f"{label}: a {len(details)}-character message")
        if _echoes_bulk(details, payload):
            report.problem(f"{label}: the message echoes the input: {details[:200]!r}")

    async with grpc.aio.insecure_channel(target) as channel:
        tasks: list[asyncio.Task] = []
        try:
            for index in range(count):
                if time.monotonic() - started > TIME_BUDGET_S:
                    report.stopped_early = True
                    break
                method = methods[index % len(methods)]
                strategy, payload = fuzzer.payload(method)
                tasks.append(asyncio.create_task(one(method, strategy, payload)))
                if len(tasks) >= CONCURRENCY * 4:  # keep memory flat: wait for the oldest batch
                    await asyncio.gather(*tasks[: CONCURRENCY * 2])
                    del tasks[: CONCURRENCY * 2]
        finally:
            await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*tasks)
    print(report.summary(), flush=True)
    return report


async def assert_serving(target: str) -> None:
    from grpc_health.v1 import health_pb2_grpc

    async with grpc.aio.insecure_channel(target) as channel:
        # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
        response = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)  # type: ignore[attr-defined]
    assert response.status == health_pb2.HealthCheckResponse.SERVING


# --- the tests -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def suite(fake_models, suite_database):
    """A suite of its own: the fuzzer leaves runs and documents behind, and runs still going."""
    running = start_suite(suite_environment(fake_models, suite_database))
    yield running
    running.stop()


async def test_fuzzed_requests_to_every_rpc_end_with_a_sound_status(suite, suite_database, fake_models):
    fake_models.reset()
    backend = "postgresql" if suite_database.startswith("postgresql") else "sqlite"
    fuzzer = Fuzzer(SEED)
    targets: list[tuple[str, str, list[Method], int]] = [
        (suite.gateway_target, f"gateway/{backend}", gateway_methods(), GATEWAY_REQUESTS)
    ]
    if backend == "sqlite":  # the stateless services do not depend on the gateway's database
        targets += [
            (suite.services["extractor"].target, "extractor", extractor_methods(), MODEL_SERVICE_REQUESTS // 3),
            (suite.services["checker"].target, "checker", checker_methods(), MODEL_SERVICE_REQUESTS // 3),
            (suite.services["reporter"].target, "reporter", reporter_methods(), MODEL_SERVICE_REQUESTS // 3),
        ]
    reports = []
    for target, name, seeded, count in targets:
        methods = await methods_to_fuzz(target, seeded)
        report = await fuzz(target, name, methods, count, fuzzer)
        assert set(report.methods) == {method.path for method in methods}, f"{name}: a method was never called"
        reports.append(report)

    for name, service in suite.services.items():
        assert service.process.poll() is None, f"{name} died:\n" + "\n".join(service.output[-30:])
        await assert_serving(service.target)
    problems = [problem for report in reports for problem in report.problems]
    assert not problems, "\n".join(problems)
    logs = suite.logs()
    assert "Unexpected [" not in logs  # grpc's own UNKNOWN path never runs
    assert "internal error" not in logs
    total = sum(report.tried for report in reports)
    print(f"fuzz total ({backend}): {total} requests", flush=True)


class _BuggyReporter(reporter_pb2_grpc.ReporterServiceServicer):
    async def Title(self, request, context):
        raise RuntimeError("injected bug")


async def test_the_fuzzer_reports_an_injected_bug(caplog):
    """An INTERNAL from a deliberate bug is caught by the same checks, with its id in the log."""
    server = new_server(Settings())
    reporter_pb2_grpc.add_ReporterServiceServicer_to_server(_BuggyReporter(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        title = Method(
            "/factcheck.v1.ReporterService/Title",
            reporter_pb2.TitleRequest,
            False,
            (reporter_pb2.TitleRequest(model="fake/reporter", question="q"),),
        )
        report = await fuzz(f"127.0.0.1:{port}", "buggy reporter", [title], 60, Fuzzer(SEED))
    finally:
        await server.stop(None)
    assert report.statuses["INTERNAL"] > 0 and report.statuses["UNKNOWN"] == 0
    assert report.statuses["INVALID_ARGUMENT"] > 0  # undecodable bytes never reach the bug
    assert any(problem.startswith("INTERNAL from") for problem in report.problems)
    logged = [record.getMessage() for record in caplog.records if "internal error" in record.getMessage()]
    assert len(logged) == report.statuses["INTERNAL"]
