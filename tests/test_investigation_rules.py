"""The verification loop's decision rules, one test each: flags and the
queue, query variants, authority and independence, re-classification, confidence, batches."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from factcheck.core.domain import ClaimConsensus, ClaimVerification, ExtractedClaim
from factcheck_gateway.modes.fact_check.investigate import authority, decide, flags, queries
from factcheck_gateway.modes.fact_check.investigate.decide import Assessed
from factcheck_gateway.modes.fact_check.investigate.loop import (
    ClaimInvestigation,
    InvestigationFailed,
    Investigator,
    run_batches,
)
from factcheck_gateway.search.cache import SearchCache
from factcheck_gateway.search.provider import SearchPage, SearchResult


def claim(cid: str, text: str) -> ExtractedClaim:
    return ExtractedClaim(id=cid, claim=text, context=text, type="STATISTIC")


def consensus(cid: str, text: str, *votes: str, verdict: str | None = None, rate: float | None = None):
    verifications = tuple(ClaimVerification(cid, v, "", None, "HIGH", f"m{i}") for i, v in enumerate(votes))
    top = verdict or max(set(votes), key=votes.count)
    agreement = rate if rate is not None else 100 * votes.count(top) / len(votes)
    return ClaimConsensus(cid, text, text, "STATISTIC", verifications, top, "HIGH", agreement)


# --- part 1: flags, candidates, impact, fixability, queue ------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Officials say the Golden Gate Bridge will close in 2025.", {flags.PHANTOM}),
        ("According to sources, Acme Corp lost 3 contracts in 2021.", {flags.PHANTOM}),
        ("Dozens of Acme workers were laid off.", {flags.FOG}),
        ("Acme might double its revenue in 2025.", {flags.FOG}),
        ("This is the best city in the world.", {flags.NOISE}),
        ("The Eiffel Tower is 330 metres tall.", set()),
    ],
)
def test_text_flags_name_phantom_fog_and_noise(text, expected):
    assert flags.text_flags(text) == expected


def test_anomaly_from_a_split_vote_contradicting_claims_and_self_contradicting_evidence():
    claims = [
        claim("c1", "Acme Corp employs 5,000 people in Ohio."),
        claim("c2", "Acme Corp employs 7,000 people in Ohio."),
        claim("c3", "The Louvre opened to the public in 1793."),
        claim("c4", "The river Thames is 346 km long."),
    ]
    votes = [
        consensus("c1", claims[0].claim, "VERIFIED", "VERIFIED"),
        consensus("c2", claims[1].claim, "VERIFIED", "VERIFIED"),
        consensus("c3", claims[2].claim, "VERIFIED", "DISPUTED", verdict="VERIFIED", rate=50),
        consensus("c4", claims[3].claim, "VERIFIED", "VERIFIED"),
    ]
    passages = {"c4": ["The river Thames is 346 km long.", "The river Thames is about 215 miles long, or 356 km."]}
    queue = {c.claim.id: c for c in flags.select_candidates(claims, votes, passages, "Fact-check this")}
    assert all(flags.ANOMALY in queue[cid].flags for cid in ("c1", "c2", "c3", "c4"))
    assert queue["c1"].contradicts == ("c2",)


def test_candidates_are_dubious_votes_and_flagged_claims():
    claims = [
        claim("c1", "The Eiffel Tower is 330 metres tall."),  # unanimous, unflagged
        claim("c2", "The Eiffel Tower was completed in 1889."),  # unverifiable vote
        claim("c3", "The Louvre may have opened in 1793."),  # unanimous, but FOG (a hedge)
        claim("c4", "Acme Corp employs 5,000 people."),  # split vote 2:1 (not unanimous)
    ]
    votes = [
        consensus("c1", claims[0].claim, "VERIFIED", "VERIFIED"),
        consensus("c2", claims[1].claim, "UNVERIFIABLE", "UNVERIFIABLE"),
        consensus("c3", claims[2].claim, "VERIFIED", "VERIFIED"),
        consensus("c4", claims[3].claim, "VERIFIED", "VERIFIED", "UNVERIFIABLE"),
    ]
    ids = [c.claim.id for c in flags.select_candidates(claims, votes, {}, "q")]
    assert sorted(ids) == ["c2", "c3", "c4"]


def test_noise_alone_is_never_investigated_but_noise_with_another_flag_is():
    assert flags.text_flags("This is the best city.") == {flags.NOISE}
    assert flags.text_flags("It seems nice.") == {flags.NOISE, flags.FOG}
    claims = [claim("n", "This is the best city."), claim("f", "It seems nice.")]
    votes = [consensus("n", claims[0].claim, "UNVERIFIABLE"), consensus("f", claims[1].claim, "UNVERIFIABLE")]
    queue = flags.select_candidates(claims, votes, {}, "q")
    assert [c.claim.id for c in queue] == ["f"]
    assert queue[0].fixability == flags.FIXABILITY[flags.FOG]


def test_impact_tier_is_critical_for_the_question_or_a_contradiction():
    assert flags.impact_tier("Acme Corp revenue was 5 million", set(), "What was Acme Corp revenue?") == flags.CRITICAL
    assert flags.impact_tier("The Louvre opened in 1793", {flags.ANOMALY}, "unrelated") == flags.CRITICAL
    assert flags.impact_tier("The Louvre opened in 1793", {flags.FOG}, "unrelated") == flags.LESS_CRITICAL


def test_queue_is_ordered_by_impact_times_fixability():
    claims = [
        claim("fog", "Dozens of Acme workers were laid off."),  # LESS_CRITICAL × 0.5
        claim("phantom", "Officials say Acme Corp cut 300 jobs in 2024."),  # LESS × (0.8 + 0.1)
        claim("anomaly", "The Louvre opened in 1793."),  # CRITICAL × (0.7 + 0.1)
    ]
    votes = [
        consensus("fog", claims[0].claim, "UNVERIFIABLE"),
        consensus("phantom", claims[1].claim, "UNVERIFIABLE"),
        consensus("anomaly", claims[2].claim, "VERIFIED", "DISPUTED", verdict="VERIFIED", rate=50),
    ]
    queue = flags.select_candidates(claims, votes, {}, "unrelated question")
    assert [c.claim.id for c in queue] == ["anomaly", "phantom", "fog"]
    assert [c.priority for c in queue] == [0.8, 0.45, 0.25]


# --- part 2: query variants -------------------------------------------------------------------------


def test_three_variants_in_order_entity_exact_phrase_broader():
    variants = queries.query_variants("The Eiffel Tower is 330 metres tall and was completed in 1889.", ())
    assert [v.variant for v in variants] == ["entity", "exact_phrase", "broader"]
    assert "Eiffel" in variants[0].query and "330" in variants[0].query and "1889" in variants[0].query
    assert variants[1].query.startswith('"') and variants[1].query.endswith('"')
    assert "330" not in variants[2].query and "Eiffel" in variants[2].query


def test_phantom_claims_get_a_source_chain_query_without_the_vague_attribution():
    [first, exact, _] = queries.query_variants(
        "Officials say the Golden Gate Bridge will reopen in 2024.", (flags.PHANTOM,)
    )
    assert first.variant == "source_chain"
    assert "spokesperson" in first.query and "statement" in first.query and "Officials" not in first.query
    assert "Officials" not in exact.query


def test_anomaly_claims_get_a_compound_time_authority_specificity_query():
    [first, _, _] = queries.query_variants("Paris had 2.1 million inhabitants in 2015.", (flags.ANOMALY,))
    assert first.variant == "compound"
    assert "2015" in first.query and "2.1" in first.query and "official" in first.query


# --- part 4: authority and independence ------------------------------------------------------------


@pytest.mark.parametrize(
    "url, expected",
    [
        ("https://apnews.com/article/x", 0.9),
        ("https://www.reuters.com/world/x", 0.9),
        ("https://www.census.gov/data", 0.85),
        ("https://www.ox.ac.uk/news", 0.85),
        ("https://web.mit.edu/x", 0.85),
        ("https://www.wikipedia.org/wiki/x", 0.7),
        ("https://www.nytimes.com/2024/x", 0.5),
        ("https://twitter.com/someone/status/1", 0.3),
    ],
)
def test_domain_authority_table(url, expected):
    assert authority.authority_of(url, None) == expected


def test_a_documents_own_authority_and_the_operators_table_win():
    assert authority.authority_of("https://twitter.com/x", 0.95) == 0.95
    assert authority.authority_of("https://blog.example.com/x", None, {"example.com": 0.88}) == 0.88


def test_one_owner_and_one_syndicated_story_count_once():
    story = "The Paris climate agreement was signed by 195 countries in a ceremony in New York last year."
    items = [
        ("nbc-owner", 0.5, "Different text about the agreement signed in New York by many nations."),
        ("nbc-owner", 0.5, "Another outlet of the same owner says 195 countries signed."),
        ("paper-a", 0.5, story),
        ("paper-b", 0.5, story + " More at 11."),
    ]
    assert authority.independent_groups(items) == [0, 2]
    assert authority.owner_of("msnbc.com", "x") == authority.owner_of("cnbc.com", "y")


# --- part 5: re-classification and confidence -------------------------------------------------------


def decided(results, base: float, *, exhausted: bool) -> decide.Decision:
    """decide.decide's decision, where the test expects one."""
    decision = decide.decide(results, base, exhausted=exhausted)
    assert decision is not None
    return decision


def item(i, stance, authority_value, owner=None, temporal=False, published=None, text=None):
    return Assessed(
        f"E{i}",
        stance,
        temporal,
        authority_value,
        owner or f"owner{i}",
        text or f"distinct text number {i} " * 3,
        f"Source {i}",
        published,
    )


def test_confirmed_by_one_source_of_authority_at_least_085():
    decision = decided([item(1, "SUPPORTS", 0.85)], 0.3, exhausted=False)
    assert decision.status == decide.CONFIRMED and decision.rule == decide.RULE_ONE_HIGH


def test_confirmed_by_two_independent_lower_sources_but_not_by_one():
    assert decide.decide([item(1, "SUPPORTS", 0.5)], 0.3, exhausted=False) is None
    decision = decided([item(1, "SUPPORTS", 0.5), item(2, "SUPPORTS", 0.3)], 0.3, exhausted=False)
    assert decision.status == decide.CONFIRMED and decision.rule == decide.RULE_INDEPENDENT


def test_two_copies_of_one_story_or_one_owner_do_not_confirm():
    same_owner = [item(1, "SUPPORTS", 0.5, owner="x"), item(2, "SUPPORTS", 0.5, owner="x")]
    assert decide.decide(same_owner, 0.3, exhausted=False) is None
    copies = [item(1, "SUPPORTS", 0.5, text="one story " * 10), item(2, "SUPPORTS", 0.5, text="one story " * 10)]
    assert decide.decide(copies, 0.3, exhausted=False) is None


def test_refuted_only_when_refuting_evidence_meets_the_same_bar():
    assert decide.decide([item(1, "REFUTES", 0.7)], 0.3, exhausted=False) is None
    decision = decided([item(1, "REFUTES", 0.9)], 0.3, exhausted=False)
    assert decision.status == decide.REFUTED


def test_superseded_when_the_refutation_is_temporal_and_later_than_the_support():
    evidence = [
        item(1, "SUPPORTS", 0.5, published="2016-01-10"),
        item(2, "REFUTES", 0.85, temporal=True, published="2024-02-01"),
    ]
    assert decided(evidence, 0.3, exhausted=False).status == decide.SUPERSEDED


def test_an_undated_or_earlier_temporal_refutation_is_refuted():
    undated = [item(1, "REFUTES", 0.9, temporal=True)]
    assert decided(undated, 0.3, exhausted=False).status == decide.REFUTED
    earlier = [
        item(1, "SUPPORTS", 0.5, published="2024-01-01"),
        item(2, "REFUTES", 0.9, temporal=True, published="2020-01-01"),
    ]
    assert decided(earlier, 0.3, exhausted=False).status == decide.REFUTED


def test_mixed_temporal_and_factual_refutations_default_to_refuted():
    evidence = [
        item(1, "REFUTES", 0.5, temporal=True, published="2024-01-01"),
        item(2, "REFUTES", 0.5, temporal=False, published="2024-01-02"),
    ]
    assert decided(evidence, 0.3, exhausted=False).status == decide.REFUTED


def test_both_sides_meeting_the_bar_go_to_the_weightier_and_a_tie_is_unverifiable():
    weightier = [item(1, "SUPPORTS", 0.9), item(2, "SUPPORTS", 0.5), item(3, "REFUTES", 0.85)]
    assert decided(weightier, 0.3, exhausted=False).status == decide.CONFIRMED
    tie = [item(1, "SUPPORTS", 0.9), item(2, "REFUTES", 0.9)]
    assert decided(tie, 0.3, exhausted=False).status == decide.UNVERIFIABLE


def test_verification_exhausted_after_the_last_variant():
    assert decide.decide([item(1, "IRRELEVANT", 0.9)], 0.3, exhausted=False) is None
    decision = decided([item(1, "IRRELEVANT", 0.9)], 0.3, exhausted=True)
    assert decision.status == decide.UNVERIFIABLE and decision.rule == decide.EXHAUSTED


def test_graduated_confidence_boosts_with_breakdown_capped_at_one():
    decision = decided(
        [item(1, "SUPPORTS", 0.9), item(2, "SUPPORTS", 0.5), item(3, "SUPPORTS", 0.3)], 0.4, exhausted=False
    )
    assert [b.boost for b in decision.breakdown] == [0.3, 0.2, 0.1]
    assert decision.confidence == pytest.approx(1.0)
    many = decided([item(i, "SUPPORTS", 0.9) for i in range(5)], 0.5, exhausted=False)
    assert many.confidence == 1.0 and len(many.breakdown) == 5
    assert decide.base_confidence("HIGH") == 0.5 and decide.base_confidence("LOW") == 0.3


# --- part 3 and 6: cache, batches, retries ------------------------------------------------------------


class CountingProvider:
    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    async def search(self, query: str, limit: int) -> SearchPage:
        self.calls += 1
        await asyncio.sleep(0.01)
        return SearchPage((SearchResult(key=query, title=query, url="", text=query, provider=self.name),))


async def test_search_results_are_cached_per_run_and_query():
    provider, cache = CountingProvider(), SearchCache(asyncio.Semaphore(2))
    answers = await asyncio.gather(*(cache.search(provider, "same query", 5) for _ in range(4)))
    await cache.search(provider, "another", 5)
    assert provider.calls == 2 and cache.calls == 2 and cache.hits == 3
    assert all(a == answers[0] for a in answers)


class ScriptedInvestigator:
    """Stands in for Investigator: records batches and concurrency; fails the named claims."""

    def __init__(self, failing: dict[str, int]) -> None:
        self.failing = dict(failing)
        self.started: list[tuple[int, str]] = []
        self.running = 0
        self.most = 0

    async def investigate(self, candidate, batch, attempts):
        self.started.append((batch, candidate.claim.id))
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0.01)
            if self.failing.get(candidate.claim.id, 0) > 0:
                self.failing[candidate.claim.id] -= 1
                raise InvestigationFailed("provider down")
            return ClaimInvestigation(candidate, batch=batch, attempts=attempts)
        finally:
            self.running -= 1


def candidates(n: int) -> list[flags.Candidate]:
    return [
        flags.Candidate(claim(f"c{i}", f"claim {i}"), (), flags.LESS_CRITICAL, 0.5, 0.25, "UNVERIFIABLE", "LOW", 0, i)
        for i in range(n)
    ]


async def test_batches_run_in_priority_order_at_most_batch_size_at_once():
    scripted, resolved = ScriptedInvestigator({}), []

    async def on_resolved(work):
        resolved.append(work.candidate.claim.id)

    # (the casts: a stand-in with the one method run_batches calls)
    done, batches = await run_batches(cast(Investigator, scripted), candidates(7), 3, on_resolved)
    assert batches == 3 and scripted.most == 3
    assert [cid for _, cid in scripted.started] == [f"c{i}" for i in range(7)]
    assert [b for b, _ in scripted.started] == [1, 1, 1, 2, 2, 2, 3]
    assert sorted(resolved) == sorted(f"c{i}" for i in range(7))


async def test_a_failed_claim_is_retried_once_in_a_later_batch_then_unverifiable():
    scripted = ScriptedInvestigator({"c0": 1, "c1": 2})

    async def on_resolved(work):
        pass

    done, batches = await run_batches(cast(Investigator, scripted), candidates(2), 2, on_resolved)
    by_id = {w.candidate.claim.id: w for w in done}
    assert [b for b, cid in scripted.started if cid == "c0"] == [1, 2]
    assert by_id["c0"].failure is None and by_id["c0"].attempts == 2
    assert (
        by_id["c1"].decision is not None
        and by_id["c1"].decision.status == decide.UNVERIFIABLE
        and by_id["c1"].failure == "provider down"
    )
    assert batches == 2
