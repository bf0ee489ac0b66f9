"""Keep secrets out of logs: a logging filter that masks every configured secret value.

The model client already redacts keys from provider messages and settings hold secrets as
SecretStr; this filter is the last line, so that no log line (a third-party library's
included) can carry a model key or an auth token.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

MASK = "***"


class RedactSecrets(logging.Filter):
    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted({secret for secret in secrets if secret}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        return True
