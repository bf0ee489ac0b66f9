"""The fact-check's steps in order, decided as the run goes (the steps themselves: steps.py, verification.py,
pipelined.py, investigate/)."""

from __future__ import annotations

from factcheck_gateway.modes.fact_check import pipelined
from factcheck_gateway.modes.fact_check.investigate import step as investigate
from factcheck_gateway.modes.fact_check.stages import STAGE_REPORT, STAGE_RETRIEVE
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.modes.fact_check.steps import extract, generate, has_evidence_to_search, report, retrieve, title
from factcheck_gateway.modes.fact_check.verification import verify


async def stages(run: FactCheckRun):
    """The steps after `start`, decided as the run goes (no claims → no verification).

    A resumed run whose report is stored goes straight to the title: its verification is done.
    """
    if run.plan.generates:
        yield generate
    if pipelined.applies(run):
        yield pipelined.extract_and_verify
    else:
        yield extract
        if run.claims and STAGE_REPORT[0] not in run.stored:
            if STAGE_RETRIEVE[0] in run.stored or await has_evidence_to_search(run):
                yield retrieve
            yield verify
    if investigate.applies(run) and run.consensus and STAGE_REPORT[0] not in run.stored:
        yield investigate.investigate
    yield report
    yield title
