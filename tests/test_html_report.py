"""The HTML report: escaping and structure on the string, then the page as headless Chromium renders it.

Chromium is required (Debian's `chromium`; `.ci/run` installs it): the browser tests fail,
not skip, when it is missing.
"""

from __future__ import annotations

import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from factcheck.cli import html, view
from factcheck.v1 import common_pb2, factcheck_pb2

CHROMIUM = Path("/usr/bin/chromium")
TITLE = 'Tower "facts" <check>'
SCRIPT_ATTACK = "<script>document.title='pwned'</script>"
IMG_ATTACK = "<img src=x onerror=alert(1)>"
CONTENT = (
    f"The Eiffel Tower is 330 metres tall. {SCRIPT_ATTACK} It was completed in 1889.\n"
    f"{IMG_ATTACK} Some say the Moon is made of cheese & crackers."
)
CLAIM_TEXTS = [
    "The Eiffel Tower is 330 metres tall.",
    "it was completed in 1889.",  # no offsets and other case: found by a case-insensitive search
    "the Moon is made of cheese & crackers",
]


CORRECTION = "Completed in 1889 <i>March</i>"
CITATION = common_pb2.Citation(passage_id="P1", source_title="Almanac <i>", quote="<b>finished</b> in 1889")


def verification(model: str, verdict: int, evidence: str, correction: str | None = None, *citations):
    message = common_pb2.ClaimVerification(
        verdict=verdict,
        evidence=evidence,
        confidence=common_pb2.CONFIDENCE_HIGH,
        checker_model=model,
        citations=citations,
    )
    if correction is not None:
        message.correction = correction
    return message


def make_result(score: int | None = 72, content: str = CONTENT) -> factcheck_pb2.FactCheckResult:
    """A stored fact-check with one claim per verdict and hostile text wherever a model could put it."""
    start = content.index(CLAIM_TEXTS[0])
    claims = [
        common_pb2.Claim(
            id="claim_1",
            claim=CLAIM_TEXTS[0],
            context=CLAIM_TEXTS[0],
            type=common_pb2.CLAIM_TYPE_STATISTIC,
            start_offset=start,
            end_offset=start + len(CLAIM_TEXTS[0]),
        ),
        common_pb2.Claim(id="claim_2", claim=CLAIM_TEXTS[1], context="<b>context</b>", type=common_pb2.CLAIM_TYPE_DATE),
        common_pb2.Claim(id="claim_3", claim=CLAIM_TEXTS[2], type=common_pb2.CLAIM_TYPE_COMPARISON),
    ]
    V, D, U = common_pb2.VERDICT_VERIFIED, common_pb2.VERDICT_DISPUTED, common_pb2.VERDICT_UNVERIFIABLE
    consensus = [
        common_pb2.ClaimConsensus(
            claim_id="claim_1",
            claim=CLAIM_TEXTS[0],
            consensus_verdict=V,
            agreement_rate=100.0,
            verdicts=[verification("a/one", V, "Matches the reference."), verification("b/two", V, "Yes.")],
        ),
        common_pb2.ClaimConsensus(
            claim_id="claim_2",
            claim=CLAIM_TEXTS[1],
            consensus_verdict=D,
            agreement_rate=50.0,
            correction=CORRECTION,
            verdicts=[
                verification("a/one", D, "<script>alert('evidence')</script>", CORRECTION, CITATION),
                verification("b/two", V, "Plausible."),
            ],
        ),
        common_pb2.ClaimConsensus(
            claim_id="claim_3",
            claim=CLAIM_TEXTS[2],
            consensus_verdict=U,
            agreement_rate=100.0,
            verdicts=[verification("a/one", U, "No source."), verification("b/two", U, "Unknown.")],
        ),
    ]
    result = factcheck_pb2.FactCheckResult(
        message_id="run-1",
        question="Check <this>",
        status=factcheck_pb2.MESSAGE_STATUS_COMPLETE,
        title=TITLE,
        content=factcheck_pb2.ContentResult(source=factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED, text=content),
        extraction=factcheck_pb2.ExtractionResult(model="x/extractor", claims=claims),
        verification=factcheck_pb2.VerificationResult(
            checkers=[factcheck_pb2.CheckerResult(model="a/one"), factcheck_pb2.CheckerResult(model="b/two")],
            consensus=consensus,
        ),
        report=factcheck_pb2.ReportResult(model="x/reporter", report_text="# Report\n<script>alert(2)</script>"),
    )
    if score is not None:
        result.report.reliability_score = score
    return result


class Page(HTMLParser):
    """The elements of a page (tag, attributes), its title, and the text inside each element that has an id."""

    VOID = {"meta", "img", "br", "hr", "input", "link", "circle", "path"}

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.title = ""
        self._in_title = False
        self._chunks: dict[str, list[str]] = {}
        self._open: list[list] = []  # [id, depth] of elements whose text is being collected
        self.feed(markup)

    def text(self, element_id: str) -> str:
        """The element's text, whitespace-normalised, with a space between the texts of its children."""
        return " ".join(" ".join(self._chunks[element_id]).split())

    def handle_starttag(self, tag, attrs):
        attributes = {name: value or "" for name, value in attrs}
        self.elements.append((tag, attributes))
        self._in_title = tag == "title"
        if tag in self.VOID:
            return
        for item in self._open:
            item[1] += 1
        if "id" in attributes:
            self._chunks.setdefault(attributes["id"], [])
            self._open.append([attributes["id"], 1])

    def handle_endtag(self, tag):
        self._in_title = False
        if tag in self.VOID:
            return
        for item in self._open:
            item[1] -= 1
        self._open = [item for item in self._open if item[1] > 0]

    def handle_data(self, data):
        for element_id, _ in self._open:
            self._chunks[element_id].append(data)
        if self._in_title:
            self.title += data

    def find(self, tag: str, css_class: str | None = None) -> list[dict[str, str]]:
        return [
            attributes
            for name, attributes in self.elements
            if name == tag and (css_class is None or css_class in attributes.get("class", "").split())
        ]


# --- the HTML string ---------------------------------------------------------------------


def test_untrusted_text_is_escaped_everywhere():
    page = html.render_page(make_result())
    assert page.count("<script") == 1  # the page's own sort script
    assert "<img" not in page and "<i>" not in page and "<b>context" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "cheese &amp; crackers" in page
    assert "<title>Tower &quot;facts&quot; &lt;check&gt;</title>" in page
    assert "Completed in 1889 &lt;i&gt;March&lt;/i&gt;" in page
    assert "P1 (Almanac &lt;i&gt;): &quot;&lt;b&gt;finished&lt;/b&gt; in 1889&quot;" in page  # a cited passage


def test_the_page_needs_nothing_from_outside():
    page = html.render_page(make_result())
    assert "http://" not in page and "https://" not in page and "<link" not in page
    links = re.findall(r'<[^>]*\s(?:src|href)="([^"]*)"', page)
    assert links and all(link.startswith("#") for link in links)  # links stay in the page; nothing is loaded
    # Only the page's own script may run: the policy names it by hash.
    metas = Page(page).find("meta")
    [policy] = [meta["content"] for meta in metas if meta.get("http-equiv") == "Content-Security-Policy"]
    assert f"script-src 'sha256-{html.SCRIPT_HASH}'" in policy and "default-src 'none'" in policy


def test_each_claim_is_highlighted_once_with_its_number_and_verdict():
    parsed = Page(html.render_page(make_result()))
    marks = parsed.find("mark", "claim")
    assert [mark["id"] for mark in marks] == ["claim-1", "claim-2", "claim-3"]
    assert [mark["class"].split()[1] for mark in marks] == ["v-verified", "v-disputed", "v-unverifiable"]
    assert [parsed.text(f"claim-{n}") for n in (1, 2, 3)] == [
        "The Eiffel Tower is 330 metres tall.",
        "It was completed in 1889.",  # the content's own case
        "the Moon is made of cheese & crackers",
    ]
    assert len(parsed.find("sup", "marker")) == 3


def test_claims_that_cannot_be_placed_are_listed_but_not_highlighted():
    result = make_result()
    result.extraction.claims.add(id="claim_4", claim="Not in the content at all.")
    # Overlaps claim 1: highlights never nest.
    result.extraction.claims.add(id="claim_5", claim="Eiffel Tower", start_offset=4, end_offset=16)
    parsed = Page(html.render_page(result))
    assert len(parsed.find("mark", "claim")) == 3
    assert len(parsed.find("tr", "evidence-row")) == 5
    assert parsed.find("tr", "evidence-row")[3]["id"] == "evidence-4"


def test_evidence_table_has_one_sortable_row_per_claim():
    parsed = Page(html.render_page(make_result()))
    assert parsed.find("table", "sortable")[0]["id"] == "evidence-table"
    assert [row["id"] for row in parsed.find("tr", "evidence-row")] == ["evidence-1", "evidence-2", "evidence-3"]
    assert "Completed in 1889 <i>March</i>" in parsed.text("evidence-2")
    assert len(parsed.find("details", "claim-detail")) == 3
    assert [f["class"] for f in parsed.find("details", "findings")] == [
        "findings v-verified",
        "findings v-disputed",
        "findings v-unverifiable",
    ]


def test_a_failed_run_shows_its_claims_unchecked_and_says_so():
    result = make_result(score=None)
    result.status = factcheck_pb2.MESSAGE_STATUS_FAILED
    del result.verification.checkers[:]  # every checker failed; the stored consensus has no votes
    parsed = Page(html.render_page(result))
    assert {mark["class"] for mark in parsed.find("mark", "claim")} == {"claim v-unchecked"}
    assert parsed.text("status-note") == "The run failed: only what was done before the failure is shown."
    assert "Consensus n/a" in parsed.text("metrics") and "3 unchecked" in parsed.text("metrics")


@pytest.mark.parametrize(
    "score, band, shown",
    [
        (100, "good", "100"),
        (70, "good", "70"),
        (69, "mixed", "69"),
        (40, "mixed", "40"),
        (39, "poor", "39"),
        (0, "poor", "0"),
        (None, "none", "n/a"),
    ],
)
def test_gauge_colour_follows_the_score_bands(score, band, shown):
    parsed = Page(html.render_page(make_result(score)))
    [gauge] = parsed.find("figure")
    assert gauge["class"] == f"gauge band-{band}" and gauge["data-score"] == shown
    assert parsed.text("gauge-value") == shown


def test_metrics_show_claims_score_consensus_and_verdicts():
    parsed = Page(html.render_page(make_result()))
    metrics = " ".join(parsed.text("metrics").split())
    assert "Claims 3" in metrics and "Reliability 72/100" in metrics
    assert "Consensus 83%" in metrics  # mean of 100, 50, 100
    assert "1 verified 1 disputed 1 unverifiable" in metrics
    assert [s["class"] for s in parsed.find("span", "fill") if s.get("title")][:3] == [
        "fill v-verified",
        "fill v-disputed",
        "fill v-unverifiable",
    ]


def test_consensus_rate_is_the_mean_agreement():
    assert view.consensus_rate(view.claim_views(make_result())) == pytest.approx(250 / 3)


# --- the page in Chromium ------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium() -> Path:
    assert CHROMIUM.exists(), "Chromium is required for the HTML report tests: apt-get install chromium (.ci/run does)"
    return CHROMIUM


def run_chromium(chromium: Path, profile: Path, *args: str) -> str:
    command = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={profile}",
        *args,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


@pytest.fixture
def report(tmp_path) -> Path:
    path = tmp_path / "report.html"
    html.write_report(path, make_result())
    return path


def test_chromium_renders_the_report_and_the_injected_script_stays_text(chromium, report, tmp_path):
    dom = Page(run_chromium(chromium, tmp_path / "profile", "--dump-dom", report.as_uri()))
    assert dom.title == TITLE  # the content's script did not run
    assert len(dom.find("script")) == 1 and not dom.find("img")
    assert SCRIPT_ATTACK in dom.text("content") and IMG_ATTACK in dom.text("content")
    assert dom.text("gauge-value") == "72" and dom.find("figure")[0]["class"] == "gauge band-good"
    assert len(dom.find("tr", "evidence-row")) == 3
    assert len(dom.find("sup", "marker")) == 3
    # The page's own script ran (the policy lets it): it made the table sortable.
    assert "js-sortable" in dom.find("table", "sortable")[0]["class"]


# Reads the report's computed colours from a frame; file:// frames are readable with --allow-file-access-from-files.
COLOUR_PROBE = """<!DOCTYPE html><html><body><pre id="colours"></pre>
<iframe src="report.html" onload="
  var d = this.contentDocument, w = this.contentWindow;
  function style(selector, property) { return w.getComputedStyle(d.querySelector(selector))[property]; }
  document.getElementById('colours').textContent = JSON.stringify({
    gauge: style('.gauge .arc', 'stroke'),
    verified: style('mark.v-verified', 'borderBottomColor'),
    disputed: style('mark.v-disputed', 'borderBottomColor'),
    unverifiable: style('mark.v-unverifiable', 'borderBottomColor'),
    disputed_badge: style('#evidence-2 .badge', 'backgroundColor'),
  });
"></iframe></body></html>
"""


GREEN, AMBER, RED, GREY = "rgb(26, 127, 55)", "rgb(217, 119, 6)", "rgb(207, 34, 46)", "rgb(110, 119, 129)"


@pytest.mark.parametrize("score, gauge", [(72, GREEN), (55, AMBER), (20, RED)])
def test_chromium_shows_the_verdict_and_gauge_colours(chromium, tmp_path, score, gauge):
    html.write_report(tmp_path / "report.html", make_result(score))
    probe = tmp_path / "probe.html"
    probe.write_text(COLOUR_PROBE)
    dom = Page(
        run_chromium(chromium, tmp_path / "profile", "--allow-file-access-from-files", "--dump-dom", probe.as_uri())
    )
    assert json.loads(dom.text("colours")) == {
        "gauge": gauge,
        "verified": GREEN,
        "disputed": RED,
        "unverifiable": GREY,
        "disputed_badge": RED,
    }


def test_chromium_screenshot_of_the_report(chromium, report, tmp_path):
    screenshot = tmp_path / "report.png"
    run_chromium(
        chromium, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1280,2000", report.as_uri()
    )
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert screenshot.stat().st_size > 20_000  # a rendered page, not a blank one
