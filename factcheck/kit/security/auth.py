"""Bearer-token authentication: the gateway's server check and the client side that sends a token.

Callers send `authorization: Bearer <token>`; anything else is UNAUTHENTICATED, before the
request is even decoded. Health and reflection stay open so that probes and grpcurl work
without a token. Neither the expected nor the offered token ever appears in a log line or
an error message.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

import grpc

from factcheck.kit.errors import Reason, Unauthenticated
from factcheck.kit.security.tenants import serve_call_as, tenant_tokens

OPEN_SERVICES = ("/grpc.health.v1.Health/", "/grpc.reflection.")
UNAUTHENTICATED_MESSAGE = 'This service needs a valid token in the "authorization: Bearer <token>" metadata.'


def _offered_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    for key, value in metadata or ():
        if key.lower() == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
    return None


class BearerTokenCheck:
    """The gateway's token check: a guard of the error interceptor (factcheck.serving.error_interceptor).

    Called in the call's own task before its request is decoded: raises Unauthenticated
    unless the call offers one of the accepted tokens (compared in constant time), and
    serves the call as that token's tenant (`factcheck.kit.security.tenants.caller_tenant`).
    `tokens` are FACTCHECK_AUTH_TOKENS entries: `tenant:token`, or a bare token (its own tenant).
    """

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = [(tenant, token.encode()) for tenant, token in tenant_tokens([t for t in tokens if t])]
        if not self._tokens:
            raise ValueError("BearerTokenCheck needs at least one token")

    def tenant_of(self, token: str | None) -> str | None:
        """The tenant the token belongs to, or None when it is not one of the accepted tokens."""
        if token is None:
            return None
        offered = token.encode("utf-8", "surrogatepass")
        # Check every token so the time taken does not say which one was close.
        matches = [tenant for tenant, expected in self._tokens if hmac.compare_digest(offered, expected)]
        return matches[0] if matches else None

    def accepts(self, token: str | None) -> bool:
        return self.tenant_of(token) is not None

    def __call__(self, handler_call_details: grpc.HandlerCallDetails) -> None:
        if handler_call_details.method.startswith(OPEN_SERVICES):
            return
        tenant = self.tenant_of(_offered_token(handler_call_details.invocation_metadata))
        if tenant is None:
            raise Unauthenticated(UNAUTHENTICATED_MESSAGE, reason=Reason.MISSING_OR_INVALID_TOKEN)
        serve_call_as(tenant)


class _SyncDetails(grpc.ClientCallDetails):
    def __init__(self, details, metadata) -> None:
        self.method, self.timeout, self.metadata = details.method, details.timeout, metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class SyncTokenInterceptor(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Sends the bearer token with every call of a synchronous channel (the `factcheck` command);
    as metadata rather than call credentials, so it works on plaintext channels too."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _details(self, details):
        return _SyncDetails(details, [*(details.metadata or ()), self._header])

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details), request)
