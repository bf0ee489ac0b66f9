"""The fact-check page's layout, measured in headless Chromium on a run like the demo's: five claims against
documents whose titles are their headings, the report written by the built-in reporter, and a title cut from a
long question. Each finding is shown once, no table cell breaks a word, and the page is as tall as what it
shows: 3,090 px at 1280 px wide, where the same result's page was 4,374 px before (each checker's evidence three
times, the annotated content twice, the claims table twice, "claim_1" and "COMPARISON" broken across lines)."""

from __future__ import annotations

from factcheck.models.inputs import CheckerVerdict, ReportEntry, ReportInputs
from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_cli import html
from factcheck_engines import reporter
from tests.test_html_report import Page, chromium, measure_layout  # noqa: F401 - chromium is a fixture

QUESTION = "Facts about the Eiffel Tower, the Paris Agreement, Apollo 11, water and the Great Barrier Reef"
DOCUMENTS = {  # id: (title, the passage that backs a claim)
    "P1": ("The Eiffel Tower", "The Eiffel Tower is a wrought-iron lattice tower. It was completed in 1889."),
    "P2": ("The Paris Agreement", "It was adopted on 12 December 2015 at the COP21 conference in Paris, France."),
    "P3": ("Apollo 11", "Apollo 11 was the first crewed mission to land on the Moon, on 20 July 1969."),
    "P4": ("water", "Water boils at 100 degrees Celsius at sea level."),
}
# (claim, type, verdict, passage, the checker's evidence, correction)
CLAIMS = [
    ("The Eiffel Tower was completed in 1889.", "DATE", "VERIFIED", "P1", "The Eiffel Tower states it.", None),
    (
        "The Paris Agreement was adopted in 2017.",
        "DATE",
        "DISPUTED",
        "P2",
        "The Paris Agreement says otherwise: adopted on 12 December 2015.",
        "The Paris Agreement was adopted in 2015 (not 2017)",
    ),
    ("Apollo 11 landed on the Moon in 1969.", "STATISTIC", "VERIFIED", "P3", "Apollo 11 states it.", None),
    (
        "Water boils at 100 degrees Celsius at sea level.",
        "STATISTIC",
        "VERIFIED",
        "P4",
        "The water page says so.",
        None,
    ),
    (
        "The Great Barrier Reef is the largest coral reef system in the world.",
        "COMPARISON",
        "UNVERIFIABLE",
        None,
        "None of the passages given for this claim states or contradicts it.",
        None,
    ),
]
CONTENT = " ".join(claim for claim, *_ in CLAIMS)
# A section a model's report may add: a table of its own, with the words a squeezed column used to break.
MODEL_TABLE = "\n## Claims at a Glance\n\n| Claim | Verdict | Note |\n|---|---|---|\n" + "".join(
    f"| claim_{n} | {verdict} | {claim} |\n" for n, (claim, _, verdict, *_) in enumerate(CLAIMS, 1)
)


def demo_like_result() -> factcheck_pb2.FactCheckResult:
    verdicts = {name: getattr(common_pb2, f"VERDICT_{name}") for name in ("VERIFIED", "DISPUTED", "UNVERIFIABLE")}
    claims, consensus, entries = [], [], []
    for number, (text, kind, verdict, passage, evidence, correction) in enumerate(CLAIMS, 1):
        start = CONTENT.index(text)
        claim_id = f"claim_{number}"
        claims.append(
            common_pb2.Claim(
                id=claim_id,
                claim=text,
                type=getattr(common_pb2, f"CLAIM_TYPE_{kind}"),
                start_offset=start,
                end_offset=start + len(text),
            )
        )
        citations = [common_pb2.Citation(passage_id=passage, quote=DOCUMENTS[passage][1])] if passage else []
        item = common_pb2.ClaimConsensus(
            claim_id=claim_id,
            claim=text,
            consensus_verdict=verdicts[verdict],
            agreement_rate=100.0,
            verdicts=[
                common_pb2.ClaimVerification(
                    verdict=verdicts[verdict],
                    evidence=f"[{passage}] {evidence}" if passage else evidence,
                    confidence=common_pb2.CONFIDENCE_HIGH,
                    checker_model="local/checker",
                    citations=citations,
                )
            ],
        )
        if correction:
            item.correction = correction
        consensus.append(item)
        entries.append(
            ReportEntry(
                claim_id,
                text,
                kind,
                verdict,
                100,
                correction,
                (CheckerVerdict("local/checker", verdict, "HIGH", evidence),),
            )
        )
    report_text = reporter.write_report(
        ReportInputs(CONTENT, tuple(entries), 1, "local/extractor", "local/checker", "local/reporter")
    )
    return factcheck_pb2.FactCheckResult(
        message_id="run-demo",
        question=QUESTION,
        status=factcheck_pb2.MESSAGE_STATUS_COMPLETE,
        title=reporter.title(QUESTION, CONTENT),
        content=factcheck_pb2.ContentResult(source=factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED, text=CONTENT),
        extraction=factcheck_pb2.ExtractionResult(model="local/extractor", claims=claims),
        verification=factcheck_pb2.VerificationResult(
            checkers=[factcheck_pb2.CheckerResult(model="local/checker")], consensus=consensus
        ),
        evidence=factcheck_pb2.EvidenceResult(
            # Each document's first heading is its title, and so its passages' section too.
            passages=[
                common_pb2.Passage(id=pid, source_id=title, source_title=title, section_title=title, text=text)
                for pid, (title, text) in DOCUMENTS.items()
            ]
        ),
        report=factcheck_pb2.ReportResult(model="local/reporter", report_text=report_text + MODEL_TABLE),
    )


def test_the_title_is_cut_at_a_word_boundary_and_says_so():
    page = Page(html.render_page(demo_like_result()))
    assert page.title == "Fact-check: Facts about the Eiffel Tower…"


def test_a_document_titled_by_its_heading_is_named_once():
    page = html.render_page(demo_like_result())
    assert "›" not in page
    assert Page(page).text("source-P1").startswith("[P1] The Eiffel Tower cited for claim 1")


def test_the_report_card_leaves_out_what_the_page_shows_and_keeps_the_rest():
    page = Page(html.render_page(demo_like_result()))
    report = page.text("report-text")
    for heading in ("Evidence Table", "Detailed Findings", "Annotated Content"):
        assert heading not in report
    assert "Content Summary" in report and "Methodology" in report and "Claims at a Glance" in report
    assert page.text("report-left-out").endswith("Evidence Table, Detailed Findings, Annotated Content.")
    # Each claim's accordion once, in its verdict's group.
    assert [d["id"] for d in page.find("details", "claim-detail")] == [f"detail-{n}" for n in (1, 3, 4, 2, 5)]


def test_chromium_each_finding_once_no_broken_words_and_a_page_as_tall_as_its_content(chromium, tmp_path):  # noqa: F811
    path = tmp_path / "report.html"
    html.write_report(path, demo_like_result())
    evidence = [evidence for *_, evidence, _ in CLAIMS]
    markers = ["[VERIFIED]", "[DISPUTED]", "[UNVERIFIABLE]"]
    seen = measure_layout(chromium, tmp_path, path, [*evidence, *markers])
    # Every checker's evidence once (its claim's accordion), the annotated content's markers once per claim.
    assert seen["shown"] == [1] * len(evidence) + [3, 1, 1], seen
    assert seen["broken"] == [], seen
    assert seen["report_tables"] == 1 and seen["page"] <= seen["view"], seen
    # 3,090 px as it opens (4,374 before), with some room for fonts.
    assert seen["height"] <= 3300, seen
