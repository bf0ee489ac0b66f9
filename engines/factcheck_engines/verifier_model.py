"""The small trained verifier behind `judge`: term weights plus a 3-class logistic regression.

The model file `data/verifier.json` (written by `scripts/train_verifier.py`, trained
only on the train split of Factcheck-Bench, see that script) holds:

- `idf`: inverse document frequency of word stems over the training passages, used to
  weight claim words when aligning a claim to a passage (rare words count more). Stems
  not in the table get `default_idf`, the weight of a word seen in a single passage.
- `features`: the names of the features `judge` computes for a (claim, passage) pair,
  with the `mean`/`scale` used to standardise them.
- `weights`/`bias`: one row per verdict (VERIFIED, DISPUTED, UNVERIFIABLE) of a
  multinomial logistic regression over the standardised features, trained with
  class-balanced weights so that the rare DISPUTED class is not drowned out.

Inference is plain Python (a dot product and a softmax): no numeric libraries, and the
file is read once, on first use.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

MODEL_PATH = Path(__file__).with_name("data") / "verifier.json"
LABELS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")


@dataclass(frozen=True)
class VerifierModel:
    """Term weights and classifier coefficients; see the module docstring."""

    idf: Mapping[str, float]
    default_idf: float
    feature_names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: Mapping[str, tuple[float, ...]]
    bias: Mapping[str, float]

    def term_weight(self, stem: str) -> float:
        return self.idf.get(stem, self.default_idf)

    def probabilities(self, features: Mapping[str, float]) -> dict[str, float]:
        """P(label | features) for each label in LABELS."""
        x = self.standardise(features)
        logits = {label: self.bias[label] + _dot(self.weights[label], x) for label in LABELS}
        top = max(logits.values())
        exps = {label: math.exp(value - top) for label, value in logits.items()}
        total = sum(exps.values())
        return {label: value / total for label, value in exps.items()}

    def standardise(self, features: Mapping[str, float]) -> list[float]:
        return [(features[name] - m) / s for name, m, s in zip(self.feature_names, self.mean, self.scale)]

    def to_json(self) -> dict[str, Any]:
        return {
            "idf": dict(sorted(self.idf.items())),
            "default_idf": self.default_idf,
            "features": [
                {"name": name, "mean": m, "scale": s} for name, m, s in zip(self.feature_names, self.mean, self.scale)
            ],
            "weights": {label: list(self.weights[label]) for label in LABELS},
            "bias": {label: self.bias[label] for label in LABELS},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VerifierModel:
        features = data["features"]
        return cls(
            idf=data["idf"],
            default_idf=data["default_idf"],
            feature_names=tuple(f["name"] for f in features),
            mean=tuple(f["mean"] for f in features),
            scale=tuple(f["scale"] for f in features),
            weights={label: tuple(data["weights"][label]) for label in LABELS},
            bias={label: data["bias"][label] for label in LABELS},
        )


@lru_cache(maxsize=1)
def default_model() -> VerifierModel:
    """The committed model, loaded once."""
    return VerifierModel.from_json(json.loads(MODEL_PATH.read_text(encoding="utf-8")))


def _dot(weights: Sequence[float], x: Sequence[float]) -> float:
    return sum(w * v for w, v in zip(weights, x))
