"""The gateway-overhead benchmark's own pieces (bench/pipeline.py), and the fake model server's socket
settings it relies on. No speed goals here: the benchmark prints figures, it asserts none."""

from __future__ import annotations

import socket

import httpx
import pytest

from bench import pipeline
from tests.fake_model_server import FakeModelServer, extraction_text, sentences


def test_replies_are_not_held_back_by_nagle_on_a_reused_connection():
    """Accepted sockets have TCP_NODELAY: a reply never waits for the client's delayed ACK."""
    with FakeModelServer() as server, httpx.Client() as client:
        body = {"model": "fake/x", "messages": [{"role": "user", "content": "Write a short title for this"}]}
        answers = [client.post(f"{server.base_url}/chat/completions", json=body) for _ in range(3)]
        assert [a.json()["choices"][0]["message"]["content"] for a in answers] == [
            "Fact-check of the supplied content"
        ] * 3
        connections = list(server._connections)
        assert len(server.requests) == 3 and len(connections) == 1  # one kept-alive connection
        assert connections[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


@pytest.mark.parametrize("claims", [1, 10, 300])
def test_growth_content_makes_one_distinct_claim_per_sentence(claims):
    content = pipeline.content_of(claims)
    found = sentences(content)
    assert len(found) == len(set(found)) == claims
    assert f"Total claims: {claims}" in extraction_text(content)
    assert len(content) <= pipeline.MAX_CONTENT_LENGTH


def test_critical_path_counts_the_slowest_checker_and_the_title_in_spec_order_or_overlapped():
    assert pipeline.critical_path_s(0.0, overlapped=False) == pytest.approx(1.5)
    assert pipeline.critical_path_s(0.1, overlapped=False) == pytest.approx(1.6)
    assert pipeline.critical_path_s(0.1, overlapped=True) == pytest.approx(1.5)
    assert pipeline.critical_path_s(2.0, overlapped=True) == pytest.approx(2.0)


def test_profile_summary_by_library_own_time_and_project_functions(tmp_path):
    profile = tmp_path / "profile.txt"
    commit = (
        "process 1:python;thread (0x1);_worker (concurrent/futures/thread.py:83);"
        "Run._commit (services/gateway/factcheck_gateway/pipeline.py:183);"
        "StageStore.commit_run (services/gateway/factcheck_gateway/store/stage_store.py:446);"
        "DefaultDialect.do_execute (/v/lib/python3.11/site-packages/sqlalchemy/engine/default.py:924)"
    )
    loop = (
        "process 1:python;thread (0x2);main (services/gateway/factcheck_gateway/main.py:120);select (selectors.py:468)"
    )
    profile.write_text(f"{commit} 6\n{loop} 4\nnot a sample line\n")
    summary = pipeline.summarise_profile(profile)
    assert summary.samples == 10
    assert dict(summary.groups) == {
        "database: SQLAlchemy": 0.6,
        "gateway code (services/gateway/factcheck_gateway)": 0.4,
    }
    assert summary.own[0] == ("DefaultDialect.do_execute (sqlalchemy/engine/default.py)", 0.6)
    project = dict(summary.project)
    assert project["Run._commit (services/gateway/factcheck_gateway/pipeline.py)"] == 0.6
    assert project["main (services/gateway/factcheck_gateway/main.py)"] == 0.4
    assert dict(summary.threads) == {"worker threads (asyncio.to_thread)": 0.6, "other threads": 0.4}


def test_growth_verdicts_flag_a_cost_per_claim_that_rises_beyond_noise():
    linear = [(1, 0.020), (10, 0.021), (100, 0.039), (300, 0.079)]
    assert pipeline._growth_verdicts("sqlite", "CPU", linear) == [
        "- sqlite, CPU: linear or better within the noise (197 µs per claim from 1 to 300)."
    ]
    # 1 → 10 claims is within the noise: 100 µs per claim after it is no sign of worse than linear.
    flat_then_linear = [(1, 0.020), (10, 0.020), (100, 0.029), (300, 0.049)]
    assert "linear or better" in pipeline._growth_verdicts("sqlite", "CPU", flat_then_linear)[0]
    rising = [(1, 0.020), (10, 0.021), (100, 0.030), (300, 0.120)]
    (verdict,) = pipeline._growth_verdicts("sqlite", "CPU", rising)
    assert "worse than linear at 100→300 claims (450 µs per extra claim against 100 µs before)" in verdict


def test_spread_shows_the_median_and_range_of_repeats():
    assert pipeline._spread([1.0], pipeline._s) == "1.000 s"
    assert pipeline._spread([1.2, 1.0, 1.1], pipeline._s) == "1.100 s (1.000 s–1.200 s)"
    assert pipeline._spread([float("nan")], pipeline._s) == "–"
