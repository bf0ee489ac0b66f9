"""local/checker-nli: the lexical prefilter, clause splitting, the shipped int8 model, and the engine
through the real prompt and parser; local/checker-lexical is the previous engine, unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from factcheck.domain import ExtractedClaim
from factcheck.engines import checker, checker_lexical, checker_nli, nli_judge, nli_model
from factcheck.engines.evidence_windows import claim_windows
from factcheck.engines.judge import DISPUTED, UNVERIFIABLE, VERIFIED, PassageText
from factcheck.models.client import ModelClient
from factcheck.services.checker.prompts import build_verification_prompt
from factcheck.services.checker.verifications import parse_verifications
from factcheck.settings import Settings
from factcheck.v1 import common_pb2

EIFFEL = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris. It is 330 metres tall. "
    "It was completed in 1889 as the entrance to the World's Fair. Gustave Eiffel's company designed and built it."
)
CURIE = (
    "Marie Curie was a Polish and naturalised-French physicist and chemist. She was born in Warsaw in 1867. "
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel."
)
BANANAS = "Bananas are rich in potassium and grow in tropical regions of Asia and Latin America."


# --- the prefilter ------------------------------------------------------------------


def test_the_prefilter_picks_the_sentence_that_holds_the_claim_and_widens_it_with_whole_sentences():
    (window,) = claim_windows("The Eiffel Tower was completed in 1889.", [PassageText("P1", EIFFEL)], limit=1)
    assert "completed in 1889" in window.text
    assert window.text == EIFFEL[window.start : window.end]
    assert window.text.endswith(".") and len(window.text.split()) <= 40


def test_the_prefilter_looks_at_every_passage_first_then_the_best_windows_left():
    passages = [PassageText("P1", EIFFEL), PassageText("P2", CURIE), PassageText("P3", BANANAS)]
    windows = claim_windows("Marie Curie was born in Warsaw.", passages, limit=3, max_words=12)
    assert [w.passage.id for w in windows][0] == "P2"
    assert {w.passage.id for w in windows} == {"P1", "P2", "P3"}
    assert len(claim_windows("Marie Curie was born in Warsaw.", passages, limit=5, max_words=12)) == 5
    widened = claim_windows("Marie Curie was born in Warsaw.", passages, limit=5, max_words=200)
    assert [w.passage.id for w in widened] == ["P2", "P1", "P3"]  # each passage whole, once


# --- clauses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "clauses"),
    [
        (
            "Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in 1903.",
            ["Marie Curie was born in Warsaw in 1867", "Marie Curie won the Nobel Prize in 1903"],
        ),
        ("The shop sells salt and pepper in 30 countries.", ["The shop sells salt and pepper in 30 countries"]),
        (
            "Obama was president, and he was born in Hawaii; he has two daughters.",
            ["Obama was president", "he was born in Hawaii", "he has two daughters"],
        ),
        ("It rained.", ["It rained"]),
    ],
)
def test_a_claim_splits_into_its_clauses(claim, clauses):
    assert nli_judge.claim_clauses(claim) == clauses


# --- the model ----------------------------------------------------------------------


def test_importing_the_engine_loads_no_runtime():
    code = (
        "import sys; import factcheck.engines.checker_nli, factcheck.engines.nli_model; "
        "print('onnxruntime' in sys.modules, 'tokenizers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_the_shipped_model_gives_calibrated_probabilities_for_each_pair():
    assert nli_model.available()
    model = nli_model.default_model()
    assert model.card["labels"] == ["SUPPORTED", "REFUTED", "PARTIAL", "UNRELATED"]
    scores = model.scores([("The tower is 330 metres tall.", EIFFEL)] * 3 + [("Bananas grow in Asia.", BANANAS)])
    assert len(scores) == 4
    for s in scores:
        assert s.supported + s.refuted + s.partial + s.unrelated == pytest.approx(1.0, abs=1e-5)
    assert scores[0] == scores[1] == scores[2]  # padding in a batch changes nothing


def test_a_missing_model_is_reported_not_downloaded(tmp_path):
    with pytest.raises(nli_model.EntailmentModelUnavailable):
        nli_model.EntailmentModel(tmp_path)


def test_no_passage_or_no_content_words_is_unverifiable_without_calling_the_model():
    class Unused:
        def scores(self, pairs):
            raise AssertionError("the model was called")

    assert nli_judge.judge("The tower is tall.", [], Unused()).verdict == UNVERIFIABLE
    assert nli_judge.judge("It is.", [PassageText("P1", EIFFEL)], Unused()).verdict == UNVERIFIABLE


class ScriptedModel:
    """Scores by whether the claim (or clause) text contains a key: a stand-in for the network
    that lets the decision rules be tested exactly (no combiner in its card: the rules decide)."""

    def __init__(self, by_key: dict[str, tuple[float, float, float, float]]) -> None:
        self.by_key = by_key
        self.card: dict = {}

    def scores(self, pairs):
        out = []
        for claim, _ in pairs:
            values = next((v for k, v in self.by_key.items() if k in claim), (0.05, 0.05, 0.1, 0.8))
            out.append(nli_model.EntailmentScores(*values))
        return out


def test_every_clause_must_be_supported_for_verified():
    passages = [PassageText("P1", CURIE, "Curie")]
    claim = "Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Chemistry in 1903."
    both = ScriptedModel({"Marie Curie was born": (0.9, 0.02, 0.05, 0.03), "Marie Curie won": (0.9, 0.02, 0.05, 0.03)})
    assert nli_judge.judge(claim, passages, both).verdict == VERIFIED
    one = ScriptedModel({"and won": (0.9, 0.02, 0.05, 0.03), "Marie Curie was born": (0.9, 0.02, 0.05, 0.03)})
    judgement = nli_judge.judge(claim, passages, one)
    assert judgement.verdict == UNVERIFIABLE
    assert judgement.partial == 'not stated: "Marie Curie won the Nobel Prize in Chemistry in 1903"'
    assert judgement.passage_id == "P1" and judgement.quote in CURIE


def test_a_figure_conflict_stays_disputed_with_the_corrected_figure_unless_the_model_is_sure():
    passages = [PassageText("P1", EIFFEL, "Eiffel Tower")]
    claim = "The Eiffel Tower was completed in 1887 as the entrance to the World's Fair."
    unsure = nli_judge.judge(claim, passages, ScriptedModel({"Eiffel": (0.6, 0.2, 0.1, 0.1)}))
    assert unsure.verdict == DISPUTED and "1889 (not 1887)" in unsure.correction
    sure = nli_judge.judge(claim, passages, ScriptedModel({"Eiffel": (0.95, 0.01, 0.02, 0.02)}))
    assert sure.verdict == VERIFIED


def test_a_refuting_window_disputes_and_cites_it():
    passages = [PassageText("P1", BANANAS, "Bananas")]
    judgement = nli_judge.judge(
        "Bananas grow only in Europe.", passages, ScriptedModel({"Bananas": (0.1, 0.8, 0.05, 0.05)})
    )
    assert judgement.verdict == DISPUTED
    assert judgement.passage_id == "P1" and judgement.correction == f"According to P1: {judgement.quote}"


# --- the engines through the real prompt and parser ---------------------------------


def _prompt(claims: list[str], passages: list[str]) -> str:
    extracted = [ExtractedClaim(f"claim_{i}", c, c, "TECHNICAL") for i, c in enumerate(claims, 1)]
    protos = [common_pb2.Passage(id=f"P{i}", source_title="Source", text=t) for i, t in enumerate(passages, 1)]
    listing = {f"claim_{i}": [p.id for p in protos] for i in range(1, len(claims) + 1)}
    return build_verification_prompt(extracted, " ".join(claims), protos, listing)


def test_the_lexical_engine_answers_as_local_checker_did():
    prompt = _prompt(["The Eiffel Tower was completed in 1889."], [EIFFEL])
    assert checker_lexical.answer(prompt) == checker.answer(prompt).replace("local/checker", "local/checker-lexical")


async def test_both_engines_are_registered_and_answer_in_the_spec_format():
    prompt = _prompt(["The Eiffel Tower was completed in 1889.", "Bananas are blue."], [EIFFEL, BANANAS])
    settings = Settings(model_base_url=None, model_api_key=None, model_providers={})
    async with ModelClient(settings) as client:
        for model in ("local/checker-lexical", "local/checker-nli"):
            completion = await client.complete(model, prompt, timeout_s=60)
            assert completion.text.count("\nVERIFICATION claim_") + completion.text.startswith("VERIFICATION") == 2
            assert "VERIFICATION SUMMARY:" in completion.text
            verifications = parse_verifications(completion.text, model, ["claim_1", "claim_2"])
            assert all(v.checker_model == model and v.evidence for v in verifications)


def test_the_nli_engine_reports_partial_support_in_the_evidence_line(monkeypatch):
    claim = "Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Chemistry in 1903."
    scripted = ScriptedModel({"and won": (0.9, 0.02, 0.05, 0.03), "Marie Curie was born": (0.9, 0.02, 0.05, 0.03)})
    monkeypatch.setattr(nli_judge, "default_model", lambda: scripted)
    answer = checker_nli.answer(_prompt([claim], [CURIE]))
    assert "VERIFICATION claim_1: UNVERIFIABLE" in answer
    assert 'Evidence: Partly supported: [P1] Source states "' in answer
    assert 'but not stated: "Marie Curie won the Nobel Prize in Chemistry in 1903".' in answer


# --- the shipped model end to end (verdicts the lexical rules alone also reach) -------


def test_the_shipped_model_verifies_a_claim_its_passage_states_and_cites_it():
    judgement = nli_judge.judge("The Eiffel Tower was completed in 1889.", [PassageText("P1", EIFFEL, "Eiffel")])
    assert judgement.verdict == VERIFIED
    assert judgement.passage_id == "P1" and judgement.quote in EIFFEL and "1889" in judgement.quote
    assert 0.5 <= judgement.score <= 1.0


def test_the_shipped_model_keeps_the_figure_correction():
    claim = "The Eiffel Tower was completed in 1887 as the entrance to the World's Fair."
    judgement = nli_judge.judge(claim, [PassageText("P1", EIFFEL, "Eiffel")])
    assert judgement.verdict == DISPUTED
    assert judgement.correction.startswith("The Eiffel Tower was completed in 1889 (not 1887)")


def test_the_shipped_model_finds_nothing_in_an_unrelated_passage():
    judgement = nli_judge.judge("The Eiffel Tower was completed in 1889.", [PassageText("P1", BANANAS, "Bananas")])
    assert judgement.verdict == UNVERIFIABLE
