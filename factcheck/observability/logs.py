"""Logging setup of every process: text for people, JSON for log pipelines (FACTCHECK_LOG_FORMAT).

JSON lines carry the service, the run's message_id and the trace and span ids (when tracing
is on), so one run can be followed across services. Every line passes the secrets filter.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone

from factcheck.observability import tracing
from factcheck.observability.context import current_message_id
from factcheck.security.secrets import RedactSecrets
from factcheck.settings import Settings

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RunContextFilter(logging.Filter):
    """Stamps each record, where it is created, with the run's message_id and the trace ids."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.message_id = current_message_id()
        ids = tracing.current_ids()
        record.trace_id, record.span_id = ids if ids else (None, None)
        return True


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
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(settings: Settings, service: str = "factcheck") -> None:
    """One stderr handler for the root logger: run context, secrets masked, text or JSON."""
    handler = logging.StreamHandler()
    handler.addFilter(RunContextFilter())
    handler.addFilter(RedactSecrets(settings.secrets()))
    handler.setFormatter(JsonFormatter(service) if settings.log_format == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=settings.log_level.upper(), handlers=[handler], force=True)
