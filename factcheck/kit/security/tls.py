"""TLS credentials from settings: what a server presents and what a channel trusts.

One switch (FACTCHECK_TLS) turns TLS on for every server and channel of a process, so a
deployment is either all TLS or all plaintext and cannot half-configure itself.
"""

from __future__ import annotations

from pathlib import Path

import grpc

from factcheck.kit.settings import Settings


class TLSConfigError(SystemExit):
    """A TLS setting is missing or unreadable; the process cannot start safely."""


def _read(path: str | None, setting: str) -> bytes:
    if not path:
        raise TLSConfigError(f"FACTCHECK_TLS is on, but {setting} is not set")
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise TLSConfigError(f"{setting}: cannot read {path}: {error.strerror}") from None


def server_credentials(settings: Settings) -> grpc.ServerCredentials:
    """The server's certificate and key; with tls_client_auth, clients must present a certificate
    that the CA in tls_ca_file signed (mTLS)."""
    key = _read(settings.tls_key_file, "FACTCHECK_TLS_KEY_FILE")
    cert = _read(settings.tls_cert_file, "FACTCHECK_TLS_CERT_FILE")
    if not settings.tls_client_auth:
        return grpc.ssl_server_credentials([(key, cert)])
    ca = _read(settings.tls_ca_file, "FACTCHECK_TLS_CA_FILE")
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=True)


def channel_credentials(settings: Settings) -> grpc.ChannelCredentials:
    """Trust tls_ca_file (else the system roots); present our certificate when we have one (mTLS)."""
    ca = _read(settings.tls_ca_file, "FACTCHECK_TLS_CA_FILE") if settings.tls_ca_file else None
    if settings.tls_cert_file and settings.tls_key_file:
        key = _read(settings.tls_key_file, "FACTCHECK_TLS_KEY_FILE")
        cert = _read(settings.tls_cert_file, "FACTCHECK_TLS_CERT_FILE")
        return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)
    return grpc.ssl_channel_credentials(root_certificates=ca)


def channel_options(settings: Settings) -> list[tuple[str, str]]:
    """Check the servers' certificates for tls_server_name instead of the target's host."""
    if settings.tls and settings.tls_server_name:
        return [("grpc.ssl_target_name_override", settings.tls_server_name)]
    return []
