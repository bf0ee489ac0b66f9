"""The `investigate` option of a fact-check request, checked, with its defaults from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.kit.errors import InvalidArgument
from factcheck.kit.settings import Settings
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.request_validation import bounded, check_model
from factcheck_gateway.search.provider import SEARXNG

BATCH_MIN, BATCH_MAX = 1, 20


@dataclass(frozen=True)
class InvestigateOptions:
    batch_size: int
    investigator_model: str
    providers: tuple[str, ...]
    searxng_url: str | None
    searxng_timeout_s: float
    searxng_language: str
    results_per_query: int
    max_claims: int
    search_concurrency: int
    model_concurrency: int
    human_review: bool
    authority: tuple[tuple[str, float], ...]
    owners: tuple[tuple[str, str], ...]

    def request_config(self) -> dict:
        return {
            "investigate": True,
            "investigateBatchSize": self.batch_size,
            "investigatorModel": self.investigator_model,
        }


def plan_investigation(
    config: factcheck_pb2.FactCheckConfig, settings: Settings, checker_models: tuple[str, ...]
) -> InvestigateOptions | None:
    if not config.investigate:
        for name in ("investigate_batch_size", "investigator_model"):
            if config.HasField(name):
                raise InvalidArgument(f"mode_config.{name} needs mode_config.investigate", field=f"mode_config.{name}")
        return None
    batch = settings.investigate_batch_size
    if config.HasField("investigate_batch_size"):
        batch = bounded("mode_config.investigate_batch_size", config.investigate_batch_size, BATCH_MIN, BATCH_MAX)
    model = config.investigator_model or settings.default_investigator_model or checker_models[0]
    check_model("mode_config.investigator_model", model, settings)
    providers = tuple(dict.fromkeys(settings.investigate_search_providers)) or ("knowledge",)
    if SEARXNG in providers and not settings.searxng_url:
        # An operator's mistake, but the caller asked for the loop: say what is missing.
        raise InvalidArgument(
            "mode_config.investigate: the searxng search provider needs FACTCHECK_SEARXNG_URL on the gateway",
            field="mode_config.investigate",
        )
    return InvestigateOptions(
        batch_size=batch,
        investigator_model=model,
        providers=providers,
        searxng_url=settings.searxng_url,
        searxng_timeout_s=settings.searxng_timeout_s,
        searxng_language=settings.searxng_language,
        results_per_query=settings.investigate_results_per_query,
        max_claims=settings.investigate_max_claims,
        search_concurrency=settings.investigate_search_concurrency,
        model_concurrency=settings.investigate_model_concurrency,
        human_review=settings.investigate_human_review,
        authority=tuple(sorted(settings.investigate_authority.items())),
        owners=tuple(sorted(settings.investigate_owners.items())),
    )
