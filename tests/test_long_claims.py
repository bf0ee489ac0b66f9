"""Claims of any length through the built-in checkers, and one claim's failure kept to that claim.

The embedded entailment model reads 128 tokens per (claim, window) pair: a claim of about 110
words left no room and the tokenizer failed, which failed the whole Verify call and every other
claim's verdict with it. Now the model reads a long claim's head with the window, and the judge
reads the rest piece by piece (nli_judge.claim_pieces); a claim the engine still fails on is
UNVERIFIABLE, saying why, while the others keep their verdicts.
"""

from __future__ import annotations

import grpc
import pytest

from factcheck.core.domain import ExtractedClaim
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2
from factcheck_checker.verification_prompts import verification_inputs
from factcheck_checker.verifications import parse_verifications
from factcheck_engines import checker, nli_judge
from factcheck_engines.judge import UNVERIFIABLE, VERIFIED, Judgement, PassageText
from factcheck_engines.judges import Judges, isolated
from factcheck_gateway.modes.entailment.plan import MAX_CLAIM_CHARS
from tests.processes import start_service

EIFFEL = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall. "
    "It was completed in 1889 as the entrance to the World's Fair. Gustave Eiffel's company designed and built it."
)
STATED = "The Eiffel Tower was completed in 1889."
# Words no passage states: the tail of a long claim whose head the passage does state.
FILLER = (
    "its engineers later proposed seven floating observatories above the harbour of Marseille powered by "
    "tidal turbines financed through a lottery that the senate debated for eleven consecutive winters"
).split()


def long_claim(words: int) -> str:
    """A claim of `words` words: the stated sentence, then filler no passage states."""
    head = STATED.rstrip(".").split()
    tail = [FILLER[i % len(FILLER)] for i in range(words - len(head))]
    return " ".join(head + tail) + "."


def long_claim_of_chars(chars: int) -> str:
    text = long_claim(chars // 4)
    while len(text) < chars:
        text = text[:-1] + " " + " ".join(FILLER) + "."
    return text[: chars - 1].rstrip() + "."


@pytest.fixture(scope="module")
def local_checker(tmp_path_factory):
    service = start_service(
        "checker", {"FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('checker') / 'fc.db'}"}
    )
    yield service
    service.stop()


def _verify(target: str, model: str, claims: list[str]) -> checker_pb2.VerifyResponse:
    request = checker_pb2.VerifyRequest(
        model=model,
        content=" ".join(claims),
        claims=[
            common_pb2.Claim(id=f"claim_{n}", claim=text, context="", type=common_pb2.CLAIM_TYPE_DATE)
            for n, text in enumerate(claims, 1)
        ],
        passages=[common_pb2.Passage(id="P1", text=EIFFEL, source_title="Eiffel")],
        evidence=[
            common_pb2.ClaimEvidence(claim_id=f"claim_{n}", passage_ids=["P1"]) for n in range(1, len(claims) + 1)
        ],
    )
    with grpc.insecure_channel(target) as channel:
        return checker_pb2_grpc.CheckerServiceStub(channel).Verify(request, timeout=120)


@pytest.mark.e2e
@pytest.mark.parametrize("model", ["local/checker", "local/checker-nli", "local/checker-lexical"])
def test_long_claims_get_verdicts_and_the_short_claim_beside_them_keeps_its_own(local_checker, model):
    claims = [STATED, long_claim(300), long_claim_of_chars(MAX_CLAIM_CHARS), long_claim(110)]
    assert len(claims[1].split()) == 300 and len(claims[2]) == MAX_CLAIM_CHARS
    response = _verify(local_checker.target, model, claims)
    verdicts = {v.claim_id: v for v in response.verifications}
    assert sorted(verdicts) == ["claim_1", "claim_2", "claim_3", "claim_4"]
    assert verdicts["claim_1"].verdict == common_pb2.VERDICT_VERIFIED
    # The passage states each long claim's first sentence only: none of them is VERIFIED on it.
    for claim_id in ("claim_2", "claim_3", "claim_4"):
        assert verdicts[claim_id].verdict == common_pb2.VERDICT_UNVERIFIABLE, verdicts[claim_id]


def test_a_long_claim_is_read_in_pieces_the_model_reads_whole():
    pieces = nli_judge.claim_pieces(long_claim(300))
    assert len(pieces) >= 10 and all(len(piece.split()) <= nli_judge.CLAIM_PIECE_WORDS for piece in pieces)
    assert " ".join(pieces).split() == long_claim(300).rstrip(".").split()


def test_one_claim_the_judge_fails_on_is_unverifiable_saying_why_and_the_others_keep_their_verdicts():
    def judge(claim: str, passages) -> Judgement:
        if "poison" in claim:
            raise ValueError("cannot read this claim")
        return nli_judge.judge(claim, passages)

    one = isolated(judge)
    judges = Judges(one, lambda items: [one(claim, passages) for claim, passages in items])
    claims = [
        ExtractedClaim("claim_1", STATED, "", "DATE"),
        ExtractedClaim("claim_2", "The poison claim was completed in 1889.", "", "DATE"),
        ExtractedClaim("claim_3", "The Eiffel Tower is 330 metres tall.", "", "STATISTIC"),
    ]
    passages = [common_pb2.Passage(id="P1", text=EIFFEL, source_title="Eiffel")]
    evidence = {claim.id: ["P1"] for claim in claims}
    answer = checker.answer(verification_inputs(claims, STATED, passages, evidence), judges)
    verifications = parse_verifications(answer, "local/checker", [c.id for c in claims], "")
    by_id = {v.claim_id: v for v in verifications}
    assert by_id["claim_1"].verdict == VERIFIED and by_id["claim_3"].verdict == VERIFIED
    assert by_id["claim_2"].verdict == UNVERIFIABLE and by_id["claim_2"].confidence == "LOW"
    assert "failed on this claim (ValueError: cannot read this claim)" in by_id["claim_2"].evidence
    assert isolated(judge)("The poison claim.", [PassageText("P1", EIFFEL, "Eiffel")]).failure
