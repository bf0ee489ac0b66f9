"""`factcheck council` and the council report: arguments, --responses files, progress lines, the
ranking in the terminal and the HTML page, from constructed protos (no suite needed).
"""

from __future__ import annotations

import argparse
import io
import json
import re

import pytest
from rich.console import Console

from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_cli import council, council_view, html, render
from factcheck_cli.check import UsageError
from tests.test_html_report import Page, chromium, run_chromium  # noqa: F401 (chromium is a fixture)

A, B, C = (
    council_pb2.ACCURACY_RATING_ACCURATE,
    council_pb2.ACCURACY_RATING_MIXED,
    council_pb2.ACCURACY_RATING_INACCURATE,
)
MOSTLY = council_pb2.ACCURACY_RATING_MOSTLY_ACCURATE
NUMERICAL, MISATTRIBUTION = council_pb2.ERROR_TYPE_NUMERICAL_ERROR, council_pb2.ERROR_TYPE_MISATTRIBUTION
HOSTILE_NAME = "<script>alert('name')</script>"
HOSTILE_TEXT = "The tower is <img src=x onerror=alert(1)> 330 m tall. [bold red]alarm[/] \x1b[2J"
QUESTION = "When was the Eiffel Tower completed & how tall is it?"
WRONG_CLAIM = "It was completed in 1899."
CORRECTION = "It was completed in 1889 <b>March</b>."


def rating(
    checker: str, index: int, value: council_pb2.AccuracyRating, self_rating: bool = False
) -> council_pb2.CheckerRating:
    return council_pb2.CheckerRating(
        fact_checker_model=checker, checker_index=index, rating=value, self_rating=self_rating
    )


def claim(label: str, text: str, error_type: council_pb2.ErrorType, correction: str) -> council_pb2.InaccurateClaim:
    return council_pb2.InaccurateClaim(label=label, claim=text, error_type=error_type, correction=correction)


def make_council_result(*, synthesis: bool = True, excluded: bool = True) -> factcheck_pb2.FactCheckResult:
    """A finished council run: three responses (one by a hostile name), two counted fact-checkers
    (a/one also wrote Response A), one excluded, claims of two error types."""
    labels = {"Response A": "a/one", "Response B": HOSTILE_NAME, "Response C": "c/three"}
    checks = [
        council_pb2.CouncilCheck(
            model="a/one",
            checker_index=0,
            analysis="Response B says 1899.\nFACT CHECK SUMMARY:\nResponse A: ACCURATE\n<script>x</script>",
            ratings=[
                council_pb2.ResponseRating(label="Response A", rating=A),
                council_pb2.ResponseRating(label="Response B", rating=C),
                council_pb2.ResponseRating(label="Response C", rating=B),
            ],
            most_reliable="Response A",
            inaccurate_claims=[
                claim("Response B", WRONG_CLAIM, NUMERICAL, CORRECTION),
                claim("Response C", "Gustave Eiffel designed it alone.", MISATTRIBUTION, "Koechlin and Nouguier."),
            ],
            response_time_ms=1500,
            warnings=["Response D is not a response of this run"],
        ),
        council_pb2.CouncilCheck(
            model="b/two",
            checker_index=1,
            ratings=[
                council_pb2.ResponseRating(label="Response A", rating=MOSTLY),
                council_pb2.ResponseRating(label="Response B", rating=B),
                council_pb2.ResponseRating(label="Response C", rating=MOSTLY),
            ],
            most_reliable="Response A",
            inaccurate_claims=[
                claim("Response B", "it was  COMPLETED in 1899.", NUMERICAL, ""),  # the same claim: merged
                claim("Response B", "It is 500 metres tall.", NUMERICAL, "About 330 metres."),
            ],
            response_time_ms=2500,
        ),
    ]
    ranking = [
        council_pb2.RankedResponse(
            rank=1,
            label="Response A",
            model="a/one",
            average_score=4.5,
            ratings=[rating("a/one", 0, A, self_rating=True), rating("b/two", 1, MOSTLY)],
            most_reliable_votes=2,
            self_score=5.0,
            others_score=4.0,
        ),
        council_pb2.RankedResponse(
            rank=2,
            label="Response C",
            model="c/three",
            average_score=3.5,
            ratings=[rating("a/one", 0, B), rating("b/two", 1, MOSTLY)],
            inaccurate_claim_count=1,
            error_types=[council_pb2.ErrorTypeCount(error_type=MISATTRIBUTION, count=1)],
        ),
        council_pb2.RankedResponse(
            rank=3,
            label="Response B",
            model=HOSTILE_NAME,
            average_score=2.0,
            ratings=[rating("a/one", 0, C), rating("b/two", 1, B)],
            inaccurate_claim_count=3,
            error_types=[council_pb2.ErrorTypeCount(error_type=NUMERICAL, count=3)],
        ),
    ]
    aggregate = council_pb2.CouncilAggregate(
        ranking=ranking,
        counted_fact_checkers=["a/one", "b/two"],
        kendall_w=0.75,
        error_types=[
            council_pb2.ErrorTypeCount(error_type=NUMERICAL, count=3),
            council_pb2.ErrorTypeCount(error_type=MISATTRIBUTION, count=1),
        ],
        self_preference=1.0,
        label_to_model=labels,
    )
    if excluded:
        aggregate.excluded_fact_checkers.add(
            model="x/broken", checker_index=2, message="no FACT CHECK SUMMARY <in> its answer"
        )
    result = factcheck_pb2.FactCheckResult(
        message_id="council-1",
        question=QUESTION,
        status=factcheck_pb2.MESSAGE_STATUS_COMPLETE,
        title="Eiffel Tower <answers>",
        mode=factcheck_pb2.MODE_COUNCIL,
        council=council_pb2.CouncilResult(
            config=council_pb2.CouncilRunConfig(
                council_models=["a/one", "b-writer", "c/three"],
                response_count=3,
                fact_checker_models=["a/one", "b/two", "x/broken"],
                reporter_model="r/porter",
                timeout_ms=60000,
            ),
            responses=[
                council_pb2.CouncilResponse(label="Response A", model="a/one", text="It was completed in 1889."),
                council_pb2.CouncilResponse(label="Response B", model=HOSTILE_NAME, text=HOSTILE_TEXT),
                council_pb2.CouncilResponse(label="Response C", model="c/three", text="Eiffel designed it alone."),
            ],
            fact_checks=checks,
            aggregate=aggregate,
        ),
    )
    if synthesis:
        result.council.synthesis.CopyFrom(
            council_pb2.SynthesisCompletePayload(
                model="z/chair", text="Completed in 1889; <i>330</i> m.", based_on_label="Response A"
            )
        )
        result.council.config.chairman_model = "z/chair"
    return result


def rendered(result: factcheck_pb2.FactCheckResult) -> str:
    output = io.StringIO()
    console = Console(file=output, width=220, color_system=None)
    render.render_result(console, result)
    return output.getvalue()


def flat(text: str) -> str:
    return " ".join(text.split())


# --- the terminal report ------------------------------------------------------------------------


def test_the_ranking_table_has_one_row_per_response_with_every_rating():
    output = rendered(make_council_result())
    rows = [line.split("│")[0].split() for line in output.splitlines() if re.match(r"^\s+[123]\s+Response", line)]
    assert [row[:3] for row in rows] == [["1", "Response", "A"], ["2", "Response", "C"], ["3", "Response", "B"]]
    header = next(line for line in output.splitlines() if "Rank" in line and "Average" in line)
    assert header.split() == [
        "Rank",
        "Response",
        "Model",
        "Average",
        "a/one",
        "b/two",
        "Most",
        "reliable",
        "Inaccurate",
        "claims",
    ]
    lines = {
        row[2]: line
        for row, line in zip(rows, [l for l in output.splitlines() if re.match(r"^\s+[123]\s+Response", l)])
    }
    assert flat(lines["A"]).split() == "1 Response A a/one 4.50 ACCURATE (self) MOSTLY ACCURATE 2 0".split()
    assert flat(lines["C"]).split() == "2 Response C c/three 3.50 MIXED MOSTLY ACCURATE 0 1".split()
    # The hostile name is shown as text (de-anonymised), not as markup.
    assert flat(lines["B"]) == f"3 Response B {HOSTILE_NAME} 2.00 INACCURATE MIXED 0 3"


def test_the_report_shows_agreement_self_preference_synthesis_and_exclusions():
    output = flat(rendered(make_council_result()))
    assert "Eiffel Tower <answers>" in output and "id council-1" in output and "status COMPLETE" in output
    assert "responses a/one, b-writer, c/three" in output and "fact-checkers a/one, b/two, x/broken" in output
    assert "chairman z/chair" in output
    assert "Agreement (Kendall's W) 0.75 (strong agreement)" in output
    assert (
        "Self-preference +1.00 (models rated their own answers 1.00 higher than the others did; self-ratings counted"
        in output
    )
    assert (
        "Chairman's synthesis ─" in output
        and "by z/chair, from Response A (a/one) Completed in 1889; <i>330</i> m." in output
    )
    assert "Excluded fact-checkers ─" in output and "x/broken: no FACT CHECK SUMMARY <in> its answer" in output


def test_inaccurate_claims_are_grouped_by_error_type_most_frequent_first():
    output = rendered(make_council_result())
    section = output[output.index("Inaccurate claims by error type") : output.index("Chairman's synthesis")]
    lines = [line.strip() for line in section.splitlines()[1:] if line.strip()]
    assert lines == [
        "Numerical/Statistical Error (2)",
        f"Response B ({HOSTILE_NAME}): {WRONG_CLAIM}",
        f"correction: {CORRECTION}",
        "found by a/one, b/two",  # the same claim from both checkers, once
        f"Response B ({HOSTILE_NAME}): It is 500 metres tall.",
        "correction: About 330 metres.",
        "found by b/two",
        "Misattribution (1)",
        "Response C (c/three): Gustave Eiffel designed it alone.",
        "correction: Koechlin and Nouguier.",
        "found by a/one",
    ]


def test_a_council_report_without_counted_checkers_says_there_is_no_ranking():
    result = make_council_result(synthesis=False)
    result.status = factcheck_pb2.MESSAGE_STATUS_FAILED
    result.error_message = "All fact-checkers failed."
    del result.council.aggregate.ranking[:]
    del result.council.fact_checks[:]
    output = flat(rendered(result))
    assert "The run failed: only what was done before the failure is shown. All fact-checkers failed." in output
    assert "No ranking: no fact-checker's ratings were counted." in output
    assert "Chairman's synthesis" not in output and "Inaccurate claims by error type" not in output


def test_untrusted_council_text_cannot_drive_the_terminal():
    result = make_council_result()
    result.council.synthesis.text = "fine [bold red]alarm[/] \x1b[2J\x07 end"
    output = rendered(result)
    assert "[bold red]alarm[/]" in output and "\x1b" not in output and "\x07" not in output


# --- progress lines -------------------------------------------------------------------------------


def line_of(**payload) -> str:
    line = render.describe_event(factcheck_pb2.FactCheckEvent(**payload))
    assert line is not None
    return line.plain


def test_council_events_are_progress_lines():
    config = council_pb2.CouncilRunConfig(
        council_models=["a/one", "b/two"], response_count=2, fact_checker_models=["a/one", "b/two"]
    )
    config.chairman_model = "z/chair"
    start = factcheck_pb2.FactCheckStartPayload(message_id="m1", mode=factcheck_pb2.MODE_COUNCIL, council=config)
    assert line_of(factcheck_start=start) == (
        "start     run m1: council of 2 models: a/one, b/two; 2 fact-checkers: a/one, b/two; chairman z/chair"
    )
    supplied = council_pb2.CouncilRunConfig(
        response_count=3, fact_checker_models=["local/checker"], responses_supplied=True, exclude_self_ratings=True
    )
    start = factcheck_pb2.FactCheckStartPayload(message_id="m2", mode=factcheck_pb2.MODE_COUNCIL, council=supplied)
    assert line_of(factcheck_start=start) == (
        "start     run m2: ranking 3 supplied responses; 1 fact-checker: local/checker; "
        "self-ratings left out of the averages"
    )
    assert (
        line_of(respond_start=council_pb2.RespondStartPayload(response_count=2)) == "respond   waiting for 2 responses"
    )
    arrived = council_pb2.ResponseCompletePayload(label="Response A", text="x" * 120, response_time_ms=1234)
    assert line_of(response_complete=arrived) == "respond   Response A: 120 characters in 1.2 s"
    failed = council_pb2.ResponseFailedPayload(label="Response B", message="HTTP 500\x1b[2J")
    assert line_of(response_failed=failed) == "respond   Response B failed: HTTP 500[2J"
    labels = council_pb2.ResponsesAnonymisedPayload(labels=["Response A", "Response C"])
    assert line_of(responses_anonymised=labels) == (
        "anonymise the fact-checkers see Response A, Response C (the models are revealed in the ranking)"
    )
    check_start = council_pb2.CouncilCheckStartPayload(fact_checker_count=2, response_count=3)
    assert line_of(council_check_start=check_start) == "check     fact-checking 3 responses with 2 fact-checkers"
    done = council_pb2.CouncilCheckCompletePayload(
        model="a/one",
        ratings=[
            council_pb2.ResponseRating(label="Response A", rating=A),
            council_pb2.ResponseRating(label="Response B", rating=C),
        ],
        most_reliable="Response A",
        inaccurate_claims=[claim("Response B", WRONG_CLAIM, NUMERICAL, CORRECTION)],
        response_time_ms=2000,
        warnings=["Response B was rated twice; the first rating counts"],
    )
    assert line_of(council_check_complete=done).splitlines() == [
        "check     a/one done in 2.0 s: A ACCURATE, B INACCURATE; most reliable Response A; 1 inaccurate claim",
        "          warning: Response B was rated twice; the first rating counts",
    ]
    check_failed = council_pb2.CouncilCheckFailedPayload(model="x/broken", checker_index=2, message="no summary")
    assert line_of(council_check_failed=check_failed) == (
        "check     x/broken failed (left out of the ranking): no summary"
    )
    aggregate = make_council_result().council.aggregate
    assert line_of(
        council_aggregate_complete=council_pb2.CouncilAggregateCompletePayload(aggregate=aggregate)
    ).splitlines() == [
        f"rank      1. Response A (a/one) 4.50 · 2. Response C (c/three) 3.50 · 3. Response B ({HOSTILE_NAME}) 2.00; "
        "Kendall's W 0.75 (strong agreement)",
        "          x/broken excluded: no FACT CHECK SUMMARY <in> its answer",
    ]
    assert (
        line_of(synthesis_start=council_pb2.SynthesisStartPayload()) == "synthesis the chairman writes the final answer"
    )
    synthesised = council_pb2.SynthesisCompletePayload(
        model="z/chair", text="abc", based_on_label="Response A", response_time_ms=500
    )
    assert line_of(synthesis_complete=synthesised) == "synthesis z/chair wrote 3 characters from Response A in 0.5 s"


# --- arguments and --responses files --------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    council.add_parser(parser.add_subparsers())
    return parser.parse_args(["council", *argv])


def test_models_and_options_become_the_council_config():
    args = parse(
        "Q?", "-m", "a/one", "--model", "b/two", "--fact-checker", "c/three", "--chairman", "z/chair",
        "--reporter", "r/porter", "--exclude-self", "--timeout-ms", "45000", "--conversation-id", "conv-1",
    )  # fmt: skip
    request = council.build_request(args)
    assert request.question == "Q?" and request.mode == factcheck_pb2.MODE_COUNCIL
    assert request.conversation_id == "conv-1" and not request.HasField("mode_config")
    config = request.council_config
    assert list(config.council_models) == ["a/one", "b/two"] and not config.responses
    assert list(config.fact_checker_models) == ["c/three"]
    assert (config.chairman_model, config.reporter_model, config.timeout_ms) == ("z/chair", "r/porter", 45000)
    assert config.exclude_self_ratings is True


def test_defaults_are_left_to_the_gateway():
    config = council.build_request(parse("Q?", "-m", "a", "-m", "b")).council_config
    for field in ("chairman_model", "reporter_model", "timeout_ms", "exclude_self_ratings", "use_knowledge_store"):
        assert not config.HasField(field), field
    assert not config.fact_checker_models


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([{"name": "gpt", "text": "One."}, {"name": "claude", "text": "Two.", "extra": 1}]),
        '{"name": "gpt", "text": "One."}\n\n{"name": "claude", "text": "Two."}\n',
    ],
    ids=["array", "json-lines"],
)
def test_responses_are_read_from_an_array_or_json_lines(tmp_path, text):
    path = tmp_path / "answers.json"
    path.write_text(text)
    config = council.build_request(parse("Q?", "--responses", str(path))).council_config
    assert [(response.name, response.text) for response in config.responses] == [("gpt", "One."), ("claude", "Two.")]
    assert not config.council_models


@pytest.mark.parametrize(
    "content, problem",
    [
        ("", "no responses (the file is empty)"),
        ("[]", "no responses (the array is empty)"),
        ('[{"name": "a", "text": "x"},', "not valid JSON: Expecting value at line 1 column 29"),
        (
            '{"name": "a", "text": "x"}\nnot json',
            "line 2 is not valid JSON (Expecting value); expected a JSON array or one JSON object per line",
        ),
        ('[{"name": "a", "text": "x"}, "just text"]', 'item 2 is not an object with "name" and "text"'),
        ('[{"name": "a", "text": "x"}, {"text": "y"}]', 'item 2: "name" is missing'),
        ('{"name": "a", "text": ""}', 'line 1: "text" must be a non-empty string'),
        ('[{"name": 7, "text": "y"}]', 'item 1: "name" must be a non-empty string'),
    ],
)
def test_a_bad_responses_file_is_a_usage_error_naming_the_problem(tmp_path, content, problem):
    path = tmp_path / "answers.json"
    path.write_text(content)
    with pytest.raises(UsageError) as raised:
        council.build_request(parse("Q?", "--responses", str(path)))
    assert str(raised.value) == f"{path}: {problem}"


def test_a_missing_or_binary_responses_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read /no/such.json: No such file or directory"):
        council.read_responses("/no/such.json")
    binary = tmp_path / "answers.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8 text"):
        council.read_responses(str(binary))


@pytest.mark.parametrize("argv", [["Q?"], ["Q?", "-m", "a", "--responses", "x.json"]])
def test_models_or_responses_exactly_one(argv):
    with pytest.raises(UsageError, match="give the council models .* or --responses FILE, not both or neither"):
        council.build_request(parse(*argv))


def test_the_command_exits_2_on_a_bad_file_before_calling_the_gateway(tmp_path, capsys):
    from factcheck_cli.app import main

    path = tmp_path / "answers.jsonl"
    path.write_text('{"name": "a"}\n')
    assert main(["council", "Q?", "--responses", str(path)]) == 2
    assert capsys.readouterr().err == f'factcheck council: {path}: line 1: "text" is missing\n'


# --- the HTML page ------------------------------------------------------------------------------


def test_the_council_page_escapes_every_hostile_text():
    page = html.render_page(make_council_result())
    assert page.count("<script") == 1  # the page's own sort script
    assert "<img" not in page and "<i>" not in page and "<b>March" not in page and "<answers>" not in page
    assert "&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<title>Eiffel Tower &lt;answers&gt;</title>" in page
    assert "Completed in 1889; &lt;i&gt;330&lt;/i&gt; m." in page
    assert "When was the Eiffel Tower completed &amp; how tall is it?" in page
    links = re.findall(r'<[^>]*\s(?:src|href)="([^"]*)"', page)
    assert links and all(link.startswith("#") for link in links)
    assert "http://" not in page and "https://" not in page


def test_the_council_page_has_the_ranking_table_de_anonymised():
    parsed = Page(html.render_page(make_council_result()))
    assert parsed.find("table", "sortable")[0]["id"] == "ranking-table"
    assert [row["id"] for row in parsed.find("tr", "ranking-row")] == ["rank-A", "rank-C", "rank-B"]
    assert parsed.text("rank-A") == "1 Response A a/one 4.50 ACCURATE (self) MOSTLY ACCURATE 2 0"
    assert parsed.text("rank-B") == f"3 Response B {HOSTILE_NAME} 2.00 INACCURATE MIXED 0 3"
    metrics = parsed.text("metrics")
    assert "Responses 3" in metrics and "Fact-checkers counted 2/3" in metrics
    assert "Agreement (Kendall's W) 0.75" in metrics and "Self-preference +1.00" in metrics
    assert "Most reliable Response A (a/one)" in metrics
    assert parsed.text("synthesis") == "Completed in 1889; <i>330</i> m."
    assert parsed.text("excluded") == "x/broken : no FACT CHECK SUMMARY <in> its answer"


def test_the_council_page_lists_each_responses_inaccurate_claims_with_type_and_correction():
    parsed = Page(html.render_page(make_council_result()))
    assert [entry["id"] for entry in parsed.find("details", "response")] == [
        "response-A",
        "response-C",
        "response-B",
    ]
    response_b = parsed.text("response-B")
    assert "The tower is <img src=x onerror=alert(1)> 330 m tall. [bold red]alarm[/]" in response_b
    assert f"{WRONG_CLAIM} Numerical/Statistical Error {CORRECTION} a/one, b/two" in response_b
    assert "It is 500 metres tall. Numerical/Statistical Error About 330 metres. b/two" in response_b
    assert "No inaccurate claims were reported." in parsed.text("response-A")
    checker = parsed.text("checker-0")
    assert "a/one" in checker and "most reliable: Response A" in checker
    assert "Response D is not a response of this run" in checker and "<script>x</script>" in checker


def test_the_chart_shows_error_types_per_response_scaled_to_the_largest():
    parsed = Page(html.render_page(make_council_result()))
    assert parsed.text("chart-B") == f"Response B ({HOSTILE_NAME}) 3"
    assert parsed.text("chart-A") == "Response A (a/one) 0"
    segments = [(s["data-type"], s["data-count"], s["style"]) for s in parsed.find("span") if "data-count" in s]
    assert segments == [
        ("Misattribution", "1", "width:33.33%"),  # Response C
        ("Numerical/Statistical Error", "3", "width:100.00%"),  # Response B
    ]
    classes = {s["data-type"]: s["class"] for s in parsed.find("span") if "data-count" in s}
    assert classes["Numerical/Statistical Error"] != classes["Misattribution"]
    assert "Misattribution" in parsed.text("error-chart") and "Numerical/Statistical Error" in parsed.text(
        "error-chart"
    )


def test_a_run_without_claims_or_synthesis_has_no_chart_or_synthesis():
    result = make_council_result(synthesis=False, excluded=False)
    for ranked in result.council.aggregate.ranking:
        del ranked.error_types[:]
    page = html.render_page(result)
    assert 'id="error-chart"' not in page and 'id="synthesis"' not in page and 'id="excluded"' not in page


def test_chromium_renders_the_council_page_and_no_hostile_text_runs(chromium, tmp_path):  # noqa: F811
    page = tmp_path / "council.html"
    html.write_report(page, make_council_result())
    dom = Page(run_chromium(chromium, tmp_path / "profile", "--dump-dom", page.as_uri()))
    assert dom.title == "Eiffel Tower <answers>"  # no injected script changed it
    assert len(dom.find("script")) == 1 and not dom.find("img")
    assert [row["id"] for row in dom.find("tr", "ranking-row")] == ["rank-A", "rank-C", "rank-B"]
    assert HOSTILE_NAME in dom.text("rank-B")
    # The page's own script ran (the policy lets it): the ranking table is sortable.
    assert "js-sortable" in dom.find("table", "sortable")[0]["class"]
    screenshot = tmp_path / "council.png"
    run_chromium(chromium, tmp_path / "profile", f"--screenshot={screenshot}", "--window-size=1280,2400", page.as_uri())
    assert screenshot.stat().st_size > 20_000  # a rendered page, not a blank one


# --- list ------------------------------------------------------------------------------------------


def test_list_shows_each_runs_mode():
    from factcheck_cli.results import RESULT_COLUMNS
    from factcheck_cli.tables import print_table

    rows = [
        factcheck_pb2.ResultSummary(message_id="r1", question="q1", mode=factcheck_pb2.MODE_COUNCIL),
        factcheck_pb2.ResultSummary(message_id="r2", question="q2", mode=factcheck_pb2.MODE_FACT_CHECK),
        factcheck_pb2.ResultSummary(message_id="r3", question="q3"),  # stored before modes existed
        factcheck_pb2.ResultSummary(message_id="r4", question="q4", mode=factcheck_pb2.MODE_ENTAILMENT),
    ]
    output = io.StringIO()
    console = Console(file=output, width=160, color_system=None)
    print_table(console, RESULT_COLUMNS, rows)
    lines = {line.split()[0]: line.split() for line in output.getvalue().splitlines() if line.strip()[:1] == "r"}
    assert lines["r1"][2] == "council" and lines["r2"][2] == "fact-check" and lines["r3"][2] == "fact-check"
    assert lines["r4"][2] == "entailment"


def test_every_mode_is_named_in_list_and_in_the_docs_modes_table():
    from pathlib import Path

    modes = [value for name, value in factcheck_pb2.Mode.items() if value != factcheck_pb2.MODE_UNSPECIFIED]
    names = [council_view.mode_name(mode) for mode in modes]
    assert council_view.NONE not in names and len(set(names)) == len(modes)
    docs = Path(__file__).resolve().parent.parent / "docs"
    # The table that opens docs/modes.md, before its first section.
    section = (docs / "modes.md").read_text(encoding="utf-8").split("\n## ", 1)[0]
    assert re.findall(r"^\| `(MODE_\w+)` \|", section, re.MULTILINE) == [factcheck_pb2.Mode.Name(m) for m in modes]
    documented = re.search(r"`list` has a `mode` column \(([^)]*)\)", (docs / "cli.md").read_text(encoding="utf-8"))
    assert documented is not None and all(f"`{name}`" in documented.group(1) for name in names)


def test_taxonomy_names_cover_every_error_type():
    names = [council_view.error_type_name(value) for value in council_pb2.ErrorType.values() if value]
    assert names == [
        "Hallucinated Fact",
        "Outdated Information",
        "Numerical/Statistical Error",
        "Misattribution",
        "Overgeneralization",
        "Conflation",
        "Omission of Critical Context",
        "Logical Fallacy",
        "Other",
    ]
    assert council_view.error_type_name(0) == "Unclassified" and council_view.error_type_name(42) == "Unclassified"
