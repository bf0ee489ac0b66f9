"""Council mode with no network: supplied answers, the built-in local/ fact-checker judging them against
the request's sources, and the local chairman (the offline default). SQLite and PostgreSQL."""

from __future__ import annotations

import grpc

from factcheck.v1 import common_pb2, council_pb2, factcheck_pb2, factcheck_pb2_grpc
from tests.inprocess import inprocess_settings, serve_everything

SOURCE = common_pb2.Source(
    id="eiffel",
    title="Eiffel Tower facts",
    text=(
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
        "The tower is 330 metres tall. It was designed by the engineering company of Gustave Eiffel."
    ),
)
ANSWERS = {
    "Assistant A": "The Eiffel Tower was completed in 1889. The tower is 330 metres tall.",
    "Assistant B": "The Eiffel Tower was completed in 1925. The tower is 330 metres tall.",
}


async def test_an_offline_council_ranks_the_answer_with_the_wrong_date_lower(database_url):
    settings = inprocess_settings(
        "http://127.0.0.1:9",  # nothing listens: every model here must be local/
        database_url,
        default_generator_model="local/generator",
        default_extractor_model="local/extractor",
        default_checker_models=["local/checker"],
        default_reporter_model="local/reporter",
    )
    request = factcheck_pb2.RunRequest(
        question="When was the Eiffel Tower completed and how tall is it?",
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(
            responses=[council_pb2.NamedResponse(name=name, text=text) for name, text in ANSWERS.items()],
            sources=[SOURCE],
            chairman_model="local/reporter",
        ),
    )
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [r.event async for r in stub.Run(request, timeout=60)]
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result

    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[-1] == "complete" and "evidence_retrieved" in kinds and "synthesis_complete" in kinds
    aggregate = next(
        e for e in events if e.WhichOneof("event") == "council_aggregate_complete"
    ).council_aggregate_complete.aggregate
    assert [r.model for r in aggregate.ranking] == ["Assistant A", "Assistant B"]
    best, worst = aggregate.ranking
    assert best.average_score > worst.average_score and best.most_reliable_votes == 1
    assert worst.inaccurate_claim_count >= 1
    assert council_pb2.ERROR_TYPE_NUMERICAL_ERROR in [e.error_type for e in worst.error_types]
    [check] = result.council.fact_checks
    assert check.model == "local/checker" and "FACT CHECK SUMMARY:" in check.analysis
    wrong = [c for c in check.inaccurate_claims if c.label == worst.label]
    assert any("1925" in c.claim and "1889" in c.correction for c in wrong)
    assert result.council.synthesis.based_on_label == best.label and "1889" in result.council.synthesis.text
    assert result.title
