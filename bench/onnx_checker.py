"""An `onnx/` grounding checker against its bare model: the same scores, and what the suite costs on top.

The shipped entailment model (local/checker's) is mounted as `onnx/nli` from a folder holding its weights, a
tokenizer.json equivalent to its vocab.txt and a card (tests/onnx_models.py), and read two ways:

1. Scores. Through the services: the four services as processes, `EvaluationService.RunEvaluation` (what
   `factcheck eval --checker onnx/nli` sends) on a shipped set. Alone: local/checker's own reader of the
   model (engines/factcheck_engines/nli_model.py: its tokenizer from vocab.txt, its session, its batches), the
   passages cut into chunks by the same rule, the same grounding decision (factcheck/core/model_verdicts.py),
   scored by the same metrics. local/checker itself adds lexical rules, windows and a combiner on top of
   the model: those are not the model's reading, so the comparison is with the model alone. Prints both
   score lines and how many items got another verdict.
2. Time per claim. The model's own forward passes for the claim's chunks (the same token ids, batches and
   threads, onnxruntime alone), against the onnx/ checker answering the verification call: in process
   (the engine: chunking, tokenizing, batching, the decision and the answer text), through the model client
   and the checker's parser, and through CheckerService.Verify over loopback gRPC (one claim a call, as an
   evaluation sends them).

    python -m bench.onnx_checker [--set factcheck-bench] [--limit 200] [--seed 0] [--timing-claims 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from factcheck.core.domain import verdict_from_proto
from factcheck.core.model_verdicts import ClaimReading, Thresholds, Unit, UnitReading, decide
from factcheck.evaluation.metrics import ScoredItem, Scores, score
from factcheck.evaluation.sets import LabelledItem, load_shipped_set, sample
from factcheck.kit.settings import Settings
from factcheck.models.inputs import ClaimInput, Passage, VerifyInputs
from factcheck.text.chunks import chunk_spans, token_offsets
from factcheck.v1 import checker_pb2_grpc, evaluation_pb2, evaluation_pb2_grpc
from factcheck_engines.nli_model import MODEL_DIR, EntailmentModel
from factcheck_engines.onnx_checker import MIN_EVIDENCE_SHARE, answer, read_claim
from factcheck_engines.onnx_model import loaded
from factcheck_gateway.evaluations.runner import verify_request
from tests.onnx_models import shipped_nli_folder
from tests.processes import start_service, start_suite

MODEL = "onnx/nli"
CLAIM_ID = "claim_1"


# --- 1. scores ------------------------------------------------------------------------------------------


def _passages(item: LabelledItem) -> list[Passage]:
    return [Passage(f"P{i + 1}", e.title, e.text) for i, e in enumerate(item.evidence)]


class ModelAlone:
    """The shipped model read by local/checker's own reader, the chunks cut by the grounding rule."""

    def __init__(self, card: dict) -> None:
        from tokenizers import BertWordPieceTokenizer

        self.reader = EntailmentModel()
        self.tokenizer = BertWordPieceTokenizer(str(MODEL_DIR / "vocab.txt"), lowercase=True)
        self.max_length = int(card["max_length"])
        self.thresholds = Thresholds(
            float(card["threshold"]), float(card.get("contradiction_threshold", card["threshold"]))
        )

    def verdict(self, item: LabelledItem) -> tuple[str, str]:
        claim = item.claim.strip()
        passages = _passages(item)
        if not passages:
            return "UNVERIFIABLE", "LOW"
        room = self.max_length - 3 - len(self.tokenizer.encode(claim, add_special_tokens=False).ids)
        if room < self.max_length // MIN_EVIDENCE_SHARE:
            return "UNVERIFIABLE", "LOW"
        units = []
        for passage in passages:
            offsets = token_offsets(self.tokenizer.encode(passage.text, add_special_tokens=False).offsets)
            units += [
                Unit(passage.id, passage.title, passage.text[s:e]) for s, e in chunk_spans(passage.text, offsets, room)
            ]
        scores = self.reader.scores([(claim, unit.text) for unit in units])
        readings = tuple(UnitReading(unit, s.supported, s.refuted) for unit, s in zip(units, scores))
        decision = decide(ClaimReading(CLAIM_ID, (readings,)), self.thresholds, "the model alone")
        return decision.verdict, decision.confidence


async def through_the_services(folder: Path, set_name: str, limit: int, seed: int) -> tuple[_Line, dict[str, str]]:
    """`factcheck eval --checker onnx/nli --set NAME --limit N --seed S`, through the four services."""
    database = Path(tempfile.mkdtemp()) / "onnx-bench.db"
    env = {
        "FACTCHECK_DATABASE_URL": f"sqlite:///{database}",
        "FACTCHECK_ONNX_MODELS": json.dumps({"nli": str(folder)}),
        "FACTCHECK_ONNX_THREADS": "1",
    }
    suite = start_suite(env)
    try:
        async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
            stub = evaluation_pb2_grpc.EvaluationServiceStub(channel)
            config = evaluation_pb2.EvaluationConfig(checker_models=[MODEL], sets=[set_name], limit=limit, seed=seed)
            verdicts: dict[str, str] = {}
            finished = None
            async for response in stub.RunEvaluation(evaluation_pb2.RunEvaluationRequest(config=config), timeout=3600):
                event = response.event
                if event.HasField("progress"):
                    verdicts[event.progress.item_id] = verdict_from_proto(event.progress.verdict)
                if event.HasField("finished"):
                    finished = event.finished
        assert finished is not None and finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE, finished
        [checker_score] = finished.scores
        return _line_of_score(checker_score), verdicts
    finally:
        suite.stop()


@dataclass(frozen=True)
class _Line:
    """One score line, from the metrics (the model alone) or from the evaluation's CheckerScore."""

    items: int
    balanced_accuracy: float
    accuracy: float
    ece: float | None
    disputed_rate: float | None
    precision_recall: tuple[tuple[str, float, float], ...]


def _line_of_scores(scores: Scores) -> _Line:
    return _Line(
        scores.items,
        scores.balanced_accuracy,
        scores.accuracy,
        scores.expected_calibration_error,
        scores.disputed_rate_on_supported,
        tuple((c.verdict, c.precision, c.recall) for c in scores.classes),
    )


def _line_of_score(checker_score: evaluation_pb2.CheckerScore) -> _Line:
    return _Line(
        checker_score.items,
        checker_score.balanced_accuracy,
        checker_score.accuracy,
        checker_score.expected_calibration_error,
        checker_score.disputed_rate_on_supported if checker_score.HasField("disputed_rate_on_supported") else None,
        tuple((verdict_from_proto(v.verdict), v.precision, v.recall) for v in checker_score.verdicts),
    )


def _print_line(label: str, line: _Line) -> None:
    pr = "  ".join(f"{verdict[:4]} P/R {p:.3f}/{r:.3f}" for verdict, p, r in line.precision_recall)
    ece = f"{line.ece:.4f}" if line.ece is not None else "-"
    disputed = f"{line.disputed_rate:.4f}" if line.disputed_rate is not None else "-"
    print(
        f"{label:<38} items {line.items:>4}  balanced accuracy {line.balanced_accuracy:.4f}  accuracy "
        f"{line.accuracy:.4f}  ECE {ece}  supported->DISPUTED {disputed}  {pr}"
    )


# --- 2. time per claim ----------------------------------------------------------------------------------


@dataclass
class Spent:
    """CPU seconds and wall seconds, summed."""

    cpu: float = 0.0
    wall: float = 0.0


def _feeds(model, encoded, keys) -> list[dict]:
    """The model's inputs for these pairs exactly as the checker batches them (order, padding, batch size)."""
    import numpy as np

    order = sorted(range(len(encoded)), key=lambda i: (keys[i], i))
    feeds = []
    for first in range(0, len(order), model.batch_size):
        batch = [encoded[i] for i in order[first : first + model.batch_size]]
        width = max(len(e.ids) for e in batch)
        ids = np.full((len(batch), width), model.pad_id, dtype=np.int64)
        types, mask = np.zeros_like(ids), np.zeros_like(ids)
        for row, e in enumerate(batch):
            ids[row, : len(e.ids)], types[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, e.type_ids, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds.append({name: feed[name] for name in model.inputs})
    return feeds


def _timed(run, spent: Spent) -> None:
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    spent.cpu += time.process_time() - cpu
    spent.wall += time.perf_counter() - wall


def in_process(folder: Path, items: list[LabelledItem], repeats: int) -> tuple[Spent, Spent, int]:
    """The model's forward passes alone, and the onnx/ engine answering the same claims (one thread)."""
    model = loaded(folder, Settings(onnx_models={"nli": str(folder)}, onnx_threads=1))
    forward, engine, pairs = Spent(), Spent(), 0
    for _ in range(repeats):
        for item in items:
            passages = _passages(item)
            listing = {CLAIM_ID: tuple(p.id for p in passages)}
            inputs = VerifyInputs(item.claim, (ClaimInput(CLAIM_ID, item.claim),), tuple(passages), listing)
            [part] = read_claim(model, MODEL, CLAIM_ID, item.claim.strip(), passages, {}).parts
            chosen = [(item.claim.strip(), r.unit.text) for r in part]
            feeds = _feeds(model, model.encode(chosen), [len(a) + len(b) for a, b in chosen])
            pairs += len(chosen)
            _timed(lambda: [model.session.run([model.output], feed) for feed in feeds], forward)
            _timed(lambda: answer(inputs, model, MODEL), engine)
    return forward, engine, pairs // repeats


def _forward_worker(folder: str, items: list[LabelledItem], connection) -> None:
    """A process of its own that runs the model's forward passes for `items`' chunks, a round per request."""
    model = loaded(Path(folder), Settings(onnx_models={"nli": folder}, onnx_threads=1))
    feeds = []
    for item in items:
        [part] = read_claim(model, MODEL, CLAIM_ID, item.claim.strip(), _passages(item), {}).parts
        chosen = [(item.claim.strip(), r.unit.text) for r in part]
        feeds += _feeds(model, model.encode(chosen), [len(a) + len(b) for a, b in chosen])
    connection.send("ready")
    while connection.recv() == "round":
        for feed in feeds:
            model.session.run([model.output], feed)
        connection.send("done")


def in_processes(folder: Path, items: list[LabelledItem], repeats: int) -> tuple[Spent, Spent]:
    """The same claims in two processes of their own, rounds taking turns: one runs the model's forward passes
    alone; the other is the checker service, answering CheckerService.Verify for every claim (one claim a
    call, as an evaluation sends them). CPU seconds are each process's utime + stime (/proc), after one round
    each to load the model."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    worker = context.Process(target=_forward_worker, args=(str(folder), items, theirs), daemon=True)
    worker.start()
    assert worker.pid is not None  # (started)
    worker_pid = worker.pid
    env = {"FACTCHECK_ONNX_MODELS": json.dumps({"nli": str(folder)}), "FACTCHECK_ONNX_THREADS": "1"}
    checker = start_service("checker", env)
    try:
        assert ours.recv() == "ready"
        requests = [verify_request(MODEL, item) for item in items]

        async def verify_all(stub) -> None:
            for request in requests:
                await stub.Verify(request, timeout=60)

        async def rounds() -> tuple[Spent, Spent]:
            bare, served = Spent(), Spent()
            async with grpc.aio.insecure_channel(checker.target) as channel:
                stub = checker_pb2_grpc.CheckerServiceStub(channel)
                await verify_all(stub)
                ours.send("round")
                ours.recv()
                for _ in range(repeats):
                    cpu, wall = _cpu_s(worker_pid), time.perf_counter()
                    ours.send("round")
                    ours.recv()
                    bare.cpu, bare.wall = bare.cpu + _cpu_s(worker_pid) - cpu, bare.wall + time.perf_counter() - wall
                    cpu, wall = _cpu_s(checker.process.pid), time.perf_counter()
                    await verify_all(stub)
                    served.cpu += _cpu_s(checker.process.pid) - cpu
                    served.wall += time.perf_counter() - wall
            return bare, served

        return asyncio.run(rounds())
    finally:
        ours.send("stop")
        worker.join(10)
        checker.stop()


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="factcheck-bench")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timing-claims", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3, help="times each claim is timed")
    parser.add_argument("--skip-scores", action="store_true")
    args = parser.parse_args(argv)

    folder = shipped_nli_folder(Path(tempfile.mkdtemp()) / "nli")
    card = json.loads((folder / "factcheck-model.json").read_text())
    items = sample(load_shipped_set(args.set), args.limit, args.seed)

    if not args.skip_scores:
        alone = ModelAlone(card)
        started = time.perf_counter()
        verdicts = {item.id: alone.verdict(item) for item in items}
        alone_s = time.perf_counter() - started
        alone_scores = score(
            [ScoredItem(item.label, verdicts[item.id][0], verdicts[item.id][1], False, None) for item in items]
        )
        started = time.perf_counter()
        service_scores, service_verdicts = asyncio.run(through_the_services(folder, args.set, args.limit, args.seed))
        services_s = time.perf_counter() - started
        differing = [item.id for item in items if service_verdicts.get(item.id) != verdicts[item.id][0]]
        print(f"{args.set}, {len(items)} items (limit {args.limit}, seed {args.seed}); card: {json.dumps(card)}")
        _print_line("the model alone (nli_model's reader)", _line_of_scores(alone_scores))
        _print_line("onnx/nli through factcheck eval", service_scores)
        print(f"items with another verdict: {len(differing)} {differing[:10]}")
        print(f"wall time: the model alone {alone_s:.1f} s, the evaluation through the services {services_s:.1f} s")

    timed = [item for item in items if item.evidence][: args.timing_claims]
    forward, engine, pairs = in_process(folder, timed, args.repeats)
    bare, served = in_processes(folder, timed, args.repeats)
    claims = len(timed) * args.repeats

    def per_claim(seconds: float) -> str:
        return f"{seconds / claims * 1000:7.2f} ms"

    def over(seconds: float, forward_s: float) -> str:
        return f"{100 * (seconds - forward_s) / forward_s:+6.1f}% CPU"

    print(
        f"time per claim: {len(timed)} claims with evidence ({pairs} chunks), each {args.repeats} times, "
        "1 onnxruntime thread; CPU time (the machine's other load moves wall time more)"
    )
    print("  in one process, claim by claim:")
    print(f"    the model's forward passes alone         CPU {per_claim(forward.cpu)}  wall {per_claim(forward.wall)}")
    print(
        f"    the onnx/ checker engine                 CPU {per_claim(engine.cpu)}  wall {per_claim(engine.wall)}  "
        f"{over(engine.cpu, forward.cpu)}"
    )
    print("  in processes of their own, rounds taking turns:")
    print(f"    the model's forward passes alone         CPU {per_claim(bare.cpu)}  wall {per_claim(bare.wall)}")
    print(
        f"    the checker service answering Verify     CPU {per_claim(served.cpu)}  round trip {per_claim(served.wall)}  "
        f"{over(served.cpu, bare.cpu)}"
    )


if __name__ == "__main__":
    main()
