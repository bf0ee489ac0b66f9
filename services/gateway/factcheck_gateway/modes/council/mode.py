"""Council mode as the gateway sees it: its plan, run, steps and result, declared once (modes/base.py)."""

from factcheck.v1.factcheck_pb2 import MODE_COUNCIL
from factcheck_gateway.modes.base import Mode
from factcheck_gateway.modes.council.flow import stages
from factcheck_gateway.modes.council.plan import plan_council, resolved_request
from factcheck_gateway.modes.council.result import fill_council_result
from factcheck_gateway.modes.council.state import CouncilRun
from factcheck_gateway.modes.council.steps import start

COUNCIL = Mode(
    name="council",
    value=MODE_COUNCIL,
    config_field="council_config",
    plan=plan_council,
    resolved_request=resolved_request,
    run_class=CouncilRun,
    start=start,
    stages=stages,
    fill_result=fill_council_result,
)
