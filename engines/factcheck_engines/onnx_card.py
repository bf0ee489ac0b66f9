"""The card of an `onnx/` grounding model: `factcheck-model.json` in its folder, beside `model.onnx` and
`tokenizer.json`. It says how the model was made to be read (docs/models.md has examples):

    {
      "labels": ["unsupported", "supported"],   the model's output classes, in output order
      "supported": "supported",                 the label that means the evidence supports the claim
      "contradicted": null,                     the label that means it contradicts it (none: the model never disputes)
      "input": "document,claim",                the tokenizer's pair: "document,claim" (premise, hypothesis) or
                                                "claim,document"; or, instead of "input",
      "template": null,                         one sequence made of both: "{document}</s>{claim}"
      "max_length": 512,                        tokens the model reads, special tokens included
      "chunk_tokens": 400,                      optional: a document chunk's tokens at most (default: what the
                                                claim leaves of max_length)
      "threshold": 0.5,                         P(supported) from which a claim is VERIFIED
      "contradiction_threshold": 0.5,           optional (default: threshold)
      "aggregation": "chunks",                  "chunks" (MiniCheck: the best chunk decides) or "sentences"
                                                (SummaC: sentence by sentence, the claim's sentences each)
      "output": "logits",                       optional: the graph's output (default: its only one, or "logits")
      "activation": "softmax",                  "softmax" over the labels, or "sigmoid" of each
      "temperature": 1.0,                       optional: logits are divided by it first
      "pad_token": "<pad>",                     optional (default: the tokenizer's padding, [PAD] or <pad>)
      "name", "source", "licence", "notes"      optional, informational
    }

"premise,hypothesis" and "hypothesis,premise" are the same orders by their NLI names, and a template may
say {premise} and {hypothesis}. Any other key is refused (a misspelt "treshold" must not pass for the
default). Every error names the card and the key.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factcheck.core.model_verdicts import Thresholds

CARD_FILE = "factcheck-model.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
AGGREGATIONS = ("chunks", "sentences")
ACTIVATIONS = ("softmax", "sigmoid")
_ORDERS = {
    "document,claim": False,
    "premise,hypothesis": False,
    "claim,document": True,
    "hypothesis,premise": True,
}
_INFORMATIONAL = {"name", "source", "licence", "license", "notes"}
_KEYS = {
    "labels",
    "supported",
    "contradicted",
    "input",
    "template",
    "max_length",
    "chunk_tokens",
    "threshold",
    "contradiction_threshold",
    "aggregation",
    "output",
    "activation",
    "temperature",
    "pad_token",
} | _INFORMATIONAL
MAX_LENGTH_BOUNDS = (16, 1_000_000)
MAX_CARD_BYTES = 1_000_000


class CardError(ValueError):
    """A card that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class ModelCard:
    labels: tuple[str, ...]
    supported: int  # index of the supported label
    contradicted: int | None  # index of the contradiction label, if the model has one
    claim_first: bool  # a pair input: (claim, document) rather than (document, claim)
    template: str | None  # one sequence: a format string with {document} and {claim}
    max_length: int
    chunk_tokens: int | None
    threshold: float
    contradiction_threshold: float
    aggregation: str
    output: str | None
    activation: str
    temperature: float
    pad_token: str | None

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.threshold, self.contradiction_threshold)


def read_card(folder: Path) -> ModelCard:
    """The card in `folder`; CardError saying what is wrong with it."""
    path = folder / CARD_FILE
    try:
        raw = path.read_bytes()[: MAX_CARD_BYTES + 1]
    except OSError as error:
        raise CardError(f"{CARD_FILE} cannot be read in {folder} ({error.strerror or error})") from None
    if len(raw) > MAX_CARD_BYTES:
        raise CardError(f"{CARD_FILE} is larger than {MAX_CARD_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise CardError(f"{CARD_FILE} is not JSON ({error})") from None
    if not isinstance(data, dict):
        raise CardError(f"{CARD_FILE} must be a JSON object")
    return parse_card(data)


def parse_card(data: dict[str, Any]) -> ModelCard:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise CardError(
            f"{CARD_FILE}: unknown key {', '.join(map(repr, unknown))[:120]} (known: {', '.join(sorted(_KEYS))})"
        )
    labels = data.get("labels")
    if not (isinstance(labels, list) and labels and all(isinstance(x, str) and x.strip() for x in labels)):
        raise CardError(f'{CARD_FILE}: "labels" must be a list of the model\'s output classes, in order')
    if len(set(labels)) != len(labels):
        raise CardError(f'{CARD_FILE}: "labels" names a class twice')
    supported = _label(data, "supported", labels, required=True)
    assert supported is not None
    contradicted = _label(data, "contradicted", labels, required=False)
    if contradicted == supported:
        raise CardError(f'{CARD_FILE}: "supported" and "contradicted" name the same label')
    activation = data.get("activation", "softmax")
    if activation not in ACTIVATIONS:
        raise CardError(f'{CARD_FILE}: "activation" must be one of {", ".join(ACTIVATIONS)}')
    if activation == "softmax" and len(labels) < 2:
        raise CardError(f'{CARD_FILE}: a softmax needs at least two labels (one output: "activation": "sigmoid")')
    claim_first, template = _input(data)
    max_length = _integer(data, "max_length", *MAX_LENGTH_BOUNDS, required=True)
    assert max_length is not None
    chunk_tokens = _integer(data, "chunk_tokens", 1, max_length, required=False)
    threshold = _probability(data, "threshold", None)
    aggregation = data.get("aggregation", "chunks")
    if aggregation not in AGGREGATIONS:
        raise CardError(f'{CARD_FILE}: "aggregation" must be one of {", ".join(AGGREGATIONS)}')
    output = data.get("output")
    if output is not None and not (isinstance(output, str) and output):
        raise CardError(f'{CARD_FILE}: "output" must name one of the graph\'s outputs')
    temperature = data.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 < temperature < 1000:
        raise CardError(f'{CARD_FILE}: "temperature" must be a number above 0')
    pad_token = data.get("pad_token")
    if pad_token is not None and not (isinstance(pad_token, str) and pad_token):
        raise CardError(f'{CARD_FILE}: "pad_token" must be a token of the tokenizer')
    return ModelCard(
        labels=tuple(labels),
        supported=supported,
        contradicted=contradicted,
        claim_first=claim_first,
        template=template,
        max_length=max_length,
        chunk_tokens=chunk_tokens,
        threshold=threshold,
        contradiction_threshold=_probability(data, "contradiction_threshold", threshold),
        aggregation=aggregation,
        output=output,
        activation=activation,
        temperature=float(temperature),
        pad_token=pad_token,
    )


def _label(data: dict[str, Any], key: str, labels: list[str], *, required: bool) -> int | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if value not in labels:
        raise CardError(f'{CARD_FILE}: "{key}" must be one of the labels ({", ".join(labels)[:200]})')
    return labels.index(value)


def _input(data: dict[str, Any]) -> tuple[bool, str | None]:
    order, template = data.get("input"), data.get("template")
    if template is not None:
        if order is not None:
            raise CardError(f'{CARD_FILE}: give "input" (a pair) or "template" (one sequence), not both')
        if not isinstance(template, str):
            raise CardError(f'{CARD_FILE}: "template" must be a string with {{document}} and {{claim}}')
        normalized = template.replace("{premise}", "{document}").replace("{hypothesis}", "{claim}")
        if normalized.count("{document}") != 1 or normalized.count("{claim}") != 1:
            raise CardError(f'{CARD_FILE}: "template" must hold {{document}} and {{claim}} once each')
        try:
            normalized.format(document="", claim="")
        except (IndexError, KeyError, ValueError):
            raise CardError(
                f'{CARD_FILE}: "template" holds braces other than {{document}} and {{claim}} (write {{{{ for a brace)'
            ) from None
        return False, normalized
    if order not in _ORDERS:
        raise CardError(f'{CARD_FILE}: "input" must be one of {", ".join(map(repr, _ORDERS))} (or give "template")')
    return _ORDERS[order], None


def _integer(data: dict[str, Any], key: str, low: int, high: int, *, required: bool) -> int | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise CardError(f'{CARD_FILE}: "{key}" must be a whole number from {low} to {high}')
    return value


def _probability(data: dict[str, Any], key: str, default: float | None) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value < 1:
        raise CardError(f'{CARD_FILE}: "{key}" must be a probability between 0 and 1 (exclusive)')
    return float(value)
