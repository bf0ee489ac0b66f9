"""ClaimStream: claims parsed while the extraction answer is still arriving equal parse_claims' claims.

Whatever the answer and however it is cut into pieces, the claims given out as pieces arrive,
then at the end, are exactly `locate_claims(parse_claims(answer, content), content)`: same ids,
texts, types and offsets, in the same order. Claims in the claim format come out as soon as
their Type line ends.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck.engines.extractor import answer as local_extractor_answer
from factcheck_extractor.claims import ClaimStream, locate_claims, parse_claims
from factcheck_extractor.extraction_prompts import extraction_inputs
from tests.fake_model_server import extraction_text

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude. "
    "CLAIM 7: The Moon is made of cheese."
)
SENTENCES = [
    "The Paris Agreement was signed in 2015 by 196 countries.",
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times.",
    "Water boils at lower temperatures at high altitude.",
    "the paris   agreement was signed in 2015",
    "The Moon is made of cheese.",
    "A claim that is nowhere in the content.",
]
TYPES = ["STATISTIC", "DATE", "TECHNICAL", "causal", "Bogus"]


def stream_claims(text: str, cuts: list[int], content: str = CONTENT):
    """(claims given while feeding, claims given by finish) for `text` cut at `cuts`."""
    stream = ClaimStream(content)
    early = []
    bounds = [0, *sorted(set(cuts)), len(text)]
    for start, end in zip(bounds, bounds[1:]):
        early += stream.feed(text[start:end])
    return early, stream.finish()


def expected(text: str, content: str = CONTENT):
    return locate_claims(parse_claims(text, content), content)


# --- answers built from the shapes models produce -----------------------------------------------

decoration = st.sampled_from(["", "**", "- ", "## ", "> ", "    ", "* "])
sentence = st.sampled_from(SENTENCES)


@st.composite
def strict_block(draw) -> list[str]:
    number = draw(st.integers(1, 9))
    lead = draw(decoration)
    blank = [""] if draw(st.booleans()) else []
    lines = [f"{lead}CLAIM {number}: {draw(sentence)}", *blank, f"Context: {draw(sentence)}"]
    if draw(st.booleans()):
        lines.append(f"Type: {draw(st.sampled_from(TYPES))}")
    return lines


@st.composite
def other_line(draw) -> list[str]:
    return [
        draw(
            st.sampled_from(
                [
                    "",
                    "EXTRACTION SUMMARY:",
                    "Total claims: 3",
                    "By type: DATE: 1",
                    "Here are the claims:",
                    "Claim 3 - The Moon is made of cheese.",
                    "**Claim:** Water boils at lower temperatures at high altitude.",
                    "CLAIM 1:",
                    "Type: DATE",
                    "Context: Water boils.",
                    "> CLAIM 2: quoted claim",
                    "CLAIM 7: The Moon is made of cheese.",
                ]
            )
        )
    ]


answers = st.builds(
    lambda parts, newline, end: newline.join(line for part in parts for line in part) + end,
    st.lists(st.one_of(strict_block(), other_line()), max_size=14),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.sampled_from(["", "\n"]),
)


@settings(max_examples=300, deadline=None)
@given(text=answers, data=st.data())
def test_streamed_claims_equal_parse_claims_however_the_answer_is_cut(text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    early, late = stream_claims(text, cuts)
    assert early + late == expected(text)


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="CLAIM 12:Contex\nType\rDATE*>#-SUMRY", max_size=200), data=st.data())
def test_streamed_claims_equal_parse_claims_on_arbitrary_text(text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    early, late = stream_claims(text, cuts)
    assert early + late == expected(text)


# --- when claims come out ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        extraction_text(CONTENT),
        local_extractor_answer(extraction_inputs(CONTENT)),
        extraction_text(CONTENT).replace("\n", "\r\n"),
    ],
    ids=["fake-model", "local-extractor", "crlf"],
)
def test_spec_format_claims_come_out_when_their_type_line_ends(text):
    stream = ClaimStream(CONTENT)
    given_after: list[tuple[str, str]] = []
    for index, char in enumerate(text):  # one character at a time
        for claim in stream.feed(char):
            given_after.append((claim.id, text[: index + 1].splitlines()[-1]))
    assert stream.finish() == []
    assert [claim_id for claim_id, _ in given_after] == [c.id for c in expected(text)]
    assert given_after and all(line.startswith("Type:") for _, line in given_after)
    assert stream.claims == expected(text)
    assert stream.text == text


def test_a_claim_waits_for_the_end_of_its_type_line():
    stream = ClaimStream(CONTENT)
    assert stream.feed("CLAIM 1: Water boils at lower temperatures at high altitude.\nContext: x\nType: TECH") == []
    assert stream.feed("NICAL") == []
    [claim] = stream.feed("\n")
    assert (claim.id, claim.type, CONTENT[claim.start : claim.end]) == (
        "claim_1",
        "TECHNICAL",
        "Water boils at lower temperatures at high altitude.",
    )


def test_lenient_answers_give_their_claims_at_the_end():
    text = "Claim 1 - Water boils at lower temperatures at high altitude.\nClaim 2 - The Moon is made of cheese.\n"
    stream = ClaimStream(CONTENT)
    assert stream.feed(text) == []
    assert [c.claim for c in stream.finish()] == [
        "Water boils at lower temperatures at high altitude.",
        "The Moon is made of cheese.",
    ]


def test_a_late_strict_triplet_wins_over_earlier_lenient_blocks():
    text = "Claim 1 - The Moon is made of cheese.\n\nCLAIM 2: Water boils.\nContext: Water boils.\nType: TECHNICAL\n"
    early, late = stream_claims(text, [40, 60])
    assert [c.claim for c in early + late] == ["Water boils."] == [c.claim for c in expected(text)]


def test_copies_of_the_contents_markers_and_duplicates_are_not_claims():
    text = (
        "CLAIM 7: The Moon is made of cheese.\nContext: quoted from the content\nType: TECHNICAL\n\n"
        "CLAIM 1: Water boils at lower temperatures at high altitude.\nContext: c\nType: TECHNICAL\n\n"
        "CLAIM 2: Water boils at lower temperatures at high altitude.\nContext: c\nType: TECHNICAL\n"
    )
    early, late = stream_claims(text, list(range(0, len(text), 7)))
    assert [(c.id, c.claim) for c in early] == [("claim_1", "Water boils at lower temperatures at high altitude.")]
    assert late == []
