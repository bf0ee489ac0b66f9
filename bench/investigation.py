"""The verification loop on Factcheck-Bench: what it resolves, how often correctly, what it costs.

Data (factcheck-bench/ under $FACTCHECK_DATA_DIR, default shared/data beside the repository folder):
every distinct evidence passage of `subtask3_claim_evidence_stance.jsonl` is a knowledge-store document (no URL, no authority: each
counts as a 0.5 source owned by itself, so CONFIRMED / REFUTED need two independent documents);
the labelled claims of `subtask4_claim_factuality.jsonl` (true / false), in file order, are the
content, CLAIMS_PER_RUN claims (sentences) per run. Everything runs offline on local/ engines
(extractor, one checker, reporter; the investigator is local/checker's assessment engine) in
process, on SQLite, human review off.

Accuracy section: each content is checked twice, without and with `investigate`. Extracted claims
are matched to the labelled ones by text. Reported: the first pass's UNVERIFIABLE or split claims
(one checker: UNVERIFIABLE), how many of them the loop resolves (CONFIRMED / REFUTED / SUPERSEDED)
and how often correctly (true → CONFIRMED, false → REFUTED or SUPERSEDED); the same for every claim
the loop investigated (flagged ones included); searches (sent to providers, after the cache) and
model calls per investigated claim; the stage's time per claim and per run, and the run's total time
with and without the option.

Latency section: the investigator behind the fake model server answering in MODEL_LATENCY_S per call
(every result IRRELEVANT, so every claim uses all three variants: the worst case), the same contents,
batch sizes 1, 5 and 10: the stage's time against claims × per-claim time (what batches save).

    python -m bench.investigation [--runs N] [--latency-runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench.data import read_jsonl
from factcheck.v1 import common_pb2, factcheck_pb2, factcheck_pb2_grpc, investigation_pb2
from factcheck_gateway.knowledge.bulk import bulk_load
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.store.migrate import upgrade_database
from factcheck_gateway.store.stage_store import StageStore
from tests.fake_model_server import FakeModelServer
from tests.inprocess import inprocess_settings, serve_everything

CLAIMS_PER_RUN = 10
MODEL_LATENCY_S = 0.3
LOCAL = dict(
    default_generator_model="local/generator",
    default_extractor_model="local/extractor",
    default_checker_models=["local/checker"],
    default_reporter_model="local/reporter",
    investigate_human_review=False,
    stage_timeout_ms=120_000,
)
RESOLVED = {
    investigation_pb2.INVESTIGATION_STATUS_CONFIRMED: "CONFIRMED",
    investigation_pb2.INVESTIGATION_STATUS_REFUTED: "REFUTED",
    investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED: "SUPERSEDED",
}
_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class Tally:
    first_pass_dubious: int = 0
    dubious_resolved: int = 0
    dubious_correct: int = 0
    investigated: int = 0
    resolved: int = 0
    correct: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    searches: int = 0
    model_calls: int = 0
    stage_ms: list[int] = field(default_factory=list)
    claims_per_run: list[int] = field(default_factory=list)
    run_ms_off: list[float] = field(default_factory=list)
    run_ms_on: list[float] = field(default_factory=list)
    unmatched: int = 0


def evidence_documents() -> list[SourceDocument]:
    seen: dict[str, SourceDocument] = {}
    for row in read_jsonl("factcheck-bench/subtask3_claim_evidence_stance.jsonl"):
        text = " ".join(str(row.get("evidence") or "").split())
        if len(text) >= 40 and text not in seen:
            seen[text] = SourceDocument(
                id=f"fcb-{len(seen) + 1}", title=f"Factcheck-Bench evidence {len(seen) + 1}", url="", text=text
            )
    return list(seen.values())


def labelled_claims() -> list[tuple[str, bool]]:
    claims = []
    for row in read_jsonl("factcheck-bench/subtask4_claim_factuality.jsonl"):
        text = " ".join(str(row["claim"]).split())
        if not text.endswith((".", "!", "?")):
            text += "."
        claims.append((text, str(row["label"]).lower() == "true"))
    return claims


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def gold_for(claim: str, labelled: list[tuple[str, bool]]) -> bool | None:
    """The label of the labelled claim the extracted one is (best word overlap, at least 0.8)."""
    mine = words(claim)
    best, score = None, 0.0
    for text, label in labelled:
        theirs = words(text)
        overlap = len(mine & theirs) / max(len(mine | theirs), 1)
        if overlap > score:
            best, score = label, overlap
    return best if score >= 0.8 else None


def request(content: str, investigate: bool, batch: int | None = None, investigator: str | None = None):
    config = factcheck_pb2.FactCheckConfig(content_to_check=content, investigate=investigate or None)
    if not investigate:
        config.ClearField("investigate")
    if batch is not None:
        config.investigate_batch_size = batch
    if investigator is not None:
        config.investigator_model = investigator
    return factcheck_pb2.RunRequest(
        question="Fact-check this paragraph", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config
    )


async def run_once(stub, req) -> tuple[list, float]:
    started = time.perf_counter()
    events = [r.event async for r in stub.Run(req, timeout=600)]
    return events, (time.perf_counter() - started) * 1000


def of_kind(events, kind: str) -> list:
    return [getattr(e, kind) for e in events if e.WhichOneof("event") == kind]


async def accuracy(url: str, models: FakeModelServer, contents: list[list[tuple[str, bool]]]) -> Tally:
    tally = Tally()
    settings = inprocess_settings(models.base_url, url, **LOCAL)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for group in contents:
            content = " ".join(text for text, _ in group)
            off, off_ms = await run_once(stub, request(content, False))
            on, on_ms = await run_once(stub, request(content, True))
            tally.run_ms_off.append(off_ms)
            tally.run_ms_on.append(on_ms)
            [consensus] = of_kind(on, "all_checkers_complete")
            first = {c.claim_id: c for c in consensus.consensus}
            outcomes = {c.claim_id: c for c in of_kind(on, "claim_investigated")}
            [done] = of_kind(on, "investigation_complete")
            tally.stage_ms.append(done.response_time_ms)
            tally.claims_per_run.append(len(outcomes))
            tally.searches += done.summary.searches
            tally.model_calls += done.summary.model_calls
            for claim_id, item in first.items():
                gold = gold_for(item.claim, group)
                if gold is None:
                    tally.unmatched += 1
                    continue
                outcome = outcomes.get(claim_id)
                dubious = item.consensus_verdict == common_pb2.VERDICT_UNVERIFIABLE or item.agreement_rate < 100
                status = RESOLVED.get(outcome.status) if outcome else None
                right = status == "CONFIRMED" if gold else status in ("REFUTED", "SUPERSEDED")
                if dubious:
                    tally.first_pass_dubious += 1
                    tally.dubious_resolved += status is not None
                    tally.dubious_correct += bool(status and right)
                if outcome is not None:
                    tally.investigated += 1
                    tally.resolved += status is not None
                    tally.correct += bool(status and right)
                    name = status or "UNVERIFIABLE"
                    tally.statuses[name] = tally.statuses.get(name, 0) + 1
    return tally


async def latency(url: str, models: FakeModelServer, contents: list[list[tuple[str, bool]]]) -> list[dict]:
    """The stage's time per batch size; claims × per-claim time uses batch size 1's per-claim times
    (each claim alone: its searches and model calls one after another, no sharing)."""
    models.reset()
    models.set_latency("fake/investigator", MODEL_LATENCY_S)
    rows: list[dict[str, Any]] = []
    settings = inprocess_settings(models.base_url, url, **LOCAL)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for batch in (1, 5, 10):
            stage_ms, claims, calls, ids = 0, 0, 0, []
            for group in contents:
                content = " ".join(text for text, _ in group)
                events, _ = await run_once(stub, request(content, True, batch, "fake/investigator"))
                [done] = of_kind(events, "investigation_complete")
                stage_ms += done.response_time_ms
                claims += done.summary.investigated
                calls += done.summary.model_calls
                ids.append(events[0].message_id)
            rows.append({"batch": batch, "stage_ms": stage_ms, "claims": claims, "model_calls": calls, "ids": ids})
    store = StageStore(url)
    try:
        alone = [
            claim["elapsedMs"]
            for message_id in rows[0]["ids"]
            for stage in store.get_stages(message_id)
            if stage.stage_type == "investigate"
            for claim in stage.parsed_data.get("claims", [])
        ]
    finally:
        store.close()
    for row in rows:
        row["per_claim_ms"] = statistics.median(alone) if alone else 0
    return rows


def report(tally: Tally, rows: list[dict], documents: int, claims: int) -> str:
    def pct(a: int, b: int) -> str:
        return f"{a}/{b} ({100 * a / b:.1f}%)" if b else "0/0"

    total_claims = sum(tally.claims_per_run)
    lines = [
        f"Evidence: {documents} distinct Factcheck-Bench evidence passages as knowledge-store documents; "
        f"content: {claims} labelled claims in {len(tally.run_ms_on)} runs of {CLAIMS_PER_RUN}; "
        f"local/ engines, SQLite ({tally.unmatched} extracted claims not matched to a label, left out).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| first pass UNVERIFIABLE or split | {tally.first_pass_dubious} |",
        f"| … resolved by the loop | {pct(tally.dubious_resolved, tally.first_pass_dubious)} |",
        f"| … resolved correctly (of resolved) | {pct(tally.dubious_correct, tally.dubious_resolved)} |",
        f"| claims investigated (dubious + flagged) | {tally.investigated} |",
        f"| … resolved / correctly | {pct(tally.resolved, tally.investigated)} / {pct(tally.correct, tally.resolved)} |",
        f"| outcomes | {', '.join(f'{k} {v}' for k, v in sorted(tally.statuses.items()))} |",
        f"| searches per investigated claim (after the per-run cache) | {tally.searches / max(total_claims, 1):.2f} |",
        f"| model calls per investigated claim | {tally.model_calls / max(total_claims, 1):.2f} |",
        f"| stage time per investigated claim (local engines) | {sum(tally.stage_ms) / max(total_claims, 1):.0f} ms |",
        f"| stage time per run, median | {statistics.median(tally.stage_ms):.0f} ms |",
        f"| run time without / with investigate, median | {statistics.median(tally.run_ms_off):.0f} ms / "
        f"{statistics.median(tally.run_ms_on):.0f} ms |",
        "",
        f"Latency with a {MODEL_LATENCY_S * 1000:.0f} ms investigator (fake model server; every result irrelevant, so "
        "every claim runs all three variants):",
        "",
        "| batch size | claims | model calls | stage time, total | claims × median per-claim time | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        serial = row["claims"] * row["per_claim_ms"]
        lines.append(
            f"| {row['batch']} | {row['claims']} | {row['model_calls']} | {row['stage_ms'] / 1000:.1f} s | "
            f"{serial / 1000:.1f} s | {row['stage_ms'] / serial:.2f} |"
            if serial
            else f"| {row['batch']} | {row['claims']} | {row['model_calls']} | {row['stage_ms'] / 1000:.1f} s | — | — |"
        )
    return "\n".join(lines)


async def main_async(runs: int | None, latency_runs: int) -> str:
    documents = evidence_documents()
    labelled = labelled_claims()
    contents = [labelled[i : i + CLAIMS_PER_RUN] for i in range(0, len(labelled), CLAIMS_PER_RUN)]
    if runs:
        contents = contents[:runs]
    with tempfile.TemporaryDirectory() as directory, FakeModelServer() as models:
        url = f"sqlite:///{Path(directory) / 'bench.db'}"
        upgrade_database(url)
        store = StageStore(url)
        try:
            bulk_load(store.engine, documents, tenant_id="default")
        finally:
            store.close()
        tally = await accuracy(url, models, contents)
        latency_url = f"sqlite:///{Path(directory) / 'latency.db'}"
        upgrade_database(latency_url)
        store = StageStore(latency_url)
        try:
            bulk_load(store.engine, documents, tenant_id="default")
        finally:
            store.close()
        rows = await latency(latency_url, models, contents[:latency_runs])
    return report(tally, rows, len(documents), sum(len(c) for c in contents))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=None, help="contents to check (default: all)")
    parser.add_argument("--latency-runs", type=int, default=3)
    args = parser.parse_args()
    print(asyncio.run(main_async(args.runs, args.latency_runs)))


if __name__ == "__main__":
    main()
