"""An `onnx/` grounding model: a sequence-classification graph with its tokenizer and card, loaded once per
process and read in bounded batches.

A folder (FACTCHECK_ONNX_MODELS maps each name to one) holds `model.onnx` (with its external-data file, if
the export wrote one), `tokenizer.json` (the Hugging Face `tokenizers` format every fast tokenizer saves)
and `factcheck-model.json` (the card: onnx_card.py). Loading checks everything a run would trip on and
says which: a missing or unreadable file, a card that does not parse, a graph that needs inputs other than
input_ids, attention_mask and token_type_ids, and outputs that do not match the card (a probe pair is run:
its output must have one value per label, all finite). A model that fails is refused, with the reason,
until one of its files changes; a model that loads is kept for the process's life.

Reading: pairs are tokenized by the model's own tokenizer (never truncated: the checker cuts the evidence
to fit, and a pair that still does not fit is reported, not cut). A passage is tokenized once: where the
tokenizer reads every word on its own (a whitespace pre-tokenizer, as BERT's WordPiece), a chunk's tokens
are the passage's tokens inside it, and its pair is put together from those and the claim's by the
tokenizer's own pair layout (its special tokens and segment ids, read from a probe pair); a tokenizer that
reads words in context (byte-level BPE, SentencePiece) or a template tokenizes each pair's text. Pairs are
sorted by length and run
FACTCHECK_ONNX_BATCH_SIZE at a time, padded to the longest of the batch. Memory is bounded by the weights
plus one batch's activations (batch size x the card's max_length): runs of one model take turns (one at a
time), each on FACTCHECK_ONNX_THREADS intra-op threads, with no inter-op pool and no spinning threads.
The order of a claim's pairs is a function of the pairs alone (length, then position), so the same pairs
always meet the same batch-mates: a quantized model's per-batch activation ranges never make a verdict
depend on what else was read with it (nli_model.py batches the same way).
"""

from __future__ import annotations

import bisect
import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from factcheck.kit.settings import Settings
from factcheck.text.chunks import Span, token_offsets
from factcheck.text.text_safety import excerpt
from factcheck_engines.onnx_card import CARD_FILE, MODEL_FILE, TOKENIZER_FILE, CardError, ModelCard, read_card

FILES = (CARD_FILE, TOKENIZER_FILE, MODEL_FILE)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_PAD_TOKENS = ("[PAD]", "<pad>")
_PROBE = ("The tower is 330 metres tall.", "The tower is tall.")
_HASH_BLOCK = 1 << 20


class OnnxModelError(Exception):
    """A folder that does not hold a usable model; the message says what to fix."""


@dataclass(frozen=True)
class Encoded:
    """One pair as the model reads it: token ids, type ids."""

    ids: list[int]
    type_ids: list[int]


@dataclass(frozen=True)
class Tokens:
    """A text as the model's tokenizer reads it, without special tokens: each token's id and offsets."""

    ids: list[int]
    offsets: list[Span]
    starts: list[int] = field(default_factory=list)

    def within(self, span: Span) -> list[int]:
        """The ids of the tokens that start inside `span`."""
        return self.ids[bisect.bisect_left(self.starts, span[0]) : bisect.bisect_left(self.starts, span[1])]


class GroundingModel:
    """One loaded model. `encode` and `probabilities` are what a checker calls; both are thread-safe."""

    def __init__(self, folder: Path, *, threads: int, batch_size: int) -> None:
        missing = [name for name in FILES if not (folder / name).is_file()]
        if missing:
            raise OnnxModelError(f"{folder} has no {' or '.join(missing)}")
        try:
            self.card: ModelCard = read_card(folder)
        except CardError as error:
            raise OnnxModelError(str(error)) from None
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as error:  # an install without the nli extra's runtime
            raise OnnxModelError(f"onnx/ models need the {error.name} package (factcheck's nli extra)") from None
        self._numpy = numpy
        self.batch_size = batch_size
        try:
            self.tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        except Exception as error:  # tokenizers raises a bare Exception for a file it cannot read
            raise OnnxModelError(f"{TOKENIZER_FILE} cannot be read: {excerpt(str(error), 160)}") from None
        # Lengths are checked here, never cut silently: a tokenizer saved with truncation or padding set
        # would hide a pair that does not fit.
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        # Pairs need no character offsets: the fast batch skips them where the package has it.
        self._encode_batch = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        self.pad_id = self._pad_id()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = onnxruntime.InferenceSession(
                str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime's own exceptions (a corrupt or unsupported graph)
            raise OnnxModelError(f"{MODEL_FILE} cannot be loaded: {excerpt(str(error), 200)}") from None
        self.inputs = self._inputs()
        self.output = self._output()
        self._run_lock = threading.Lock()
        self.revision = _files_hash(folder)
        self._special_tokens = self._count_special_tokens()
        # How the tokenizer lays out a pair, when a pair can be put together from its texts' own tokens.
        self._pair_layout = self._learn_pair_layout() if self._words_read_alone() else None
        self._probe()

    # --- reading -------------------------------------------------------------------------------------

    def tokens(self, text: str) -> Tokens:
        """`text`'s tokens (no special tokens), with their character offsets, for cutting it to fit."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        kept = [(i, span) for i, span in zip(encoding.ids, encoding.offsets) if span[1] > span[0]]
        offsets = token_offsets([span for _, span in kept])
        return Tokens([i for i, _ in kept], offsets, [start for start, _ in offsets])

    def encode_units(
        self, claim: str, claim_tokens: Tokens, text: str, tokens: Tokens, spans: Sequence[Span]
    ) -> list[Encoded]:
        """Each (claim, text[span]) pair as the card says the model reads it: put together from the tokens
        already read where the tokenizer reads every word alone, else tokenized anew."""
        layout = self._pair_layout
        if layout is None:
            return self.encode([(claim, text[start:end]) for start, end in spans])
        first_is_claim = self.card.claim_first
        out = []
        for span in spans:
            unit = tokens.within(span)
            sequences = (claim_tokens.ids, unit) if first_is_claim else (unit, claim_tokens.ids)
            ids: list[int] = []
            types: list[int] = []
            for token, sequence, type_id in layout:
                part = sequences[sequence] if sequence is not None else [token] if token is not None else []
                ids += part
                types += [type_id] * len(part)
            out.append(Encoded(ids, types))
        return out

    @property
    def overhead(self) -> int:
        """Tokens of a pair that are neither the claim's nor the document's: the special tokens and the
        template's own words."""
        return self._special_tokens

    def encode(self, pairs: Sequence[tuple[str, str]]) -> list[Encoded]:
        """Each (claim, document) as the card says the model reads it."""
        card = self.card
        if card.template is not None:
            texts: list[Any] = [card.template.format(document=doc, claim=claim) for claim, doc in pairs]
        elif card.claim_first:
            texts = [(claim, doc) for claim, doc in pairs]
        else:
            texts = [(doc, claim) for claim, doc in pairs]
        return [Encoded(e.ids, e.type_ids) for e in self._encode_batch(texts)]

    def probabilities(self, encoded: Sequence[Encoded], order_keys: Sequence[int]) -> list[list[float]]:
        """Each pair's probability per label, in order; run `batch_size` pairs at a time, sorted by
        `order_keys` (a pair's length in characters), then by position."""
        order = sorted(range(len(encoded)), key=lambda i: (order_keys[i], i))
        out: list[list[float]] = [[] for _ in encoded]
        for first in range(0, len(order), self.batch_size):
            batch = order[first : first + self.batch_size]
            for index, row in zip(batch, self._run([encoded[i] for i in batch])):
                out[index] = row
        return out

    def _run(self, batch: Sequence[Encoded]) -> list[list[float]]:
        np = self._numpy
        width = max(len(e.ids) for e in batch)
        ids = np.full((len(batch), width), self.pad_id, dtype=np.int64)
        types, mask = np.zeros_like(ids), np.zeros_like(ids)
        for row, e in enumerate(batch):
            n = len(e.ids)
            ids[row, :n], types[row, :n], mask[row, :n] = e.ids, e.type_ids, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        with self._run_lock:  # one batch's activations at a time
            logits = self.session.run([self.output], {name: feed[name] for name in self.inputs})[0]
        return self._activate(logits).tolist()

    def _activate(self, logits: Any) -> Any:
        np, card = self._numpy, self.card
        z = logits / card.temperature
        if card.activation == "sigmoid":
            return 1.0 / (1.0 + np.exp(-z))
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    # --- loading ------------------------------------------------------------------------------------

    def _pad_id(self) -> int:
        card = self.card
        if card.pad_token is not None:
            pad = self.tokenizer.token_to_id(card.pad_token)
            if pad is None:
                raise OnnxModelError(f'{CARD_FILE}: "pad_token" {card.pad_token[:40]!r} is not in {TOKENIZER_FILE}')
            return pad
        padding = self.tokenizer.padding
        if padding and isinstance(padding.get("pad_id"), int):
            return padding["pad_id"]
        for token in _PAD_TOKENS:
            if (pad := self.tokenizer.token_to_id(token)) is not None:
                return pad
        return 0

    def _inputs(self) -> list[str]:
        names = [i.name for i in self.session.get_inputs()]
        unknown = [name for name in names if name not in INPUTS]
        if unknown or "input_ids" not in names:
            raise OnnxModelError(
                f"{MODEL_FILE} takes the inputs {', '.join(names)[:160]}: an onnx/ model must take input_ids "
                "(and attention_mask, token_type_ids if it uses them) and nothing else; export it as a "
                "sequence-classification graph (docs/models.md)"
            )
        return names

    def _output(self) -> str:
        names = [o.name for o in self.session.get_outputs()]
        wanted = self.card.output
        if wanted is None:
            wanted = "logits" if "logits" in names else names[0] if len(names) == 1 else None
        if wanted is None or wanted not in names:
            raise OnnxModelError(
                f'{MODEL_FILE} has the outputs {", ".join(names)[:160]}: name the class scores with "output" '
                f"in {CARD_FILE}"
            )
        return wanted

    def _words_read_alone(self) -> bool:
        """Whether the tokenizer reads every word on its own (a whitespace pre-tokenizer, no template): then a
        chunk's tokens are the passage's tokens inside it."""
        from tokenizers import pre_tokenizers

        alone = (pre_tokenizers.BertPreTokenizer, pre_tokenizers.Whitespace, pre_tokenizers.WhitespaceSplit)
        return self.card.template is None and isinstance(self.tokenizer.pre_tokenizer, alone)

    def _learn_pair_layout(self) -> tuple[tuple[int | None, int | None, int], ...] | None:
        """The post-processor's layout of a pair, from a probe: each special token as (id, None, type id),
        each sequence as (None, 0 or 1, its type id). None when the probe's tokens are not its texts'."""
        first, second = "tower", "moon"
        encoding = self.tokenizer.encode(first, second)
        alone = [self.tokenizer.encode(t, add_special_tokens=False).ids for t in (first, second)]
        layout: list[tuple[int | None, int | None, int]] = []
        seen: list[list[int]] = [[], []]
        for token, sequence, type_id in zip(encoding.ids, encoding.sequence_ids, encoding.type_ids):
            if sequence is None:
                layout.append((token, None, type_id))
                continue
            seen[sequence].append(token)
            if not layout or layout[-1][1] != sequence:
                layout.append((None, sequence, type_id))
        return tuple(layout) if seen == alone else None

    def _count_special_tokens(self) -> int:
        card = self.card
        if card.template is not None:
            return len(self.tokenizer.encode(card.template.format(document="", claim="")).ids)
        processor = self.tokenizer.post_processor
        return processor.num_special_tokens_to_add(True) if processor is not None else 0

    def _probe(self) -> None:
        """One pair through the graph: its output must be one finite value per label of the card."""
        np, card = self._numpy, self.card
        encoded = self.encode([_PROBE])
        try:
            width = len(encoded[0].ids)
            feed = {
                "input_ids": np.array([encoded[0].ids], dtype=np.int64),
                "attention_mask": np.ones((1, width), dtype=np.int64),
                "token_type_ids": np.array([encoded[0].type_ids], dtype=np.int64),
            }
            logits = self.session.run([self.output], {name: feed[name] for name in self.inputs})[0]
        except Exception as error:  # onnxruntime's own exceptions
            raise OnnxModelError(f"{MODEL_FILE} fails on a probe pair: {excerpt(str(error), 200)}") from None
        shape = tuple(getattr(logits, "shape", ()))
        if shape != (1, len(card.labels)):
            raise OnnxModelError(
                f"the output {self.output!r} of {MODEL_FILE} has the shape {list(shape)} for one pair, but "
                f"{CARD_FILE} lists {len(card.labels)} labels ({', '.join(card.labels)[:120]}): the card does "
                "not match the model"
            )
        if not np.isfinite(logits).all():
            raise OnnxModelError(f"{MODEL_FILE} gives a non-finite score on a probe pair")


def _files_hash(folder: Path) -> str:
    """The SHA-256 of the card, the tokenizer and the weights: the model's identity (its engine revision)."""
    digest = hashlib.sha256()
    for name in FILES:
        digest.update(name.encode() + b"\0")
        with open(folder / name, "rb") as file:
            while block := file.read(_HASH_BLOCK):
                digest.update(block)
    return digest.hexdigest()


# --- one load per process ---------------------------------------------------------------------------

_lock = threading.Lock()
_loaded: dict[tuple[str, int, int], GroundingModel] = {}
# A folder that failed, by its files' state: refused again without loading until a file changes.
_failed: dict[tuple[str, int, int], tuple[tuple[tuple[int, int], ...], str]] = {}


def loaded(folder: Path, settings: Settings) -> GroundingModel:
    """The model in `folder`, loaded once per process (per threads and batch size); OnnxModelError."""
    path = folder.expanduser()
    if not path.is_dir():
        raise OnnxModelError(f"{folder} is not a folder on this checker")
    key = (str(path.resolve()), settings.onnx_threads, settings.onnx_batch_size)
    with _lock:  # two first calls load it once
        model = _loaded.get(key)
        if model is not None:
            return model
        state = _files_state(path)
        failed = _failed.get(key)
        if failed is not None and failed[0] == state:
            raise OnnxModelError(failed[1])
        try:
            model = GroundingModel(path, threads=settings.onnx_threads, batch_size=settings.onnx_batch_size)
        except OnnxModelError as error:
            _failed[key] = (state, str(error))
            raise
        _failed.pop(key, None)
        _loaded[key] = model
        return model


def _files_state(folder: Path) -> tuple[tuple[int, int], ...]:
    def state(path: Path) -> tuple[int, int]:
        try:
            stat = path.stat()
        except OSError:
            return (-1, -1)
        return (stat.st_mtime_ns, stat.st_size)

    return tuple(state(folder / name) for name in FILES)
