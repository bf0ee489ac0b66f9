"""Evidence as a stage of any mode: whether to retrieve, the stored row with its `evidence_retrieved`
event, and the row read back on resume. Retrieval itself is services/gateway/factcheck_gateway/knowledge/."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from google.protobuf.json_format import MessageToDict, ParseDict

from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.knowledge.retrieval import Evidence
from factcheck_gateway.runs.run import Run, stored_data
from factcheck_gateway.store.records import StageRecord

# The role of a mode's retrieval row (each mode names the row itself: fact-check "retrieve", council
# "council_retrieve").
ROLE_RETRIEVER = "retriever"


async def has_evidence(run: Run, sources: Sequence[SourceDocument], use_store: bool) -> bool:
    """Whether to retrieve: the request has sources, or the knowledge store has documents it may use."""
    if run.retriever is None:
        return False
    if sources:
        return True
    if not use_store:
        return False
    known = run.retriever.known_to_have_documents(run.tenant_id)  # most runs: no database query
    if known is not None:
        return known
    return await asyncio.to_thread(run.retriever.should_run, sources, True, tenant_id=run.tenant_id)


def stored_evidence(stage: StageRecord) -> Evidence:
    """The evidence an earlier attempt of the run stored."""
    data = stored_data(stage)
    return Evidence(
        passages=[ParseDict(p, common_pb2.Passage()) for p in data.get("passages", [])],
        claim_passages={c["claimId"]: list(c.get("passageIds", [])) for c in data.get("claims", [])},
        method=data.get("method", ""),
    )


async def save_evidence(run: Run, stage: tuple[str, int], evidence: Evidence, elapsed_ms: int, summary: str) -> None:
    """The evidence row (passages, and per query the ids of its passages) and `evidence_retrieved`."""
    claim_evidence = [
        common_pb2.ClaimEvidence(claim_id=query_id, passage_ids=ids)
        for query_id, ids in evidence.claim_passages.items()
    ]
    await run.save_stage(
        stage,
        ROLE_RETRIEVER,
        evidence.method,
        summary,
        {
            "claims": [{"claimId": c.claim_id, "passageIds": list(c.passage_ids)} for c in claim_evidence],
            "passages": [MessageToDict(p) for p in evidence.passages],
            "method": evidence.method,
        },
        elapsed_ms,
        event=(
            "evidence_retrieved",
            factcheck_pb2.EvidenceRetrievedPayload(
                claims=claim_evidence, passages=evidence.passages, method=evidence.method, response_time_ms=elapsed_ms
            ),
        ),
    )
