"""One log record is one line, in text and JSON formats, whatever a logged field holds (once,
a model id with a newline wrote a forged line into the extractor's log)."""

from __future__ import annotations

import json
import logging
import re
import sys

import grpc
import pytest

from factcheck.kit.observability.logs import (
    QUIET_LIBRARY_LOGGERS,
    TEXT_FORMAT,
    JsonFormatter,
    OneLineFormatter,
    configure_logging,
)
from factcheck.kit.settings import Settings
from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from tests.fake_model_server import FakeModelServer, fail
from tests.processes import start_service

FORGED = "2026-01-01 00:00:00,000 ERROR factcheck.extractor: FORGED LOG LINE"
HOSTILE = f"first\n{FORGED}\r\u2028\u2029\x85 lone \ud800 bidi \u202e end"
TEXT_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) \S+: ")


def _record(message: str, *args, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc else None
    return logging.LogRecord("factcheck.test", logging.WARNING, __file__, 1, message, args, exc_info)


def _raised() -> BaseException:
    try:
        raise RuntimeError(HOSTILE)
    except RuntimeError as error:
        return error


@pytest.mark.parametrize("formatter", [OneLineFormatter(TEXT_FORMAT), JsonFormatter("test")], ids=["text", "json"])
def test_a_hostile_field_stays_inside_its_one_line_record(formatter):
    for record in (_record("model %s failed", HOSTILE), _record(HOSTILE), _record("failed", exc=_raised())):
        line = formatter.format(record)
        assert len(line.splitlines()) == 1, line
        line.encode("utf-8")  # a lone surrogate would break the stream's encoding
        assert FORGED in line  # kept, escaped, readable
        if isinstance(formatter, JsonFormatter):
            entry = json.loads(line)
            assert FORGED in entry["message"] + entry.get("exception", "")


@pytest.fixture
def restored_logging():
    root = logging.getLogger()
    saved = (root.level, list(root.handlers), {name: logging.getLogger(name).level for name in QUIET_LIBRARY_LOGGERS})
    yield
    root.setLevel(saved[0])
    root.handlers[:] = saved[1]
    for name, level in saved[2].items():
        logging.getLogger(name).setLevel(level)


def test_httpx_request_lines_are_left_out_below_debug_and_its_warnings_kept(restored_logging):
    """The model client logs each call once; httpx's own INFO line per request would be a second."""
    configure_logging(Settings(log_level="INFO"), "test")
    assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
    assert logging.getLogger("httpx").isEnabledFor(logging.WARNING)
    assert logging.getLogger("factcheck.models").isEnabledFor(logging.INFO)
    configure_logging(Settings(log_level="DEBUG"), "test")
    assert logging.getLogger("httpx").isEnabledFor(logging.DEBUG)


@pytest.fixture(scope="module")
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.mark.e2e
@pytest.mark.parametrize("log_format", ["text", "json"])
async def test_the_extractor_refuses_a_model_id_with_a_newline_and_its_log_has_no_forged_line(fake_models, log_format):
    fake_models.script("fake/forger", fail(500, body={"error": {"message": f"upstream said:\n{FORGED}"}}))
    extractor = start_service(
        "extractor",
        {
            "FACTCHECK_LOG_FORMAT": log_format,
            "FACTCHECK_MODEL_BASE_URL": fake_models.base_url,
            "FACTCHECK_MODEL_MAX_RETRIES": "0",
        },
    )
    try:
        async with grpc.aio.insecure_channel(extractor.target) as channel:
            stub = extractor_pb2_grpc.ExtractorServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Extract(extractor_pb2.ExtractRequest(model=f"ext/a\n{FORGED}", content="x"), timeout=10)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "\n" not in (refused.value.details() or "")
            # A provider message with the forged line is logged (as a warning), escaped.
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await stub.Extract(extractor_pb2.ExtractRequest(model="fake/forger", content="x"), timeout=10)
            assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        extractor.stop()
    logged = [line for line in extractor.output if " listening on " not in line]
    assert any("FORGED LOG LINE" in line for line in logged), extractor.output
    for line in logged:
        assert not line.startswith("2026-01-01"), line
        if log_format == "json":
            json.loads(line)
        else:
            assert TEXT_LINE.match(line), line
    print(f"{log_format}: {len(logged)} log lines, each one record", file=sys.stderr)
