"""A binary checker's threshold fitted on a shipped set's dev half, measured on its test half.

The shipped entailment model (local/checker's) is mounted as `onnx/nli` (tests/onnx_models.py: its weights, a
tokenizer.json equivalent to its vocab.txt, a card with threshold 0.5), and the four services run as processes
(SQLite). Three evaluations through EvaluationService, what `factcheck eval` sends:

1. `--fit-threshold --set SET:dev`: the threshold fitted on the dev half (its balanced accuracy of VERIFIED
   against not, there, at the card's threshold and at the fitted one);
2. `--set SET:test`: the test half at the card's threshold;
3. `--thresholds-from (1) --set SET:test`: the test half at the fitted threshold.

Prints, for the test half at each threshold, the evaluation's balanced accuracy (over the verdicts the labels
hold, as every score table) and the binary one (VERIFIED against not, what the fit maximised), from the stored
answers. The test half is never read by the fit.

    python -m bench.fitted_threshold [--set wice] [--limit N] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import grpc

from factcheck.evaluation.thresholds import ThresholdItem, balanced_accuracy_at
from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc
from tests.onnx_models import shipped_nli_folder
from tests.processes import start_suite

MODEL = "onnx/nli"


async def _evaluate(stub, **config) -> evaluation_pb2.Evaluation:
    request = evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(checker_models=[MODEL], **config)
    )
    finished = None
    async for response in stub.RunEvaluation(request, timeout=7200):
        if response.event.HasField("finished"):
            finished = response.event.finished
    assert finished is not None and finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE, finished
    return finished


async def _binary(stub, evaluation_id: str) -> float:
    """The balanced accuracy of VERIFIED against not, from the stored answers, at their own threshold."""
    items, token = [], ""
    while True:
        page = await stub.ListEvaluationItems(
            evaluation_pb2.ListEvaluationItemsRequest(evaluation_id=evaluation_id, page_size=100, page_token=token)
        )
        items += page.items
        token = page.next_page_token
        if not token:
            break
    answers = [
        ThresholdItem(
            item.label == common_pb2.VERDICT_VERIFIED, 1.0 if item.verdict == common_pb2.VERDICT_VERIFIED else None
        )
        for item in items
    ]
    return balanced_accuracy_at(answers, 0.5)


async def run(set_name: str, limit: int | None, seed: int) -> None:
    folder = shipped_nli_folder(Path(tempfile.mkdtemp()) / "nli")
    database = Path(tempfile.mkdtemp()) / "fitted-threshold-bench.db"
    env = {
        "FACTCHECK_DATABASE_URL": f"sqlite:///{database}",
        "FACTCHECK_ONNX_MODELS": json.dumps({"nli": str(folder)}),
        "FACTCHECK_ONNX_THREADS": "1",
    }
    draw = {"seed": seed, **({"limit": limit} if limit is not None else {})}
    suite = start_suite(env)
    try:
        async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
            stub = evaluation_pb2_grpc.EvaluationServiceStub(channel)
            started = time.monotonic()
            fitting = await _evaluate(stub, sets=[f"{set_name}:dev"], fit_thresholds=True, **draw)
            [fitted] = fitting.fitted_thresholds
            assert fitted.HasField("threshold"), fitted.error
            own = await _evaluate(stub, sets=[f"{set_name}:test"], **draw)
            tuned = await _evaluate(
                stub, sets=[f"{set_name}:test"], threshold_evaluation_id=fitting.evaluation_id, **draw
            )
            lines = [
                ("test half, the card's threshold", fitted.evaluated_threshold, own),
                ("test half, the fitted threshold", fitted.threshold, tuned),
            ]
            print(
                f"{MODEL} on {set_name}:dev ({fitted.items} items, {fitted.verified_items} VERIFIED, "
                f"{fitted.candidates} candidates): fitted threshold {fitted.threshold:.4f}; VERIFIED-vs-not "
                f"balanced accuracy there {fitted.evaluated_balanced_accuracy:.4f} at "
                f"{fitted.evaluated_threshold:.2f}, {fitted.balanced_accuracy:.4f} fitted"
            )
            for label, threshold, evaluation in lines:
                [score] = evaluation.scores
                binary = await _binary(stub, evaluation.evaluation_id)
                print(
                    f"{label:<34} threshold {threshold:.4f}  items {score.items:>4}  balanced accuracy "
                    f"{score.balanced_accuracy:.4f}  VERIFIED-vs-not {binary:.4f}"
                )
            print(f"({time.monotonic() - started:.0f} s for the three evaluations)")
    finally:
        suite.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="wice", help="a shipped set (default wice): fitted on its dev half")
    parser.add_argument("--limit", type=int, help="items drawn from each half (default: every item)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    asyncio.run(run(args.set, args.limit, args.seed))


if __name__ == "__main__":
    main()
