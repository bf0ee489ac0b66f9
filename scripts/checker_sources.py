"""The extra training sets of `scripts/train_checker.py` (the checker's combiner): where each comes
from, its licence, and how it becomes (claim, evidence, label) rows.

    python -m scripts.checker_sources --mirror DIR     # writes build/checker-data/*.jsonl

Each source is read from a git clone of its repository at the pinned commit (`--mirror DIR` holds
`owner+name/repo`); every prepared file's SHA-256 is checked against the one recorded in SOURCES,
so a rerun fits on exactly the same rows. Each file: exact-duplicate (claim, evidence) pairs
dropped, evidence of at most 120 words (longer rows skipped), shuffled with seed 0, at most 20,000
rows. Labels: SUPPORTED, REFUTED, NOT_SUPPORTED (not enough information, neutral, not attributable).

Never read here: the public evaluation sets (WiCE, CLIMATE-FEVER, LLM-AggreFact and its member sets,
the SummaC benchmark) and Factcheck-Bench's test split. Non-commercial licences were turned down
(SciFact, ANLI, AVeriTeC), as were sources without a licence (COVID-Fact, HealthVer, RTE).
"""

# ruff: noqa
# The preparation code is kept as it was reviewed against the upstream files.
from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

from scripts.nli_sources import Source, read_prepared

ROOT = Path(__file__).resolve().parent.parent
PREPARED = ROOT / "build" / "checker-data"
CAP = 20000
MAX_WORDS = 120
_MIRROR = ["/work/.mirror"]


SOURCES = (
    Source(
        "sufficient_facts",
        "SufficientFacts (FEVER / HoVer / VitaminC claims with full and reduced evidence), "
        "github.com/copenlu/sufficient_facts @ 1fbc36364f5639d294299784958599fda0978472",
        "MIT (the dataset card); text from Wikipedia, CC BY-SA 3.0",
        "d1a77f4a5b4290f9aa119118c571741d4c70cccda9b761d8f5bcf93f954e93f3",
    ),
    Source(
        "feverous_s_dev",
        "FEVEROUS sentence-evidence dev claims, as ProgramFC ships them, "
        "github.com/teacherpeterpan/ProgramFC @ 5957016c1556dc5a2a6ea92c7b1ab68d289f8911, datasets/FEVEROUS/claims/dev.json",
        "CC BY-SA 3.0 (FEVEROUS); ProgramFC code MIT",
        "eaea3b98567318fa1f47869209bf941486dc8476e45103400375ac0cb0c87458",
    ),
    Source(
        "check_covid",
        "Check-COVID (news claims against scientific abstracts), train and dev splits, "
        "github.com/posuer/Check-COVID @ 3ae70f8",
        "MIT (the repository's LICENSE)",
        "8e16b7941bb8ae863fc2be7d5dc73eac91ad19bc11cb3145b3eee4d26b0b213f",
    ),
    Source(
        "fever_symmetric",
        "FEVER Symmetric v0.1 and v0.2 (contrastive claim/evidence pairs), github.com/TalSchuster/FeverSymmetric @ fa25d17, "
        "less the pairs already in the entailment model's FEVER pairs",
        "CC BY-SA 3.0 (the repository's DATA_LICENSE)",
        "113fdc8043844e2cd20ee2c94f7941de13d8a61cab656879d5aa452f93668dee",
    ),
    Source(
        "vitaminc_sample",
        "A 400-pair sample of VitaminC, github.com/INK-USC/Lifelong-ICL @ 8b0d36b",
        "CC BY-SA 3.0 (VitaminC's DATA_LICENSE); host repository MIT",
        "5b85d5578accb0c5f372b439f0d95305ac90fcb4971085a4c35609a082ac25b1",
    ),
    Source(
        "scitail_test",
        "SciTail 1.0 test split, github.com/anthonywchen/generative-nli @ aad500326efe82814047e6ea3b90b5fd8969e36b, "
        "data/scitail/test.jsonl (copied unchanged from SciTailV1.1)",
        "Apache-2.0 (SciTail)",
        "777808469c286c4ef86d544c07c8aa165663fd61ec95e61d3df50ea19847e3ec",
    ),
    Source(
        "mnli_dev_matched",
        "MultiNLI 1.0 dev-matched, github.com/anthonywchen/generative-nli @ aad500326efe82814047e6ea3b90b5fd8969e36b, "
        "data/mnli/dev.jsonl (copied unchanged from multinli_1.0_dev_matched)",
        "OANC and CC BY 3.0 / CC BY-SA 3.0 / MIT, per genre (MultiNLI)",
        "dceee3f5ac19d2c5205fb8e7806420b3f9bba401a6652aaed3110a33e7ea708a",
    ),
)


def prepared_rows(name: str) -> list[dict]:
    """The prepared rows of one source, checked against the recorded SHA-256."""
    return read_prepared(PREPARED, SOURCES, name, "scripts.checker_sources")


# ---------------------------------------------------------------- helpers
def git_show(repo, commit, path):
    """Bytes of `path` at `commit` in /work/.mirror/<repo>/repo, decoded as UTF-8."""
    gitdir = f"{_MIRROR[0]}/{repo.replace('/', '+')}/repo"
    out = subprocess.run(["git", "-C", gitdir, "show", f"{commit}:{path}"], check=True, capture_output=True).stdout
    return out.decode("utf-8")


def n_words(s):
    return len(s.split())


def ws(s):
    return re.sub(r"\s+", " ", s).strip()


_PTB = {
    "-COLON-": ":",
    "-LRB-": "(",
    "-RRB-": ")",
    "-LSB-": "[",
    "-RSB-": "]",
    "-LCB-": "{",
    "-RCB-": "}",
    "``": '"',
    "''": '"',
}


def detok(s):
    """Light undo of FEVER/Wikipedia PTB tokenisation ("word ." -> "word.", -LRB- -> ()."""
    for k, v in _PTB.items():
        s = s.replace(k, v)
    s = ws(s)
    s = re.sub(r" ([.,;:!?%)\]}])", r"\1", s)
    s = re.sub(r"([(\[{]) ", r"\1", s)
    s = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", s)
    s = s.replace(" -- ", " – ")
    return s


def finish(name, rows):
    """Drop empty/too-long/duplicate rows, shuffle with seed 0, cap, write, return stats."""
    seen, kept = set(), []
    skipped_long = 0
    for r in rows:
        c, e = ws(r["claim"]), ws(r["evidence"])
        if not c or not e:
            continue
        if n_words(e) > MAX_WORDS:
            skipped_long += 1
            continue
        key = (c, e)
        if key in seen:
            continue
        seen.add(key)
        assert r["label"] in ("SUPPORTED", "REFUTED", "UNRELATED", "NOT_SUPPORTED"), r["label"]
        kept.append({"claim": c, "evidence": e, "label": r["label"], "source": name})
    random.Random(0).shuffle(kept)
    kept = kept[:CAP]
    path = f"{PREPARED}/{name}.jsonl"
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept).encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    counts: dict[str, int] = {}
    for r in kept:
        counts[r["label"]] = counts.get(r["label"], 0) + 1
    stats = {
        "file": path,
        "rows": len(kept),
        "labels": dict(sorted(counts.items())),
        "skipped_over_120_words": skipped_long,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    print(json.dumps(stats, ensure_ascii=False))
    return stats


# ------------------------------------------------- 1. FEVEROUS-S dev (ProgramFC)
PROGRAMFC = ("teacherpeterpan/ProgramFC", "5957016c1556dc5a2a6ea92c7b1ab68d289f8911")


def _unwiki(s):
    s = re.sub(r"\[\[[^\]|]*\|([^\]]*)\]\]", r"\1", s)  # [[Target|shown]] -> shown
    s = re.sub(r"\[\[([^\]]*)\]\]", lambda m: m.group(1).replace("_", " "), s)
    return ws(s)


def prepare_feverous_s_dev():
    """FEVEROUS dev claims whose gold evidence is sentences only (ProgramFC's
    'FEVEROUS-S'), with the gold sentences' text already filled in by ProgramFC.
    Evidence lines are 'Title<TAB>sentence'; grouped per page as 'Title: s1 s2'."""
    repo, commit = PROGRAMFC
    data = json.loads(git_show(repo, commit, "datasets/FEVEROUS/claims/dev.json"))
    lab = {"supports": "SUPPORTED", "refutes": "REFUTED"}
    rows = []
    for x in data:
        groups: dict = {}
        for line in x["evidence"].split("\n"):
            if not line.strip():
                continue
            title, _, sent = line.partition("\t")
            groups.setdefault(title.strip(), []).append(_unwiki(sent))
        ev = " ".join(f"{t}: {' '.join(s)}" for t, s in groups.items())
        rows.append({"claim": x["claim"], "evidence": ev, "label": lab[x["label"]]})
    return finish("feverous_s_dev", rows)


# ------------------------------------------------- 2. FEVER Symmetric
FEVERSYM = ("TalSchuster/FeverSymmetric", "fa25d17e73ea0694edc78133ec654b9f32f6db73")
COVIDFACT = ("asaakyan/covidfact", "ceeb613cde5a6c19dea4f2c165654e510ff52b10")


def _norm(s):
    return re.sub(r"[^a-z0-9]+", "", detok(s).lower())


def prepare_fever_symmetric():
    """FEVER Symmetric v0.1 (full + generated) and v0.2 (dev + test): one evidence
    sentence per claim, SUPPORTS/REFUTES, with synthetic contrastive counterparts.
    Pairs already present in the FEVER RTE dev pairs used earlier
    (asaakyan/covidfact RTE-Fever/processed/dev.raw.*) are dropped."""
    repo, commit = FEVERSYM
    files = [
        "symmetric_v0.1/fever_symmetric_full.jsonl",
        "symmetric_v0.1/fever_symmetric_generated.jsonl",
        "symmetric_v0.2/fever_symmetric_dev.jsonl",
        "symmetric_v0.2/fever_symmetric_test.jsonl",
    ]
    crepo, ccommit = COVIDFACT
    ev_used = git_show(crepo, ccommit, "RTE-Fever/processed/dev.raw.input0").split("\n")
    cl_used = git_show(crepo, ccommit, "RTE-Fever/processed/dev.raw.input1").split("\n")
    used = {(_norm(c), _norm(e)) for c, e in zip(cl_used, ev_used)}
    lab = {"SUPPORTS": "SUPPORTED", "REFUTES": "REFUTED"}
    rows, dropped = [], 0
    for f in files:
        for line in git_show(repo, commit, f).splitlines():
            if not line.strip():
                continue
            x = json.loads(line)
            ev = x.get("evidence_sentence", x.get("evidence"))
            if (_norm(x["claim"]), _norm(ev)) in used:
                dropped += 1
                continue
            rows.append(
                {"claim": detok(x["claim"]), "evidence": detok(ev), "label": lab[x.get("gold_label", x["label"])]}
            )
    print(f"fever_symmetric: dropped {dropped} pairs already in RTE-Fever dev", file=sys.stderr)
    return finish("fever_symmetric", rows)


# ------------------------------------------------- 3. SufficientFacts
SUFFICIENT = ("copenlu/sufficient_facts", "1fbc36364f5639d294299784958599fda0978472")


def prepare_sufficient_facts():
    """SufficientFacts (FEVER / HoVer / VitaminC parts).  Each record yields two pairs:
    (a) the ORIGINAL evidence (text_orig with the red span put back) with label_before,
    (b) the evidence with the span removed, labelled by annotators: 'NOT ENOUGH' ->
        NOT_SUPPORTED, 'ENOUGH -- IRRELEVANT/REPEATED' -> label_before."""
    repo, commit = SUFFICIENT
    lab = {"SUPPORTS": "SUPPORTED", "SUPPORTED": "SUPPORTED", "REFUTES": "REFUTED"}
    rows = []
    for part in ("fever", "hover", "vitaminc"):
        text = git_show(repo, commit, f"data/sufficient_facts/{part}_sufficient_facts.jsonl")
        for line in text.splitlines():
            if not line.strip():
                continue
            x = json.loads(line)
            before = lab[x["label_before"]]
            orig = re.sub(r"<span[^>]*>", "", x["text_orig"]).replace("</span>", "")
            orig = re.sub(r"\[\[([^\]]*)\]\]", r" \1: ", orig)
            orig = detok(re.sub(r"\s+:", ":", orig))
            rows.append({"claim": detok(x["claim"]), "evidence": orig, "label": before})
            reduced = " ".join(f"{t}: {s}" for t, s in x["evidence"])
            after = "NOT_SUPPORTED" if x["label_after"] == "NOT ENOUGH" else before
            rows.append({"claim": detok(x["claim"]), "evidence": detok(reduced), "label": after})
    return finish("sufficient_facts", rows)


# ------------------------------------------------- 4. BEGIN
BEGIN = ("google/BEGIN-dataset", "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5")


def prepare_begin():
    """BEGIN: generated knowledge-grounded dialogue responses judged against the
    knowledge snippet.  claim = response, evidence = knowledge.
    'Fully attributable' -> SUPPORTED, 'Not fully attributable' -> NOT_SUPPORTED,
    'Generic' -> skipped.  Knowledge > 120 words skipped (most CMU-DoG / TopicalChat)."""
    repo, commit = BEGIN
    files = [
        "wow/begin_dev_wow.tsv",
        "wow/begin_test_wow.tsv",
        "cmu-dog/begin_dev_cmu.tsv",
        "topicalchat/begin_dev_tc.tsv",
    ]
    lab = {"Fully attributable": "SUPPORTED", "Not fully attributable": "NOT_SUPPORTED"}
    rows = []
    for f in files:
        rd = csv.DictReader(io.StringIO(git_show(repo, commit, f)), delimiter="\t", quoting=csv.QUOTE_NONE)
        for x in rd:
            l = lab.get((x.get("begin_label") or "").strip())
            if l is None:
                continue
            rows.append({"claim": x["response"], "evidence": x["knowledge"], "label": l})
    return finish("begin", rows)


# ------------------------------------------------- 5. VitaminC sample (Lifelong-ICL)
LICL = ("INK-USC/Lifelong-ICL", "8b0d36b5258816f649d1e44fb14e7140d1015fbc")


def prepare_vitaminc_sample():
    """400 VitaminC pairs (5 x 60 from tals/vitaminc train + 100 from validation)
    that Lifelong-ICL committed in its first commit (later moved to a submodule).
    supports -> SUPPORTED, refutes -> REFUTED, not enough info -> NOT_SUPPORTED."""
    repo, commit = LICL
    lab = {"supports": "SUPPORTED", "refutes": "REFUTED", "not enough info": "NOT_SUPPORTED"}
    rows = []
    for f in ["test", "train_0", "train_1", "train_2", "train_3", "train_4"]:
        for line in git_show(repo, commit, f"data/vitaminc/{f}.jsonl").splitlines():
            if line.strip():
                x = json.loads(line)
                rows.append({"claim": detok(x["claim"]), "evidence": detok(x["evidence"]), "label": lab[x["label"]]})
    return finish("vitaminc_sample", rows)


# ------------------------------------------------- 6. Check-COVID (train + dev)
CHECKCOVID = ("posuer/Check-COVID", "3ae70f8cac4df13a3ce56878e20d8e76790e422d")


def prepare_check_covid():
    """Check-COVID train + dev (composed + extracted news claims); the test split is
    left out on purpose so it can serve as a held-out check.  Evidence = the annotated
    rationale sentences (evidence_set sent_index, PRIMARY and SUPPLEMENTARY, in abstract
    order) of the linked CORD-19 abstract in corpus.json -- i.e. the long abstract is
    trimmed to the part the data marks as relevant.  For NOTENOUGHINFO the annotators
    also marked a related-but-insufficient sentence, which is used the same way.
    SUPPORT -> SUPPORTED, REFUTE -> REFUTED, NOTENOUGHINFO -> NOT_SUPPORTED."""
    repo, commit = CHECKCOVID
    corpus = {}
    for line in git_show(repo, commit, "Check-COVID/corpus.json").splitlines():
        if line.strip():
            d = json.loads(line)
            corpus[d["cord_id"]] = d["abstract"]
    lab = {"SUPPORT": "SUPPORTED", "REFUTE": "REFUTED", "NOTENOUGHINFO": "NOT_SUPPORTED"}
    rows = []
    for f in [
        "Check-COVID/train/covidCheck_train_composed+extracted.json",
        "Check-COVID/dev/covidCheck_dev_composed+extracted.json",
    ]:
        for line in git_show(repo, commit, f).splitlines():
            if not line.strip():
                continue
            x = json.loads(line)
            abstract = corpus[x["cord_id"]]
            idx = sorted({e["sent_index"] for e in x["evidence_set"]})
            ev = " ".join(abstract[i] for i in idx)
            ev = re.sub(r"^\s*(Abstract|ABSTRACT)\s+", "", ev)
            rows.append({"claim": x["claim"], "evidence": ev, "label": lab[x["label"]]})
    return finish("check_covid", rows)


# ------------------------------------------------- 7/8. MNLI dev-matched, SciTail test
GENNLI = ("anthonywchen/generative-nli", "aad500326efe82814047e6ea3b90b5fd8969e36b")


def _gennli(path, name, lab):
    repo, commit = GENNLI
    rows = []
    for line in git_show(repo, commit, path).splitlines():
        if line.strip():
            x = json.loads(line)
            rows.append({"claim": x["hypothesis"], "evidence": x["premise"], "label": lab[x["label"]]})
    return finish(name, rows)


def prepare_mnli_dev_matched():
    """MultiNLI 1.0 dev-matched (9,815 pairs with a gold label; the hosting repo's
    process_raw_data.py copied sentence1/sentence2/gold_label from
    multinli_1.0_dev_matched.jsonl).  claim = hypothesis, evidence = premise.
    entailment -> SUPPORTED, contradiction -> REFUTED, neutral -> NOT_SUPPORTED."""
    return _gennli(
        "data/mnli/dev.jsonl",
        "mnli_dev_matched",
        {"entailment": "SUPPORTED", "contradiction": "REFUTED", "neutral": "NOT_SUPPORTED"},
    )


def prepare_scitail_test():
    """SciTail 1.0 test split (tsv_format, 2,126 pairs).  claim = hypothesis (a
    science statement), evidence = premise (a retrieved web sentence).
    entails -> SUPPORTED, neutral (stored as not_entailment) -> NOT_SUPPORTED."""
    return _gennli(
        "data/scitail/test.jsonl", "scitail_test", {"entailment": "SUPPORTED", "not_entailment": "NOT_SUPPORTED"}
    )


PREPARE = {
    "feverous_s_dev": prepare_feverous_s_dev,
    "fever_symmetric": prepare_fever_symmetric,
    "sufficient_facts": prepare_sufficient_facts,
    "vitaminc_sample": prepare_vitaminc_sample,
    "check_covid": prepare_check_covid,
    "mnli_dev_matched": prepare_mnli_dev_matched,
    "scitail_test": prepare_scitail_test,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", type=Path, required=True, help="folder of git clones, owner+name/repo")
    args = parser.parse_args(argv)
    _MIRROR[0] = str(args.mirror)
    PREPARED.mkdir(parents=True, exist_ok=True)
    for source in SOURCES:
        stats = PREPARE[source.name]()
        status = "matches" if stats["sha256"] == source.sha256 else "NEW (record it in SOURCES)"
        print(f"{source.name}: {stats['rows']} rows, sha256 {stats['sha256']} {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
