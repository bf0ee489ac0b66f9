"""Database work behind the gateway's unary RPCs: paging rules and how store errors reach callers."""

from __future__ import annotations

import asyncio
import logging

import grpc

log = logging.getLogger("factcheck.gateway")

DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE = 20, 100


async def page_size(context: grpc.aio.ServicerContext, requested: int) -> int:
    """The page size to use: 0 means the default, larger than the maximum is capped, negative is refused."""
    if requested < 0:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"page_size must not be negative (got {requested})")
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


async def call_store(context: grpc.aio.ServicerContext, unavailable: str, function, *args, **kwargs):
    """Run a store call in a worker thread; ValueError (e.g. a bad page token) → INVALID_ARGUMENT,
    any other failure → UNAVAILABLE with `unavailable` (the cause is logged, not shown)."""
    try:
        return await asyncio.to_thread(function, *args, **kwargs)
    except ValueError as error:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
    except Exception:
        log.exception("store call %s failed", getattr(function, "__name__", function))
        await context.abort(grpc.StatusCode.UNAVAILABLE, unavailable)
