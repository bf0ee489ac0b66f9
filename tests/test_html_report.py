"""The HTML report: escaping and structure on the string, then the page as headless Chromium renders it.

Chromium is required (Debian's `chromium`; `.ci/run` installs it): the browser tests fail,
not skip, when it is missing.
"""

from __future__ import annotations

import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_cli import html, view

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
ALMANAC_URL = "https://example.org/almanac?year=1889&tower=<eiffel>"
PASSAGES = [
    common_pb2.Passage(
        id="P1", source_id="almanac", source_title="Almanac <i>", source_url=ALMANAC_URL, text="<b>finished</b> in 1889"
    ),
    common_pb2.Passage(id="P2", source_id="notes.md", source_title="Notes", source_url="javascript:alert(3)", text="x"),
]
# The reporter's markdown, with raw HTML, a citation, a table, a script link and an image from outside.
REPORT_TEXT = (
    "# Report\n<script>alert(2)</script>\n\n**Claim 2** is disputed [P1].\n\n"
    "| Claim | Verdict |\n|---|---|\n| 2 | DISPUTED |\n\n"
    "[click](javascript:alert(4)) ![tracker](https://example.org/pixel.png)\n"
)
CITATION = common_pb2.Citation(passage_id="P1", source_title="Almanac <i>", quote="<b>finished</b> in 1889")


def verification(model: str, verdict: common_pb2.Verdict, evidence: str, correction: str | None = None, *citations):
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
        common_pb2.ClaimConsensus(  # a 2-1 split
            claim_id="claim_2",
            claim=CLAIM_TEXTS[1],
            consensus_verdict=D,
            agreement_rate=200 / 3,
            correction=CORRECTION,
            verdicts=[
                verification("a/one", D, "<script>alert('evidence')</script> See [P1].", CORRECTION, CITATION),
                verification("b/two", V, "Plausible."),
                verification("c/three", D, "The almanac [P1] says otherwise; [P7] is no passage of this run."),
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
            checkers=[factcheck_pb2.CheckerResult(model=m) for m in ("a/one", "b/two", "c/three")],
            consensus=consensus,
        ),
        evidence=factcheck_pb2.EvidenceResult(passages=PASSAGES, method="bm25"),
        report=factcheck_pb2.ReportResult(model="x/reporter", report_text=REPORT_TEXT),
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
    assert "<img" not in page and "<i>" not in page and "<b>context" not in page and "<b>finished" not in page
    assert escape(SCRIPT_ATTACK) in page and "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "cheese &amp; crackers" in page
    assert "<title>Tower &#34;facts&#34; &lt;check&gt;</title>" in page
    assert "Completed in 1889 &lt;i&gt;March&lt;/i&gt;" in page
    assert escape('P1 (Almanac <i>): "<b>finished</b> in 1889"') in page  # a cited passage


def test_the_page_needs_nothing_from_outside():
    page = html.render_page(make_result())
    parsed = Page(page)
    assert not [tag for tag, attributes in parsed.elements if "src" in attributes or tag in ("link", "img")]
    assert "url(" not in page and "@import" not in page  # nothing is loaded
    anchors = parsed.find("a")
    outside = [a for a in anchors if not a["href"].startswith("#")]
    # Only the source list links out (a reader's click, never a load); the rest stay in the page.
    assert [a["href"] for a in outside] == [ALMANAC_URL] and outside[0]["class"] == "source-link"
    assert "noopener" in outside[0]["rel"]
    # Only the page's own script may run: the policy names it by hash.
    metas = parsed.find("meta")
    [policy] = [meta["content"] for meta in metas if meta.get("http-equiv") == "Content-Security-Policy"]
    assert f"script-src 'sha256-{html.SCRIPT_HASH}'" in policy and "default-src 'none'" in policy


def test_the_page_is_built_from_autoescaping_templates():
    """The page used to be hand-built strings with 34 esc() calls; now Jinja2 templates shipped as package data."""
    from factcheck_cli import html_page

    autoescape = html_page.templates.autoescape
    assert callable(autoescape) and autoescape("fact_check.html.j2") is True
    filename = html_page.templates.get_template("fact_check.html.j2").filename
    assert filename is not None and filename.endswith("templates/fact_check.html.j2")
    from factcheck_cli import council_html

    for module in (html, council_html, html_page):
        assert module.__file__ is not None
        source = Path(module.__file__).read_text()
        assert "esc(" not in source and "<section" not in source and "<td" not in source  # no markup in code


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
    assert "Agreement n/a" in parsed.text("metrics") and "3 unchecked" in parsed.text("metrics")


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
    # How many checkers agree, in claims (not a mean percentage that reads as certainty).
    assert "Agreement all 3 checkers agree on 2 of 3 claims" in metrics
    assert "1 verified 1 disputed 1 unverifiable" in metrics
    assert [s["class"] for s in parsed.find("span", "fill") if s.get("title")][:3] == [
        "fill v-verified",
        "fill v-disputed",
        "fill v-unverifiable",
    ]


def test_consensus_rate_is_the_mean_agreement():
    assert view.consensus_rate(view.claim_views(make_result())) == pytest.approx((200 + 200 / 3) / 3)


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


# --- the page's parts: markers, sources, agreement bars, markdown, superscripts, the sticky panel --------------


def test_the_annotated_content_carries_the_spec_markers():
    parsed = Page(html.render_page(make_result()))
    markers = parsed.find("span", "inline-verdict")
    assert [(m["class"].split()[1], m["data-claim"]) for m in markers] == [
        ("v-verified", "1"),
        ("v-disputed", "2"),
        ("v-unverifiable", "3"),
    ]
    text = parsed.text("content")
    assert "330 metres tall. 1 [VERIFIED]" in text and "completed in 1889. 2 [DISPUTED]" in text
    assert "cheese & crackers 3 [UNVERIFIABLE]" in text


def test_sources_are_a_numbered_list_the_citations_point_to():
    parsed = Page(html.render_page(make_result()))
    assert [item["id"] for item in parsed.find("li") if item.get("id", "").startswith("source-")] == [
        "source-P1",
        "source-P2",
    ]
    assert parsed.text("source-P1").startswith("[P1] Almanac <i> cited for claim 2")
    assert parsed.text("source-P2").startswith("[P2] Notes")  # its javascript: URL is no link
    cites = [a["href"] for a in parsed.find("a", "cite")]
    # The checker's evidence twice ([P1] in two checkers' text), its citation list, the report; never [P7].
    assert cites == ["#source-P1"] * 4 and "[P7]" in parsed.text("detail-2")


def test_agreement_bars_show_each_checkers_verdict():
    parsed = Page(html.render_page(make_result()))
    votes = [v for v in parsed.find("span", "vote")]
    # The evidence table's bars (claim 1: two votes), then the accordions'. Claim 2 is a 2-1 split,
    # the agreeing votes first.
    assert [(v["data-model"], v["data-verdict"]) for v in votes[2:5]] == [
        ("a/one", "DISPUTED"),
        ("c/three", "DISPUTED"),
        ("b/two", "VERIFIED"),
    ]
    assert "2 of 3 checkers agree 2 disputed · 1 verified" in parsed.text("evidence-2")
    assert "%" not in parsed.text("evidence-table")


def test_the_report_markdown_is_rendered_safely():
    parsed = Page(html.render_page(make_result()))
    report = parsed.text("report-text")
    assert report.startswith("Report <script>alert(2)</script> Claim 2 is disputed [P1] .")
    assert "[click](javascript:alert(4)) ![tracker](https://example.org/pixel.png)" in report  # inert text
    tags = [tag for tag, _ in parsed.elements]
    assert "h1" in tags and "strong" in tags and tags.count("table") >= 2 and "pre" not in tags


def test_a_report_without_evidence_has_no_source_list():
    result = make_result()
    result.ClearField("evidence")
    for consensus in result.verification.consensus:
        for verification in consensus.verdicts:
            del verification.citations[:]
    page = html.render_page(result)
    assert 'id="sources"' not in page and 'class="cite"' not in page


# Clicks, scrolls and reads computed styles in the report (in a frame of this probe page).
BEHAVIOUR_PROBE = """<!DOCTYPE html><html><body style="margin:0"><pre id="out"></pre>
<iframe src="report.html" style="width:1280px;height:700px;border:0" onload="
  var d = this.contentDocument, w = this.contentWindow;
  function css(element, property) { return w.getComputedStyle(element)[property]; }
  var out = {};
  out.markers = Array.prototype.map.call(d.querySelectorAll('#content .inline-verdict'),
    function (m) { return [m.textContent, css(m, 'backgroundColor')]; });
  out.votes = Array.prototype.map.call(d.querySelectorAll('#evidence-2 .vote'),
    function (v) { return [css(v, 'backgroundColor'), Math.round(v.getBoundingClientRect().width)]; });
  out.cite_target = d.querySelector('#report-text a.cite').getAttribute('href');
  out.source_shown = !!d.querySelector(out.cite_target);
  out.report_heading = d.querySelector('#report-text h1').textContent;
  out.report_scripts = d.querySelectorAll('#report-text script').length;
  var detail = d.getElementById('detail-3');
  out.closed_before = !detail.open;
  d.querySelector('#content sup.marker a[href=\\'#detail-3\\']').click();
  out.open_after_click = detail.open;
  var panelDetail = d.getElementById('detail-1');
  d.querySelector('#claims-panel a[href=\\'#detail-1\\']').click();
  out.panel_click_opens = panelDetail.open;
  var panel = d.getElementById('claims-panel');
  out.panel_position = css(panel, 'position');
  var article = d.getElementById('content').parentElement;
  w.scrollTo(0, article.offsetTop + 400);
  out.article_top = Math.round(article.getBoundingClientRect().top);
  out.panel_top = Math.round(panel.getBoundingClientRect().top);
  document.getElementById('out').textContent = JSON.stringify(out);
"></iframe></body></html>
"""
LONG_CONTENT = CONTENT + "\n\n" + "\n\n".join(f"Paragraph {n} says nothing to check. " * 12 for n in range(30))


def test_chromium_markers_bars_sources_accordions_and_the_sticky_panel(chromium, tmp_path):
    html.write_report(tmp_path / "report.html", make_result(content=LONG_CONTENT))
    probe = tmp_path / "probe.html"
    probe.write_text(BEHAVIOUR_PROBE)
    dom = Page(
        run_chromium(
            chromium,
            tmp_path / "profile",
            "--allow-file-access-from-files",
            "--window-size=1300,800",
            "--dump-dom",
            probe.as_uri(),
        )
    )
    seen = json.loads(dom.text("out"))
    verified_bg, disputed_bg, unverifiable_bg = "rgb(218, 251, 225)", "rgb(255, 235, 233)", "rgb(234, 238, 242)"
    assert seen["markers"] == [
        ["[VERIFIED]", verified_bg],
        ["[DISPUTED]", disputed_bg],
        ["[UNVERIFIABLE]", unverifiable_bg],
    ]
    # Three equal segments: two red (disputed), one green (verified).
    assert [colour for colour, _ in seen["votes"]] == [RED, RED, GREEN]
    widths = [width for _, width in seen["votes"]]
    assert min(widths) > 20 and max(widths) - min(widths) <= 1
    assert seen["cite_target"] == "#source-P1" and seen["source_shown"]
    assert seen["report_heading"] == "Report" and seen["report_scripts"] == 0
    assert seen["closed_before"] and seen["open_after_click"] and seen["panel_click_opens"]
    # Scrolled 400 px into the content: the article has gone up, the panel stays at the top.
    assert seen["panel_position"] == "sticky"
    assert seen["article_top"] < -300 and seen["panel_top"] == 12


# Opens every accordion, then measures how far any claim's checker table reaches past its box.
OVERFLOW_PROBE = """<!DOCTYPE html><html><body style="margin:0"><pre id="out"></pre>
<iframe src="report.html" style="width:1280px;height:700px;border:0" onload="
  var d = this.contentDocument, w = this.contentWindow;
  Array.prototype.forEach.call(d.querySelectorAll('details'), function (x) { x.open = true; });
  var beyond = 0;
  Array.prototype.forEach.call(d.querySelectorAll('details table'), function (t) {
    var box = t.closest('details').getBoundingClientRect();
    beyond = Math.max(beyond, t.getBoundingClientRect().right - box.right);
  });
  document.getElementById('out').textContent = JSON.stringify(
    {beyond: Math.round(beyond), page: d.documentElement.scrollWidth, view: w.innerWidth});
"></iframe></body></html>
"""


def test_chromium_a_long_cited_quote_wraps_inside_its_claim(chromium, tmp_path):
    # A citation line holds the whole quote: it must wrap, not push the checker table past the page.
    result = make_result()
    quote = "The Paris Agreement is an international treaty on climate change, adopted in 2015. " * 4
    result.verification.consensus[1].verdicts[0].citations[0].quote = quote
    html.write_report(tmp_path / "report.html", result)
    probe = tmp_path / "probe.html"
    probe.write_text(OVERFLOW_PROBE)
    dom = Page(
        run_chromium(chromium, tmp_path / "profile", "--allow-file-access-from-files", "--dump-dom", probe.as_uri())
    )
    seen = json.loads(dom.text("out"))
    assert seen["beyond"] <= 0 and seen["page"] <= seen["view"], seen


# Measures the report's layout in a frame 1280 px wide: the page's height as it opens, then, every accordion open,
# any word a table cell breaks across two lines, how often each text of `needles` (set as data-needles on the
# frame's probe) is shown, and how far the page reaches past the view.
LAYOUT_PROBE = """<!DOCTYPE html><html><body style="margin:0"><pre id="out"></pre>
<iframe src="report.html" style="width:1280px;height:900px;border:0" onload="
  var d = this.contentDocument, w = this.contentWindow;
  var out = {height: d.documentElement.scrollHeight};
  Array.prototype.forEach.call(d.querySelectorAll('details'), function (x) { x.open = true; });
  out.broken = [];
  Array.prototype.forEach.call(d.querySelectorAll('td, th'), function (cell) {
    var walker = d.createTreeWalker(cell, w.NodeFilter.SHOW_TEXT), node, match;
    while ((node = walker.nextNode())) {
      var words = /[^\\s]+/g;
      while ((match = words.exec(node.data))) {
        var range = d.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        var lines = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) { if (r.width) { lines[Math.round(r.top)] = 1; } });
        if (Object.keys(lines).length > 1) { out.broken.push(match[0]); }
      }
    }
  });
  var text = d.body.innerText;
  out.shown = JSON.parse(document.body.dataset.needles).map(function (needle) {
    return text.split(needle).length - 1;
  });
  out.report_tables = d.querySelectorAll('#report-text table').length;
  out.opened_height = d.documentElement.scrollHeight;
  out.page = d.documentElement.scrollWidth;
  out.view = w.innerWidth;
  document.getElementById('out').textContent = JSON.stringify(out);
"></iframe></body></html>
"""


def measure_layout(chromium: Path, tmp_path: Path, report: Path, needles: list[str]) -> dict:
    """LAYOUT_PROBE's figures for the report at `report` (copied beside the probe)."""
    folder = tmp_path / "layout"
    folder.mkdir(exist_ok=True)
    (folder / "report.html").write_bytes(report.read_bytes())
    probe = folder / "probe.html"
    probe.write_text(LAYOUT_PROBE.replace("<body ", f'<body data-needles="{escape(json.dumps(needles))}" ', 1))
    dom = Page(
        run_chromium(
            chromium,
            tmp_path / "layout-profile",
            "--allow-file-access-from-files",
            "--window-size=1300,900",
            "--dump-dom",
            probe.as_uri(),
        )
    )
    return json.loads(dom.text("out"))


def audited_result() -> factcheck_pb2.FactCheckResult:
    """make_result with the audit's findings: claim 1's b/two said VERIFIED on a detail no passage states (counted
    UNVERIFIABLE), claim 3 was checked without passages; the consensus as the gateway counts it."""
    result = make_result()
    audited = common_pb2.AUDIT_STATUS_AUDITED
    for item in result.verification.consensus[:2]:
        for checked in item.verdicts:
            checked.audit_status = audited
    first = result.verification.consensus[0]
    first.verdicts[1].audit_flags.append(
        common_pb2.AuditFlag(
            kind=common_pb2.AUDIT_FLAG_KIND_UNSUPPORTED_DETAIL,
            detail="unsupported detail: 330 metres",
            checker_model="b/two",
        )
    )
    first.agreement_rate = 50.0
    first.audit_note = "b/two's VERIFIED counted as UNVERIFIABLE: unsupported detail: 330 metres."
    for checked in result.verification.consensus[2].verdicts:
        checked.audit_status = common_pb2.AUDIT_STATUS_NO_PASSAGES
    return result


def test_the_audit_is_shown_with_each_flag_and_what_it_did_not_read():
    parsed = Page(html.render_page(audited_result()))
    audit = parsed.text("audit")
    assert "1. b/two said VERIFIED, counted as UNVERIFIABLE: unsupported detail: 330 metres" in audit
    assert parsed.text("not-audited") == (
        "Answers not audited for 1 of 3 claims: no passages: checked from the checkers' own knowledge."
    )
    # In the claim's accordion: the flag under the checker's evidence, the verdict it counted as beside its own.
    detail = parsed.text("detail-1")
    assert "Audit: unsupported detail: 330 metres" in detail and "counted as UNVERIFIABLE" in detail
    assert "1 of 2 checkers agree" in parsed.text("evidence-1")
    # The agreement bar shows the verdict each checker counted as.
    votes = [(v["data-model"], v["data-verdict"]) for v in parsed.find("span", "vote")][:2]
    assert votes == [("a/one", "VERIFIED"), ("b/two", "UNVERIFIABLE")]
    # A run without findings or unaudited answers has no audit card.
    assert "audit" not in Page(html.render_page(make_result()))._chunks
