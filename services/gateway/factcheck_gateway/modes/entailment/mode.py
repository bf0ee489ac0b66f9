"""Entailment mode as the gateway sees it: its plan, run, steps and result, declared once (modes/base.py)."""

from factcheck.v1.factcheck_pb2 import MODE_ENTAILMENT
from factcheck_gateway.modes.base import Mode
from factcheck_gateway.modes.entailment.plan import plan_entailment, request_from_config
from factcheck_gateway.modes.entailment.result import fill_entailment_result
from factcheck_gateway.modes.entailment.steps import EntailmentRun, stages, start

ENTAILMENT = Mode(
    name="entailment",
    value=MODE_ENTAILMENT,
    config_field="entailment_config",
    plan=plan_entailment,
    request_from_config=request_from_config,
    run_class=EntailmentRun,
    start=start,
    stages=stages,
    fill_result=fill_entailment_result,
)
