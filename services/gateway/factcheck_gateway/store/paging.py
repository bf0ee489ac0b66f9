"""Keyset paging, newest first, with opaque page tokens: every listing RPC's pages."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session


def encode_page_token(created_at: datetime, message_id: str) -> str:
    """Opaque, url-safe position after which the next page starts."""
    raw = json.dumps([created_at.isoformat(), message_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class InvalidPageToken(ValueError):
    """A page token this store did not make (or could not have made)."""


MAX_PAGE_TOKEN_CHARS = 1_000
INVALID_PAGE_TOKEN = "invalid page token: pass the next_page_token of a previous page"


def decode_page_token(token: str) -> tuple[datetime, str]:
    """(created_at in UTC, row id) of a token; InvalidPageToken for anything else, whatever its bytes."""
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidPageToken(INVALID_PAGE_TOKEN)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        created, row_id = json.loads(raw)
        parsed = datetime.fromisoformat(created)
        # In UTC, as stored; OverflowError when the offset moves it past year 1 or 9999.
        created_at = parsed.astimezone(timezone.utc) if parsed.tzinfo is not None else None
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        raise InvalidPageToken(INVALID_PAGE_TOKEN) from exc
    if created_at is None or not isinstance(row_id, str) or not 0 < len(row_id) <= 255 or "\x00" in row_id:
        raise InvalidPageToken(INVALID_PAGE_TOKEN)
    return created_at, row_id


def newest_first_page(
    session: Session, model: Any, page_size: int, page_token: str | None, *conditions: Any
) -> tuple[list, str | None]:
    """One page of `model` rows (which have created_at and id) that meet `conditions` (e.g. one
    tenant's), newest first, keyset-paged on (created_at, id)."""
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    query = select(model).where(*conditions).order_by(model.created_at.desc(), model.id.desc()).limit(page_size + 1)
    if page_token:
        created_at, row_id = decode_page_token(page_token)
        query = query.where(or_(model.created_at < created_at, and_(model.created_at == created_at, model.id < row_id)))
    rows = session.scalars(query).all()
    page = list(rows[:page_size])
    next_token = encode_page_token(page[-1].created_at, page[-1].id) if len(rows) > page_size else None
    return page, next_token
