"""Logging setup of every process: text for people, JSON for log pipelines (FACTCHECK_LOG_FORMAT).

JSON lines carry the service, the run's message_id and the trace and span ids (when tracing
is on), so one run can be followed across services. Every line passes the secrets filter.

One record is one line in both formats, whatever a logged field holds (a model id with a
newline, a provider message with a lone surrogate, a traceback): control characters, line
separators and lone surrogates are escaped, so no field can forge a record or break the
stream's encoding.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime, timezone

from factcheck.kit.observability import tracing
from factcheck.kit.observability.context import current_message_id
from factcheck.kit.security.secrets import RedactSecrets
from factcheck.kit.settings import Settings
from factcheck.text.text_safety import escape_controls

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# httpx logs every request at INFO, the same call the model client's own line reports (model,
# outcome, latency): a second line per model call, written on the event loop of every worker
# service, was ~10% of a service's CPU per call. Their warnings still pass; at DEBUG, everything.
QUIET_LIBRARY_LOGGERS = ("httpx", "httpcore")


class RunContextFilter(logging.Filter):
    """Stamps each record, where it is created, with the run's message_id and the trace ids."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.message_id = current_message_id()
        ids = tracing.current_ids()
        record.trace_id, record.span_id = ids if ids else (None, None)
        return True


# JSON already escapes C0 controls; these it leaves raw, yet they break lines or UTF-8.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


class OneLineFormatter(logging.Formatter):
    """The text format, with the record (traceback included) kept on one line."""

    def format(self, record: logging.LogRecord) -> str:
        return escape_controls(super().format(record))


class JsonFormatter(logging.Formatter):
    def __init__(self, service: str) -> None:
        super().__init__()
        self._service = service

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "service": self._service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key in ("message_id", "trace_id", "span_id"):
            value = getattr(record, key, None)
            if value:
                entry[key] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return _JSON_UNSAFE.sub(_json_escape, json.dumps(entry, ensure_ascii=False))


def configure_logging(settings: Settings, service: str = "factcheck") -> None:
    """One stderr handler for the root logger: run context, secrets masked, text or JSON."""
    handler = logging.StreamHandler()
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactSecrets(settings.secrets()))
    handler.setFormatter(JsonFormatter(service) if settings.log_format == "json" else OneLineFormatter(TEXT_FORMAT))
    logging.basicConfig(level=settings.log_level.upper(), handlers=[handler], force=True)
    quiet = logging.getLogger().level > logging.DEBUG  # at DEBUG, their request lines help
    for name in QUIET_LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING if quiet else logging.NOTSET)
