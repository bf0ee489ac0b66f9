"""Folders of `onnx/` grounding models for tests and benchmarks, built here (nothing is downloaded).

- `shipped_nli_folder`: the shipped entailment model (engines/factcheck_engines/data/nli/model.onnx, linked), a
  tokenizer.json equivalent to its vocab.txt (the `tokenizers` package's WordPiece, as nli_model.py builds
  it) and a card saying what nli_model.py's reader knows: its labels, claim-first pairs, 128 tokens, its
  temperature.
- `tiny_model_folder`: a real ONNX graph made with the `onnx` package from seeded random weights (token
  embeddings, optional segment embeddings, tanh, masked mean pooling, a linear layer to the labels) with a
  real tokenizer.json, for other label sets, lengths, inputs and templates; `tiny_reference` computes the
  same probabilities with numpy, the graph's arithmetic written out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factcheck_engines.nli_model import MODEL_DIR

# Words the tiny models' vocabulary knows (any other word is [UNK]).
WORDS = (
    "the a an is was of in on and to it by for with not no yes tower eiffel paris completed built 1889 1925 330 "
    "metres tall moon made rock dust cheese city lost had inhabitants river flows through capital france berlin "
    "germany population million people visit every year highest mountain world everest earth sun planet water "
    "boils at 100 degrees celsius sea level"
).split()


def shipped_nli_folder(folder: Path, **card: Any) -> Path:
    """The shipped entailment model as an onnx/ folder; `card` entries replace the card's."""
    from tokenizers import BertWordPieceTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    shipped = json.loads((MODEL_DIR / "model.json").read_text(encoding="utf-8"))
    target = folder / "model.onnx"
    if not target.exists():
        target.symlink_to(MODEL_DIR / "model.onnx")
    tokenizer = BertWordPieceTokenizer(str(MODEL_DIR / "vocab.txt"), lowercase=True)
    (folder / "tokenizer.json").write_text(tokenizer._tokenizer.to_str(), encoding="utf-8")
    values = {
        "name": "the shipped entailment model (local/checker's)",
        "labels": shipped["labels"],
        "supported": "SUPPORTED",
        "contradicted": "REFUTED",
        "input": "claim,document",
        "max_length": shipped["max_length"],
        "threshold": 0.5,
        "temperature": shipped["temperature"],
        "aggregation": "chunks",
        **card,
    }
    (folder / "factcheck-model.json").write_text(json.dumps(values, indent=1), encoding="utf-8")
    return folder


@dataclass(frozen=True)
class TinyModel:
    """What `tiny_model_folder` built: the weights, to compute the same probabilities with numpy."""

    folder: Path
    embeddings: np.ndarray
    segments: np.ndarray | None
    weights: np.ndarray
    bias: np.ndarray
    card: dict[str, Any]


def tiny_model_folder(
    folder: Path,
    *,
    labels: tuple[str, ...] = ("unsupported", "supported"),
    supported: str = "supported",
    contradicted: str | None = None,
    input_order: str | None = "document,claim",
    template: str | None = None,
    max_length: int = 64,
    segments: bool = True,
    outputs: int | None = None,
    output_name: str = "logits",
    extra_input: str | None = None,
    roberta_style: bool = False,
    seed: int = 7,
    dim: int = 8,
    **card: Any,
) -> TinyModel:
    """A tiny sequence classifier with `outputs` output values per pair (default: one per label).

    `segments`: the graph takes token_type_ids and adds a segment embedding (so the pair's order matters);
    `extra_input` adds a graph input factcheck does not feed; `roberta_style`: <s> </s> <pad> special tokens
    (pad id 1) and no segments, for templates like MiniCheck-RoBERTa's "{document}</s>{claim}"."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer_json, vocab_size = _tokenizer(roberta_style)
    (folder / "tokenizer.json").write_text(tokenizer_json, encoding="utf-8")
    rng = np.random.default_rng(seed)
    width = len(labels) if outputs is None else outputs
    embeddings = rng.normal(0, 1, (vocab_size, dim)).astype(np.float32)
    segment_table = rng.normal(0, 1, (2, dim)).astype(np.float32) if segments and not roberta_style else None
    weights = rng.normal(0, 1, (dim, width)).astype(np.float32)
    bias = rng.normal(0, 0.1, (width,)).astype(np.float32)

    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"])
    inputs = [ids, mask]
    initializers = [
        numpy_helper.from_array(embeddings, "embeddings"),
        numpy_helper.from_array(weights, "weights"),
        numpy_helper.from_array(bias, "bias"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis_1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis_2"),
    ]
    nodes = [helper.make_node("Gather", ["embeddings", "input_ids"], ["tokens"])]
    hidden = "tokens"
    if segment_table is not None:
        inputs.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "sequence"]))
        initializers.append(numpy_helper.from_array(segment_table, "segments"))
        nodes += [
            helper.make_node("Gather", ["segments", "token_type_ids"], ["segment_vectors"]),
            helper.make_node("Add", ["tokens", "segment_vectors"], ["summed_embeddings"]),
        ]
        hidden = "summed_embeddings"
    if extra_input is not None:
        inputs.append(helper.make_tensor_value_info(extra_input, TensorProto.INT64, ["batch", "sequence"]))
    nodes += [
        helper.make_node("Tanh", [hidden], ["activations"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_float", "axis_2"], ["mask_3d"]),
        helper.make_node("Mul", ["activations", "mask_3d"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_1"], ["pooled_sum"], keepdims=0),
        helper.make_node("ReduceSum", ["mask_3d", "axis_1"], ["token_count"], keepdims=0),
        helper.make_node("Div", ["pooled_sum", "token_count"], ["pooled"]),
        helper.make_node("MatMul", ["pooled", "weights"], ["projected"]),
        helper.make_node("Add", ["projected", "bias"], [output_name]),
    ]
    outputs_info = [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["batch", width])]
    graph = helper.make_graph(nodes, "tiny_grounding", inputs, outputs_info, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="factcheck-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))

    values: dict[str, Any] = {
        "labels": list(labels),
        "supported": supported,
        "contradicted": contradicted,
        "max_length": max_length,
        "threshold": 0.5,
        **card,
    }
    if template is not None:
        values["template"] = template
    elif input_order is not None:
        values["input"] = input_order
    if output_name != "logits":
        values["output"] = output_name
    (folder / "factcheck-model.json").write_text(json.dumps(values, indent=1), encoding="utf-8")
    return TinyModel(folder, embeddings, segment_table, weights, bias, values)


def tiny_reference(model: TinyModel, ids: list[int], type_ids: list[int]) -> list[float]:
    """The probabilities the tiny graph gives one pair, with numpy (no padding: it is masked out anyway)."""
    vectors = model.embeddings[np.array(ids)]
    if model.segments is not None:
        vectors = vectors + model.segments[np.array(type_ids)]
    pooled = np.tanh(vectors).mean(axis=0)
    logits = pooled @ model.weights + model.bias
    logits = logits / float(model.card.get("temperature", 1.0))
    if model.card.get("activation", "softmax") == "sigmoid":
        return (1.0 / (1.0 + np.exp(-logits))).tolist()
    z = np.exp(logits - logits.max())
    return (z / z.sum()).tolist()


def _tokenizer(roberta_style: bool) -> tuple[str, int]:
    """A real tokenizer.json (WordPiece over WORDS) and its vocabulary's size."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    specials = ["<s>", "<pad>", "</s>", "<unk>"] if roberta_style else ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {token: index for index, token in enumerate([*specials, *dict.fromkeys(WORDS)])}
    unknown = "<unk>" if roberta_style else "[UNK]"
    tokenizer = Tokenizer(WordPiece(vocab, unk_token=unknown))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.add_special_tokens(specials)
    if roberta_style:
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>",
            pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])],
        )
    else:
        tokenizer.post_processor = processors.BertProcessing(("[SEP]", vocab["[SEP]"]), ("[CLS]", vocab["[CLS]"]))
    return tokenizer.to_str(), len(vocab)
