"""`local/checker` answering the citation review call (`ReviewInputs`, services/checker/factcheck_checker/review.py), offline.

The inputs give each claim (its text read on one line, the pool spans it cites, and a numeric
claim's entity, "unknown" when the caller has none) and the evidence pool, its passages read
line by line.

Each claim is judged against every pool passage with the same judge as verification
(judges.py: the embedded entailment model by default, the lexical judge for
`local/checker-lexical`); then:
- a passage that states the claim (VERIFIED) better than the cited ones → REPLACE with it;
- the cited passage states it and another one states it about as well → ADD_ALTERNATE;
- the cited passage states or contradicts it → KEEP;
- nothing states it, but a passage contradicts it → REPLACE with that passage (its quote is the
  evidence against the claim), unless a cited one already contradicts it (KEEP);
- nothing states or contradicts it and something is cited → REMOVE.
Numeric claims get the QA question of factcheck/core/numeric_qa.py answered from the passage chosen
(`answer_from_text`), or from any pool passage when the chosen one does not state the figure.
Deterministic: the same inputs give the same answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from factcheck.core.numeric_qa import answer_from_text, locate_answer, question_for, verify_answers
from factcheck.models.inputs import ReviewInputs
from factcheck.text.numbers import main_figure
from factcheck_engines.judge import DISPUTED, VERIFIED, Judgement, PassageText, term_stems
from factcheck_engines.judges import ClaimJudge, default_judge
from factcheck_engines.reading import as_lines, one_line

# An alternate must state the claim nearly as surely as the best passage.
ALTERNATE_MARGIN = 0.05
# Chosen on Factcheck-Bench's train split (bench/citations.py reports the held-out test split): a passage
# "strongly" states a claim when the judge says VERIFIED and its quote holds STATES_COVERAGE of the claim's
# content words; a cited passage is replaced by a strong one that covers REPLACE_MARGIN more, and removed
# when its quote covers less than WEAK_COVERAGE and no passage states the claim strongly.
STATES_COVERAGE = 0.6
REPLACE_MARGIN = 0.1
WEAK_COVERAGE = 0.5


@dataclass
class _Claim:
    id: str
    text: str
    cited: list[str]
    entity: str | None = None


def quote_coverage(claim: str, quote: str) -> float:
    """The share of the claim's content words (stemmed) that the quote contains."""
    wanted = set(term_stems(claim))
    return len(wanted & set(term_stems(quote))) / len(wanted) if wanted else 0.0


def answer(inputs: ReviewInputs, judge_claim: ClaimJudge = default_judge) -> str:
    claims, passages = _read(inputs)
    blocks = [_review(claim, passages, judge_claim) for claim in claims]
    return "\n\n".join(blocks) + "\n"


def _read(inputs: ReviewInputs) -> tuple[list[_Claim], dict[str, PassageText]]:
    """The claims and the pool's passages by id (the first of a repeated id wins); a cited id that
    names no pool span is ignored."""
    claims = [
        _Claim(
            claim.id,
            one_line(claim.text),
            list(claim.cited),
            None if claim.entity is None else one_line(claim.entity) or "unknown",
        )
        for claim in inputs.claims
    ]
    passages: dict[str, PassageText] = {}
    for passage in inputs.pool:
        passages.setdefault(passage.id, PassageText(passage.id, as_lines(passage.text), passage.title))
    return claims, passages


def _review(claim: _Claim, passages: dict[str, PassageText], judge_claim: ClaimJudge) -> str:
    judged = {pid: judge_claim(claim.text, [p]) for pid, p in passages.items()}
    if claim.entity is not None:
        judged.update(_figure_statements(claim, passages, judged))
    coverage = {pid: quote_coverage(claim.text, j.quote or "") for pid, j in judged.items()}
    cited = [pid for pid in claim.cited if pid in judged]
    stating = sorted(
        (pid for pid, j in judged.items() if j.verdict == VERIFIED and j.quote), key=lambda p: -judged[p].score
    )
    # Passages that state the claim and whose quote carries most of it, best covered first.
    strong = sorted(
        (pid for pid in stating if coverage[pid] >= STATES_COVERAGE), key=lambda p: (-coverage[p], -judged[p].score)
    )
    against = sorted(
        (pid for pid, j in judged.items() if j.verdict == DISPUTED and j.quote), key=lambda p: -judged[p].score
    )
    cited_stating = [pid for pid in cited if pid in stating]
    decision, corrected, reasoning = "KEEP", None, ""
    if cited_stating:
        top = max(cited_stating, key=lambda p: (coverage[p], judged[p].score))
        better = [p for p in strong if p not in cited and coverage[p] >= coverage[top] + REPLACE_MARGIN]
        others = [p for p in strong if p not in cited and judged[p].score >= judged[top].score - ALTERNATE_MARGIN]
        if better:
            decision, corrected = "REPLACE", better[0]
            reasoning = (
                f"{better[0]} states more of the claim ({coverage[better[0]]:.0%} of its words) "
                f"than {top} ({coverage[top]:.0%})."
            )
        elif coverage[top] < WEAK_COVERAGE and not strong:
            decision = "REMOVE"
            reasoning = (
                f"{top}'s quote holds only {coverage[top]:.0%} of the claim's words and no passage states more of it."
            )
        elif others:
            decision, corrected = "ADD_ALTERNATE", others[0]
            reasoning = f"{top} states the claim and {others[0]} states it as well."
        else:
            reasoning = f"{top} states the claim."
    elif strong or stating:
        best = (strong or stating)[0]
        decision, corrected = "REPLACE", best
        reasoning = f"{best} states the claim" + (
            f"; {', '.join(cited)} does not." if cited else "; nothing was cited."
        )
    elif against:
        if any(pid in against for pid in cited):
            reasoning = "The cited passage contradicts the claim."
        else:
            decision, corrected = "REPLACE", against[0]
            reasoning = f"{against[0]} contradicts the claim; the citation should show that evidence."
    elif cited:
        decision = "REMOVE"
        reasoning = f"No passage of the pool states or contradicts the claim; {', '.join(cited)} does not support it."
    else:
        reasoning = "No passage of the pool states or contradicts the claim."
    lines = [f"REVIEW {claim.id}: {decision}", f"Original: [{cited[0]}]" if cited else "Original: none"]
    if corrected is not None:
        lines.append(f'Corrected: [{corrected}] "{_quote(judged[corrected])}"')
    else:
        lines.append("Corrected: none")
    lines.append(f"Reasoning: {reasoning}")
    if claim.entity is not None:
        lines += _question(claim, passages, corrected or (cited[0] if cited else None))
    return "\n".join(lines)


# A passage whose figure answers a numeric claim's QA question and matches it states the claim this surely.
FIGURE_MATCH_SCORE = 0.9


def _figure_statements(claim: _Claim, passages: dict[str, PassageText], judged: dict[str, Judgement]) -> dict:
    """Numeric claims: passages that state the claim's figure for its entity and year (numeric_qa) count as
    stating it, quoting the sentence with the figure, where the judge found nothing surer."""
    found = {}
    for pid, passage in passages.items():
        located = locate_answer(claim.text, claim.entity or "", passage.text)
        if located is None:
            continue
        figure = main_figure(claim.text)
        assert figure is not None  # (locate_answer answers only a claim with a figure)
        if not verify_answers("", figure.raw, located[0]).match:
            continue
        if judged[pid].verdict != VERIFIED or judged[pid].score < FIGURE_MATCH_SCORE:
            found[pid] = Judgement(VERIFIED, "MEDIUM", None, pid, located[1], FIGURE_MATCH_SCORE)
    return found


def _quote(judgement: Judgement) -> str:
    return " ".join((judgement.quote or "").split()).replace('"', "'")


def _question(claim: _Claim, passages: dict[str, PassageText], chosen: str | None) -> list[str]:
    figure = main_figure(claim.text)
    if figure is None:
        return []
    order = ([chosen] if chosen in passages else []) + [pid for pid in passages if pid != chosen]
    answer_text, source = None, None
    for pid in order:
        answer_text = answer_from_text(claim.text, claim.entity or "", passages[pid].text)
        if answer_text:
            source = pid
            break
    evidence = f'[{source}] "{answer_text}"' if answer_text else "not stated"
    return [
        f"QUESTION {claim.id}: {question_for(claim.entity or '', figure)}",
        f"Claim answer: {figure.raw}",
        f"Evidence answer: {evidence}",
    ]
