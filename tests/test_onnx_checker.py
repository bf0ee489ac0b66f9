"""`onnx/` grounding checkers: real ONNX files read through the card, the model client and the checker service.

The shipped entailment model, given a card and a tokenizer.json equivalent to its vocab.txt, gives through
`onnx/` the probabilities local/checker's reader of it gives (nli_model.EntailmentModel), to 1e-6. Tiny
models built here with the `onnx` package (tests/onnx_models.py: random weights, a real graph, a real
tokenizer.json) exercise other label sets, activations, input orders, templates and lengths, each checked
against the same arithmetic in numpy. Bad folders (missing files, cards that cannot be read or do not match
the model, graphs with other inputs) are clear errors naming FACTCHECK_ONNX_MODELS; a claim longer than the
model reads is UNVERIFIABLE with the reason while the call's other claims keep their verdicts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest
from tokenizers import Tokenizer

from factcheck.evaluation.sets import load_shipped_set
from factcheck.kit.settings import Settings
from factcheck.models import calls
from factcheck.models.availability import check_servable, grounding_kind
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.inputs import ClaimInput, Passage, VerifyInputs
from factcheck.text.chunks import chunk_spans
from factcheck.v1 import checker_pb2, common_pb2
from factcheck_engines.nli_model import EntailmentModel
from factcheck_engines.onnx_checker import OnnxFamily, read_claim
from factcheck_engines.onnx_model import GroundingModel, loaded
from tests.inprocess import serve_checker
from tests.onnx_models import TinyModel, shipped_nli_folder, tiny_model_folder, tiny_reference

TOWER = "The Eiffel Tower in Paris was completed in 1889. It is 330 metres tall."
MOON = "The Moon is made of rock and dust. It is not made of cheese."


def _settings(threads: int = 1, batch: int = 16, **folders: Path) -> Settings:
    return Settings(onnx_models={k: str(v) for k, v in folders.items()}, onnx_threads=threads, onnx_batch_size=batch)


def _model(folder: Path, threads: int = 1, batch: int = 16) -> GroundingModel:
    return loaded(folder, _settings(threads, batch, m=folder))


def _inputs(claims: dict[str, str], passages: dict[str, str], listing: dict[str, tuple[str, ...]]) -> VerifyInputs:
    return VerifyInputs(
        "content",
        tuple(ClaimInput(cid, text) for cid, text in claims.items()),
        tuple(Passage(pid, f"Source {pid}", text) for pid, text in passages.items()),
        listing,
    )


@pytest.fixture(scope="module")
def nli_folder(tmp_path_factory) -> Path:
    return shipped_nli_folder(tmp_path_factory.mktemp("onnx") / "nli")


# --- the shipped model through onnx/ and through local/checker's reader ----------------------------------------


@pytest.mark.parametrize("threads", [1, 2])
def test_the_shipped_model_reads_the_same_through_onnx_as_through_its_own_reader(nli_folder, threads):
    """Every (claim, chunk) pair of 30 Factcheck-Bench items: the same four probabilities, to 1e-6."""
    model = _model(nli_folder, threads=threads)
    reference = EntailmentModel()  # local/checker's reader: one thread, batches of 16
    items = [item for item in load_shipped_set("factcheck-bench") if item.evidence][:30]
    largest, pairs_read = 0.0, 0
    for item in items:
        passages = [Passage(f"P{i + 1}", e.title, e.text) for i, e in enumerate(item.evidence)]
        reading = read_claim(model, "onnx/nli", "claim_1", item.claim, passages, {})
        assert reading.not_checked is None and reading.unread == 0
        [part] = reading.parts
        pairs = [(item.claim, r.unit.text) for r in part]
        expected = reference.scores(pairs)
        rows = model.probabilities(model.encode(pairs), [len(a) + len(b) for a, b in pairs])
        for r, row, e in zip(part, rows, expected):
            wanted = [e.supported, e.refuted, e.partial, e.unrelated]
            largest = max(largest, *(abs(a - b) for a, b in zip(row, wanted)))
            assert abs(r.supported - e.supported) <= 1e-6 and abs((r.contradicted or 0) - e.refuted) <= 1e-6
        pairs_read += len(pairs)
    assert pairs_read >= 30 and largest <= 1e-6, largest


def test_a_pair_put_together_from_the_passage_s_tokens_is_the_pair_tokenized(nli_folder, tmp_path):
    """A WordPiece tokenizer reads every word alone: a chunk's tokens are the passage's tokens inside it, and
    the pair put together from them by the tokenizer's layout is the pair it tokenizes (a template model
    tokenizes each pair)."""
    model = _model(nli_folder)
    compared = 0
    for item in [item for item in load_shipped_set("factcheck-bench") if item.evidence][:40]:
        claim = item.claim.strip()
        for evidence in item.evidence:
            tokens = model.tokens(evidence.text)
            spans = chunk_spans(evidence.text, tokens.offsets, 60)
            put_together = model.encode_units(claim, model.tokens(claim), evidence.text, tokens, spans)
            tokenized = model.encode([(claim, evidence.text[start:end]) for start, end in spans])
            assert put_together == tokenized
            compared += len(spans)
    assert compared >= 40
    template = _model(tiny_model_folder(tmp_path / "t", template="{document}</s>{claim}", roberta_style=True).folder)
    assert model._pair_layout is not None and template._pair_layout is None


def test_the_card_of_the_shipped_model_is_its_reader_s(nli_folder):
    model = _model(nli_folder)
    assert model.card.labels == ("SUPPORTED", "REFUTED", "PARTIAL", "UNRELATED")
    assert model.card.claim_first and model.card.max_length == 128 and model.overhead == 3
    assert model.inputs == ["input_ids", "attention_mask", "token_type_ids"]


# --- tiny models: other labels, orders, templates, lengths ----------------------------------------------------


def _reference_pair(tiny: TinyModel, claim: str, document: str) -> list[float]:
    tokenizer = Tokenizer.from_file(str(tiny.folder / "tokenizer.json"))
    card = tiny.card
    if "template" in card:
        encoding = tokenizer.encode(
            card["template"].format(document=document, claim=claim, premise=document, hypothesis=claim)
        )
    elif card["input"] in ("claim,document", "hypothesis,premise"):
        encoding = tokenizer.encode(claim, document)
    else:
        encoding = tokenizer.encode(document, claim)
    return tiny_reference(tiny, encoding.ids, encoding.type_ids)


@pytest.mark.parametrize(
    "options",
    [
        {"input_order": "document,claim"},
        {"input_order": "claim,document"},
        {"input_order": "premise,hypothesis", "labels": ("entailment", "neutral", "contradiction"),
         "supported": "entailment", "contradicted": "contradiction"},
        {"labels": ("supported",), "activation": "sigmoid"},
        {"template": "{document}</s>{claim}", "roberta_style": True},
        {"template": "Premise: {premise} Hypothesis: {hypothesis}", "segments": False, "temperature": 2.0},
    ],
    ids=["document-first", "claim-first", "nli-three-labels", "sigmoid", "roberta-template", "words-template"],
)  # fmt: skip
def test_tiny_models_read_each_pair_as_numpy_computes_it(tmp_path, options):
    tiny = tiny_model_folder(tmp_path / "tiny", **options)
    model = _model(tiny.folder, batch=2)  # several batches, padded to their own longest pair
    claim = "The Eiffel Tower is 330 metres tall."
    passages = [Passage("P1", "Almanac", TOWER), Passage("P2", "Moon", MOON)]
    reading = read_claim(model, "onnx/tiny", "claim_1", claim, passages, {})
    [part] = reading.parts
    assert [r.unit.text for r in part] == [TOWER, MOON]  # each passage fits the model: one chunk each
    card = model.card
    for r in part:
        expected = _reference_pair(tiny, claim, r.unit.text)
        assert r.supported == pytest.approx(expected[card.supported], abs=1e-6)
        if card.contradicted is None:
            assert r.contradicted is None
        else:
            assert r.contradicted == pytest.approx(expected[card.contradicted], abs=1e-6)


def test_the_order_of_the_pair_is_the_card_s(tmp_path):
    document_first = tiny_model_folder(tmp_path / "a", input_order="document,claim")
    claim_first = tiny_model_folder(tmp_path / "b", input_order="claim,document")  # the same weights (seed)
    claim = "The Moon is made of cheese."
    [[a]], [[b]] = (
        read_claim(_model(t.folder), "onnx/t", "c", claim, [Passage("P1", "", MOON)], {}).parts
        for t in (document_first, claim_first)
    )
    assert a.supported != pytest.approx(b.supported, abs=1e-4)
    assert b.supported == pytest.approx(_reference_pair(document_first, MOON, claim)[1], abs=1e-6)


def test_a_long_passage_is_read_in_verbatim_chunks_that_fit_the_model(tmp_path):
    tiny = tiny_model_folder(tmp_path / "tiny", max_length=32)
    model = _model(tiny.folder)
    sentences = [f"The tower was built in {1880 + i} and it is tall." for i in range(12)]
    long_sentence = " ".join(["the river flows through the capital"] * 10)  # 60 words, no full stop
    text = " ".join(sentences) + " " + long_sentence
    claim = "The tower is tall."
    reading = read_claim(model, "onnx/tiny", "claim_1", claim, [Passage("P1", "History", text)], {})
    [part] = reading.parts
    chunks = [r.unit.text for r in part]
    assert len(chunks) > 4 and all(chunk in text for chunk in chunks)
    encoded = model.encode([(claim, chunk) for chunk in chunks])
    assert max(len(e.ids) for e in encoded) <= 32
    # Whole sentences are packed together; the sentence longer than a chunk is cut between words.
    assert chunks[0].startswith(sentences[0]) and chunks[0].endswith(".")
    assert all(not chunk.startswith(("he ", "ver ")) for chunk in chunks)

    smaller = _model(tiny_model_folder(tmp_path / "small", max_length=32, chunk_tokens=10).folder)
    [small_part] = read_claim(smaller, "onnx/tiny", "claim_1", claim, [Passage("P1", "History", text)], {}).parts
    assert len(small_part) > len(part)


def test_sentence_aggregation_reads_each_sentence_of_the_claim_against_each_sentence(tmp_path):
    tiny = tiny_model_folder(tmp_path / "tiny", aggregation="sentences")
    model = _model(tiny.folder)
    claim = "The Eiffel Tower is in Paris. It is 330 metres tall."
    reading = read_claim(model, "onnx/tiny", "claim_1", claim, [Passage("P1", "Almanac", TOWER)], {})
    assert len(reading.parts) == 2
    for part, claim_sentence in zip(reading.parts, ["The Eiffel Tower is in Paris.", "It is 330 metres tall."]):
        assert [r.unit.text for r in part] == [
            "The Eiffel Tower in Paris was completed in 1889.",
            "It is 330 metres tall.",
        ]
        assert all(r.unit.kind == "sentence" for r in part)
        for r in part:
            assert r.supported == pytest.approx(_reference_pair(tiny, claim_sentence, r.unit.text)[1], abs=1e-6)


# --- the engine's answer -------------------------------------------------------------------------------------


def test_the_answer_is_the_verification_format_with_verbatim_quotes(tmp_path):
    tiny = tiny_model_folder(tmp_path / "tiny", threshold=0.01)  # every chunk supports: VERIFIED
    engine = OnnxFamily().engine("tiny", _settings(tiny=tiny.folder))
    text = engine(
        "prompt",
        _inputs({"claim_1": "The tower is tall.", "claim_2": "Water boils."}, {"P1": TOWER}, {"claim_1": ("P1",)}),
    )
    assert text.startswith(
        "VERIFICATION claim_1: VERIFIED\nEvidence: [P1] Source P1 supports it (onnx/tiny: P(supported)"
    )
    assert f'Sources: [P1] "{TOWER}"' in text and "Correction: N/A" in text
    assert (
        "VERIFICATION claim_2: UNVERIFIABLE\nEvidence: Not checked: no evidence passages were given for this claim"
        in text
    )
    assert text.endswith("VERIFICATION SUMMARY:\nVerified: 1\nDisputed: 0\nUnverifiable: 1\n")


def test_a_claim_longer_than_the_model_reads_is_unverifiable_and_the_others_keep_their_verdicts(tmp_path):
    tiny = tiny_model_folder(tmp_path / "tiny", max_length=32, threshold=0.01)
    engine = OnnxFamily().engine("tiny", _settings(tiny=tiny.folder))
    long_claim = " ".join(["the tower is tall"] * 8)  # 32 tokens: no room left for any evidence
    inputs = _inputs(
        {"claim_1": long_claim, "claim_2": "The tower is tall."},
        {"P1": TOWER},
        {"claim_1": ("P1",), "claim_2": ("P1",)},
    )
    text = engine("prompt", inputs)
    assert "VERIFICATION claim_1: UNVERIFIABLE\nEvidence: Not checked: the claim is 32 tokens long" in text
    assert "32 tokens onnx/tiny reads (its card's max_length)" in text
    assert "VERIFICATION claim_2: VERIFIED" in text


async def test_through_the_model_client_a_call_costs_no_tokens_and_the_revision_is_the_files_hash(tmp_path):
    tiny = tiny_model_folder(tmp_path / "tiny")
    settings = _settings(tiny=tiny.folder)
    async with ModelClient(settings) as client:
        inputs = _inputs({"claim_1": "The tower is tall."}, {"P1": TOWER}, {"claim_1": ("P1",)})
        with calls.collected() as made:
            completion = await client.complete("onnx/tiny", "prompt", timeout_s=30, inputs=inputs)
        assert completion.text.startswith("VERIFICATION claim_1: ")
        [call] = made
        assert (call.model, call.provider, call.outcome) == ("onnx/tiny", "onnx", "ok")
        assert (call.prompt_tokens, call.completion_tokens, call.usage_estimated) == (0, 0, False)
        revision = client.engine_revision("onnx/tiny")
        assert len(revision) == 64 and revision == _model(tiny.folder).revision
        assert client.supports_structured_outputs("onnx/tiny") is False and client.context_window("onnx/tiny") is None


def test_the_revision_changes_with_any_of_the_three_files(tmp_path):
    first = _model(tiny_model_folder(tmp_path / "a").folder).revision
    assert _model(tiny_model_folder(tmp_path / "b").folder).revision == first  # same files, another folder
    assert _model(tiny_model_folder(tmp_path / "c", threshold=0.6).folder).revision != first
    assert _model(tiny_model_folder(tmp_path / "d", seed=8).folder).revision != first


# --- folders that cannot be used ------------------------------------------------------------------------------


def _error(folder: Path) -> str:
    with pytest.raises(ModelNotConfiguredError) as caught:
        OnnxFamily().revision("m", _settings(m=folder))
    message = str(caught.value)
    assert "onnx/m" in message and "FACTCHECK_ONNX_MODELS" in message
    return message


def _rewrite_card(folder: Path, **changes) -> None:
    card = json.loads((folder / "factcheck-model.json").read_text())
    card.update(changes)
    (folder / "factcheck-model.json").write_text(json.dumps({k: v for k, v in card.items() if v != "(drop)"}))


def test_a_name_without_a_folder_is_refused_naming_the_setting():
    settings = _settings(other=Path("/nowhere"))
    with pytest.raises(
        ModelNotConfiguredError,
        match="no folder is configured for onnx/missing: add 'missing' and its folder to FACTCHECK_ONNX_MODELS",
    ):
        check_servable("onnx/missing", settings)
    check_servable("onnx/other", settings)  # the gateway knows names only: the folder is the checker's
    assert grounding_kind("onnx/other", settings) == "onnx" and grounding_kind("local/checker", settings) is None
    assert "/nowhere is not a folder on this checker" in _error(Path("/nowhere"))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"treshold": 0.4}, "unknown key 'treshold'"),
        ({"supported": "yes"}, '"supported" must be one of the labels (unsupported, supported)'),
        ({"input": "(drop)", "template": "{document} only"}, '"template" must hold {document} and {claim} once each'),
        ({"template": "{document}{claim}"}, 'give "input" (a pair) or "template" (one sequence), not both'),
        ({"input": "claim-document"}, '"input" must be one of'),
        ({"max_length": 4}, '"max_length" must be a whole number from 16'),
        ({"threshold": 1.5}, '"threshold" must be a probability between 0 and 1'),
        ({"aggregation": "paragraphs"}, '"aggregation" must be one of chunks, sentences'),
        ({"labels": ["a", "a"]}, "names a class twice"),
        ({"pad_token": "[NOPE]"}, "\"pad_token\" '[NOPE]' is not in tokenizer.json"),
        ({"output": "scores"}, 'has the outputs logits: name the class scores with "output"'),
    ],
)
def test_a_card_that_cannot_be_used_is_refused_with_the_key(tmp_path, change, expected):
    folder = tiny_model_folder(tmp_path / "m").folder
    _rewrite_card(folder, **change)
    assert expected in _error(folder)


def test_missing_files_unreadable_files_and_graphs_that_do_not_match_are_refused(tmp_path):
    folder = tiny_model_folder(tmp_path / "m").folder
    (folder / "model.onnx").unlink()
    assert "has no model.onnx" in _error(folder)

    folder = tiny_model_folder(tmp_path / "card").folder
    (folder / "factcheck-model.json").write_text("{not json")
    assert "factcheck-model.json is not JSON" in _error(folder)

    folder = tiny_model_folder(tmp_path / "tokenizer").folder
    (folder / "tokenizer.json").write_text('{"model": 3}')
    assert "tokenizer.json cannot be read" in _error(folder)

    folder = tiny_model_folder(tmp_path / "weights").folder
    (folder / "model.onnx").write_bytes(b"not a graph")
    assert "model.onnx cannot be loaded" in _error(folder)

    folder = tiny_model_folder(tmp_path / "outputs", outputs=3).folder  # two labels, three outputs
    assert "has the shape [1, 3] for one pair, but factcheck-model.json lists 2 labels" in _error(folder)

    folder = tiny_model_folder(tmp_path / "inputs", extra_input="position_ids").folder
    assert "takes the inputs input_ids, attention_mask, token_type_ids, position_ids" in _error(folder)


def test_a_refused_folder_is_read_again_once_a_file_changes(tmp_path):
    folder = tiny_model_folder(tmp_path / "m").folder
    _rewrite_card(folder, supported="nope")
    assert '"supported" must be one of the labels' in _error(folder)
    assert '"supported" must be one of the labels' in _error(folder)  # (refused from memory: no load)
    _rewrite_card(folder, supported="supported")
    assert len(OnnxFamily().revision("m", _settings(m=folder))) == 64


# --- through the checker service -----------------------------------------------------------------------------


@pytest.fixture
async def checker(tmp_path, nli_folder):
    tiny = tiny_model_folder(tmp_path / "tiny", threshold=0.01)
    broken = tiny_model_folder(tmp_path / "broken", outputs=3).folder
    settings = Settings(
        model_base_url=None,
        stage_timeout_ms=30_000,
        onnx_models={"nli": str(nli_folder), "tiny": str(tiny.folder), "broken": str(broken)},
    )
    async with serve_checker(settings) as stub:
        yield stub


def _request(model: str, **kwargs) -> checker_pb2.VerifyRequest:
    return checker_pb2.VerifyRequest(
        model=model,
        content="c",
        claims=[
            common_pb2.Claim(id="claim_1", claim="The Eiffel Tower is 330 metres tall.", context="c",
                             type=common_pb2.CLAIM_TYPE_STATISTIC),
            common_pb2.Claim(id="claim_2", claim="The lost city had 40,000 inhabitants.", context="c",
                             type=common_pb2.CLAIM_TYPE_STATISTIC),
        ],
        passages=[common_pb2.Passage(id="P1", source_id="s1", source_title="Almanac", text=TOWER)],
        evidence=[common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1"])],
        **kwargs,
    )  # fmt: skip


async def test_verify_through_the_checker_service(checker):
    call = checker.Verify(_request("onnx/tiny"))
    response = await call
    got = {v.claim_id: v for v in response.verifications}
    assert got["claim_1"].verdict == common_pb2.VERDICT_VERIFIED and got["claim_1"].checker_model == "onnx/tiny"
    assert [(c.passage_id, c.quote, c.source_id) for c in got["claim_1"].citations] == [("P1", TOWER, "s1")]
    assert got["claim_2"].verdict == common_pb2.VERDICT_UNVERIFIABLE and not got["claim_2"].HasField("correction")
    assert response.dropped_citations == 0 and len(response.engine_revision) == 64
    [ledgered] = calls.calls_from_metadata(await call.trailing_metadata()) or []
    assert (ledgered.model, ledgered.prompt_tokens, ledgered.completion_tokens, ledgered.prompt_version) == (
        "onnx/tiny",
        0,
        0,
        "verify@1",
    )
    revision = await checker.GetEngineRevision(checker_pb2.GetEngineRevisionRequest(model="onnx/tiny"))
    assert revision.engine_revision == response.engine_revision


async def test_the_shipped_model_as_onnx_disputes_only_on_its_contradiction_class(checker):
    request = _request("onnx/nli")
    request.passages.append(common_pb2.Passage(id="P2", source_id="s2", source_title="Moon", text=MOON))
    request.claims.append(
        common_pb2.Claim(
            id="claim_3", claim="The Moon is made of cheese.", context="c", type=common_pb2.CLAIM_TYPE_TECHNICAL
        )
    )
    request.evidence.append(common_pb2.ClaimEvidence(claim_id="claim_3", passage_ids=["P2"]))
    response = await checker.Verify(request)
    got = {v.claim_id: v for v in response.verifications}
    assert got["claim_3"].verdict == common_pb2.VERDICT_DISPUTED and not got["claim_3"].HasField("correction")
    assert "Moon contradicts it (onnx/nli: P(contradicted)" in got["claim_3"].evidence
    assert [c.passage_id for c in got["claim_3"].citations] == ["P2"]


async def test_a_broken_folder_is_failed_precondition_naming_the_setting(checker):
    for call in (
        checker.GetEngineRevision(checker_pb2.GetEngineRevisionRequest(model="onnx/broken")),
        checker.Verify(_request("onnx/broken")),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "FACTCHECK_ONNX_MODELS" in (caught.value.details() or "")
        assert "the card does not match the model" in (caught.value.details() or "")


async def test_the_entailment_agents_cannot_be_a_grounding_model(checker):
    from factcheck.v1 import entailment_pb2

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await checker.Verify(_request("onnx/tiny", strategy=entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "is a grounding model" in (caught.value.details() or "")


def test_a_model_is_loaded_once_per_process_and_folder(tmp_path):
    folder = tiny_model_folder(tmp_path / "a").folder
    copy = tmp_path / "b"
    shutil.copytree(folder, copy)
    assert _model(folder) is not _model(copy) and _model(folder) is _model(folder)
