"""local/checker's judge, the embedded entailment model (local/checker-nli is its alias): the lexical
prefilter, clause splitting, the shipped int8 model, and the engine through the real prompts and
parser; local/checker-lexical is the previous engine, with the lexical judge on every prompt."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import cast

import pytest
from pydantic import ValidationError

from factcheck.core.domain import ExtractedClaim
from factcheck.kit.settings import Settings, get_settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.inputs import ModelInputs, VerifyInputs
from factcheck.v1 import citations_pb2, common_pb2, council_pb2
from factcheck.v1 import entailment_pb2 as entailment_pb
from factcheck_checker.assessment import assessment_inputs
from factcheck_checker.council_prompts import council_check_inputs
from factcheck_checker.entailment.agent_prompts import agent_inputs
from factcheck_checker.review import review_inputs
from factcheck_checker.verification_prompts import build_verification_prompt, verification_inputs
from factcheck_checker.verifications import parse_verifications
from factcheck_engines import (
    checker,
    checker_lexical,
    checker_nli,
    entailment,
    investigator,
    nli_judge,
    nli_model,
)
from factcheck_engines.evidence_windows import claim_windows
from factcheck_engines.judge import DISPUTED, UNVERIFIABLE, VERIFIED, PassageText, judge

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


def test_a_process_that_judges_no_claim_against_a_passage_never_loads_the_runtime():
    """The model is loaded on the first claim with a passage to read: importing every engine, and
    answering prompts whose claims have no passages, loads neither onnxruntime nor tokenizers."""
    code = (
        "import sys\n"
        "import factcheck_engines, factcheck_checker.main, factcheck_checker.checker_service\n"
        "from factcheck_engines import checker, checker_nli, council_checker, investigator, citation_review\n"
        "from factcheck_engines import entailment, judges, nli_judge, nli_model\n"
        "from factcheck.core.domain import ExtractedClaim\n"
        "from factcheck_checker.verification_prompts import verification_inputs\n"
        "claim = ExtractedClaim('claim_1', 'The tower is 330 metres tall.', 'ctx', 'STATISTIC')\n"
        "answer = checker.answer(verification_inputs([claim], 'The tower is 330 metres tall.'))\n"
        "assert 'VERIFICATION claim_1: UNVERIFIABLE' in answer, answer\n"
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

    unused = cast(nli_model.EntailmentModel, Unused())
    assert nli_judge.judge("The tower is tall.", [], unused).verdict == UNVERIFIABLE
    assert nli_judge.judge("It is.", [PassageText("P1", EIFFEL)], unused).verdict == UNVERIFIABLE


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


def scripted(by_key: dict[str, tuple[float, float, float, float]]) -> nli_model.EntailmentModel:
    """A ScriptedModel, typed as the model it stands in for (the judge calls `scores` and reads `card`)."""
    return cast(nli_model.EntailmentModel, ScriptedModel(by_key))


def test_every_clause_must_be_supported_for_verified():
    passages = [PassageText("P1", CURIE, "Curie")]
    claim = "Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Chemistry in 1903."
    both = scripted({"Marie Curie was born": (0.9, 0.02, 0.05, 0.03), "Marie Curie won": (0.9, 0.02, 0.05, 0.03)})
    assert nli_judge.judge(claim, passages, both).verdict == VERIFIED
    one = scripted({"and won": (0.9, 0.02, 0.05, 0.03), "Marie Curie was born": (0.9, 0.02, 0.05, 0.03)})
    judgement = nli_judge.judge(claim, passages, one)
    assert judgement.verdict == UNVERIFIABLE
    assert judgement.partial == 'not stated: "Marie Curie won the Nobel Prize in Chemistry in 1903"'
    assert judgement.passage_id == "P1" and judgement.quote is not None and judgement.quote in CURIE


def test_a_figure_conflict_stays_disputed_with_the_corrected_figure_unless_the_model_is_sure():
    passages = [PassageText("P1", EIFFEL, "Eiffel Tower")]
    claim = "The Eiffel Tower was completed in 1887 as the entrance to the World's Fair."
    unsure = nli_judge.judge(claim, passages, scripted({"Eiffel": (0.6, 0.2, 0.1, 0.1)}))
    assert unsure.verdict == DISPUTED and "1889 (not 1887)" in (unsure.correction or "")
    sure = nli_judge.judge(claim, passages, scripted({"Eiffel": (0.95, 0.01, 0.02, 0.02)}))
    assert sure.verdict == VERIFIED


class WindowScriptedModel(ScriptedModel):
    """Scores by a key in the window's text, with a combiner that always decides `verdict`."""

    def __init__(self, by_key: dict[str, tuple[float, float, float, float]], verdict: str) -> None:
        super().__init__(by_key)
        labels = (VERIFIED, DISPUTED, UNVERIFIABLE)
        self.card = {
            "combiner": {
                "features": [{"name": "coverage", "mean": 0.0, "scale": 1.0}],
                "weights": {label: [0.0] for label in labels},
                "bias": {label: 5.0 if label == verdict else 0.0 for label in labels},
            }
        }

    def scores(self, pairs):
        return super().scores([(window, claim) for claim, window in pairs])


@pytest.mark.parametrize(("verdict", "curie"), [(VERIFIED, (0.3, 0.2, 0.2, 0.3)), (DISPUTED, (0.2, 0.6, 0.1, 0.1))])
def test_a_combined_verdict_cites_a_window_that_shares_words_with_the_claim(verdict, curie):
    # The unrelated passage's sentences are read too; the model scoring them higher than the
    # passage about the claim must not make the verdict quote bananas.
    passages = [PassageText("P1", BANANAS, "Bananas"), PassageText("P2", CURIE, "Curie")]
    model = WindowScriptedModel({"Bananas": (0.4, 0.4, 0.1, 0.1), "born": curie}, verdict)
    judgement = nli_judge.judge(
        "Marie Curie was born in Warsaw in 1867.", passages, cast(nli_model.EntailmentModel, model)
    )
    assert judgement.verdict == verdict
    assert judgement.passage_id == "P2" and judgement.quote is not None
    assert judgement.quote in CURIE and "born in Warsaw in 1867" in judgement.quote


def test_a_combined_dispute_without_a_contradicting_sentence_is_not_a_dispute():
    # The combiner leans to DISPUTED, but no sentence contradicts the claim (the model reads every one
    # as unrelated): the claim is VERIFIED or UNVERIFIABLE, never DISPUTED on nothing.
    passages = [PassageText("P1", CURIE, "Curie")]
    model = WindowScriptedModel({"Curie": (0.1, 0.1, 0.1, 0.7)}, DISPUTED)
    judgement = nli_judge.judge("Marie Curie was born in Kraków.", passages, cast(nli_model.EntailmentModel, model))
    assert judgement.verdict != DISPUTED and judgement.correction is None


def test_a_refuting_window_disputes_and_cites_it():
    passages = [PassageText("P1", BANANAS, "Bananas")]
    judgement = nli_judge.judge("Bananas grow only in Europe.", passages, scripted({"Bananas": (0.1, 0.8, 0.05, 0.05)}))
    assert judgement.verdict == DISPUTED
    assert judgement.passage_id == "P1" and judgement.correction == f"According to P1: {judgement.quote}"


# --- several claims at a time -------------------------------------------------------


CLAIMS_AND_PASSAGES = [
    ("The Eiffel Tower was completed in 1889.", [EIFFEL, CURIE]),
    ("Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Physics in 1903.", [CURIE, EIFFEL, BANANAS]),
    ("The Eiffel Tower is 300 metres tall.", [EIFFEL]),
    ("Bananas grow only in Europe.", [BANANAS, CURIE]),
    ("Gustave Eiffel's company designed the tower.", [BANANAS, EIFFEL]),
]


def _items(claims_and_passages):
    return [(c, [PassageText(f"P{i}", t, "Source") for i, t in enumerate(ts, 1)]) for c, ts in claims_and_passages]


@pytest.fixture
def nli_threads(monkeypatch):
    """Set FACTCHECK_NLI_THREADS for this test (the settings are read once per process, then cached)."""

    def use(count: str) -> None:
        monkeypatch.setenv("FACTCHECK_NLI_THREADS", count)
        get_settings.cache_clear()

    yield use
    get_settings.cache_clear()  # before monkeypatch restores the environment: the next read sees it


def test_the_thread_count_is_a_setting_and_a_bad_one_is_refused(nli_threads):
    nli_threads("3")
    assert nli_model.configured_threads() == 3
    for bad in ("0", "65", "two"):
        with pytest.raises(ValidationError, match="nli_threads"):
            Settings(nli_threads=bad)


def test_concurrent_first_claims_load_the_model_once(monkeypatch):
    loads = []

    class CountedModel(nli_model.EntailmentModel):
        def __init__(self) -> None:
            loads.append(threading.get_ident())
            time.sleep(0.05)  # a slow load: the other threads arrive meanwhile

    monkeypatch.setattr(nli_model, "EntailmentModel", CountedModel)
    monkeypatch.setattr(nli_model, "_loaded", None)
    with ThreadPoolExecutor(4) as pool:
        models = list(pool.map(lambda _: nli_model.default_model(), range(4)))
    assert len(loads) == 1 and all(model is models[0] for model in models)


async def test_embedded_engines_judged_by_the_model_are_keyed_by_its_revision():
    """What the checker reports with its verdicts (ModelClient.engine_revision, the engines' registered
    revision): the model's for the engines it judges for, "" for every other engine and HTTP model."""
    revision = nli_model.revision()
    assert len(revision) == 64 and revision == nli_model.revision()
    settings = Settings(model_base_url=None, model_api_key=None, model_providers={})
    async with ModelClient(settings) as client:
        for model_id in ("local/checker", "local/checker-nli", "local/entailment", "local/investigator"):
            assert client.engine_revision(model_id) == revision
        for model_id in ("local/checker-lexical", "local/extractor", "local/reporter", "openai/checker", "checker"):
            assert client.engine_revision(model_id) == ""
        with pytest.raises(ModelNotConfiguredError):
            client.engine_revision("local/no-such-engine")


@pytest.mark.parametrize("threads", ["1", "2", "4"])
def test_claims_judged_side_by_side_get_exactly_their_own_judgements(nli_threads, threads):
    # A claim's windows stay one model batch whatever runs beside it, so nothing moves, not even the
    # last bit of a probability (the int8 model's activation ranges are per batch: regrouping would).
    nli_threads(threads)
    items = _items(CLAIMS_AND_PASSAGES)
    alone = [nli_judge.judge(claim, passages) for claim, passages in items]
    assert nli_judge.judge_claims(items) == alone
    assert len({j.verdict for j in alone}) > 1  # the set is not one verdict throughout


def test_claims_are_judged_side_by_side(nli_threads):
    nli_threads("2")
    both_running = threading.Barrier(2, timeout=10)

    class Meeting(ScriptedModel):
        def scores(self, pairs):
            both_running.wait()  # BrokenBarrierError unless the second claim is being judged meanwhile
            return super().scores(pairs)

    items = _items([("Bananas grow only in Europe.", [BANANAS]), ("The Eiffel Tower is 330 metres tall.", [EIFFEL])])
    meeting = cast(nli_model.EntailmentModel, Meeting({"Bananas": (0.1, 0.8, 0.05, 0.05)}))
    judged = nli_judge.judge_claims(items, meeting)
    assert [j.verdict for j in judged] == [DISPUTED, UNVERIFIABLE]  # in the items' order


def test_the_session_thread_count_does_not_change_the_scores():
    pairs = [(claim, text) for claim, texts in CLAIMS_AND_PASSAGES for text in texts[:1]]
    one_thread, two_threads = nli_model.EntailmentModel(threads=1), nli_model.EntailmentModel(threads=2)
    for single, shared in zip(one_thread.scores(pairs), two_threads.scores(pairs)):
        for a, b in zip(vars(single).values(), vars(shared).values()):
            assert a == pytest.approx(b, abs=1e-6)


def test_the_nli_engines_answer_is_the_same_on_one_thread_or_two(nli_threads):
    inputs = _inputs([c for c, _ in CLAIMS_AND_PASSAGES], [EIFFEL, CURIE, BANANAS])
    nli_threads("1")
    sequential = checker_nli.answer(inputs)
    nli_threads("2")
    assert checker_nli.answer(inputs) == sequential


# --- the engines through the real prompt and parser ---------------------------------


def _verification(claims: list[str], passages: list[str]) -> tuple[str, VerifyInputs]:
    """The verification prompt of `claims` against every one of `passages`, and its call's inputs."""
    extracted = [ExtractedClaim(f"claim_{i}", c, c, "TECHNICAL") for i, c in enumerate(claims, 1)]
    protos = [common_pb2.Passage(id=f"P{i}", source_title="Source", text=t) for i, t in enumerate(passages, 1)]
    listing = {f"claim_{i}": [p.id for p in protos] for i in range(1, len(claims) + 1)}
    prompt = build_verification_prompt(extracted, " ".join(claims), protos, listing)
    return prompt, verification_inputs(extracted, " ".join(claims), protos, listing)


def _inputs(claims: list[str], passages: list[str]) -> VerifyInputs:
    return _verification(claims, passages)[1]


CLAIM = "The Eiffel Tower was completed in 1889."


def _every_judged_call() -> dict[str, ModelInputs]:
    """The inputs of each kind of call local/checker answers by judging a claim against passages."""
    passage = common_pb2.Passage(id="P1", source_title="Eiffel", text=EIFFEL)
    council = [council_pb2.LabelledResponse(label="Response A", text=CLAIM)]
    review = citations_pb2.ReviewClaim(claim=common_pb2.Claim(id="claim_1", claim=CLAIM), cited_span_ids=["P1"])
    pool = citations_pb2.PoolSpan(id="P1", source_id="eiffel", source_title="Eiffel", text=EIFFEL)
    return {
        "verification": _inputs([CLAIM], [EIFFEL]),
        "council": council_check_inputs("When was it completed?", council, [passage]),
        "assessment": assessment_inputs(CLAIM, [common_pb2.Passage(id="R1", source_title="Eiffel", text=EIFFEL)]),
        "review": review_inputs([review], [pool]),
    }


def _record_model_calls(monkeypatch) -> list[tuple[str, str]]:
    """The (claim, window) pairs the default model is asked from now on (a scripted stand-in answers)."""
    asked: list[tuple[str, str]] = []

    class Recording(ScriptedModel):
        def scores(self, pairs):
            asked.extend(pairs)
            return super().scores(pairs)

    monkeypatch.setattr(nli_judge, "default_model", lambda: Recording({}))
    return asked


@pytest.mark.parametrize("kind", ["verification", "council", "assessment", "review"])
def test_every_prompt_of_local_checker_is_judged_by_the_model_and_of_checker_lexical_never(monkeypatch, kind):
    inputs = _every_judged_call()[kind]
    asked = _record_model_calls(monkeypatch)
    checker_lexical.answer(inputs)
    assert asked == []
    checker.answer(inputs)
    assert asked and all(claim == CLAIM for claim, _ in asked)
    asked.clear()
    assert checker_nli.answer(inputs).replace("local/checker-nli", "local/checker") == checker.answer(inputs)


def test_local_investigator_and_local_entailments_judge_use_the_model_too(monkeypatch):
    asked = _record_model_calls(monkeypatch)
    investigator.answer(_every_judged_call()["assessment"])
    assert asked
    asked.clear()
    statements = [entailment_pb.ExtractedStatement(id=1, text="It was completed in 1889 for the World's Fair.")]
    entailment.answer(agent_inputs(entailment_pb.JudgeInput(claim=CLAIM, statements=statements)))
    assert asked


def test_the_lexical_engine_gives_the_lexical_judges_verdicts():
    claims = ["The tower is 300 metres tall.", "The tower is 330 metres tall.", "Water boils at 100 degrees Celsius."]
    answer = checker_lexical.answer(_inputs(claims, [EIFFEL, BANANAS]))
    verifications = parse_verifications(answer, "local/checker-lexical", ["claim_1", "claim_2", "claim_3"])
    passages = [PassageText("P1", EIFFEL, "Source"), PassageText("P2", BANANAS, "Source")]
    assert [v.verdict for v in verifications] == [judge(c, passages).verdict for c in claims]
    assert [v.verdict for v in verifications] == [DISPUTED, VERIFIED, UNVERIFIABLE]


async def test_both_engines_are_registered_and_answer_in_the_spec_format():
    prompt, inputs = _verification(["The Eiffel Tower was completed in 1889.", "Bananas are blue."], [EIFFEL, BANANAS])
    settings = Settings(model_base_url=None, model_api_key=None, model_providers={})
    async with ModelClient(settings) as client:
        for model in ("local/checker", "local/checker-lexical", "local/checker-nli"):
            completion = await client.complete(model, prompt, timeout_s=60, inputs=inputs)
            assert completion.text.count("\nVERIFICATION claim_") + completion.text.startswith("VERIFICATION") == 2
            assert "VERIFICATION SUMMARY:" in completion.text
            verifications = parse_verifications(completion.text, model, ["claim_1", "claim_2"])
            assert all(v.checker_model == model and v.evidence for v in verifications)


def test_the_nli_engine_reports_partial_support_in_the_evidence_line(monkeypatch):
    claim = "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891."
    scripted = ScriptedModel({"and moved": (0.9, 0.02, 0.05, 0.03), "Marie Curie was born": (0.9, 0.02, 0.05, 0.03)})
    monkeypatch.setattr(nli_judge, "default_model", lambda: scripted)
    answer = checker_nli.answer(_inputs([claim], [CURIE]))
    # The model reads every piece as stated; the passage names neither Paris nor 1891: not verified, and why.
    assert "VERIFICATION claim_1: UNVERIFIABLE" in answer
    assert 'Evidence: Partly supported: [P1] Source states "' in answer
    assert "but the sources do not mention Paris or 1891." in answer


def test_a_part_the_passage_gives_otherwise_is_disputed_with_its_value(monkeypatch):
    claim = "Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Chemistry in 1903."
    scripted = ScriptedModel({"and won": (0.9, 0.02, 0.05, 0.03), "Marie Curie was born": (0.9, 0.02, 0.05, 0.03)})
    monkeypatch.setattr(nli_judge, "default_model", lambda: scripted)
    answer = checker_nli.answer(_inputs([claim], [CURIE]))
    # The 1903 prize was Physics: the same attribute's value, from the sentence that states it.
    assert "VERIFICATION claim_1: DISPUTED" in answer
    assert (
        "Correction: Marie Curie was born in Warsaw in 1867 and won the Nobel Prize in Physics (not Chemistry) in 1903 [P1]"
        in answer
    )
    assert (
        'Sources: [P1] "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel."' in answer
    )


# --- the shipped model end to end (verdicts any reasonable entailment model gives) ---


def test_the_shipped_model_verifies_a_claim_its_passage_states_and_cites_it():
    judgement = nli_judge.judge("The Eiffel Tower was completed in 1889.", [PassageText("P1", EIFFEL, "Eiffel")])
    assert judgement.verdict == VERIFIED
    assert judgement.passage_id == "P1" and judgement.quote is not None
    assert judgement.quote in EIFFEL and "1889" in judgement.quote
    assert 0.5 <= judgement.score <= 1.0


def test_the_shipped_model_keeps_the_figure_correction():
    claim = "The Eiffel Tower was completed in 1887 as the entrance to the World's Fair."
    judgement = nli_judge.judge(claim, [PassageText("P1", EIFFEL, "Eiffel")])
    assert judgement.verdict == DISPUTED
    assert (judgement.correction or "").startswith("The Eiffel Tower was completed in 1889 (not 1887)")


def test_the_shipped_model_finds_nothing_in_an_unrelated_passage():
    judgement = nli_judge.judge("The Eiffel Tower was completed in 1889.", [PassageText("P1", BANANAS, "Bananas")])
    assert judgement.verdict == UNVERIFIABLE
