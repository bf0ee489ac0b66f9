"""Which fact-check run the current code works for: the message_id that logs and calls carry.

Every RPC gets a fresh `RunContext` (by `MessageIdServerInterceptor`). In the other
services it holds the message_id the gateway sent in the `x-factcheck-message-id` metadata.
On the gateway, Run fills it with `bind_message_id` as soon as it has made the id; the run's
task and every task it starts share it (tasks copy the context, and the RunContext is one
shared object).
"""

from __future__ import annotations

import re
from contextvars import ContextVar, Token
from dataclasses import dataclass

MESSAGE_ID_METADATA = "x-factcheck-message-id"
# What a message_id from metadata may look like (the gateway's are UUIDs).
_MESSAGE_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


@dataclass
class RunContext:
    message_id: str | None = None


_run: ContextVar[RunContext | None] = ContextVar("factcheck_run", default=None)


def open_run_context(message_id: str | None = None) -> Token:
    """A new RunContext for the current call (and the tasks it will start)."""
    return _run.set(RunContext(message_id))


def close_run_context(token: Token) -> None:
    try:
        _run.reset(token)
    except ValueError:  # a generator finalised in another context: that context ends anyway
        pass


def bind_message_id(message_id: str) -> None:
    """Name the run explicitly (e.g. as soon as Run has made the id)."""
    context = _run.get()
    if context is None:
        _run.set(RunContext(message_id))
    else:
        context.message_id = message_id


def current_message_id() -> str | None:
    context = _run.get()
    return context.message_id if context is not None else None


def message_id_from_metadata(metadata) -> str | None:
    """The caller's message_id, if it looks like one (it is logged: nothing else is accepted)."""
    for key, value in metadata or ():
        if key == MESSAGE_ID_METADATA and isinstance(value, str) and _MESSAGE_ID.fullmatch(value):
            return value
    return None
