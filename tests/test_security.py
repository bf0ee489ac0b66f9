"""TLS on every hop, mTLS between services, bearer tokens on the gateway, secrets kept out of logs.

One suite runs as separate processes: the extractor, checker and reporter serve mTLS (they
accept only clients with a certificate from the test CA), the gateway serves TLS and wants
a bearer token. Certificates are made at test time.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from factcheck.kit.channels import open_gateway_channel
from factcheck.kit.security.auth import UNAUTHENTICATED_MESSAGE, BearerTokenCheck
from factcheck.kit.security.secrets import RedactSecrets
from factcheck.kit.security.tls import TLSConfigError, server_credentials
from factcheck.kit.settings import Settings
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)
from tests.certs import CertificateAuthority
from tests.conftest import content_request, suite_environment
from tests.fake_model_server import fail
from tests.processes import start_suite

pytestmark = pytest.mark.e2e

MODEL_KEY = "sk-test-model-key-4f1c9b7e2d"
TOKENS = ["token-alpha-8d3e7f", "token-beta-0a9c2b"]
WRONG_TOKEN = "token-wrong-77aa41"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pki")
    ca = CertificateAuthority(directory)
    return {
        "ca": ca,
        "gateway": ca.issue("gateway"),
        "internal": ca.issue("internal"),
        "client": ca.issue("client"),
        "stranger": CertificateAuthority(directory, "other CA").issue("stranger"),
    }


@pytest.fixture(scope="module")
def secure_suite(fake_models, pki, tmp_path_factory):
    env = {
        **suite_environment(fake_models, f"sqlite:///{tmp_path_factory.mktemp('db') / 'fc.db'}"),
        "FACTCHECK_MODEL_API_KEY": MODEL_KEY,
    }
    internal = {**pki["internal"].env(), "FACTCHECK_TLS_CLIENT_AUTH": "true"}
    gateway = {**pki["gateway"].env(), "FACTCHECK_AUTH_TOKENS": ",".join(TOKENS)}
    suite = start_suite(
        env, per_service={"extractor": internal, "checker": internal, "reporter": internal, "gateway": gateway}
    )
    yield suite
    suite.stop()


def tls_settings(pki, token: str | None = TOKENS[1], **extra) -> Settings:
    return Settings(tls=True, tls_ca_file=str(pki["ca"].ca_file), gateway_token=token, **extra)


def test_a_run_over_tls_with_a_token_completes_and_is_stored(secure_suite, pki, fake_models):
    fake_models.reset()
    settings = tls_settings(pki)
    with open_gateway_channel(settings, secure_suite.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [response.event for response in gateway.Run(content_request(), timeout=60)]
        assert events[-1].WhichOneof("event") == "complete", secure_suite.logs()
        assert events[-1].complete.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
        result = gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id), timeout=10)
    assert result.result.report.reliability_score > 0
    # The gateway reached all three services over mTLS, and they called the models with the key.
    assert {request.kind for request in fake_models.requests} >= {"extract", "verify", "report", "title"}
    assert all(request.headers["authorization"] == f"Bearer {MODEL_KEY}" for request in fake_models.requests)


def test_a_plaintext_client_cannot_talk_to_the_tls_gateway(secure_suite):
    with grpc.insecure_channel(secure_suite.gateway_target) as channel:
        with pytest.raises(grpc.RpcError) as raised:
            # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)  # type: ignore[attr-defined]
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


def _verify(target: str, credentials: grpc.ChannelCredentials) -> None:
    request = checker_pb2.VerifyRequest(
        model="fake/checker-a",
        content="Water boils at 100 degrees Celsius at sea level.",
        claims=[{"id": "claim_1", "claim": "Water boils at 100 degrees Celsius at sea level.", "type": 2}],
    )
    with grpc.secure_channel(target, credentials) as channel:
        checker_pb2_grpc.CheckerServiceStub(channel).Verify(request, timeout=10)


def _credentials(pki, client: str | None) -> grpc.ChannelCredentials:
    ca = pki["ca"].ca_file.read_bytes()
    if client is None:
        return grpc.ssl_channel_credentials(root_certificates=ca)
    files = pki[client]
    return grpc.ssl_channel_credentials(ca, files.key.read_bytes(), files.cert.read_bytes())


@pytest.mark.parametrize("client", [None, "stranger"], ids=["no-client-certificate", "certificate-of-another-ca"])
def test_services_accept_only_clients_with_a_certificate_from_the_ca(secure_suite, pki, client):
    with pytest.raises(grpc.RpcError) as raised:
        _verify(secure_suite.services["checker"].target, _credentials(pki, client))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_client_with_a_certificate_from_the_ca_is_served(secure_suite, pki):
    _verify(secure_suite.services["checker"].target, _credentials(pki, "client"))


def _gateway_calls(channel):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
    return {
        "Run": lambda metadata: list(gateway.Run(content_request(), timeout=10, metadata=metadata)),
        "GetResult": lambda metadata: gateway.GetResult(
            factcheck_pb2.GetResultRequest(message_id="x"), timeout=10, metadata=metadata
        ),
        "ListResults": lambda metadata: gateway.ListResults(
            factcheck_pb2.ListResultsRequest(), timeout=10, metadata=metadata
        ),
        "ListDocuments": lambda metadata: knowledge.ListDocuments(
            knowledge_pb2.ListDocumentsRequest(), timeout=10, metadata=metadata
        ),
    }


@pytest.mark.parametrize(
    "metadata",
    [
        (),
        (("authorization", f"Bearer {WRONG_TOKEN}"),),
        (("authorization", f"Basic {TOKENS[0]}"),),
        (("authorization", "Bearer"),),
    ],
    ids=["no-token", "wrong-token", "wrong-scheme", "empty-token"],
)
def test_every_gateway_rpc_needs_a_valid_token(secure_suite, pki, metadata):
    settings = tls_settings(pki, token=None)
    with open_gateway_channel(settings, secure_suite.gateway_target) as channel:
        for name, call in _gateway_calls(channel).items():
            with pytest.raises(grpc.RpcError) as raised:
                call(metadata)
            assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED, name
            assert raised.value.details() == UNAUTHENTICATED_MESSAGE
        # A valid token (either one, any scheme casing) is let through.
        assert _gateway_calls(channel)["ListResults"]((("authorization", f"bearer {TOKENS[0]}"),)) is not None


def test_health_and_reflection_need_no_token(secure_suite, pki):
    settings = tls_settings(pki, token=None)
    with open_gateway_channel(settings, secure_suite.gateway_target) as channel:
        # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
        status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status  # type: ignore[attr-defined]
        assert status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        # types-grpcio-reflection leaves the stub's methods untyped ("Incomplete").
        responses = stub.ServerReflectionInfo(  # type: ignore[operator]
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        names = [service.name for response in responses for service in response.list_services_response.service]
    assert "factcheck.v1.FactCheckService" in names


def test_secrets_appear_in_no_log_line_and_no_error(secure_suite, pki, fake_models):
    """A provider that echoes the key, and a caller with a wrong token: neither secret leaks."""
    fake_models.reset()
    fake_models.script(
        "fake/checker-a", fail(401, body={"error": {"message": f"Incorrect API key provided: {MODEL_KEY}"}})
    )
    settings = tls_settings(pki)
    with open_gateway_channel(settings, secure_suite.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [response.event for response in gateway.Run(content_request(), timeout=60)]
        with pytest.raises(grpc.RpcError) as raised:
            gateway.ListResults(
                factcheck_pb2.ListResultsRequest(), timeout=10, metadata=(("authorization", f"Bearer {WRONG_TOKEN}"),)
            )
    failures = [event.all_checkers_complete for event in events if event.WhichOneof("event") == "all_checkers_complete"]
    [failure] = failures[0].failed_checkers
    assert "Incorrect API key provided" in failure.message and "***" in failure.message
    texts = [str(event) for event in events] + [raised.value.details(), secure_suite.logs()]
    for secret in [MODEL_KEY, WRONG_TOKEN, *TOKENS]:
        assert not any(secret in text for text in texts), secret


# --- units -------------------------------------------------------------------------------------------


def test_tls_without_a_certificate_stops_the_server_with_a_clear_message(tmp_path):
    with pytest.raises(TLSConfigError, match="FACTCHECK_TLS_KEY_FILE is not set"):
        server_credentials(Settings(tls=True))
    with pytest.raises(TLSConfigError, match="cannot read"):
        server_credentials(
            Settings(tls=True, tls_cert_file=str(tmp_path / "no.crt"), tls_key_file=str(tmp_path / "no.key"))
        )


def test_settings_never_show_secrets():
    settings = Settings(
        model_api_key=MODEL_KEY,
        auth_tokens=",".join(TOKENS),
        gateway_token=TOKENS[0],
        database_url="postgresql+psycopg://factcheck:db-pass-1f2e@db/factcheck",
    )
    assert [token.get_secret_value() for token in settings.auth_tokens] == TOKENS
    assert set(settings.secrets()) == {MODEL_KEY, *TOKENS, "db-pass-1f2e"}
    for text in (repr(settings), str(settings), str(settings.model_dump())):
        assert MODEL_KEY not in text and not any(token in text for token in TOKENS)


def test_the_log_filter_masks_every_secret_even_in_tracebacks():
    records: list[logging.LogRecord] = []

    class Recording(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Recording()
    handler.addFilter(RedactSecrets([MODEL_KEY, TOKENS[0]]))
    logger = logging.getLogger("factcheck.test.redaction")
    logger.addHandler(handler)
    try:
        logger.warning("calling with %s and %s", MODEL_KEY, TOKENS[0])
        try:
            raise RuntimeError(f"bad key {MODEL_KEY}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    assert records[0].getMessage() == "calling with *** and ***"
    exc_text = records[1].exc_text
    assert exc_text is not None and MODEL_KEY not in exc_text and "bad key ***" in exc_text


def test_the_token_check_compares_every_token():
    interceptor = BearerTokenCheck(TOKENS)
    assert interceptor.accepts(TOKENS[0]) and interceptor.accepts(TOKENS[1])
    assert not interceptor.accepts(WRONG_TOKEN) and not interceptor.accepts(None) and not interceptor.accepts("")


def test_the_services_say_how_they_are_secured(secure_suite):
    logs = secure_suite.logs()
    assert "factcheck-checker: mTLS, no auth" in logs
    assert "factcheck-gateway: TLS, bearer-token auth (2 tokens)" in logs


def test_the_container_health_check_speaks_mtls_with_the_services_settings(secure_suite, pki):
    target = secure_suite.services["checker"].target
    env = {key: value for key, value in os.environ.items() if not key.startswith("FACTCHECK_")}
    command = [sys.executable, "-m", "factcheck.kit.healthcheck", target]
    with_certificate = subprocess.run(
        command, env={**env, **pki["internal"].env()}, capture_output=True, text=True, timeout=60
    )
    assert (with_certificate.returncode, with_certificate.stdout.strip()) == (0, "SERVING"), with_certificate.stderr
    plaintext = subprocess.run([*command, "--timeout", "2"], env=env, capture_output=True, text=True, timeout=60)
    assert plaintext.returncode == 1
