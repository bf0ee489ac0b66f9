"""Keyset paging, newest first, with opaque, tamper-evident page tokens: every listing RPC's pages.

A page token says where the previous page ended (its last row's created_at and id) and until when it
may be used. It is authenticated with HMAC-SHA256 under a server-side key, over the position, the
expiry and the listing it was made for: the RPC, the caller's tenant and the request's filters
(`Listing`). A token that was forged, altered, has expired, or was made for another tenant, RPC or
filters is refused (`InvalidPageToken`; `call_store` answers INVALID_ARGUMENT, AIP-158): it can
never move a listing to a position the server did not hand out, or into another tenant's rows.

The key: FACTCHECK_PAGE_TOKEN_KEYS (`configure_page_tokens`: the current key signs, a previous one is
still accepted, so a rotation breaks no token in flight), else a random key created in the database
by migration 0013 (`server_keys`), which every replica sharing that database reads.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import struct
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine, and_, insert, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from factcheck_gateway.store.models import ServerKey

MAX_PAGE_TOKEN_CHARS = 1_000
DEFAULT_TTL_S = 24 * 3600.0
# The stored key's name in server_keys (migration 0013).
STORED_KEY_NAME = "page_tokens"
INVALID_PAGE_TOKEN = (
    "page_token is not valid for this listing: pass the next_page_token of the previous page, "
    "with the same filters, or none for the first page"
)

# version (1 byte), expiry in Unix seconds, the position's created_at in microseconds since the epoch;
# then the position's row id (UTF-8) and the MAC's first 16 bytes.
_VERSION = 1
_HEADER = struct.Struct(">Bqq")
_MAC_BYTES = 16
_MAC_LABEL = b"factcheck page token\x00"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_URL_SAFE = re.compile(r"[A-Za-z0-9_-]+")


class InvalidPageToken(ValueError):
    """A page token this server did not make for this listing (or could not have made)."""

    def __init__(self, message: str = INVALID_PAGE_TOKEN) -> None:
        super().__init__(message)
        self.message = message


class ExpiredPageToken(InvalidPageToken):
    """A page token this server made for this listing, used after it expired."""


@dataclass(frozen=True)
class Listing:
    """What a page token is bound to: the RPC that lists (e.g. "ListResults"), the caller's tenant, and
    the request's filters by name (a filter that is None is left out, so adding a filter to an RPC
    later keeps the tokens of listings that do not use it valid)."""

    method: str
    tenant_id: str
    filters: Mapping[str, Any] = field(default_factory=dict)

    def digest(self) -> bytes:
        filters = {name: value for name, value in self.filters.items() if value is not None}
        text = json.dumps([self.method, self.tenant_id, filters], sort_keys=True, default=str, ensure_ascii=False)
        return hashlib.sha256(text.encode()).digest()


@dataclass(frozen=True)
class PageTokenKeys:
    """The keys tokens are checked with: `keys[0]` signs, every one verifies (current and previous)."""

    keys: tuple[bytes, ...]
    ttl_s: float = DEFAULT_TTL_S

    def __post_init__(self) -> None:
        if not self.keys or not all(self.keys):
            raise ValueError("page tokens need at least one non-empty key")

    def seal(self, listing: Listing, created_at: datetime, row_id: str, *, now: float | None = None) -> str:
        """The token of the position after (created_at, row_id) in `listing`."""
        expires = int((time.time() if now is None else now) + self.ttl_s)
        body = _HEADER.pack(_VERSION, expires, _microseconds(created_at)) + row_id.encode()
        return _encode(body + _mac(self.keys[0], listing, body))

    def open(self, listing: Listing, token: str, *, now: float | None = None) -> tuple[datetime, str]:
        """(created_at in UTC, row id) of a token sealed for `listing` by any of the keys, not yet expired;
        InvalidPageToken (ExpiredPageToken) otherwise, whatever its bytes."""
        if len(token) > MAX_PAGE_TOKEN_CHARS or not _URL_SAFE.fullmatch(token):
            raise InvalidPageToken()
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except (binascii.Error, ValueError):
            raise InvalidPageToken() from None
        # Only the encoding seal() writes: a last character with other unused bits would decode the same.
        if len(raw) <= _HEADER.size + _MAC_BYTES or _encode(raw) != token:
            raise InvalidPageToken()
        body, mac = raw[:-_MAC_BYTES], raw[-_MAC_BYTES:]
        # Every key is tried, so the time taken does not say which one came close.
        matches = [hmac.compare_digest(mac, _mac(key, listing, body)) for key in self.keys]
        if not any(matches):
            raise InvalidPageToken()
        version, expires, micros = _HEADER.unpack_from(body)
        if version != _VERSION:
            raise InvalidPageToken()
        if expires < (time.time() if now is None else now):
            raise ExpiredPageToken(
                f"page_token has expired (a page token lasts {_hours(self.ttl_s)}): start again from the first page"
            )
        try:
            created_at = _EPOCH + timedelta(microseconds=micros)
            row_id = body[_HEADER.size :].decode()
        except (OverflowError, UnicodeDecodeError):  # only a key holder could have signed it: a bug, not input
            raise InvalidPageToken() from None
        return created_at, row_id


def _encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _mac(key: bytes, listing: Listing, body: bytes) -> bytes:
    return hmac.new(key, _MAC_LABEL + listing.digest() + body, hashlib.sha256).digest()[:_MAC_BYTES]


def _microseconds(moment: datetime) -> int:
    return (moment.astimezone(UTC) - _EPOCH) // timedelta(microseconds=1)


def _hours(seconds: float) -> str:
    hours = seconds / 3600
    if hours >= 1 and hours == int(hours):
        return f"{int(hours)} hour{'s' if hours != 1 else ''}"
    return f"{seconds:g} seconds"


# --- the keys in use ----------------------------------------------------------------------------------

_configured: PageTokenKeys | None = None
_ttl_s = DEFAULT_TTL_S
_stored: weakref.WeakKeyDictionary[Engine, PageTokenKeys] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def configure_page_tokens(keys: Sequence[str], ttl_s: float = DEFAULT_TTL_S) -> None:
    """The gateway's settings: FACTCHECK_PAGE_TOKEN_KEYS (current first; empty: the key stored in the
    database) and FACTCHECK_PAGE_TOKEN_TTL_S."""
    global _configured, _ttl_s
    with _lock:
        _ttl_s = ttl_s
        _configured = PageTokenKeys(tuple(key.encode() for key in keys), ttl_s) if keys else None
        _stored.clear()


def page_token_keys(engine: Engine) -> PageTokenKeys:
    """The configured keys, else the database's stored key (read once per engine; created if missing)."""
    if _configured is not None:
        return _configured
    with _lock:
        keys = _stored.get(engine)
        if keys is None:
            keys = _stored[engine] = PageTokenKeys((stored_page_token_key(engine),), _ttl_s)
        return keys


def stored_page_token_key(engine: Engine) -> bytes:
    """The database's page-token key: created by migration 0013; made here if it is missing, the first
    replica to store one winning, so that every replica on the database signs with the same key."""
    with engine.begin() as connection:
        secret = connection.scalar(select(ServerKey.secret).where(ServerKey.name == STORED_KEY_NAME))
    if secret is None:
        try:
            with engine.begin() as connection:
                connection.execute(
                    insert(ServerKey).values(name=STORED_KEY_NAME, secret=secrets.token_hex(32), created_at=_now())
                )
        except IntegrityError:
            pass  # another replica stored one first: it is the one
        with engine.begin() as connection:
            secret = connection.scalar(select(ServerKey.secret).where(ServerKey.name == STORED_KEY_NAME))
    if secret is None:
        raise RuntimeError("the page-token key could not be stored")  # deleted again at once: a bug or an operator
    return bytes.fromhex(secret)


def _now() -> datetime:
    return datetime.now(UTC)


# --- pages --------------------------------------------------------------------------------------------


def newest_first_page(
    session: Session, model: Any, page_size: int, page_token: str | None, *conditions: Any, listing: Listing
) -> tuple[list, str | None]:
    """One page of `model` rows (which have created_at and id) that meet `conditions` (the listing's
    tenant and filters, as SQL), newest first, keyset-paged on (created_at, id); with the token of
    the next page, bound to `listing`. InvalidPageToken for a token not made for `listing`."""
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    keys = page_token_keys(session.get_bind().engine)
    query = select(model).where(*conditions).order_by(model.created_at.desc(), model.id.desc()).limit(page_size + 1)
    if page_token:
        created_at, row_id = keys.open(listing, page_token)
        query = query.where(or_(model.created_at < created_at, and_(model.created_at == created_at, model.id < row_id)))
    rows = session.scalars(query).all()
    page = list(rows[:page_size])
    next_token = keys.seal(listing, page[-1].created_at, page[-1].id) if len(rows) > page_size else None
    return page, next_token
