"""One entailment agent call (CheckerService.RunEntailmentAgent): its prompt from its own input,
the model call (with the agent's JSON schema as `response_format` where the endpoint has structured
outputs), strict validation with the agent's rules, and one repair attempt quoting the validation
error. A second invalid answer fails the agent with a ModelMalformedResponseError (UNAVAILABLE, reason
MODEL_BAD_RESPONSE, for the caller, like any unusable model answer); what a failed agent means for its item is the
caller's rule (docs/modes.md, "Entailment mode": failure semantics).

Structured outputs make schema errors rare but cannot say everything (ids 1..n, references to
existing statements), so the repair attempt is made either way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from factcheck.core.entailment_rules import AGENT_NAMES
from factcheck.kit.errors import check_argument
from factcheck.kit.rpc import check_model_id
from factcheck.models import output_limits
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelMalformedResponseError
from factcheck.v1 import common_pb2
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.entailment.agent_prompts import (
    agent_inputs,
    auditor_prompt,
    extractor_prompt,
    judge_prompt,
    reliability_prompt,
    repair_prompt,
)
from factcheck_checker.entailment.rules import AnswerInvalid, agent_output
from factcheck_checker.entailment.schemas import response_format

MAX_TEXT_CHARS = 100_000
MAX_STATEMENTS = 500

_AGENTS: dict[str, tuple[pb.EntailmentAgent, Callable[..., str]]] = {
    "extractor": (pb.ENTAILMENT_AGENT_EXTRACTOR, extractor_prompt),
    "reliability": (pb.ENTAILMENT_AGENT_RELIABILITY, reliability_prompt),
    "judge": (pb.ENTAILMENT_AGENT_JUDGE, judge_prompt),
    "auditor": (pb.ENTAILMENT_AGENT_AUDITOR, auditor_prompt),
}


def check_agent_request(request: pb.RunEntailmentAgentRequest) -> None:
    check_model_id("model", request.model)
    kind = request.WhichOneof("input")
    check_argument(
        kind is not None, "input", "input must be one agent's input (extractor, reliability, judge or auditor)"
    )
    given = getattr(request, kind)
    if kind == "reliability":
        check_argument(given.source_type.strip(), "reliability.source_type", "source_type must not be empty")
        check_argument(len(given.source_type) <= MAX_TEXT_CHARS, "reliability.source_type", "source_type is too long")
        return
    check_argument(given.claim.strip(), f"{kind}.claim", "claim must not be empty")
    check_argument(len(given.claim) <= MAX_TEXT_CHARS, f"{kind}.claim", "claim is too long")
    if kind in ("extractor", "auditor"):
        check_argument(
            len(given.source_excerpt) <= MAX_TEXT_CHARS, f"{kind}.source_excerpt", "source_excerpt is too long"
        )
    if kind == "judge":
        check_argument(len(given.statements) <= MAX_STATEMENTS, "judge.statements", "too many statements")
        ids = [s.id for s in given.statements]
        check_argument(ids == list(range(1, len(ids) + 1)), "judge.statements", "statement ids must be 1, 2, 3, ...")
    if kind == "auditor":
        check_argument(
            given.judge_verdict != pb.ENTAILMENT_VERDICT_UNSPECIFIED
            and given.judge_verdict in pb.EntailmentVerdict.values(),
            "auditor.judge_verdict",
            "judge_verdict must be SUPPORTED, CONTRADICTED or NOT_ENOUGH_INFO",
        )
        check_argument(0 <= given.judge_confidence <= 100, "auditor.judge_confidence", "judge_confidence must be 0-100")


async def run_agent(
    client: ModelClient, request: pb.RunEntailmentAgentRequest, timeout_s: float
) -> pb.RunEntailmentAgentResponse:
    """Run the agent of the request's input within `timeout_s` (both attempts together)."""
    kind = request.WhichOneof("input")
    agent, build_prompt = _AGENTS[kind]
    given = getattr(request, kind)
    model = request.model
    prompt = build_prompt(given)
    structured = client.supports_structured_outputs(model)
    schema = response_format(agent) if structured else None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    limit = output_limits.entailment_agent(len(given.statements) if kind == "judge" else 0)
    inputs = agent_inputs(given)
    completion = await client.complete(
        model, prompt, timeout_s=timeout_s, limit=limit, response_format=schema, inputs=inputs
    )
    completions = [completion]
    try:
        output = agent_output(agent, completion.text, given)
    except AnswerInvalid as first:
        remaining = max(deadline - loop.time(), 0.001)
        completion = await client.complete(
            model,
            repair_prompt(prompt, completion.text, first.message),
            timeout_s=remaining,
            limit=limit,
            response_format=schema,
            inputs=inputs,
        )
        completions.append(completion)
        try:
            output = agent_output(agent, completion.text, given)
        except AnswerInvalid as second:
            raise ModelMalformedResponseError(
                model, f"{AGENT_NAMES[agent]} answer invalid after one repair attempt: {second.message}"
            ) from None
    return pb.RunEntailmentAgentResponse(
        model=model,
        agent=agent,
        output=output,
        raw_text=completion.text,
        response_time_ms=sum(c.latency_ms for c in completions),
        usage=_total_usage(completions),
        attempts=len(completions),
        structured=structured,
    )


def _total_usage(completions) -> common_pb2.TokenUsage:
    usages = [c.usage for c in completions]
    return common_pb2.TokenUsage(
        prompt_tokens=sum(u.prompt_tokens for u in usages),
        completion_tokens=sum(u.completion_tokens for u in usages),
        total_tokens=sum(u.total_tokens for u in usages),
    )
