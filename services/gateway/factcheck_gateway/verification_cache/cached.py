"""Verify and extract through the verification cache (fact-check mode opts in with mode_config.use_cache or
FACTCHECK_CACHE_ENABLED; an evaluation with its cache option).

A claim already verified for this tenant by the same model and engine revision, with the same
prompt version and the same evidence, within FACTCHECK_CACHE_TTL_S, reuses that verification:
the checker is sent only the claims it has not verified before (no model call at all when there
are none). Extraction is cached the same way, by content, model, prompt version and length limit.

Engine revision: what a checker's verdicts depend on besides the model id and the prompt (for a
`local/` engine judged by the embedded entailment model, that model's files; for an `onnx/` grounding
model, the SHA-256 of its card, tokenizer and weights; for a model of a grounding dialect, the dialect's
prompt version and the served model's name; "" for any other HTTP model). A grounding dialect's calls send
its own prompt, not the verify template: its revision names that prompt's version ("minicheck@1 <model>"),
which is then the version its entries are keyed, stored and checked by.
Only the checker knows which engine it runs, so before a lookup the gateway asks it
(CheckerService.GetEngineRevision, no model call) and keys by the answer; each verification is
stored under the revision the checker reported with it (VerifyResponse.engine_revision). A checker
that answers with another revision than it named before the lookup (replaced in between) gets
every claim of the request again, and none is served from the cache: a verdict is never served
for another engine than the one that made it, and a changed model file stops every hit.

A binary checker given a threshold (VerifyRequest.support_threshold: an evaluation's fitted one) gives
another verdict for the same claim: the threshold is part of its key.

Keys are SHA-256 hashes of everything the answer depends on (the tenant is part of the table's
key, the prompt version is also checked against the stored entry). Reused verifications are
marked `cached` (events, stage rows, the report's input); each reuse is a `cache_hit` ledger
row. New answers are stored with the run's next commit, and only when the service reported
the prompt version this gateway keys by (a checker still on an older prompt is not cached).

Fact-check's steps and the evaluation runner call `verify` and `extract` here instead of the checker's and
extractor's stubs; pipelined runs (their own stream and batches) do not use the cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from factcheck.core.domain import VerdictSummary, is_not_addressed, verdict_from_proto
from factcheck.core.prompt_versions import EXTRACT, PROMPT_VERSIONS, VERIFY, version_label
from factcheck.kit.observability import metrics
from factcheck.v1 import checker_pb2, common_pb2, extractor_pb2
from factcheck_gateway.verification_cache.entries import CacheEntries

KIND_VERIFY = "verify"
KIND_EXTRACT = "extract"
# Citations are stored with the index of their passage among the claim's passages, not the run's label.
_PASSAGE_INDEX = "#"


def _entries(run) -> CacheEntries:
    return CacheEntries(run.store.engine)  # a sessionmaker over the run's engine: cheap


def _digest(parts: list[Any]) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def verification_key(
    model: str,
    engine_revision: str,
    prompt_version: str,
    claim: common_pb2.Claim,
    passages: list[common_pb2.Passage],
    support_threshold: float | None = None,
) -> str:
    """What a verification depends on: the model and the engine revision its checker reported, the
    prompt, the claim (with its sentence), its evidence and, for a binary checker given one, the threshold
    its verdict is read against."""
    # A section title is shown with its passage, so it counts; only when there is one, so that the keys
    # stored for passages without one stay valid.
    evidence = [[p.source_id, p.source_title, p.text, p.published_at, p.authority] for p in passages]
    for passage, shown in zip(passages, evidence):
        if passage.section_title:
            shown.append(passage.section_title)
    parts: list[Any] = [KIND_VERIFY, model, engine_revision, prompt_version, claim.claim, claim.context, claim.type]
    parts.append(evidence)
    if support_threshold is not None:  # only then, so that the keys stored without one stay valid
        parts.append({"supportThreshold": support_threshold})
    return _digest(parts)


def extraction_key(model: str, prompt_version: str, content: str, max_content_length: int) -> str:
    # "": the place of an engine revision; no extractor engine depends on more than its inputs, and
    # the stored keys stay valid.
    return _digest([KIND_EXTRACT, model, "", prompt_version, content, max_content_length])


def _not_before(run) -> datetime:
    return datetime.now(UTC) - timedelta(seconds=run.plan.cache_ttl_s)


def _entry(run, kind: str, key: str, model: str, prompt_version: str, payload: bytes) -> dict[str, Any]:
    return {
        "tenant_id": run.tenant_id,
        "kind": kind,
        "cache_key": key,
        "model": model,
        "prompt_version": prompt_version,
        "payload": payload,
    }


def _reported_only(run, model: str, stage: str, label: str) -> bool:
    """Whether the service's calls for this answer all used the prompt version the cache keys by."""
    return run.ledger.reported_versions(model, stage) == {label}


# --- verification ------------------------------------------------------------------------------------


async def verify(run, request: checker_pb2.VerifyRequest) -> checker_pb2.VerifyResponse:
    """The checker's answer for `request`, from the cache where it can be, from the checker for the rest."""
    call = run.downstream.checker.Verify
    if not run.plan.use_cache:
        return await call(request, timeout=run.stage_timeout_s)
    model = request.model
    revision = await _engine_revision(run, model)
    label = verify_prompt_label(revision)
    claim_passages = {item.claim_id: list(item.passage_ids) for item in request.evidence}
    keys = _verification_keys(request, claim_passages, revision)
    found = await asyncio.to_thread(
        _entries(run).lookup, run.tenant_id, KIND_VERIFY, list(keys.values()), _not_before(run)
    )
    reused: dict[str, common_pb2.ClaimVerification] = {}
    for claim in request.claims:
        entry = found.get(keys[claim.id])
        if entry is not None and entry.prompt_version == label and entry.model == model:
            reused[claim.id] = _reused(entry.payload, claim.id, claim_passages.get(claim.id, []))
    missing = [claim for claim in request.claims if claim.id not in reused]

    fresh = checker_pb2.VerifyResponse(model=model, engine_revision=revision)
    if missing:
        fresh = await call(_asking_only(request, missing), timeout=run.stage_timeout_s)
        if reused and fresh.engine_revision != revision:
            # Another engine answered than the checker named before the lookup (it was replaced in
            # between): the reused verdicts are not this engine's, so every claim is asked.
            reused, missing = {}, list(request.claims)
            fresh = await call(request, timeout=run.stage_timeout_s)
        if _reported_only(run, model, "verify", label):
            same = fresh.engine_revision == revision
            stored = keys if same else _verification_keys(request, claim_passages, fresh.engine_revision)
            wanted = {claim.id for claim in missing}
            run.cache_entries += [
                _entry(
                    run, KIND_VERIFY, stored[v.claim_id], model, label, _storable(v, claim_passages.get(v.claim_id, []))
                )
                for v in fresh.verifications
                if v.claim_id in wanted and not is_not_addressed(v.evidence)
            ]
    metrics.record_cache_lookups(KIND_VERIFY, len(reused), len(missing))
    run.ledger.record_cache_hits("verify", model, label, len(reused))
    return _merged(request, fresh, reused)


def verify_prompt_label(engine_revision: str) -> str:
    """The prompt version a checker's verify calls report: the verify template's ("verify@1"), or the
    grounding dialect's own prompt that its engine revision starts with ("minicheck@1 ...")."""
    head = engine_revision.split(" ", 1)[0]
    name, _, version = head.partition("@")
    if name != VERIFY and name in PROMPT_VERSIONS and version == str(PROMPT_VERSIONS[name]):
        return head
    return version_label(VERIFY)


async def _engine_revision(run, model: str) -> str:
    """The engine revision the checker runs for `model` now."""
    asked = checker_pb2.GetEngineRevisionRequest(model=model)
    answer = await run.downstream.checker.GetEngineRevision(asked, timeout=run.stage_timeout_s)
    return answer.engine_revision


def _verification_keys(
    request: checker_pb2.VerifyRequest, claim_passages: dict[str, list[str]], engine_revision: str
) -> dict[str, str]:
    """Each claim's verification key (by claim id) under `engine_revision`."""
    passages = {passage.id: passage for passage in request.passages}
    threshold = request.support_threshold if request.HasField("support_threshold") else None
    return {
        claim.id: verification_key(
            request.model,
            engine_revision,
            verify_prompt_label(engine_revision),
            claim,
            [passages[pid] for pid in claim_passages.get(claim.id, ()) if pid in passages],
            threshold,
        )
        for claim in request.claims
    }


def _asking_only(request: checker_pb2.VerifyRequest, claims: list[common_pb2.Claim]) -> checker_pb2.VerifyRequest:
    """`request` for `claims` only, with their evidence."""
    asked = checker_pb2.VerifyRequest()
    asked.CopyFrom(request)
    del asked.claims[:]
    asked.claims.extend(claims)
    wanted = {claim.id for claim in claims}
    kept_evidence = [item for item in request.evidence if item.claim_id in wanted]
    del asked.evidence[:]
    asked.evidence.extend(kept_evidence)
    return asked


def _storable(verification: common_pb2.ClaimVerification, passage_ids: list[str]) -> bytes:
    """The verification as the checker gave it, cached: citations (resolved or not) name their passage by its
    index among the claim's passages; no audit (a reused answer is audited in the run that reuses it)."""
    stored = common_pb2.ClaimVerification()
    stored.CopyFrom(verification)
    stored.ClearField("audit_flags")
    stored.ClearField("audit_status")
    for citation in (*stored.citations, *stored.unresolved_citations):
        if citation.passage_id in passage_ids:
            citation.passage_id = f"{_PASSAGE_INDEX}{passage_ids.index(citation.passage_id)}"
    return stored.SerializeToString(deterministic=True)


def _reused(payload: bytes, claim_id: str, passage_ids: list[str]) -> common_pb2.ClaimVerification:
    """A cached verification for this run's claim: its id, this run's passage labels, marked cached. A citation
    of a passage that was not the claim's when it was cached names no passage of this run: a resolved one is
    left out, an unresolved one (a quote the audit flags) names none."""
    verification = common_pb2.ClaimVerification.FromString(payload)
    verification.claim_id = claim_id
    verification.cached = True
    kept = [citation for citation in verification.citations if _relabelled(citation, passage_ids)]
    del verification.citations[:]
    verification.citations.extend(kept)
    for citation in verification.unresolved_citations:
        if not _relabelled(citation, passage_ids):
            citation.passage_id = ""
    return verification


def _relabelled(citation: common_pb2.Citation, passage_ids: list[str]) -> bool:
    """Whether the cached citation names one of the claim's passages; if so, it now carries that passage's label."""
    index = citation.passage_id.removeprefix(_PASSAGE_INDEX)
    if citation.passage_id.startswith(_PASSAGE_INDEX) and index.isdigit() and int(index) < len(passage_ids):
        citation.passage_id = passage_ids[int(index)]
        return True
    return False


def _merged(
    request: checker_pb2.VerifyRequest,
    fresh: checker_pb2.VerifyResponse,
    reused: dict[str, common_pb2.ClaimVerification],
) -> checker_pb2.VerifyResponse:
    """One answer for every claim of the request, in its order."""
    if not reused:
        return fresh
    answered = {v.claim_id: v for v in fresh.verifications}
    in_order = [reused.get(claim.id) or answered.get(claim.id) for claim in request.claims]
    verifications = [v for v in in_order if v is not None]
    merged = checker_pb2.VerifyResponse()
    merged.CopyFrom(fresh)
    merged.model = request.model
    del merged.verifications[:]
    merged.verifications.extend(verifications)
    merged.summary.CopyFrom(VerdictSummary.count(verdict_from_proto(v.verdict) for v in verifications).to_proto())
    if not fresh.raw_text:
        merged.raw_text = f"(all {len(verifications)} verifications reused from the verification cache)"
    return merged


# --- extraction --------------------------------------------------------------------------------------


async def extract(run, request: extractor_pb2.ExtractRequest) -> extractor_pb2.ExtractResponse:
    """The extraction of `request`, from the cache when this content was extracted before."""
    call = run.downstream.extractor.Extract
    if not run.plan.use_cache:
        return await call(request, timeout=run.stage_timeout_s)
    label = version_label(EXTRACT)
    key = extraction_key(request.model, label, request.content, request.max_content_length)
    found = await asyncio.to_thread(_entries(run).lookup, run.tenant_id, KIND_EXTRACT, [key], _not_before(run))
    entry = found.get(key)
    if entry is not None and entry.prompt_version == label and entry.model == request.model:
        metrics.record_cache_lookups(KIND_EXTRACT, 1, 0)
        run.ledger.record_cache_hits("extract", request.model, label, 1)
        response = extractor_pb2.ExtractResponse.FromString(entry.payload)
        response.response_time_ms = 0
        response.ClearField("usage")
        return response
    metrics.record_cache_lookups(KIND_EXTRACT, 0, 1)
    response = await call(request, timeout=run.stage_timeout_s)
    if _reported_only(run, request.model, "extract", label):
        payload = response.SerializeToString(deterministic=True)
        run.cache_entries.append(_entry(run, KIND_EXTRACT, key, request.model, label, payload))
    return response
