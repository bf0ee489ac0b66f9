"""One entailment item through the four isolated agents, whoever runs the agents: the checker strategy
calls them in-process, entailment mode through CheckerService.RunEntailmentAgent. Each agent gets a
request holding only its own input message.

Order: extractor and reliability at once (neither sees the other's input), then the judge on the
extractor's statements, then the auditor on the judge's verdict. Failure semantics (after each
agent's own repair attempt):
- extractor fails: the item fails ("Extractor failed: ..."); judge and auditor are not called
  (an empty statement list would pass an outage off as an empty source).
- reliability fails: the item goes on; its rating is unknown and a note says so (the rating never
  decides a verdict, so neither does its absence).
- judge fails: the item fails ("Entailment judge failed: ..."); the auditor is not called.
- auditor fails: the judge's verdict stands with the judge's confidence, and a note says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from factcheck.core.entailment_rules import AGENT_NAMES, aggregate
from factcheck.v1 import entailment_pb2 as pb

EXTRACTOR, RELIABILITY, JUDGE, AUDITOR = (
    pb.ENTAILMENT_AGENT_EXTRACTOR,
    pb.ENTAILMENT_AGENT_RELIABILITY,
    pb.ENTAILMENT_AGENT_JUDGE,
    pb.ENTAILMENT_AGENT_AUDITOR,
)


class AgentFailed(Exception):
    """An agent gave no valid output; `message` says why (bounded, safe to show)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


AgentCall = Callable[[pb.RunEntailmentAgentRequest], Awaitable[pb.RunEntailmentAgentResponse]]
# Told of every agent's outcome as it comes: (agent, model, response or None, failure message or None).
AgentListener = Callable[
    ["pb.EntailmentAgent", str, "pb.RunEntailmentAgentResponse | None", "str | None"], Awaitable[None]
]


@dataclass(frozen=True)
class AgentModels:
    extractor: str
    reliability: str
    judge: str
    auditor: str

    def of(self, agent: pb.EntailmentAgent) -> str:
        return {EXTRACTOR: self.extractor, RELIABILITY: self.reliability, JUDGE: self.judge, AUDITOR: self.auditor}[
            agent
        ]


@dataclass
class ItemOutcome:
    responses: dict[pb.EntailmentAgent, pb.RunEntailmentAgentResponse] = field(default_factory=dict)
    failures: list[pb.EntailmentAgentFailure] = field(default_factory=list)
    final: pb.EntailmentFinal | None = None
    error: str | None = None

    def output(self, agent: pb.EntailmentAgent):
        response = self.responses.get(agent)
        return None if response is None else getattr(response.output, response.output.WhichOneof("output"))

    def failure_of(self, agent: pb.EntailmentAgent) -> str | None:
        return next((f.message for f in self.failures if f.agent == agent), None)


async def judge_item(
    item: pb.EntailmentItem, models: AgentModels, call: AgentCall, listener: AgentListener | None = None
) -> ItemOutcome:
    outcome = ItemOutcome()

    async def run(agent: pb.EntailmentAgent, request: pb.RunEntailmentAgentRequest) -> bool:
        model = models.of(agent)
        request.model = model
        try:
            response = await call(request)
        except AgentFailed as failed:
            outcome.failures.append(pb.EntailmentAgentFailure(agent=agent, model=model, message=failed.message))
            if listener is not None:
                await listener(agent, model, None, failed.message)
            return False
        outcome.responses[agent] = response
        if listener is not None:
            await listener(agent, model, response, None)
        return True

    extracted, _ = await asyncio.gather(
        run(
            EXTRACTOR,
            pb.RunEntailmentAgentRequest(
                extractor=pb.ExtractorInput(claim=item.claim, source_excerpt=item.source_excerpt)
            ),
        ),
        run(RELIABILITY, pb.RunEntailmentAgentRequest(reliability=pb.ReliabilityInput(source_type=item.source_type))),
    )
    if not extracted:
        outcome.error = f"{_name(EXTRACTOR)} failed: {outcome.failure_of(EXTRACTOR)}"
        return outcome
    statements = outcome.output(EXTRACTOR).statements
    if not await run(JUDGE, pb.RunEntailmentAgentRequest(judge=pb.JudgeInput(claim=item.claim, statements=statements))):
        outcome.error = f"{_name(JUDGE)} failed: {outcome.failure_of(JUDGE)}"
        return outcome
    judge = outcome.output(JUDGE)
    audit = pb.AuditorInput(
        claim=item.claim,
        source_excerpt=item.source_excerpt,
        judge_verdict=judge.verdict,
        judge_confidence=judge.confidence,
    )
    await run(AUDITOR, pb.RunEntailmentAgentRequest(auditor=audit))
    outcome.final = aggregate(
        item.claim,
        judge,
        outcome.output(RELIABILITY),
        outcome.output(AUDITOR),
        auditor_failure=outcome.failure_of(AUDITOR),
        reliability_failure=outcome.failure_of(RELIABILITY),
    )
    return outcome


def _name(agent: pb.EntailmentAgent) -> str:
    return {EXTRACTOR: "Extractor", RELIABILITY: "Reliability", JUDGE: "Entailment judge", AUDITOR: "Auditor"}.get(
        agent, AGENT_NAMES.get(agent, "agent")
    )
