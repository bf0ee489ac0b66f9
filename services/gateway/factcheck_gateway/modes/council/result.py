"""Council mode's result, rebuilt from its stage rows; the aggregate is recomputed from the stored ratings,
as fact-check mode recomputes its consensus, so it always agrees with the rows shown next to it."""

from __future__ import annotations

from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_gateway.modes.council.aggregate import AggregateResponse, compute_aggregate
from factcheck_gateway.modes.council.checks import stored_check
from factcheck_gateway.modes.council.stages import COUNCIL_CHECK_PREFIX, RESPOND_PREFIX, STAGE_SYNTHESIS
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.store.records import MessageRecord, StageRecord
from factcheck_gateway.stored_results import find_stage


def fill_council_result(
    result: factcheck_pb2.FactCheckResult, message: MessageRecord, stages: list[StageRecord]
) -> None:
    config = message.request_config
    council = result.council
    council.config.CopyFrom(_run_config(config))
    responses = [_response(stage) for stage in stages if stage.stage_type.startswith(RESPOND_PREFIX)]
    council.responses.extend(sorted(responses, key=lambda r: r.label))

    checks, excluded = [], []
    for stage in (s for s in stages if s.stage_type.startswith(COUNCIL_CHECK_PREFIX)):
        check, reason = stored_check(stage)
        council.fact_checks.append(check)
        if reason is None:
            checks.append(check)
        else:
            excluded.append(_excluded(check.model, check.checker_index, reason))
    # Fact-checkers whose call failed have no row: their cause is in the run's failures.
    for failure in message.failures:
        stage_type = failure.get("stage", "")
        if stage_type.startswith(COUNCIL_CHECK_PREFIX) and not find_stage(stages, stage_type):
            index = int(stage_type.removeprefix(COUNCIL_CHECK_PREFIX))
            excluded.append(_excluded(failure.get("model", ""), index, f"{failure['code']}: {failure['message']}"))

    answered = [r for r in council.responses if not r.HasField("error")]
    if checks or excluded:
        council.aggregate.CopyFrom(
            compute_aggregate(
                [AggregateResponse(r.label, r.model) for r in answered],
                sorted(checks, key=lambda c: c.checker_index),
                sorted(excluded, key=lambda e: e.checker_index),
                exclude_self_ratings=bool(config.get("excludeSelfRatings")),
            )
        )
    synthesis = find_stage(stages, STAGE_SYNTHESIS[0])
    if synthesis is not None:
        council.synthesis.CopyFrom(
            council_pb2.SynthesisCompletePayload(
                model=synthesis.model or "",
                text=synthesis.content or "",
                based_on_label=stored_data(synthesis).get("basedOnLabel", ""),
                response_time_ms=synthesis.response_time_ms or 0,
            )
        )


def _run_config(config: dict) -> council_pb2.CouncilRunConfig:
    council_models = config.get("councilModels") or []
    run_config = council_pb2.CouncilRunConfig(
        council_models=council_models,
        response_count=len(council_models or config.get("responseNames") or []),
        fact_checker_models=config.get("factCheckerModels") or [],
        reporter_model=config.get("reporterModel") or "",
        timeout_ms=int(config.get("timeoutMs") or 0),
        exclude_self_ratings=bool(config.get("excludeSelfRatings")),
        responses_supplied=bool(config.get("responsesSupplied")),
    )
    if config.get("chairmanModel"):
        run_config.chairman_model = config["chairmanModel"]
    return run_config


def _response(stage: StageRecord) -> council_pb2.CouncilResponse:
    data = stored_data(stage)
    response = council_pb2.CouncilResponse(
        label=data.get("label", ""),
        model=stage.model or "",
        text=stage.content or "",
        response_time_ms=stage.response_time_ms or 0,
        supplied=bool(data.get("supplied")),
    )
    if data.get("error") is not None:
        response.error = data["error"]
    return response


def _excluded(model: str, index: int, message: str) -> council_pb2.CouncilCheckFailedPayload:
    return council_pb2.CouncilCheckFailedPayload(model=model, checker_index=index, message=message)
