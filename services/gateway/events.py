"""The event stream of one run: numbered, timestamped FactCheckEvents in a queue.

The pipeline puts events; the Run RPC takes them. Decoupling the two lets a run
finish (and be stored) even when its caller has gone away.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from google.protobuf.message import Message

from factcheck.v1 import factcheck_pb2


class EventStream:
    def __init__(self, message_id: str) -> None:
        self.message_id = message_id
        self._queue: asyncio.Queue[factcheck_pb2.FactCheckEvent | None] = asyncio.Queue()
        self._seq = 0

    def emit(self, field: str, payload: Message) -> factcheck_pb2.FactCheckEvent:
        """Send the event whose oneof field is `field` (e.g. "extract_complete")."""
        self._seq += 1
        event = factcheck_pb2.FactCheckEvent(message_id=self.message_id, seq=self._seq)
        event.timestamp.GetCurrentTime()
        getattr(event, field).CopyFrom(payload)
        self._queue.put_nowait(event)
        return event

    def close(self) -> None:
        self._queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
        while (event := await self._queue.get()) is not None:
            yield event
