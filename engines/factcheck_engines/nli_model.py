"""The embedded entailment model: (claim, evidence window) → P(SUPPORTED, REFUTED, PARTIAL, UNRELATED).

A 6-layer MiniLM cross-encoder (all-MiniLM-L6-v2, fine-tuned by `scripts/train_nli.py`) as an
int8 ONNX file in `data/nli/`, with its WordPiece vocabulary and `model.json` (labels, the
maximum length, the softmax temperature fitted on held-out pairs, and where the weights and
the training data came from). Run with onnxruntime on the CPU; nothing is downloaded.

The session is created on first use (importing this module loads nothing) and reused by the
whole process; it is safe to call from several threads. Each run uses one thread: a claim's
windows are a batch of 3 short pairs, too small to split well (a second intra-op thread raised
the CPU of a 3 x 80-token run from 24 to 27-33 ms). The cores are used by judging
FACTCHECK_NLI_THREADS claims side by side instead (`nli_judge.judge_claims`; default 2, the
cores the suite is sized for): 62 claims/s against 50 with two intra-op threads and one claim
at a time (bench/checker_accuracy.py's engine benchmark, idle machine). No inter-op pool and
no spinning threads.

Batches are per claim and never regrouped: the int8 model quantizes each layer's activations
with one range for the whole batch, so a pair's probabilities move (by up to 0.05 on the engine
benchmark) when other pairs share its batch. Keeping a claim's windows one batch keeps every
figure the model was calibrated and combined with. Batching more pairs would not be faster
anyway: a run costs about the same per token at 3 pairs as at 30 (more when padded).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from factcheck.kit.settings import get_settings

MODEL_DIR = Path(__file__).with_name("data") / "nli"
# The card (labels, maximum length, temperature, provenance), the weights and the vocabulary.
MODEL_FILES = ("model.json", "model.onnx", "vocab.txt")
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

    def __init__(self, directory: Path = MODEL_DIR, threads: int = 1) -> None:
        card_path, model_path, vocab_path = (directory / name for name in MODEL_FILES)
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
        # A pair over max_length loses tokens from its longer side: the window's tail for any claim up
        # to half the length (the same pairs `only_second` gave, which the model was calibrated on),
        # and the claim's tail too for a longer claim, where `only_second` had no room left and failed.
        # What the model cannot read of a long claim, nli_judge reads piece by piece.
        self._tokenizer.enable_truncation(int(self.card["max_length"]), strategy="longest_first")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # per run; 1 unless asked (see the module docstring)
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # All of onnxruntime's graph fusions, as scripts/train_nli.py calibrated the model with: a
        # lower level is slower and, with int8 activations, gives other logits.
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No busy-waiting between ops: on shared cores spinning threads burn CPU others need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._tokenizer_lock = threading.Lock()

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[EntailmentScores]:
        """Probabilities for each (claim, window) pair, in order.

        The pairs are batched shortest first, so that a batch pads its pairs to about their own
        length (a claim's sentences run from 5 to 60 words); the order is a function of the pairs
        alone, so the same pairs always meet the same batch-mates."""
        order = sorted(range(len(pairs)), key=lambda i: (len(pairs[i][0]) + len(pairs[i][1]), i))
        ranked = [pairs[i] for i in order]
        out: list[EntailmentScores | None] = [None] * len(pairs)
        for first in range(0, len(ranked), BATCH):
            for index, score in zip(order[first : first + BATCH], self._batch(ranked[first : first + BATCH])):
                out[index] = score
        return [score for score in out if score is not None]

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


def configured_threads() -> int:
    """How many claims are judged side by side (FACTCHECK_NLI_THREADS)."""
    return get_settings().nli_threads


_load_lock = threading.Lock()
_loaded: EntailmentModel | None = None


def default_model() -> EntailmentModel:
    """The shipped model, loaded once per process (EntailmentModelUnavailable when it cannot be).

    Behind a lock: two RPCs that judge their first claim at the same time load it once."""
    global _loaded
    with _load_lock:
        if _loaded is None:
            _loaded = EntailmentModel()
        return _loaded


@lru_cache(maxsize=1)
def revision() -> str:
    """The shipped model's identity: the SHA-256 of its three files (weights, vocabulary, card
    with its temperature). What the verification cache keys `local/` engines by, besides the prompt."""
    digest = hashlib.sha256()
    for name in MODEL_FILES:
        path = MODEL_DIR / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
    return digest.hexdigest()


def available() -> bool:
    """Whether the shipped model and its runtime are installed (loads nothing)."""
    import importlib.util

    files = all((MODEL_DIR / name).is_file() for name in MODEL_FILES)
    return files and all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers", "numpy"))
