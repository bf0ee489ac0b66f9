"""`local/checker-overlap`, the word-overlap baseline: its verdicts through the real CheckerService.Verify
(model client, verification prompt, the checker's parser and citation check), its confidence bands, and
its threshold, recomputed from Factcheck-Bench's train split as bench/checker_accuracy.py chooses it."""

from __future__ import annotations

import grpc
import pytest

from bench.checker_accuracy import DataMissingError, fit_overlap_threshold, load_pairs, split_by_claim
from factcheck.evaluation.metrics import ScoredItem, score
from factcheck.evaluation.sets import load_shipped_set
from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.models.local import local_engine_roles
from factcheck.serving.server import new_server
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2
from factcheck_checker.checker_service import CheckerService
from factcheck_engines.checker_overlap import HIGH_CONFIDENCE_OVERLAP, OVERLAP_THRESHOLD, overlap_judge, plain_overlap
from factcheck_engines.evidence_windows import word_overlap
from factcheck_engines.judge import PassageText

MODEL = "local/checker-overlap"
BRIDGE = "The bridge opened in 1932. It cost a fortune."
LENGTH = "The bridge is 300 metres long."


def _claim(claim_id: str, text: str) -> common_pb2.Claim:
    return common_pb2.Claim(id=claim_id, claim=text, context="c", type=common_pb2.CLAIM_TYPE_TECHNICAL)


@pytest.fixture
async def checker():
    settings = Settings(model_base_url=None, model_api_key=None, model_providers={}, stage_timeout_ms=10_000)
    client = ModelClient(settings)
    server = new_server(settings)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield checker_pb2_grpc.CheckerServiceStub(channel)
    await server.stop(None)
    await client.aclose()


async def test_verdicts_through_the_checker_service(checker) -> None:
    claims = {
        "claim_1": "The bridge opened in 1932.",  # every word in P1
        "claim_2": "The bridge is 500 metres long.",  # 3 of 4 words in P2, another length: grounded, disputed
        "claim_3": "The bridge is painted red.",  # 1 of 3 words in P1
        "claim_4": "The bridge opened in 1932.",  # no passage listed
    }
    request = checker_pb2.VerifyRequest(
        model=MODEL,
        content="c",
        claims=[_claim(claim_id, text) for claim_id, text in claims.items()],
        passages=[
            common_pb2.Passage(id="P1", source_id="s1", source_title="City archive", text=BRIDGE),
            common_pb2.Passage(id="P2", source_id="s2", source_title="Travel forum", text=LENGTH),
        ],
        evidence=[
            common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1", "P2"]),
            common_pb2.ClaimEvidence(claim_id="claim_2", passage_ids=["P2"]),
            common_pb2.ClaimEvidence(claim_id="claim_3", passage_ids=["P1"]),
        ],
    )
    assert word_overlap(claims["claim_2"], LENGTH) == 0.75 and word_overlap(claims["claim_3"], BRIDGE) == 1 / 3
    response = await checker.Verify(request)
    got = {v.claim_id: v for v in response.verifications}
    assert [(got[c].verdict, got[c].confidence) for c in claims] == [
        (common_pb2.VERDICT_VERIFIED, common_pb2.CONFIDENCE_HIGH),
        (common_pb2.VERDICT_DISPUTED, common_pb2.CONFIDENCE_HIGH),
        (common_pb2.VERDICT_UNVERIFIABLE, common_pb2.CONFIDENCE_LOW),
        (common_pb2.VERDICT_UNVERIFIABLE, common_pb2.CONFIDENCE_LOW),
    ]
    assert got["claim_2"].correction == "The bridge is 300 metres (not 500 metres) long [P2]"
    assert all(v.checker_model == MODEL for v in response.verifications)
    # The quote survived the checker's citation check: it is verbatim in the passage.
    assert [(c.passage_id, c.quote) for c in got["claim_1"].citations] == [("P1", "The bridge opened in 1932.")]
    assert response.dropped_citations == 0
    assert (response.summary.verified, response.summary.disputed, response.summary.unverifiable) == (1, 1, 2)


async def test_without_evidence_every_claim_is_unverifiable(checker) -> None:
    request = checker_pb2.VerifyRequest(model=MODEL, content="c", claims=[_claim("claim_1", "Water boils at 100 C.")])
    response = await checker.Verify(request)
    assert [(v.verdict, v.confidence) for v in response.verifications] == [
        (common_pb2.VERDICT_UNVERIFIABLE, common_pb2.CONFIDENCE_LOW)
    ]


def test_it_is_listed_with_the_local_engines() -> None:
    assert "checker-overlap" in local_engine_roles()


def test_confidence_bands_and_it_never_disputes() -> None:
    passage = [PassageText("P1", "alpha beta gamma delta epsilon zeta eta theta iota kappa")]
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()

    def verdict(known: int, unknown: int) -> tuple[str, str]:
        claim = " ".join(words[:known] + [f"unknownword{n}" for n in range(unknown)])
        judgement = overlap_judge(claim, passage)
        return judgement.verdict, judgement.confidence

    assert verdict(9, 1) == ("VERIFIED", "HIGH")  # 0.9
    assert verdict(8, 2) == ("VERIFIED", "MEDIUM")  # 0.8
    assert verdict(6, 4) == ("VERIFIED", "MEDIUM")  # 0.6: the threshold itself verifies
    assert verdict(5, 5) == ("UNVERIFIABLE", "LOW")
    assert verdict(0, 3) == ("UNVERIFIABLE", "LOW")
    assert OVERLAP_THRESHOLD < HIGH_CONFIDENCE_OVERLAP
    assert overlap_judge("alpha beta gamma", []).verdict == "UNVERIFIABLE"


def test_the_threshold_is_the_one_chosen_on_factcheck_bench_train() -> None:
    try:
        pairs = load_pairs()
    except DataMissingError as missing:
        pytest.skip(str(missing))
    train, _ = split_by_claim(pairs)
    assert fit_overlap_threshold(train) == OVERLAP_THRESHOLD


@pytest.mark.parametrize(("name", "balanced"), [("factcheck-bench", 0.444), ("wice", 0.626), ("climate-fever", 0.347)])
def test_on_the_shipped_sets_it_scores_what_the_benchmark_reports_for_word_overlap(name: str, balanced: float) -> None:
    """The sets, the metrics and the engine's word overlap (before the grounding rules) agree with
    bench/checker_accuracy.py's word-overlap figures (README): the same split, the same labels, and (on WiCE) the
    passages kept hold the article's best overlap."""
    scored = []
    for item in load_shipped_set(name):
        passages = [PassageText(f"P{n}", e.text, e.title) for n, e in enumerate(item.evidence, 1)]
        judgement = plain_overlap(item.claim, passages)
        scored.append(ScoredItem(item.label, judgement.verdict, judgement.confidence, False, None))
    scores = score(scored)
    assert scores.balanced_accuracy == pytest.approx(balanced, abs=0.0005)
    assert scores.classes[1].predicted == 0  # never DISPUTED
