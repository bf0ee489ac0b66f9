"""Council mode (MODE_COUNCIL): several models answer, every fact-checker rates every
anonymised answer, and the answers are ranked with an error taxonomy."""

from factcheck.v1.factcheck_pb2 import MODE_COUNCIL
from factcheck_gateway.modes.base import Mode
from factcheck_gateway.modes.council.plan import plan_council, resolved_request
from factcheck_gateway.modes.council.result import fill_council_result
from factcheck_gateway.modes.council.steps import CouncilRun, stages, start

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
