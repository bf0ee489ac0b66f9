"""Fact-check mode as the gateway sees it: its plan, run, steps and result, declared once (modes/base.py)."""

from factcheck.v1.factcheck_pb2 import MODE_FACT_CHECK
from factcheck_gateway.modes.base import Mode
from factcheck_gateway.modes.fact_check import thresholds
from factcheck_gateway.modes.fact_check.flow import stages
from factcheck_gateway.modes.fact_check.plan import RunPlan, plan_fact_check, request_from_config
from factcheck_gateway.modes.fact_check.result import fill_fact_check_result
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.modes.fact_check.steps import start

FACT_CHECK = Mode(
    name="fact_check",
    value=MODE_FACT_CHECK,
    config_field="mode_config",
    plan=plan_fact_check,
    request_from_config=request_from_config,
    run_class=FactCheckRun,
    start=start,
    stages=stages,
    fill_result=fill_fact_check_result,
    checker_fields=RunPlan.checker_fields,
    check_stored=thresholds.check_stored,
    caller_fields=("use_cache",),
)
