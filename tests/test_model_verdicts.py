"""The grounding models' decision (factcheck/core/model_verdicts.py) and the cutting of passages (factcheck/text/chunks.py):
how a grounding model's readings become a verdict, and how its answer reads back through the checker's
parser and citation check."""

from __future__ import annotations

import pytest

from factcheck.core.model_verdicts import (
    ClaimReading,
    ThresholdReading,
    Thresholds,
    Unit,
    UnitReading,
    answer_text,
    decide,
    read_thresholds,
    verification_block,
    with_threshold_readings,
)
from factcheck.text.chunks import approximate_token_offsets, chunk_spans, sentence_units
from factcheck.v1 import common_pb2
from factcheck_checker.citations import resolve_citations
from factcheck_checker.verifications import parse_verifications

MODEL = "onnx/m"
T = Thresholds(0.5, 0.5)
A = Unit("P1", "Almanac", "The tower is 330 metres tall.")
B = Unit("P2", "Forum", "The tower is 300 metres tall.")


def _reading(*parts: tuple[UnitReading, ...], **kwargs) -> ClaimReading:
    return ClaimReading("claim_1", tuple(parts), **kwargs)


def test_the_best_unit_decides_and_its_probability_sets_the_confidence():
    decision = decide(_reading((UnitReading(A, 0.83), UnitReading(B, 0.2))), T, MODEL)
    assert (decision.verdict, decision.confidence, decision.probability) == ("VERIFIED", "HIGH", 0.83)
    assert decision.evidence == (
        "[P1] Almanac supports it (onnx/m: P(supported) 0.830, threshold 0.50; the best of 2 chunks): "
        '"The tower is 330 metres tall."'
    )
    assert decide(_reading((UnitReading(A, 0.6),)), T, MODEL).confidence == "MEDIUM"


def test_below_the_threshold_is_unverifiable_saying_how_far():
    decision = decide(_reading((UnitReading(A, 0.31), UnitReading(B, 0.1))), T, MODEL)
    assert (decision.verdict, decision.confidence) == ("UNVERIFIABLE", "MEDIUM")
    assert decision.probability == pytest.approx(0.69)
    assert (
        "the best of 2 chunks, [P1] Almanac, reads P(supported) 0.310, below onnx/m's threshold 0.50"
        in decision.evidence
    )


def test_a_contradiction_stronger_than_the_support_disputes_without_a_correction():
    disputed = decide(_reading((UnitReading(A, 0.6, 0.05), UnitReading(B, 0.02, 0.9))), T, MODEL)
    assert (disputed.verdict, disputed.confidence, disputed.probability) == ("DISPUTED", "HIGH", 0.9)
    assert disputed.evidence.startswith("[P2] Forum contradicts it (onnx/m: P(contradicted) 0.900")
    assert "Correction: N/A" in verification_block("claim_1", disputed, with_sources=True)
    # Weaker than the support: the support stands. Below its own unit's P(supported): no contradiction.
    assert decide(_reading((UnitReading(A, 0.95, 0.0), UnitReading(B, 0.1, 0.7))), T, MODEL).verdict == "VERIFIED"
    assert decide(_reading((UnitReading(A, 0.45, 0.55), UnitReading(B, 0.1, 0.0))), T, MODEL).verdict == "DISPUTED"
    assert decide(_reading((UnitReading(A, 0.40, 0.35),)), T, MODEL).verdict == "UNVERIFIABLE"
    assert decide(_reading((UnitReading(A, 0.56, 0.52),)), T, MODEL).verdict == "VERIFIED"  # 0.52 < 0.56


def test_the_least_supported_sentence_of_the_claim_decides():
    sentence = Unit("P1", "Almanac", "It is tall.", kind="sentence")
    both = _reading((UnitReading(sentence, 0.9),), (UnitReading(A, 0.7),))
    decision = decide(both, T, MODEL)
    assert (decision.verdict, decision.probability) == ("VERIFIED", 0.7)
    assert decision.evidence.startswith("Each of its 2 sentences is supported (onnx/m: the least P(supported) 0.700")
    weak = decide(_reading((UnitReading(sentence, 0.9),), (UnitReading(A, 0.2),)), T, MODEL)
    assert weak.verdict == "UNVERIFIABLE" and "its least supported sentence's best of 2 " in weak.evidence


def test_units_that_could_not_be_read_are_told_and_may_hold_back_a_verified():
    supported = (UnitReading(A, 0.9),)
    binary = decide(_reading(supported, unread=1, unread_reason="the call failed: HTTP 503"), T, MODEL)
    assert binary.verdict == "VERIFIED"  # a model without a contradiction class: an unread unit only adds support
    three_way = decide(_reading((UnitReading(A, 0.9, 0.01),), unread=2, unread_reason="too long"), T, MODEL)
    assert three_way.verdict == "UNVERIFIABLE" and three_way.confidence == "LOW"
    assert "but 2 units of the passages could not be read (too long) and may contradict it" in three_way.evidence
    none = decide(_reading((), unread=3, unread_reason="an answer that is neither Yes nor No ('Maybe')"), T, MODEL)
    assert none.evidence == "Not checked: an answer that is neither Yes nor No ('Maybe')"
    noted = decide(_reading(supported, note="read from the answer token"), T, MODEL)
    assert noted.evidence.endswith("(read from the answer token)")
    assert decide(ClaimReading("claim_1", not_checked="why"), T, MODEL).evidence == "Not checked: why"


@pytest.mark.parametrize(
    "text",
    [
        'He said "it is tall" and left.',
        "He said \u201cit is tall\u201d and left.",
        'Mixed "quotes\u201d here: the tower is 330 metres tall, he said.',
        "Line one.\nLine two\twith   spaces.",
    ],
)
def test_the_answer_reads_back_through_the_parser_and_the_citation_check(text):
    unit = Unit("P1", "Almanac", text)
    decision = decide(_reading((UnitReading(unit, 0.9),)), T, MODEL)
    block = verification_block("claim_1", decision, with_sources=True)
    answer = answer_text([block], [decision.verdict])
    [verification] = parse_verifications(answer, MODEL, ["claim_1"])
    assert verification.verdict == "VERIFIED" and verification.confidence == "HIGH"
    passage = common_pb2.Passage(id="P1", source_id="s1", text=f"Before. {text} After.")
    [resolved], dropped = resolve_citations([verification], {"P1": passage})
    assert dropped == 0 and len(resolved.citations) == 1
    quote = resolved.citations[0].quote
    assert quote in passage.text and len(quote) >= 10


def test_the_threshold_decides_only_verified_and_below_and_its_line_reads_back_in_full_precision():
    support = 0.6180339887498949
    cases = {
        "claim_1": (_reading((UnitReading(A, support),)), Thresholds(0.55, 0.5), support),  # VERIFIED
        "claim_2": (_reading((UnitReading(A, support),)), Thresholds(0.7, 0.5), support),  # below: UNVERIFIABLE
        "claim_3": (_reading((UnitReading(A, 0.2, 0.7),)), Thresholds(0.55, 0.5), None),  # DISPUTED at any threshold
        "claim_4": (ClaimReading("claim_4", not_checked="no passages"), Thresholds(0.55, 0.5), None),
        # Unread units of a model with a contradiction class: UNVERIFIABLE above and below the threshold.
        "claim_5": (_reading((UnitReading(A, 0.9, 0.01),), unread=1, unread_reason="x"), Thresholds(0.55, 0.5), None),
        "claim_6": (_reading((UnitReading(A, 0.3, 0.01),), unread=1, unread_reason="x"), Thresholds(0.55, 0.5), None),
    }
    decisions = {claim_id: decide(reading, thresholds, MODEL) for claim_id, (reading, thresholds, _) in cases.items()}
    assert [d.verdict for d in decisions.values()] == [
        "VERIFIED", "UNVERIFIABLE", "DISPUTED", "UNVERIFIABLE", "UNVERIFIABLE", "UNVERIFIABLE",
    ]  # fmt: skip
    blocks = [verification_block(claim_id, d, with_sources=False) for claim_id, d in decisions.items()]
    assert "Threshold: 0.55 (P(supported) 0.6180339887498949 read against it)" in blocks[0]
    assert "Threshold: 0.55 (the verdict does not rest on it)" in blocks[2]
    text = answer_text(blocks, [d.verdict for d in decisions.values()])
    assert read_thresholds(text) == {
        claim_id: ThresholdReading(thresholds.supported, expected)
        for claim_id, (_, thresholds, expected) in cases.items()
    }
    # The parser reads the blocks as before (the Threshold line is no label of the format); the checker adds it.
    parsed = parse_verifications(text, MODEL, list(cases))
    assert [v.verdict for v in parsed] == [d.verdict for d in decisions.values()]
    read = with_threshold_readings(parsed, text)
    assert [(v.support_threshold, v.support_probability) for v in read] == [
        (thresholds.supported, expected) for _, thresholds, expected in cases.values()
    ]


def test_a_long_quote_is_cut_in_the_evidence_but_whole_in_the_sources():
    text = " ".join(f"word{i}" for i in range(200))
    decision = decide(_reading((UnitReading(Unit("P1", "", text), 0.9),)), T, MODEL)
    block = verification_block("claim_1", decision, with_sources=True)
    evidence, sources = block.splitlines()[1], block.splitlines()[-1]
    assert evidence.endswith('" …') and len(evidence) < 450
    assert sources == f'Sources: [P1] "{text}"'


# --- cutting passages ----------------------------------------------------------------------------------


TEXT = "The tower is tall. It was built in 1889. The city grew. Many people visit it every year."


def test_sentences_are_packed_into_chunks_of_at_most_room_tokens():
    tokens = approximate_token_offsets(TEXT)
    chunks = chunk_spans(TEXT, tokens, 13)  # sentences of 6, 7, 4 and 10 estimated tokens
    texts = [TEXT[s:e] for s, e in chunks]
    assert texts == ["The tower is tall. It was built in 1889.", "The city grew.", "Many people visit it every year."]
    assert [TEXT[s:e] for s, e in chunk_spans(TEXT, tokens, 1000)] == [TEXT]
    assert [TEXT[s:e] for s, e in sentence_units(TEXT, tokens, 1000)] == [
        "The tower is tall.",
        "It was built in 1889.",
        "The city grew.",
        "Many people visit it every year.",
    ]


def test_a_sentence_longer_than_room_is_cut_between_words():
    text = " ".join(["abcdefgh"] * 30)  # 30 words of two estimated tokens, no full stop
    pieces = [text[s:e] for s, e in chunk_spans(text, approximate_token_offsets(text), 9)]
    assert all(piece.split() and set(piece.split()) == {"abcdefgh"} for piece in pieces)
    assert sum(len(piece.split()) for piece in pieces) == 30 and max(len(piece.split()) for piece in pieces) == 4


def test_estimated_tokens_are_about_four_characters():
    assert len(approximate_token_offsets("a abcd abcde " + "x" * 40)) == 1 + 1 + 2 + 10
    with pytest.raises(ValueError):
        chunk_spans(TEXT, approximate_token_offsets(TEXT), 0)
