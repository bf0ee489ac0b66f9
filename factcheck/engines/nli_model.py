"""The embedded entailment model: (claim, evidence window) → P(SUPPORTED, REFUTED, PARTIAL, UNRELATED).

A 6-layer MiniLM cross-encoder (all-MiniLM-L6-v2, fine-tuned by `scripts/train_nli.py`) as an
int8 ONNX file in `data/nli/`, with its WordPiece vocabulary and `model.json` (labels, the
maximum length, the softmax temperature fitted on held-out pairs, and where the weights and
the training data came from). Run with onnxruntime on the CPU; nothing is downloaded.

The session is created on first use (importing this module loads nothing) and reused; it is
safe to call from several threads. Its thread count is FACTCHECK_NLI_THREADS (default 2,
the cores the suite is sized for), with no inter-op pool and no spinning threads.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

MODEL_DIR = Path(__file__).with_name("data") / "nli"
THREADS_ENV = "FACTCHECK_NLI_THREADS"
DEFAULT_THREADS = 2
# Pairs per onnxruntime call: big enough to amortise the call, small enough to bound memory.
BATCH = 16


class EntailmentModelUnavailable(RuntimeError):
    """The model file or its runtime (onnxruntime, tokenizers, numpy) is missing."""


@dataclass(frozen=True)
class EntailmentScores:
    """Calibrated probabilities for one (claim, window) pair; they sum to 1."""

    supported: float
    refuted: float
    partial: float
    unrelated: float

    @property
    def unverifiable(self) -> float:
        return self.partial + self.unrelated


class EntailmentModel:
    """One loaded model; `scores` is the only call."""

    def __init__(self, directory: Path = MODEL_DIR, threads: int | None = None) -> None:
        card_path, model_path, vocab_path = directory / "model.json", directory / "model.onnx", directory / "vocab.txt"
        if not (card_path.is_file() and model_path.is_file() and vocab_path.is_file()):
            raise EntailmentModelUnavailable(f"the entailment model is not installed in {directory}")
        try:
            import numpy
            import onnxruntime
            from tokenizers import BertWordPieceTokenizer
        except ImportError as error:  # an install without the runtime packages
            raise EntailmentModelUnavailable(f"the entailment model needs {error.name}") from error
        self.card: dict[str, Any] = json.loads(card_path.read_text(encoding="utf-8"))
        self._labels = [label.lower() for label in self.card["labels"]]
        self._temperature = float(self.card["temperature"])
        self._numpy = numpy
        self._tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
        self._tokenizer.enable_truncation(int(self.card["max_length"]), strategy="only_second")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or _threads_from_env()
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # No busy-waiting between ops: on shared cores spinning threads burn CPU others need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer_lock = threading.Lock()

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        """Probabilities for each (claim, window) pair, in order."""
        out: list[EntailmentScores] = []
        for first in range(0, len(pairs), BATCH):
            out += self._batch(pairs[first : first + BATCH])
        return out

    def _batch(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        np = self._numpy
        with self._tokenizer_lock:  # the Rust tokenizer's truncation state is shared
            encodings = self._tokenizer.encode_batch(list(pairs))
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        types, mask = np.zeros_like(ids), np.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = encoding.ids, encoding.type_ids, 1
        logits = self._session.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        z = logits / self._temperature
        z = np.exp(z - z.max(axis=1, keepdims=True))
        probabilities = z / z.sum(axis=1, keepdims=True)
        return [EntailmentScores(**{label: float(p) for label, p in zip(self._labels, row)}) for row in probabilities]


def _threads_from_env() -> int:
    value = os.environ.get(THREADS_ENV, "")
    return max(1, int(value)) if value.strip().isdigit() else DEFAULT_THREADS


@lru_cache(maxsize=1)
def default_model() -> EntailmentModel:
    """The shipped model, loaded once (EntailmentModelUnavailable when it cannot be)."""
    return EntailmentModel()


def available() -> bool:
    """Whether the shipped model and its runtime are installed (loads nothing)."""
    import importlib.util

    files = all((MODEL_DIR / name).is_file() for name in ("model.json", "model.onnx", "vocab.txt"))
    return files and all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "numpy"))
