"""Tenants: who owns a run or a document, decided by the caller's bearer token.

`FACTCHECK_AUTH_TOKENS` entries are `tenant:token` or a bare `token`. A bare token is a
tenant of its own, named after a hash of the token (`token-<12 hex>`), so the secret never
becomes an id that is stored or logged. With authentication off, every caller is the one
tenant `default`. The gateway's auth interceptor sets the caller's tenant for the call;
handlers read it with `caller_tenant()`. Work that outlives the call (a run) carries its
tenant explicitly instead of reading this context.
"""

from __future__ import annotations

import hashlib
import re
from contextvars import ContextVar

DEFAULT_TENANT = "default"
TENANT_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
TENANT_RULE = "1 to 64 letters, digits, '.', '_' or '-'"

_caller: ContextVar[str] = ContextVar("factcheck_tenant", default=DEFAULT_TENANT)


def caller_tenant() -> str:
    """The tenant of the call being served ("default" when the gateway has no authentication)."""
    return _caller.get()


def is_tenant_name(name: str) -> bool:
    return TENANT_NAME.fullmatch(name) is not None


def bare_token_tenant(token: str) -> str:
    """The tenant of a token configured without one: named by a hash, never by the secret."""
    return "token-" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:12]


def parse_token_entry(entry: str, position: int = 1) -> tuple[str, str]:
    """(tenant, token) of one FACTCHECK_AUTH_TOKENS entry; ValueError with a message free of the secret.

    `tenant:token` splits at the first colon (the token may hold more colons); an entry
    without a colon is a bare token, its own tenant.
    """
    tenant, colon, token = entry.strip().partition(":")
    if not colon:
        return bare_token_tenant(tenant), tenant
    token = token.strip()
    tenant = tenant.strip()
    if not is_tenant_name(tenant):
        raise ValueError(
            f"FACTCHECK_AUTH_TOKENS entry {position} is 'tenant:token' with an invalid tenant name: "
            f"a tenant name is {TENANT_RULE}"
        )
    if not token:
        raise ValueError(f"FACTCHECK_AUTH_TOKENS entry {position} (tenant {tenant!r}) has no token after the ':'")
    return tenant, token


def tenant_tokens(entries: list[str]) -> list[tuple[str, str]]:
    """(tenant, token) for every entry; a token given to two different tenants is refused."""
    pairs = [parse_token_entry(entry, position) for position, entry in enumerate(entries, start=1)]
    owners: dict[str, str] = {}
    for tenant, token in pairs:
        if owners.setdefault(token, tenant) != tenant:
            raise ValueError(
                f"FACTCHECK_AUTH_TOKENS gives one token to two tenants ({owners[token]!r} and {tenant!r}); "
                "a token must name exactly one tenant"
            )
    return pairs


def serve_call_as(tenant: str) -> None:
    """Serve the rest of the current call as `tenant`.

    Called by the token check inside the call's own task (grpc.aio runs each call in a task of
    its own, with its own copy of the context), so the tenant never leaks into another call.
    """
    _caller.set(tenant)
