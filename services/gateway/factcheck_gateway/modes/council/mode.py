"""Council mode as the gateway sees it: its plan, run, steps and result, declared once (modes/base.py)."""

from factcheck.v1.factcheck_pb2 import MODE_COUNCIL
from factcheck_gateway.modes.base import Mode
from factcheck_gateway.modes.council.flow import stages
from factcheck_gateway.modes.council.plan import plan_council, request_from_config
from factcheck_gateway.modes.council.result import fill_council_result
from factcheck_gateway.modes.council.state import CouncilRun
from factcheck_gateway.modes.council.steps import start

COUNCIL = Mode(
    name="council",
    value=MODE_COUNCIL,
    config_field="council_config",
    plan=plan_council,
    request_from_config=request_from_config,
    run_class=CouncilRun,
    start=start,
    stages=stages,
    fill_result=fill_council_result,
    caller_fields=("responses",),
)
