"""Shared fixtures.

`database_url` gives each test its own migrated database on SQLite (a temp file) and
on PostgreSQL (a fresh schema in database `test`). PostgreSQL is required: if it is
unreachable the PostgreSQL variants fail rather than skip, since CI guarantees it.
"""

from __future__ import annotations

import json
import os
import uuid
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import grpc
import psycopg
import pytest
from psycopg import sql

from factcheck.engines import register_builtin_engines
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.store import StageStore, upgrade_database
from tests.fake_model_server import FakeModelServer
from tests.processes import Suite, start_suite

# The tests run engines in this process (a model client's local/ calls, validation's list of engines): the
# built-in ones are registered here, as each model service's main registers them.
register_builtin_engines()

# A real llama.cpp server that dies during a test is named first in that test's failure (tests/real_model_plugin.py).
pytest_plugins = ["tests.real_model_plugin"]

# Server-level URL (libpq form) of the test PostgreSQL; override for other setups.
POSTGRES_URL = os.environ.get("FACTCHECK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASE_BACKENDS = ["sqlite", "postgresql"]


@contextmanager
def fresh_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of `backend`, as a SQLAlchemy URL, removed afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'factcheck.db'}"
        return
    with _postgres_schema() as url:
        yield url


@contextmanager
def _postgres_schema() -> Iterator[str]:
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            base = POSTGRES_URL.replace("postgresql://", "postgresql+psycopg://", 1)
            joiner = "&" if "?" in base else "?"
            yield f"{base}{joiner}options=-csearch_path%3D{schema}"
        finally:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=DATABASE_BACKENDS)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no tables yet, for migration tests."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(params=DATABASE_BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated database per backend; use `indirect=True` parametrization to pick one."""
    with fresh_database(request.param, tmp_path) as url:
        upgrade_database(url)
        yield url


# --- the suite as processes, for end-to-end tests -------------------------------------------------------

CHECKERS = ["fake/checker-a", "fake/checker-b"]
# A model of the MiniCheck dialect on the fake server, in every suite that suite_environment sets up.
DIALECT_CHECKER = "fake/minicheck"
# The fake extractor makes one claim per sentence: three claims.
CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude."
)
# The event sequence (docs/api.md#events) for user content with two checkers.
FULL_SEQUENCE = [
    "factcheck_start",
    "extract_start",
    "extract_complete",
    "verify_start",
    "checker_complete",
    "checker_complete",
    "all_checkers_complete",
    "report_start",
    "report_complete",
    "title_complete",
    "complete",
]


async def run_events(gateway, request) -> list[factcheck_pb2.FactCheckEvent]:
    """Every event of one streamed run."""
    return [response.event async for response in gateway.Run(request, timeout=60)]


def kinds(events) -> list[str]:
    return [event.WhichOneof("event") for event in events]


def payload(events, kind: str):
    """The payload of the run's only event of this kind."""
    [event] = [e for e in events if e.WhichOneof("event") == kind]
    return getattr(event, kind)


def content_request(content: str = CONTENT, question: str = "Fact-check this paragraph", **config):
    """A RunRequest that checks `content` with the suite's default models (config overrides them)."""
    return factcheck_pb2.RunRequest(
        question=question,
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(content_to_check=content, **config),
    )


@pytest.fixture(scope="module")
def fake_models() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="module", params=DATABASE_BACKENDS)
def suite_database(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The module's database, migrated by the gateway when it starts."""
    with fresh_database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        yield url


def suite_environment(fake_models: FakeModelServer, database_url: str) -> dict[str, str]:
    """Settings of a suite that uses the fake model server's models by default."""
    return {
        "FACTCHECK_MODEL_BASE_URL": fake_models.base_url,
        "FACTCHECK_DATABASE_URL": database_url,
        "FACTCHECK_DEFAULT_GENERATOR_MODEL": "fake/generator",
        "FACTCHECK_DEFAULT_EXTRACTOR_MODEL": "fake/extractor",
        "FACTCHECK_DEFAULT_CHECKER_MODELS": ",".join(CHECKERS),
        "FACTCHECK_DEFAULT_REPORTER_MODEL": "fake/reporter",
        "FACTCHECK_MODEL_MAX_RETRIES": "1",
        "FACTCHECK_MODEL_BACKOFF_BASE_S": "0.01",
        # A binary checker on the fake server (its `minicheck` answers): fitted thresholds from any client.
        "FACTCHECK_MODEL_DIALECTS": json.dumps({DIALECT_CHECKER: "minicheck"}),
    }


# --- suites shared by several modules ---------------------------------------------------------------------
# Starting four processes costs seconds of CPU. Modules that need no settings of their own and no empty
# database share a suite for the whole session (per pytest-xdist worker) instead: their tests reset its
# fake model server (`shared_fake_models`) before use and clean up what would change other modules' runs
# (knowledge documents).


class SharedSuites:
    """Suites started on first use and kept until the session ends, one per (purpose, backend)."""

    def __init__(self, models: FakeModelServer, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._models = models
        self._tmp_path_factory = tmp_path_factory
        self._running: dict[tuple[str, str], tuple[Suite, str]] = {}
        self._cleanup = ExitStack()

    def get(self, purpose: str, backend: str) -> tuple[Suite, str]:
        """The suite and its database URL."""
        key = (purpose, backend)
        if key not in self._running:
            folder = self._tmp_path_factory.mktemp(f"{purpose}-{backend}")
            database_url = self._cleanup.enter_context(fresh_database(backend, folder))
            suite = start_suite(suite_environment(self._models, database_url))
            self._cleanup.callback(suite.stop)
            self._running[key] = (suite, database_url)
        return self._running[key]

    def stop(self) -> None:
        self._cleanup.close()


@pytest.fixture(scope="session")
def shared_models() -> Iterator[FakeModelServer]:
    """The fake model server of every shared suite."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def shared_fake_models(shared_models) -> FakeModelServer:
    """`fake_models` in a module on a shared suite (`fake_models = conftest.shared_fake_models`)."""
    return shared_models


@pytest.fixture(scope="session")
def shared_suites(shared_models, tmp_path_factory) -> Iterator[SharedSuites]:
    suites = SharedSuites(shared_models, tmp_path_factory)
    yield suites
    suites.stop()


@pytest.fixture(scope="module", params=DATABASE_BACKENDS)
def shared_suite(request: pytest.FixtureRequest, shared_suites: SharedSuites) -> tuple[Suite, str]:
    """The session's end-to-end suite on each backend, and its database."""
    return shared_suites.get("e2e", request.param)


@pytest.fixture(scope="module")
def suite(shared_suite) -> Suite:
    """The four services as separate processes (the shared suite, once per backend)."""
    return shared_suite[0]


@pytest.fixture
def store(shared_suite) -> Iterator[StageStore]:
    """Direct access to the suite's database, to check the rows a run wrote."""
    stage_store = StageStore(shared_suite[1])
    yield stage_store
    stage_store.close()


@pytest.fixture
async def gateway_channel(suite, fake_models):
    """A channel to the suite's gateway; the fake model server starts each test unscripted."""
    fake_models.reset()
    async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
        yield channel


@pytest.fixture
def gateway(gateway_channel):
    return factcheck_pb2_grpc.FactCheckServiceStub(gateway_channel)
