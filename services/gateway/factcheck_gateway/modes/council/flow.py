"""The council's steps in order (the steps themselves: steps.py, checks.py)."""

from __future__ import annotations

from factcheck_gateway.modes.council.checks import fact_check
from factcheck_gateway.modes.council.stages import STAGE_COUNCIL_RETRIEVE
from factcheck_gateway.modes.council.state import CouncilRun
from factcheck_gateway.modes.council.steps import aggregate, anonymise, respond, retrieve, synthesise, title
from factcheck_gateway.runs.evidence_stage import has_evidence


async def stages(run: CouncilRun):
    yield respond
    yield anonymise
    plan = run.council_plan
    if STAGE_COUNCIL_RETRIEVE[0] in run.stored or await has_evidence(run, plan.sources, plan.use_knowledge_store):
        yield retrieve
    yield fact_check
    yield aggregate
    if run.council_plan.chairman_model:
        yield synthesise
    yield title
