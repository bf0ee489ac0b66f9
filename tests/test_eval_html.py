"""The HTML page of an evaluation (`factcheck eval --html`, `eval show --html`): built from a
constructed Evaluation, read back as markup, and loaded in headless Chromium like the reports
(tests/test_html_report.py): it renders without the network, the plots are there, and the names
that came from callers (models, sets) stay text.
"""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from markupsafe import escape

from factcheck.v1 import common_pb2, evaluation_pb2, usage_pb2
from factcheck_cli import eval_html, html_page
from tests.test_html_report import Page, chromium, run_chromium  # noqa: F401 (chromium: a fixture)

SCRIPT_ATTACK = "<script>document.title='pwned'</script>"
IMG_ATTACK = "<img src=x onerror=alert(1)>"
EVIL_MODEL = f"fake/{SCRIPT_ATTACK}"
EVIL_SET = f"mine{IMG_ATTACK}"
CHECKERS = ["local/checker-lexical", EVIL_MODEL]
SETS = ["factcheck-bench", EVIL_SET]
V, D, U = common_pb2.VERDICT_VERIFIED, common_pb2.VERDICT_DISPUTED, common_pb2.VERDICT_UNVERIFIABLE


def make_score(checker: str, set_name: str, balanced: float, *, scored: bool = True) -> evaluation_pb2.CheckerScore:
    """A checker's scores on a set: 9 of 10 items scored, one failed; the numbers need not add up."""
    if not scored:
        return evaluation_pb2.CheckerScore(checker_model=checker, set=set_name, total=10, failed=10)
    return evaluation_pb2.CheckerScore(
        checker_model=checker,
        set=set_name,
        items=9,
        total=10,
        balanced_accuracy=balanced,
        accuracy=0.667,
        verdicts=[
            evaluation_pb2.VerdictScore(verdict=V, precision=0.75, recall=0.75, support=4, predicted=4),
            evaluation_pb2.VerdictScore(verdict=D, precision=0.5, recall=0.333, support=3, predicted=2),
            evaluation_pb2.VerdictScore(verdict=U, precision=0.0, recall=0.0, support=2, predicted=0),
        ],
        confusion=[3, 1, 0, 1, 1, 1, 2, 0, 0],
        expected_calibration_error=0.125,
        calibration=[
            evaluation_pb2.CalibrationBin(confidence=common_pb2.CONFIDENCE_HIGH, stated=0.9, observed=0.8, count=5),
            evaluation_pb2.CalibrationBin(confidence=common_pb2.CONFIDENCE_MEDIUM, stated=0.7, observed=0.5, count=4),
            evaluation_pb2.CalibrationBin(confidence=common_pb2.CONFIDENCE_LOW, stated=0.5, observed=0.0, count=0),
        ],
        disputed_rate_on_supported=0.25,
        unreadable_rate=0.111,
        latency=evaluation_pb2.LatencyPercentiles(p50=120, p90=310, p95=420, p99=900, max=1250, count=8),
        usage=usage_pb2.RunUsage(total_tokens=4321, cost_usd=0.0123, calls=9),
        cached=1,
        failed=1,
    )


def make_evaluation(
    status: evaluation_pb2.EvaluationStatus = evaluation_pb2.EVALUATION_STATUS_COMPLETE,
) -> evaluation_pb2.Evaluation:
    """Two checkers (one named with a script) on a shipped set and a custom one (named with an image)."""
    evaluation = evaluation_pb2.Evaluation(
        evaluation_id="3f1c0d2e-0000-4000-8000-000000000001",
        status=status,
        checker_models=CHECKERS,
        sets=[
            evaluation_pb2.EvaluationSetSummary(name=SETS[0], items=10, available=985),
            evaluation_pb2.EvaluationSetSummary(name=SETS[1], custom=True, items=10, available=10),
        ],
        limit=10,
        seed=7,
        scores=[
            make_score(CHECKERS[0], SETS[0], 0.612),
            make_score(CHECKERS[0], SETS[1], 0.5),
            make_score(CHECKERS[1], SETS[0], 0.444),
            make_score(CHECKERS[1], SETS[1], 0.0, scored=False),
        ],
        done=40,
        total=40,
        usage=usage_pb2.RunUsage(total_tokens=12_960, cost_usd=0.0369, calls=36, failed_calls=1, cache_hits=3),
    )
    evaluation.created_at.FromSeconds(1_795_000_000)
    return evaluation


def test_every_name_is_escaped_and_the_page_needs_nothing_from_outside():
    page = eval_html.render_page(make_evaluation())
    assert SCRIPT_ATTACK not in page and IMG_ATTACK not in page
    assert str(escape(SCRIPT_ATTACK)) in page and str(escape(IMG_ATTACK)) in page
    assert page.count("<script>") == 1  # the pages' own script, allowed by its hash
    assert str(escape(html_page.CONTENT_SECURITY_POLICY)) in page
    # Nothing is loaded: no external stylesheet, image, font or script.
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page and "url(" not in page


def test_fitted_thresholds_are_shown_and_their_names_escaped():
    evaluation = make_evaluation()
    evaluation.fit_thresholds = True
    evaluation.fitted_thresholds.extend(
        [
            evaluation_pb2.FittedThreshold(
                checker_model=EVIL_MODEL,
                set=EVIL_SET,
                threshold=0.6180339,
                balanced_accuracy=0.75,
                evaluated_threshold=0.5,
                evaluated_balanced_accuracy=0.625,
                items=40,
                verified_items=12,
                fixed_items=3,
                candidates=37,
            ),  # fmt: skip
            evaluation_pb2.FittedThreshold(checker_model="onnx/m", set=EVIL_SET, error="no item is labelled VERIFIED"),
        ]
    )
    page = eval_html.render_page(evaluation)
    assert SCRIPT_ATTACK not in page and IMG_ATTACK not in page
    rows = re.findall(r'<tr class="threshold-row">(.*?)</tr>', page)
    assert len(rows) == 2
    cells = [unescape(re.sub(r"<[^>]+>", "|", row)) for row in rows]
    assert f"{EVIL_MODEL}" in cells[0] and "|0.618034|" in cells[0] and "0.5 → 0.625" in cells[0]
    assert "40 (12 VERIFIED, 3 fixed, 37 candidates)" in cells[0]
    assert "no item is labelled VERIFIED" in cells[1]
    assert "thresholds-table" not in eval_html.render_page(make_evaluation())


def test_the_page_holds_a_plot_set_per_checker_and_set():
    dom = Page(eval_html.render_page(make_evaluation()))
    svgs = [attributes.get("class", "") for tag, attributes in dom.elements if tag == "svg"]
    assert svgs.count("reliability-chart") == 4
    assert svgs.count("compare-chart") == 2  # one per set
    assert svgs.count("latency-chart") == 3  # the checker that never answered timed no call
    points = [attributes for tag, attributes in dom.elements if tag == "g" and attributes.get("class") == "bin"]
    # Bins holding verdicts only (the LOW bins are empty), on the three scored pairs.
    assert [(point["data-confidence"], point["data-count"]) for point in points] == [("HIGH", "5"), ("MEDIUM", "4")] * 3
    assert len(dom.find("line", "diagonal")) == 4
    assert len(dom.find("table", "heatmap")) == 4
    assert "0.612" in dom.text("compare-0") and "0.444" in dom.text("compare-0")
    assert dom.text("panel-0").startswith("local/checker-lexical on factcheck-bench")
    assert "3 75%" in dom.text("confusion-0")  # VERIFIED called VERIFIED: 3 of the row's 4
    assert "p95 420 ms" in dom.text("latency-0")
    # The score table: one row per checker and set.
    assert len(dom.find("tr", "score-row")) == 4


def test_point_sizes_follow_their_counts_and_the_diagonal_spans_the_plot():
    diagram = eval_html.reliability(make_score("a/b", "s", 0.5))
    high, medium = diagram["points"]
    assert high["r"] == eval_html.POINT_MAX_R and medium["r"] < high["r"]
    assert (high["x"], high["y"]) == (round(eval_html._x(0.9), 1), round(eval_html._y(0.8), 1))
    assert diagram["left"] < high["x"] < diagram["right"]


def test_an_evaluation_without_scores_renders_a_note():
    evaluation = make_evaluation(evaluation_pb2.EVALUATION_STATUS_CANCELLED)
    del evaluation.scores[:]
    evaluation.error_message = "cancelled by the caller"
    dom = Page(eval_html.render_page(evaluation))
    assert dom.text("no-scores") == "No scores yet: no checker has answered."
    assert dom.text("status") == "CANCELLED"
    assert "factcheck eval resume 3f1c0d2e-0000-4000-8000-000000000001" in dom.text("status-note")
    assert not [attributes for tag, attributes in dom.elements if tag == "svg"]


def test_chromium_renders_the_page_with_its_plots_and_the_names_stay_text(chromium, tmp_path):  # noqa: F811
    path = tmp_path / "evaluation.html"
    eval_html.write_page(path, make_evaluation())
    dumped = run_chromium(chromium, tmp_path / "profile", "--dump-dom", path.as_uri())
    dom = Page(dumped)
    # The document's title (the first <title>; the plots' tooltips are <title>s too): the model's script did not run.
    title = re.search(r"<title>(.*?)</title>", dumped, re.S)
    assert title is not None and unescape(title.group(1)) == f"Evaluation of {', '.join(CHECKERS)}"
    assert len(dom.find("script")) == 1 and not dom.find("img")
    svgs = [attributes.get("class", "") for tag, attributes in dom.elements if tag == "svg"]
    assert svgs.count("reliability-chart") == 4 and svgs.count("compare-chart") == 2
    assert len(dom.find("circle", "bin-point")) == 6
    assert len(dom.find("rect", "bar")) == 4 + 3 * 5  # the comparison's bars, then 5 latency bars per timed pair
    assert SCRIPT_ATTACK in dom.text("panel-2") and IMG_ATTACK in dom.text("compare-1")
    # The page's own script ran (the policy lets it): the score table is sortable.
    assert "js-sortable" in dom.find("table", "sortable")[0]["class"]


# --- the mistakes ---------------------------------------------------------------------------


def make_mistakes() -> list[evaluation_pb2.EvaluationItem]:
    """Wrong answers of both checkers: a wrong verdict, an unreadable answer, and one with hostile text."""
    return [
        evaluation_pb2.EvaluationItem(
            checker_model=CHECKERS[0], set=SETS[0], item_id="fcb-1", claim="The Eiffel Tower is 500 metres tall.",
            label=D, verdict=V, confidence=common_pb2.CONFIDENCE_HIGH, answer="P1 says the tower is tall.",
        ),
        evaluation_pb2.EvaluationItem(
            checker_model=CHECKERS[0], set=SETS[1], item_id="mine-2", claim="Water boils at 50 °C at sea level.",
            label=D, unreadable=True, answer="Happy to help! These all look fine to me.",
        ),
        evaluation_pb2.EvaluationItem(
            checker_model=EVIL_MODEL, set=SETS[0], item_id="fcb-3", claim=f"A claim {SCRIPT_ATTACK}",
            label=V, verdict=D, confidence=common_pb2.CONFIDENCE_LOW, answer=f"Evidence {IMG_ATTACK}",
            correction="It is otherwise.",
        ),
    ]  # fmt: skip


def test_the_mistakes_show_claim_label_verdict_and_evidence_per_checker():
    dom = Page(eval_html.render_page(make_evaluation(), make_mistakes()))
    rows = [attributes for tag, attributes in dom.elements if tag == "tr" and attributes.get("class") == "mistake"]
    assert [(row["data-checker"], row["data-set"], row["data-label"]) for row in rows] == [
        (CHECKERS[0], SETS[0], "DISPUTED"),
        (CHECKERS[0], SETS[1], "DISPUTED"),
        (EVIL_MODEL, SETS[0], "VERIFIED"),
    ]
    text = dom.text("mistakes")
    assert "The Eiffel Tower is 500 metres tall." in text and "P1 says the tower is tall." in text
    assert "unreadable" in text and "Happy to help!" in text and "Correction: It is otherwise." in text
    assert "3 wrong answers" in text
    # The filters offer the checkers, sets and labels the mistakes hold.
    options = [attributes.get("value") for tag, attributes in dom.elements if tag == "option"]
    assert options == ["", *sorted(CHECKERS), "", *sorted(SETS), "", "VERIFIED", "DISPUTED"]


def test_mistakes_beyond_the_limit_are_named_not_shown():
    page = eval_html.render_page(make_evaluation(), make_mistakes(), limit=2)
    dom = Page(page)
    assert len(dom.find("tr", "mistake")) == 2
    assert "factcheck eval show 3f1c0d2e-0000-4000-8000-000000000001 --items --wrong" in dom.text("mistakes")
    empty = Page(eval_html.render_page(make_evaluation()))
    assert "No wrong answers" in empty.text("mistakes") and not empty.find("table", "mistakes")


def test_a_bin_label_stays_inside_the_plot():
    score = make_score("a/b", "s", 0.5)
    del score.calibration[:]
    score.calibration.add(confidence=common_pb2.CONFIDENCE_HIGH, stated=0.9, observed=1.0, count=3)
    [point] = eval_html.reliability(score)["points"]
    half = eval_html.LABEL_CHAR_WIDTH * len(point["label"]) / 2
    assert point["label"] == "HIGH · 3"
    assert (
        eval_html.PLOT_LEFT <= point["label_x"] - half
        and point["label_x"] + half <= eval_html.PLOT_LEFT + eval_html.PLOT_SIZE
    )
    assert point["label_y"] > point["y"]  # at the top of the plot: under its point, not over the edge


# Measures the page in a frame `width` px wide: what overflows its box, what a filter shows.
LAYOUT_PROBE = """<!DOCTYPE html><html><body style="margin:0"><pre id="out"></pre>
<iframe src="evaluation.html" style="width:WIDTHpx;height:900px;border:0" onload="
  var d = this.contentDocument, w = this.contentWindow;
  function box(e) { return e.getBoundingClientRect(); }
  var out = {page: d.documentElement.scrollWidth, view: w.innerWidth, beyond_card: 0, scrolls: {}, labels_out: 0};
  Array.prototype.forEach.call(d.querySelectorAll('svg, table'), function (e) {
    var card = e.closest('.card'), inner = e.closest('.scroll');
    if (!card || inner) { return; }
    out.beyond_card = Math.max(out.beyond_card, box(e).right - box(card).right, box(card).left - box(e).left);
  });
  out.card_overflow = 0;
  Array.prototype.forEach.call(d.querySelectorAll('.card, header'), function (card) {
    out.card_overflow = Math.max(out.card_overflow, card.scrollWidth - card.clientWidth);
  });
  Array.prototype.forEach.call(d.querySelectorAll('.scroll > table[id]'), function (t) {
    out.scrolls[t.id] = t.parentElement.scrollWidth - t.parentElement.clientWidth;
  });
  var failed = Array.prototype.filter.call(d.querySelectorAll('#cost-table th'), function (th) { return th.textContent === 'Failed'; })[0];
  var scroller = failed.closest('.scroll');
  out.failed_visible = box(failed).right <= box(scroller).right + 0.5;
  Array.prototype.forEach.call(d.querySelectorAll('svg.reliability-chart'), function (svg) {
    var plot = svg.querySelector('rect.plot').getBBox();
    Array.prototype.forEach.call(svg.querySelectorAll('text.bin-label'), function (t) {
      var b = t.getBBox();
      if (b.x < plot.x || b.x + b.width > plot.x + plot.width || b.y < plot.y || b.y + b.height > plot.y + plot.height) {
        out.labels_out += 1;
      }
    });
  });
  var select = d.querySelector('select[data-filter=checker]');
  out.filters_shown = w.getComputedStyle(d.querySelector('.filters')).display !== 'none';
  select.value = 'local/checker-lexical';
  select.dispatchEvent(new w.Event('change'));
  out.rows_shown = Array.prototype.filter.call(d.querySelectorAll('tr.mistake'), function (r) { return !r.hidden; }).length;
  out.count = d.querySelector('[data-filter-count]').textContent;
  document.getElementById('out').textContent = JSON.stringify(out);
"></iframe></body></html>
"""


@pytest.mark.parametrize("width", [1280, 420])
def test_chromium_lays_the_page_out_at_1280_and_420_pixels(chromium, tmp_path, width):  # noqa: F811
    eval_html.write_page(
        tmp_path / "evaluation.html", make_evaluation(evaluation_pb2.EVALUATION_STATUS_PARTIAL), make_mistakes()
    )
    probe = tmp_path / "probe.html"
    probe.write_text(LAYOUT_PROBE.replace("WIDTH", str(width)))
    dom = Page(
        run_chromium(
            chromium, tmp_path / "profile", "--allow-file-access-from-files", f"--window-size={width + 20},1000",
            "--dump-dom", probe.as_uri(),
        )
    )  # fmt: skip
    seen = json.loads(dom.text("out"))
    assert seen["page"] <= seen["view"], seen  # nothing pushes the page sideways
    assert seen["beyond_card"] <= 0.5 and seen["card_overflow"] == 0, seen  # everything stays inside its card
    assert seen["labels_out"] == 0, seen  # every reliability label inside its plot
    if width == 1280:  # every column in view, Cached and Failed included: no sideways scroll
        assert seen["scrolls"] == {"scores-table": 0, "cost-table": 0} and seen["failed_visible"], seen
    # The filter (the page's script) shows one checker's mistakes.
    assert seen["filters_shown"] and (seen["rows_shown"], seen["count"]) == (2, "2 of 3 shown"), seen


def test_chromium_screenshots_of_the_page_at_both_widths(chromium, tmp_path):  # noqa: F811
    eval_html.write_page(tmp_path / "evaluation.html", make_evaluation(), make_mistakes())
    for width in (1280, 420):
        shot = tmp_path / f"evaluation-{width}.png"
        run_chromium(
            chromium, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={width},2400",
            (tmp_path / "evaluation.html").as_uri(),
        )  # fmt: skip
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
