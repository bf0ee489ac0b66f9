"""The public benchmarks' loaders (bench/public_benchmarks.py) on small fixtures, and the pieces of
bench/checker_accuracy.py that score them. No accuracy goals: the benchmark prints figures."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from bench import checker_accuracy, public_benchmarks
from bench.checker_accuracy import binary_scores, climate_fever_figures, roc_auc, support_score, wice_figures
from bench.public_benchmarks import ArticleClaim, EvidencePair, load_climate_fever, load_wice
from factcheck_engines.judge import DISPUTED, UNVERIFIABLE, VERIFIED, Judgement

ARTICLE = [
    "(meta data) TITLE: Marie Curie - Biography",
    "# Marie Curie",
    "Marie Curie was born in Warsaw in 1867.",
    "She moved to Paris in 1891 to study physics.",
    "In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel.",
]


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_wice_reads_supported_as_supported_and_partial_or_no_support_as_not(tmp_path):
    rows = [
        {
            "label": label,
            "claim": f"Claim {i}.",
            "evidence": ARTICLE,
            "supporting_sentences": [[2]],
            "meta": {"id": f"w{i}"},
        }
        for i, label in enumerate(("supported", "partially_supported", "not_supported"))
    ]
    items = load_wice(_write_jsonl(tmp_path / "test.jsonl", rows))
    assert [(i.claim, i.supported, i.label, i.id) for i in items] == [
        ("Claim 0.", True, "supported", "w0"),
        ("Claim 1.", False, "partially_supported", "w1"),
        ("Claim 2.", False, "not_supported", "w2"),
    ]
    assert items[0].sentences == tuple(ARTICLE)


def test_wice_rejects_a_label_it_does_not_know(tmp_path):
    row = {"label": "refuted", "claim": "C.", "evidence": ARTICLE}
    with pytest.raises(KeyError):
        load_wice(_write_jsonl(tmp_path / "test.jsonl", [row]))


def test_the_article_becomes_the_knowledge_stores_passages_in_order_and_verbatim():
    long_article = tuple(f"Sentence number {i} says that the river is {i} kilometres long." for i in range(60))
    passages = ArticleClaim("The river is long.", long_article, True, "supported").passages()
    assert [p.id for p in passages] == [f"P{i}" for i in range(1, len(passages) + 1)]
    assert len(passages) > 1 and all(len(p.text) <= 1200 for p in passages)
    # every sentence is in exactly one passage, whole, in article order
    joined = "\n".join(p.text for p in passages)
    assert [s for s in long_article if s in joined] == list(long_article)
    assert re.sub(r"\s+", " ", joined) == " ".join(long_article)
    short = ArticleClaim("Curie was born in Warsaw.", tuple(ARTICLE), True, "supported").passages()
    assert [p.text for p in short] == ["\n".join(ARTICLE)]  # a short article is one passage


def test_climate_fever_gives_every_claim_evidence_pair_its_verdict(tmp_path):
    evidences = [
        {"evidence_id": "A:1", "evidence_label": "SUPPORTS", "article": "A", "evidence": "Seas rise."},
        {"evidence_id": "A:2", "evidence_label": "REFUTES", "article": "A", "evidence": "Seas fall."},
        {"evidence_id": "B:7", "evidence_label": "NOT_ENOUGH_INFO", "article": "B", "evidence": "Bees fly."},
    ]
    rows = [{"claim_id": "0", "claim": "Sea levels are rising.", "claim_label": "DISPUTED", "evidences": evidences}]
    pairs = load_climate_fever(_write_jsonl(tmp_path / "cf.jsonl", rows))
    assert pairs == [
        EvidencePair("0", "Sea levels are rising.", "Seas rise.", VERIFIED, article="A"),
        EvidencePair("0", "Sea levels are rising.", "Seas fall.", DISPUTED, article="A"),
        EvidencePair("0", "Sea levels are rising.", "Bees fly.", UNVERIFIABLE, article="B"),
    ]


@pytest.mark.parametrize(("folder", "name"), [("wice", "claim_test.jsonl"), ("climate-fever", "climate-fever.jsonl")])
def test_the_shipped_benchmark_files_are_upstreams_unchanged_with_their_notices(folder, name):
    directory = public_benchmarks.DATA / folder
    readme = (directory / "README.md").read_text(encoding="utf-8")
    digest = hashlib.sha256((directory / name).read_bytes()).hexdigest()
    assert digest in readme.replace("\n", "")
    assert "Evaluation only" in readme and "commit" in readme
    assert (directory / ("LICENSE.md" if folder == "wice" else "UPSTREAM_README.md")).is_file()


def test_roc_auc_counts_pairs_ranked_right_and_ties_as_half():
    gold = [True, True, False, False]
    assert roc_auc(gold, [0.9, 0.8, 0.2, 0.1]) == 100
    assert roc_auc(gold, [0.1, 0.2, 0.8, 0.9]) == 0
    assert roc_auc(gold, [0.5, 0.5, 0.5, 0.5]) == 50
    assert roc_auc(gold, [0.9, 0.3, 0.5, 0.1]) == 75  # (1 + 1 + 0 + 1) / 4 pairs
    assert roc_auc([True, True], [0.1, 0.2]) is None


def test_binary_scores_average_the_two_sides_recall():
    gold = [True, False, False, False]
    scores = binary_scores(gold, [True, True, False, False], [2, 1, 0, 0])
    assert scores["recall_supported"] == 100
    assert scores["recall_not_supported"] == pytest.approx(200 / 3)
    assert scores["balanced_accuracy"] == pytest.approx((100 + 200 / 3) / 2)
    assert scores["accuracy"] == 75 and scores["auc"] == 100


def test_support_score_ranks_every_verified_above_the_rest():
    def judged(verdict, p):
        return Judgement(verdict, "LOW", None, None, None, p)

    ranked = [judged(VERIFIED, 0.9), judged(VERIFIED, 0.4), judged(UNVERIFIABLE, 0.4), judged(DISPUTED, 0.9)]
    values = [support_score(j) for j in ranked]
    assert values == sorted(values, reverse=True)


def test_wice_and_climate_fever_figures_use_the_threshold_they_are_given():
    items = [
        ArticleClaim("Marie Curie was born in Warsaw in 1867.", tuple(ARTICLE), True, "supported"),
        ArticleClaim("Marie Curie was born in Vienna in 1901.", tuple(ARTICLE), False, "not_supported"),
        ArticleClaim("Curie won the Nobel Prize in Chemistry in 1911.", tuple(ARTICLE), False, "partially_supported"),
    ]
    wice = wice_figures(items, ["lexical"], threshold=0.99)
    assert wice["claims"] == 3 and wice["passages"] == 3
    assert set(wice["systems"]) == {checker_accuracy.LEXICAL, "word overlap (>= 0.99)"}
    assert wice["systems"]["word overlap (>= 0.99)"]["recall_supported"] == 100  # every word of claim 1 is there
    pairs = [
        EvidencePair("0", "Marie Curie was born in Warsaw.", ARTICLE[2], VERIFIED),
        EvidencePair("0", "Marie Curie was born in Warsaw.", ARTICLE[3], UNVERIFIABLE),
    ]
    climate = climate_fever_figures(pairs, ["lexical"], threshold=0.5)
    assert climate["pairs"] == 2 and climate["claims"] == 1
    assert set(climate["systems"]) == {checker_accuracy.LEXICAL, "word overlap (>= 0.50)"}
    assert set(climate["systems"][checker_accuracy.LEXICAL]["recall"]) == {VERIFIED, UNVERIFIABLE}


def test_an_unknown_benchmark_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        checker_accuracy.main(["--benchmarks", "wice,fever"])
    assert exit_.value.code == 2
    assert "choose from factcheck-bench, wice, climate-fever, speed" in capsys.readouterr().err
