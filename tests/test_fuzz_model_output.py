"""Fuzzing the model side: a scripted model server answers every model-calling RPC with fuzzed bodies.

The extractor, checker and reporter run as real server processes (interceptors, options and
all, as `factcheck serve` runs them); the fake model server on loopback answers each model id
with one generated output: random bytes, mutated and truncated JSON, wrong shapes, huge and
deeply nested bodies, odd encodings and Content-Encoding/Content-Type headers, lone
surrogates and control characters, huge numbers, HTTP error codes with odd bodies, broken
HTTP, and valid answers with mutated text. Every output is sent to Generate, Extract, Verify,
Report and Title.

Asserted: no UNKNOWN or INTERNAL status, no call that runs into its deadline, every status
message a short single line (under 1 KB, so free of the body's bulk), every process alive and
serving at the end. Seeded (FACTCHECK_FUZZ_SEED, default 12) and bounded: a few hundred
outputs, a few with bodies of megabytes. Run with -s to see the counts.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import time
import zlib
from collections import Counter
from typing import Any, Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    citations_pb2,
    common_pb2,
    extractor_pb2,
    extractor_pb2_grpc,
    reporter_pb2,
    reporter_pb2_grpc,
)
from tests.fake_model_server import (
    Behaviour,
    FakeModelServer,
    HttpAnswer,
    completion_answer,
    default_answer,
    raw_bytes,
    raw_response,
)
from tests.processes import ServiceProcess, start_services, stop_services

SEED = int(os.environ.get("FACTCHECK_FUZZ_SEED", "12"))
OUTPUTS_PER_KIND = 24
CALL_DEADLINE_S = 20.0
IN_FLIGHT = 6
MESSAGE_LIMIT_BYTES = 1024
ACCEPTED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.FAILED_PRECONDITION,
}

PROTOCOL_FRAGMENTS = [
    "VERIFICATION claim_1: VERIFIED",
    "> VERIFICATION claim_2: DISPUTED",
    "**VERIFICATION 3: unverifiable**",
    "Verdict: DISPUTED",
    "Evidence:",
    "Correction: N/A",
    "Confidence: HIGH",
    "VERIFICATION SUMMARY:",
    "CLAIM 1: ",
    "Context: ",
    "Type: DATE",
    "EXTRACTION SUMMARY:",
    "## Overall Reliability Score: ",
    "Overall Reliability Score: 9999999999999999999999",
    "Title: ",
    "[P1] ",
    "\\ud800",
    "\\udfff",
    "\\u0000",
    "\\u001b[2J",
    "\\u202e",
    "\\n",
    "\\r",
    "\\t",
    "\\\\",
    '\\"',
    "#" * 7,
    "    ",
    "`",
    "\\ud83d\\ude00",
]


# --- the outputs ------------------------------------------------------------------------------------


def _completion(content_json: str, usage_json: str = "{}", extra: str = "") -> bytes:
    return (
        '{"choices":[{"message":{"role":"assistant","content":'
        + content_json
        + "}}],"
        + extra
        + '"usage":'
        + usage_json
        + "}"
    ).encode()


def _fuzzed_text_json(rng: random.Random, size: int) -> str:
    """A JSON string literal of protocol fragments, escapes (lone surrogates among them) and noise."""
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        if rng.random() < 0.6:
            parts.append(rng.choice(PROTOCOL_FRAGMENTS))
        else:
            parts.append(
                "".join(chr(rng.choice((rng.randint(32, 126), rng.randint(0xA0, 0x2FFF)))) for _ in range(8))
                .replace("\\", "/")
                .replace('"', "'")
            )
    return '"' + "".join(parts) + '"'


def _mutate(data: bytes, rng: random.Random, edits: int) -> bytes:
    buffer = bytearray(data)
    for _ in range(edits):
        choice = rng.random()
        position = rng.randrange(len(buffer) + 1)
        if choice < 0.4 and buffer:
            buffer[min(position, len(buffer) - 1)] = rng.randrange(256)
        elif choice < 0.7:
            buffer[position:position] = bytes([rng.choice(b'[]{}",:\\0123456789ntfe\xff\xc3')])
        elif buffer:
            del buffer[min(position, len(buffer) - 1)]
    return bytes(buffer)


def _headers_answer(status: int, body: bytes, headers: tuple[tuple[str, str], ...]) -> Behaviour:
    answer = HttpAnswer(status, body, headers)
    return Behaviour(f"headers({status}, {headers!r:.60})", lambda request, stop: answer)


def _mutated_default(seed: int, edits: int) -> Behaviour:
    """The well-formed answer for the prompt's kind, with its text mutated (protocol fragments, noise)."""

    def action(request, stop) -> HttpAnswer:
        rng = random.Random(seed)
        text = default_answer(request.prompt)
        lines = text.split("\n")
        for _ in range(edits):
            index = rng.randrange(len(lines) + 1)
            fragment = json.loads(_fuzzed_text_json(rng, rng.randint(1, 60)), strict=False)
            if rng.random() < 0.5 and lines:
                lines[min(index, len(lines) - 1)] = fragment + lines[min(index, len(lines) - 1)]
            else:
                lines.insert(index, fragment)
        return completion_answer(request.model, "\n".join(lines), prompt=request.prompt)

    return Behaviour(f"mutated_default({seed}, {edits})", action)


def generate_outputs(seed: int) -> list[tuple[str, Behaviour]]:
    """(kind, behaviour) pairs: the model outputs to try, deterministic for a seed."""
    rng = random.Random(seed)
    outputs: list[tuple[str, Behaviour]] = []

    def add(kind: str, behaviour: Behaviour) -> None:
        outputs.append((kind, behaviour))

    valid = _completion('"VERIFICATION claim_1: VERIFIED\\nEvidence: ok\\nConfidence: HIGH"', '{"prompt_tokens":3}')
    for _ in range(OUTPUTS_PER_KIND):
        add(
            "random-bytes",
            raw_bytes(
                rng.randbytes(rng.randint(0, 4096)),
                content_type=rng.choice(["application/json", "text/plain", "application/octet-stream"]),
            ),
        )
        add("mutated-json", raw_bytes(_mutate(valid, rng, rng.randint(1, 12))))
        add("truncated-json", raw_bytes(valid[: rng.randrange(len(valid))]))
        add("fuzzed-text", raw_bytes(_completion(_fuzzed_text_json(rng, rng.randint(0, 3000)))))
        add("mutated-answer", _mutated_default(rng.randrange(2**32), rng.randint(1, 20)))
        shape = rng.choice(
            [
                '{"choices": {}}',
                '{"choices": "text"}',
                '{"choices": [null]}',
                '{"choices": [{"message": null}]}',
                '{"choices": [{"message": {"content": 42}}]}',
                '{"choices": [{"message": {"content": [{"text": 1}, "x", null, {"text": "\\ud800"}]}}]}',
                '{"choices": [{"message": {"content": {"text": "x"}}}]}',
                '{"choices": [], "usage": []}',
                "[]",
                '"just a string"',
                "null",
                "1e999",
                '{"error": {"message": "200 but an error \\udc00"}}',
            ]
        )
        add("wrong-shape", raw_bytes(shape.encode()))
        usage = rng.choice(
            [
                '{"prompt_tokens": 1099511627777, "completion_tokens": 1, "total_tokens": 1099511627778}',
                '{"prompt_tokens": -1, "completion_tokens": 1e999, "total_tokens": NaN}',
                '{"prompt_tokens": ' + "9" * rng.randint(19, 5000) + "}",
                '{"prompt_tokens": "12", "total_tokens": [1]}',
                '{"total_tokens": 2147483648}',
                "Infinity",
            ]
        )
        add(
            "huge-numbers",
            raw_bytes(_completion('"Title: ok"', usage, extra='"created": ' + "1" * rng.randint(1, 400) + ",")),
        )
        depth = rng.choice([65, 1000, 100_000])
        opener = rng.choice([b"[", b'{"a":', b'{"choices":['])
        add("nested", raw_bytes(opener * depth + (b"]" * depth if opener == b"[" and rng.random() < 0.5 else b"")))
        plain = _completion(_fuzzed_text_json(rng, rng.randint(0, 500)))
        encoding = rng.choice(["gzip", "deflate", "br", "zstd", "identity", "gzip, gzip", "x-garbage", ""])
        body = rng.choice([plain, gzip.compress(plain), zlib.compress(plain), gzip.compress(plain)[:20]])
        content_type = rng.choice(
            ["application/json", "application/json; charset=utf-16", "text/html", "", "\u00e9/\u00e9"]
        )
        headers: tuple[tuple[str, str], ...] = (("Content-Type", content_type), ("Content-Encoding", encoding))
        add("content-encoding", _headers_answer(200, body, headers))
        codec = rng.choice(["utf-16", "utf-16-le", "utf-32", "utf-8-sig", "latin-1", "cp1252"])
        text = _completion('"caf\u00e9 \u2014 VERIFICATION claim_1: VERIFIED"').decode()
        add("odd-charset", raw_bytes(text.encode(codec, errors="replace")))
        add(
            "surrogates",
            raw_bytes(
                _completion(
                    '"'
                    + "".join(
                        rng.choice(["\\ud800", "\\udfff", "\\ud83d", "\\u0000", "\\u0085", "ok ", "\\n"])
                        for _ in range(rng.randint(1, 200))
                    )
                    + '"'
                )
            ),
        )
        status = rng.choice(
            [400, 401, 403, 404, 408, 409, 413, 418, 422, 429, 451, 500, 502, 503, 504, 599, 302, 204, 999]
        )
        error_body = rng.choice(
            [
                b'{"error":{"message":"model overloaded \\ud83d"}}',
                json.dumps({"error": {"message": "\U0001f525\n" * rng.randint(1, 3000)}}).encode(),
                rng.randbytes(rng.randint(0, 3000)),
                b'{"error": ' + b"[" * 5000 + b"}",
                b'{"detail": "' + b"\\u0000\\u001b" * 500 + b'"}',
                b"",
            ]
        )
        retry_after = rng.choice([None, "0", "0.01", "inf", "nan", "-3", "Wed, 21 Oct 2015 07:28:00 GMT", "\u00e9"])
        headers = (("Content-Type", "application/json"),) + ((("Retry-After", retry_after),) if retry_after else ())
        add("http-error", _headers_answer(status, error_body, headers))
        add(
            "broken-http",
            raw_response(
                rng.choice(
                    [
                        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{",
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                        b"HTTP/1.1 abc\r\n\r\n",
                        b"\x16\x03\x01\x02\x00",
                        rng.randbytes(rng.randint(1, 300)),
                        b"HTTP/1.1 200 OK\r\n" + b"X-A: " + b"a" * 70_000 + b"\r\n\r\n",
                    ]
                )
            ),
        )
    # A few huge bodies: megabytes of text, of claims, of brackets inside strings, of an error.
    huge_text = "VERIFICATION claim_1: VERIFIED\\nEvidence: " + "lorem ipsum " * 250_000
    add("huge", raw_bytes(_completion('"' + huge_text + '"')))
    claims = "".join(
        f"CLAIM {n}: Claim number {n} was made in 1999\\nContext: c\\nType: DATE\\n" for n in range(60_000)
    )
    add("huge", raw_bytes(_completion('"' + claims + '"')))
    add("huge", raw_bytes(_completion('"' + "[" * 4_000_000 + '"')))
    add("huge", raw_bytes(b'{"error":{"message":"' + b"x" * 6_000_000 + b'"}}', status=500))
    add("huge", raw_bytes(_completion('"' + "x" * (17 * 1024 * 1024) + '"')))
    return outputs


# --- the suite ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_models() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def services(fake_models) -> Iterator[dict[str, ServiceProcess]]:
    env = {
        "FACTCHECK_MODEL_BASE_URL": fake_models.base_url,
        "FACTCHECK_MODEL_MAX_RETRIES": "1",
        "FACTCHECK_MODEL_BACKOFF_BASE_S": "0.01",
    }
    running = start_services(("extractor", "checker", "reporter"), env)
    try:
        yield running
    finally:
        stop_services(running.values())


CONTENT = "The Paris Agreement was signed in 2015 by 196 countries. Water boils at 100 C at sea level."


def _consensus() -> list:
    verification = ClaimVerification("claim_1", "VERIFIED", "Documented.", None, "HIGH", "fake/checker")
    item = ClaimConsensus("claim_1", "Signed in 2015", "ctx", "DATE", (verification,), "VERIFIED", "HIGH", 100.0, None)
    return [item.to_proto()]


def _calls(channels: dict[str, grpc.aio.Channel], model: str) -> dict[str, Any]:
    extractor = extractor_pb2_grpc.ExtractorServiceStub(channels["extractor"])
    checker = checker_pb2_grpc.CheckerServiceStub(channels["checker"])
    reporter = reporter_pb2_grpc.ReporterServiceStub(channels["reporter"])
    passage = common_pb2.Passage(id="P1", source_id="s1", text="The Paris Agreement was signed in 2015 by 196 parties.")
    claims = [
        ExtractedClaim("claim_1", "The Paris Agreement was signed in 2015", "ctx", "DATE").to_proto(),
        ExtractedClaim("claim_2", "Water boils at 100 C at sea level", "ctx", "STATISTIC").to_proto(),
    ]
    return {
        "Generate": lambda: extractor.Generate(
            extractor_pb2.GenerateRequest(model=model, question="q"), timeout=CALL_DEADLINE_S
        ),
        "Extract": lambda: extractor.Extract(
            extractor_pb2.ExtractRequest(model=model, content=CONTENT), timeout=CALL_DEADLINE_S
        ),
        "Verify": lambda: checker.Verify(
            checker_pb2.VerifyRequest(model=model, content=CONTENT, claims=claims), timeout=CALL_DEADLINE_S
        ),
        "Report": lambda: reporter.Report(
            reporter_pb2.ReportRequest(model=model, content=CONTENT, consensus=_consensus(), checker_count=1),
            timeout=CALL_DEADLINE_S,
        ),
        "Title": lambda: reporter.Title(
            reporter_pb2.TitleRequest(model=model, question="q", content=CONTENT), timeout=CALL_DEADLINE_S
        ),
        # Claim-level citations: the CLAIM DETAIL and SUPPORT sections, and the review.
        "Extract+profiles": lambda: extractor.Extract(
            extractor_pb2.ExtractRequest(model=model, content=CONTENT, profiles=True), timeout=CALL_DEADLINE_S
        ),
        "Verify+tiers": lambda: checker.Verify(
            checker_pb2.VerifyRequest(
                model=model,
                content=CONTENT,
                claims=claims,
                passages=[passage],
                evidence=[common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1"])],
                support_tiers=True,
            ),
            timeout=CALL_DEADLINE_S,
        ),
        "ReviewCitations": lambda: checker.ReviewCitations(
            citations_pb2.ReviewCitationsRequest(
                model=model,
                claims=[citations_pb2.ReviewClaim(claim=claims[0], cited_span_ids=["P1"])],
                pool=[citations_pb2.PoolSpan(id="P1", source_id="s1", text=passage.text)],
            ),
            timeout=CALL_DEADLINE_S,
        ),
    }


def _check_message(details: str, where: str) -> None:
    assert len(details.encode("utf-8")) < MESSAGE_LIMIT_BYTES, where
    assert "\n" not in details and "\r" not in details, where


async def test_fuzzed_model_outputs_never_break_an_rpc(services, fake_models):
    outputs = generate_outputs(SEED)
    channels = {
        name: grpc.aio.insecure_channel(service.target, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        for name, service in services.items()
    }
    statuses: Counter[str] = Counter()
    per_kind: Counter[str] = Counter()
    failures: list[str] = []
    worst = (0.0, "")
    limit = asyncio.Semaphore(IN_FLIGHT)

    async def run_one(index: int, kind: str, rpc: str, call) -> None:
        nonlocal worst
        async with limit:
            started = time.monotonic()
            try:
                response = await call()
                code, details = grpc.StatusCode.OK, ""
                label = "OK (fallback)" if getattr(response, "fallback", False) else "OK"
            except grpc.aio.AioRpcError as error:
                code, details = error.code(), error.details() or ""
                label = code.name
            elapsed = time.monotonic() - started
        where = f"output #{index} ({kind}) to {rpc}: {code.name} {details[:300]!r}"
        statuses[f"{rpc} {label}"] += 1
        per_kind[kind] += 1
        if elapsed > worst[0]:
            worst = (elapsed, where)
        try:
            assert code in ACCEPTED, where
            _check_message(details, where)
        except AssertionError as problem:
            failures.append(str(problem))

    started = time.monotonic()
    try:
        tasks = []
        for index, (kind, behaviour) in enumerate(outputs):
            model = f"fuzz/{index}"
            fake_models.script(model, behaviour)
            tasks += [run_one(index, kind, rpc, call) for rpc, call in _calls(channels, model).items()]
        await asyncio.gather(*tasks)
        total_s = time.monotonic() - started

        # Every server is alive, serving, and still answers a good model normally.
        for name, service in services.items():
            assert service.process.poll() is None, f"{name} died:\n" + "\n".join(service.output[-30:])
            health = health_pb2_grpc.HealthStub(channels[name])
            # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
            reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=5)  # type: ignore[attr-defined]
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        for rpc, call in _calls(channels, "fake/healthy").items():
            await call()
    finally:
        for channel in channels.values():
            await channel.close()

    calls = sum(statuses.values())
    print(
        f"\nmodel-output fuzz (seed {SEED}): {len(outputs)} model outputs tried, {calls} RPCs in {total_s:.1f}s, "
        f"worst latency {worst[0]:.2f}s ({worst[1][:120]})"
    )
    print("  outputs by kind: " + ", ".join(f"{kind} {count // 5}" for kind, count in sorted(per_kind.items())))
    print("  statuses: " + ", ".join(f"{label} {count}" for label, count in sorted(statuses.items())))
    assert not failures, f"{len(failures)} bad outcomes, first ones:\n" + "\n".join(failures[:10])
    assert worst[0] < CALL_DEADLINE_S
