"""Verify for a model of a grounding dialect (`minicheck`, factcheck/models/dialects.py) on an
OpenAI-compatible server: the model's own prompt for each (chunk, claim) pair, one answer token with its
log-probabilities, never the verify template and no free text to parse.

Each claim's passages are cut into chunks of sentences that fit the model's window with the claim
(factcheck/text/chunks.py, about four characters a token, as the model client estimates); every chunk is one
call (minicheck.py), all of a request's calls at once within the provider's concurrency, each through the
one model client: bounded (one answer token), ledgered (each call a row of the run's ledger), retried,
and cancelled with the RPC. P(support) per chunk becomes the verdict by the grounding models' decision
(factcheck/core/model_verdicts.py: the best chunk decides; MiniCheck has no contradiction class, so never
DISPUTED), written in the verification format and read back by the same parser and citation check as any
checker's answer.

A chunk whose call failed or whose answer cannot be read is counted and named in the claim's evidence (a
supported chunk still makes the claim VERIFIED: an unread chunk could only have added support); when
every call of the request failed the request fails with the first error, as any checker whose model is
down; a call that ran out of the RPC's time ends the request.
"""

from __future__ import annotations

import asyncio

from factcheck.core.domain import Completion, TokenUsage, VerdictSummary
from factcheck.core.model_verdicts import (
    ClaimReading,
    Thresholds,
    Unit,
    UnitReading,
    answer_text,
    decide,
    no_passages_reason,
    verification_block,
    with_threshold_readings,
)
from factcheck.kit.errors import check_argument
from factcheck.models import output_limits
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelError, ModelTimeoutError
from factcheck.models.limits import estimate_tokens
from factcheck.text.chunks import approximate_token_offsets, chunk_spans
from factcheck.text.evidence_text import passage_title
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2, common_pb2
from factcheck_checker.citations import resolve_citations
from factcheck_checker.minicheck import (
    CLAIM_RESERVE_TOKENS,
    DEFAULT_WINDOW_TOKENS,
    SYSTEM_PROMPT,
    THRESHOLD,
    TOP_LOGPROBS,
    build_minicheck_prompt,
    support_probability,
)
from factcheck_checker.support import claim_supports
from factcheck_checker.verifications import parse_verifications

# One answer token, whatever the settings' scale: the dialect's answer is "Yes" or "No".
ANSWER_TOKEN = output_limits.OutputLimit(output_limits.VERIFY, 1, fixed=True)
# The least share of the window a claim must leave for the evidence.
MIN_EVIDENCE_SHARE = 4


async def verify_with_dialect(
    client: ModelClient,
    request: checker_pb2.VerifyRequest,
    claim_passages: dict[str, list[str]],
    timeout_s: float,
) -> checker_pb2.VerifyResponse:
    model = request.model
    dialect = client.dialect(model)
    check_argument(dialect == "minicheck", "model", f"{model} speaks {dialect}, which has no grounding verifier")
    loop = asyncio.get_running_loop()
    started = loop.time()
    passages = {passage.id: passage for passage in request.passages}
    window = client.context_window(model) or DEFAULT_WINDOW_TOKENS
    claims = [(claim.id, claim.claim.strip()) for claim in request.claims]
    units: dict[str, list[Unit]] = {}
    not_checked: dict[str, str] = {}
    for claim_id, claim in claims:
        listed = [passages[pid] for pid in dict.fromkeys(claim_passages.get(claim_id, [])) if pid in passages]
        room = window - estimate_tokens(SYSTEM_PROMPT) - estimate_tokens(claim) - CLAIM_RESERVE_TOKENS
        if not listed:
            not_checked[claim_id] = no_passages_reason(model, bool(passages))
        elif room < window // MIN_EVIDENCE_SHARE:
            not_checked[claim_id] = (
                f"the claim is about {estimate_tokens(claim)} tokens long: it leaves {max(room, 0)} of the "
                f"{window}-token context window of {model} for the evidence, and at least "
                f"{window // MIN_EVIDENCE_SHARE} are needed"
            )
        else:
            units[claim_id] = [unit for passage in listed for unit in _chunks(passage, room)]

    async def read(claim: str, unit: Unit) -> Completion | ModelError:
        try:
            return await client.complete(
                model,
                build_minicheck_prompt(unit.text, claim),
                system=SYSTEM_PROMPT,
                timeout_s=timeout_s,
                limit=ANSWER_TOKEN,
                logprobs=TOP_LOGPROBS,
            )
        except ModelError as error:
            return error

    jobs = [(claim_id, unit, read(claim, unit)) for claim_id, claim in claims for unit in units.get(claim_id, [])]
    answers = await asyncio.gather(*(job for _, _, job in jobs))
    failures = [answer for answer in answers if isinstance(answer, ModelError)]
    if timed_out := next((error for error in failures if isinstance(error, ModelTimeoutError)), None):
        raise timed_out
    if answers and len(failures) == len(answers):
        raise failures[0]
    usage = TokenUsage()
    per_claim: dict[str, list[tuple[Unit, Completion | ModelError]]] = {}
    for (claim_id, unit, _), answer in zip(jobs, answers):
        per_claim.setdefault(claim_id, []).append((unit, answer))
        if not isinstance(answer, ModelError):
            usage = _added(usage, answer.usage)
    supported = request.support_threshold if request.HasField("support_threshold") else THRESHOLD
    thresholds = Thresholds(supported, THRESHOLD)
    blocks, verdicts = [], []
    for claim_id, _ in claims:
        reading = not_checked.get(claim_id)
        decision = decide(
            ClaimReading(claim_id, not_checked=reading) if reading else _reading(claim_id, per_claim.get(claim_id, [])),
            thresholds,
            model,
        )
        blocks.append(verification_block(claim_id, decision, with_sources=bool(passages)))
        verdicts.append(decision.verdict)
    text = answer_text(blocks, verdicts)
    verifications, dropped = resolve_citations(
        parse_verifications(text, model, [claim_id for claim_id, _ in claims]), passages
    )
    verifications = with_threshold_readings(verifications, text)
    response = checker_pb2.VerifyResponse(
        model=model,
        raw_text=text,
        verifications=[v.to_proto() for v in verifications],
        summary=VerdictSummary.count(v.verdict for v in verifications).to_proto(),
        response_time_ms=int((loop.time() - started) * 1000),
        usage=usage.to_proto(),
        dropped_citations=dropped,
        engine_revision=client.engine_revision(model),
    )
    if request.support_tiers and passages:
        # No Support lines in this dialect: each tier is derived from the verdict and its kept citations
        # (support.py, rule 2).
        response.supports.extend(claim_supports(verifications, {}))
    return response


def _chunks(passage: common_pb2.Passage, room: int) -> list[Unit]:
    title = passage_title(passage)
    spans = chunk_spans(passage.text, approximate_token_offsets(passage.text), room)
    return [Unit(passage.id, title, passage.text[start:end]) for start, end in spans]


def _reading(claim_id: str, answers: list[tuple[Unit, Completion | ModelError]]) -> ClaimReading:
    readings: list[UnitReading] = []
    unread: list[str] = []
    notes: list[str] = []
    for unit, answer in answers:
        if isinstance(answer, ModelError):
            unread.append(f"the call failed: {excerpt(answer.message, 120)}")
            continue
        probability, how = support_probability(answer)
        if probability is None:
            unread.append(how)
            continue
        readings.append(UnitReading(unit, probability))
        if how and how not in notes:
            notes.append(how)
    return ClaimReading(
        claim_id,
        (tuple(readings),),
        unread=len(unread),
        unread_reason="; ".join(dict.fromkeys(unread)),
        note="; ".join(notes),
    )


def _added(total: TokenUsage, usage: TokenUsage) -> TokenUsage:
    return TokenUsage(
        total.prompt_tokens + usage.prompt_tokens,
        total.completion_tokens + usage.completion_tokens,
        total.total_tokens + usage.total_tokens,
        total.cached_tokens + usage.cached_tokens,
    )
