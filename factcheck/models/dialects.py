"""Request dialects: how the suite talks to a model on an OpenAI-compatible server.

- `chat` (the default): the suite's own prompts, in its text formats, answered in text the services parse.
- `minicheck`: a grounding model that answers whether a document supports a claim with one token, "Yes"
  or "No" (Bespoke-MiniCheck-7B served by vLLM). It only verifies claims against passages: the checker
  sends it the model's own prompt for each (chunk, claim) pair and reads P(support) from the answer
  token's log-probabilities (services/checker/factcheck_checker/minicheck.py), never the verify template.

A model's dialect is its FACTCHECK_MODEL_DIALECTS entry, else its provider's `"dialect"` in
FACTCHECK_MODEL_PROVIDERS, else `chat`. The settings take any name; one this suite does not speak is
refused where a run names the model (INVALID_ARGUMENT naming the setting), by the gateway and the checker.
"""

from __future__ import annotations

from factcheck.core.prompt_versions import MINICHECK as MINICHECK_PROMPT
from factcheck.core.prompt_versions import version_label
from factcheck.kit.settings import Settings
from factcheck.models.errors import ModelNotConfiguredError

CHAT = "chat"
MINICHECK = "minicheck"
DIALECTS = (CHAT, MINICHECK)
# The dialects of grounding models: they verify claims against passages and answer nothing else.
GROUNDING_DIALECTS = frozenset({MINICHECK})
# The prompt template each grounding dialect's calls are built from (its version is in the engine revision).
DIALECT_PROMPTS = {MINICHECK: MINICHECK_PROMPT}


def dialect_setting(model_id: str, settings: Settings) -> tuple[str, str]:
    """(the dialect, the setting that gave it) for a model on a server; ("chat", "") when none does."""
    if model_id in settings.model_dialects:
        return settings.model_dialects[model_id], "FACTCHECK_MODEL_DIALECTS"
    provider = model_id.split("/", 1)[0] if "/" in model_id else ""
    override = settings.model_providers.get(provider) if provider else None
    if override is not None and override.dialect is not None:
        return override.dialect, f"FACTCHECK_MODEL_PROVIDERS[{provider!r}].dialect"
    return CHAT, ""


def dialect_of(model_id: str, settings: Settings) -> str:
    """The dialect `model_id` is spoken to in; ModelNotConfiguredError, naming the setting, for one this
    suite does not speak."""
    dialect, setting = dialect_setting(model_id, settings)
    if dialect not in DIALECTS:
        raise ModelNotConfiguredError(
            model_id,
            f"{setting} gives it the dialect {dialect[:40]!r}, which this suite does not speak "
            f"(known: {', '.join(DIALECTS)})",
        )
    return dialect


def dialect_revision(dialect: str, wire_model: str) -> str:
    """What a grounding dialect's verdicts depend on besides the model id: its prompt's version and the
    model name served ("minicheck@1 bespokelabs/Bespoke-MiniCheck-7B"), the verification cache's key."""
    return f"{version_label(DIALECT_PROMPTS[dialect])} {wire_model}"
