"""The entailment workflow's shared rules (four isolated agents per item): its names for verdicts and
ratings, the auditor's acceptance rule, the final aggregation, and the fixed JSON shape of every output.

Shared because three places apply them: the checker service (the entailment checker strategy, and
each agent's rules), the gateway (entailment mode aggregates the stored agent outputs, never a
model) and the CLI (`factcheck entail --json`). The aggregation is computed, never asked of a model:

    final_verdict    = the auditor's downgrade when accepted, else the judge's verdict
    final_confidence = judge confidence + accepted adjustment, clamped to 0-100
    notes            = "Reliability rating does NOT determine entailment." always; "Supported only
                       within provided source." when reliability is LOW; then what happened to
                       failed or rejected agents.

The reliability rating is an input of the notes only: nothing here lets it touch a verdict or a
confidence (tests/test_entailment_isolation.py proves it).
"""

from __future__ import annotations

from typing import Any

from factcheck.v1 import entailment_pb2 as pb

SUPPORTED, CONTRADICTED, NOT_ENOUGH_INFO, UNCHANGED = "SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO", "UNCHANGED"
VERDICTS = (SUPPORTED, CONTRADICTED, NOT_ENOUGH_INFO)
RATINGS = ("HIGH", "MEDIUM", "LOW")
AGENT_NAMES = {  # the "agent" field of each output's JSON
    pb.ENTAILMENT_AGENT_EXTRACTOR: "EXTRACTOR",
    pb.ENTAILMENT_AGENT_RELIABILITY: "RELIABILITY",
    pb.ENTAILMENT_AGENT_JUDGE: "ENTAILMENT_JUDGE",
    pb.ENTAILMENT_AGENT_AUDITOR: "ADVERSARIAL_AUDITOR",
}
# Short names: stage types, CLI labels, log lines.
AGENT_KEYS = {
    pb.ENTAILMENT_AGENT_EXTRACTOR: "extractor",
    pb.ENTAILMENT_AGENT_RELIABILITY: "reliability",
    pb.ENTAILMENT_AGENT_JUDGE: "judge",
    pb.ENTAILMENT_AGENT_AUDITOR: "auditor",
}

# The first line of each agent's prompt: local engines and the fake model server tell the agents apart by it.
PROMPT_OPENINGS = {
    pb.ENTAILMENT_AGENT_EXTRACTOR: "You are the EXTRACTOR agent of a multi-agent entailment check.",
    pb.ENTAILMENT_AGENT_RELIABILITY: "You are the RELIABILITY agent of a multi-agent entailment check.",
    pb.ENTAILMENT_AGENT_JUDGE: "You are the ENTAILMENT JUDGE agent of a multi-agent entailment check.",
    pb.ENTAILMENT_AGENT_AUDITOR: "You are the ADVERSARIAL AUDITOR agent of a multi-agent entailment check.",
}

RELIABILITY_NOTE = "Reliability rating does NOT determine entailment."
LOW_RELIABILITY_NOTE = "Supported only within provided source."
EMPTY_SOURCE_CONFIDENCE = 20
ADJUSTMENT_MIN, ADJUSTMENT_MAX = -20, 0

_VERDICT_TO_PROTO = {
    SUPPORTED: pb.ENTAILMENT_VERDICT_SUPPORTED,
    CONTRADICTED: pb.ENTAILMENT_VERDICT_CONTRADICTED,
    NOT_ENOUGH_INFO: pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO,
}
_VERDICT_FROM_PROTO: dict[int, str] = {value: key for key, value in _VERDICT_TO_PROTO.items()}
_AUDITOR_TO_PROTO = {
    UNCHANGED: pb.AUDITOR_VERDICT_UNCHANGED,
    SUPPORTED: pb.AUDITOR_VERDICT_SUPPORTED,
    CONTRADICTED: pb.AUDITOR_VERDICT_CONTRADICTED,
    NOT_ENOUGH_INFO: pb.AUDITOR_VERDICT_NOT_ENOUGH_INFO,
}
_AUDITOR_FROM_PROTO: dict[int, str] = {value: key for key, value in _AUDITOR_TO_PROTO.items()}
_RATING_TO_PROTO = {
    "HIGH": pb.RELIABILITY_RATING_HIGH,
    "MEDIUM": pb.RELIABILITY_RATING_MEDIUM,
    "LOW": pb.RELIABILITY_RATING_LOW,
}
_RATING_FROM_PROTO: dict[int, str] = {value: key for key, value in _RATING_TO_PROTO.items()}


def quote(text: str) -> str:
    """Caller text in a prompt: every line prefixed with "> " (split at LF only, so it unquotes exactly)."""
    return "\n".join(f"> {line}" for line in text.split("\n"))


def unquote(lines: list[str]) -> str:
    """The inverse of `quote`, from its lines."""
    return "\n".join(line[2:] if line.startswith("> ") else line.removeprefix(">") for line in lines)


def verdict_proto(name: str) -> pb.EntailmentVerdict:
    return _VERDICT_TO_PROTO[name]


def verdict_name(value: int) -> str:
    return _VERDICT_FROM_PROTO.get(value, "")


def auditor_verdict_proto(name: str) -> pb.AuditorVerdict:
    return _AUDITOR_TO_PROTO[name]


def auditor_verdict_name(value: int) -> str:
    return _AUDITOR_FROM_PROTO.get(value, "")


def rating_proto(name: str) -> pb.ReliabilityRating:
    return _RATING_TO_PROTO[name]


def rating_name(value: int) -> str | None:
    return _RATING_FROM_PROTO.get(value)


# --- the auditor's rule ----------------------------------------------------------------------------


def audit_rejection(judge_verdict: str, final_verdict: str, adjustment: int, reasoning: list[str]) -> str | None:
    """Why an auditor output breaks the auditor's rules (None when it may be applied).

    The auditor may keep the verdict (UNCHANGED, or the judge's verdict repeated) or downgrade it to
    NOT ENOUGH INFO, never change it otherwise; its adjustment is -20..0 (it may not upgrade
    certainty); a downgrade must name the ambiguity.
    """
    if not ADJUSTMENT_MIN <= adjustment <= ADJUSTMENT_MAX:
        return f"confidence_adjustment {adjustment} is outside {ADJUSTMENT_MIN}..{ADJUSTMENT_MAX}"
    if final_verdict not in (UNCHANGED, judge_verdict, NOT_ENOUGH_INFO):
        return f"the auditor may only keep {judge_verdict} or downgrade it to {NOT_ENOUGH_INFO}, not make it {final_verdict}"
    downgrade = final_verdict == NOT_ENOUGH_INFO and judge_verdict != NOT_ENOUGH_INFO
    if downgrade and not any(reason.strip() for reason in reasoning):
        return "a downgrade must identify the ambiguity in auditor_reasoning"
    return None


def accepted_audit(judge_verdict: str, auditor: pb.AuditorOutput | None) -> tuple[str, int] | None:
    """(verdict, adjustment) the auditor's output contributes, or None when there is none to apply.

    The rule is checked again here, whatever the output says of itself: a stored or relayed output
    marked accepted that breaks it is still not applied.
    """
    if auditor is None or auditor.rejected:
        return None
    final = auditor_verdict_name(auditor.final_verdict)
    if not final or audit_rejection(
        judge_verdict, final, auditor.confidence_adjustment, list(auditor.auditor_reasoning)
    ):
        return None
    return (judge_verdict if final == UNCHANGED else final), auditor.confidence_adjustment


# --- aggregation -------------------------------------------------------------------------------------


def aggregate(
    claim: str,
    judge: pb.JudgeOutput,
    reliability: pb.ReliabilityOutput | None,
    auditor: pb.AuditorOutput | None,
    *,
    auditor_failure: str | None = None,
    reliability_failure: str | None = None,
) -> pb.EntailmentFinal:
    """The final aggregated output of one item whose judge answered."""
    judge_verdict = verdict_name(judge.verdict)
    notes = [RELIABILITY_NOTE]
    rating = reliability.reliability if reliability is not None else pb.RELIABILITY_RATING_UNSPECIFIED
    if rating == pb.RELIABILITY_RATING_LOW:
        notes.append(LOW_RELIABILITY_NOTE)
    if reliability is None:
        notes.append(f"Reliability assessment failed: {reliability_failure or 'no answer'}")
    notes += list(judge.enforced)
    applied = accepted_audit(judge_verdict, auditor)
    if auditor is None:
        notes.append(f"Auditor failed; the judge's verdict stands unaudited: {auditor_failure or 'no answer'}")
    elif applied is None:
        notes.append(f"Auditor output rejected, not applied: {auditor.rejection or 'it breaks the auditor rules'}")
    final_verdict, adjustment = applied if applied is not None else (judge_verdict, 0)
    return pb.EntailmentFinal(
        claim=claim,
        final_verdict=verdict_proto(final_verdict),
        final_confidence=min(max(judge.confidence + adjustment, 0), 100),
        entailment_confidence=judge.confidence,
        reliability_rating=rating,
        notes=notes,
    )


# --- the outputs' JSON ----------------------------------------------------------------------------------


def final_json(final: pb.EntailmentFinal) -> dict[str, Any]:
    """The FINAL AGGREGATED OUTPUT, exactly its fixed fields (reliability_rating null when unknown)."""
    return {
        "claim": final.claim,
        "final_verdict": verdict_name(final.final_verdict),
        "final_confidence": final.final_confidence,
        "entailment_confidence": final.entailment_confidence,
        "reliability_rating": rating_name(final.reliability_rating),
        "notes": list(final.notes),
    }


def final_from_json(data: dict[str, Any]) -> pb.EntailmentFinal:
    rating = data.get("reliability_rating")
    return pb.EntailmentFinal(
        claim=data.get("claim", ""),
        final_verdict=verdict_proto(data["final_verdict"]),
        final_confidence=int(data.get("final_confidence", 0)),
        entailment_confidence=int(data.get("entailment_confidence", 0)),
        reliability_rating=rating_proto(rating) if rating in RATINGS else pb.RELIABILITY_RATING_UNSPECIFIED,
        notes=list(data.get("notes", [])),
    )


def output_json(output: pb.EntailmentAgentOutput) -> dict[str, Any]:
    """One agent output in its fixed JSON schema (with its "agent"), plus what the server enforced
    (dropped_paraphrases, enforced, rejected/rejection) under their own keys."""
    kind = output.WhichOneof("output")
    if kind == "extractor":
        extractor = output.extractor
        return {
            "agent": "EXTRACTOR",
            "statements": [{"id": s.id, "text": s.text} for s in extractor.statements],
            "dropped_paraphrases": extractor.dropped_paraphrases,
        }
    if kind == "reliability":
        reliability = output.reliability
        return {
            "agent": "RELIABILITY",
            "source_type": reliability.source_type,
            "reliability": rating_name(reliability.reliability),
            "confidence": reliability.confidence,
        }
    if kind == "judge":
        judge = output.judge
        return {
            "agent": "ENTAILMENT_JUDGE",
            "verdict": verdict_name(judge.verdict),
            "confidence": judge.confidence,
            "reasoning": list(judge.reasoning),
            "enforced": list(judge.enforced),
        }
    if kind == "auditor":
        auditor = output.auditor
        data: dict[str, Any] = {
            "agent": "ADVERSARIAL_AUDITOR",
            "final_verdict": auditor_verdict_name(auditor.final_verdict),
            "confidence_adjustment": auditor.confidence_adjustment,
            "auditor_reasoning": list(auditor.auditor_reasoning),
            "rejected": auditor.rejected,
        }
        if auditor.rejected:
            data["rejection"] = auditor.rejection
        return data
    raise ValueError("empty agent output")


def output_from_json(data: dict[str, Any]) -> pb.EntailmentAgentOutput:
    """The inverse of `output_json` (stored rows back to protos)."""
    agent = data.get("agent")
    if agent == "EXTRACTOR":
        statements = [pb.ExtractedStatement(id=int(s["id"]), text=s["text"]) for s in data.get("statements", [])]
        return pb.EntailmentAgentOutput(
            extractor=pb.ExtractorOutput(
                statements=statements, dropped_paraphrases=int(data.get("dropped_paraphrases", 0))
            )
        )
    if agent == "RELIABILITY":
        return pb.EntailmentAgentOutput(
            reliability=pb.ReliabilityOutput(
                source_type=data.get("source_type", ""),
                reliability=rating_proto(data["reliability"]),
                confidence=int(data.get("confidence", 0)),
            )
        )
    if agent == "ENTAILMENT_JUDGE":
        return pb.EntailmentAgentOutput(
            judge=pb.JudgeOutput(
                verdict=verdict_proto(data["verdict"]),
                confidence=int(data.get("confidence", 0)),
                reasoning=list(data.get("reasoning", [])),
                enforced=list(data.get("enforced", [])),
            )
        )
    if agent == "ADVERSARIAL_AUDITOR":
        return pb.EntailmentAgentOutput(
            auditor=pb.AuditorOutput(
                final_verdict=auditor_verdict_proto(data["final_verdict"]),
                confidence_adjustment=int(data.get("confidence_adjustment", 0)),
                auditor_reasoning=list(data.get("auditor_reasoning", [])),
                rejected=bool(data.get("rejected", False)),
                rejection=data.get("rejection", ""),
            )
        )
    raise ValueError(f"unknown agent {agent!r}")


def claim_entailment_json(entry: pb.ClaimEntailment) -> dict[str, Any]:
    """One claim-passage item of the entailment checker strategy, as the verify row stores it."""
    data: dict[str, Any] = {"claimId": entry.claim_id, "passageId": entry.passage_id, "sourceType": entry.source_type}
    for name in ("extractor", "reliability", "judge", "auditor"):
        if entry.HasField(name):
            data[name] = output_json(pb.EntailmentAgentOutput(**{name: getattr(entry, name)}))
    if entry.HasField("final"):
        data["final"] = final_json(entry.final)
    if entry.HasField("error"):
        data["error"] = entry.error
    data["failures"] = [failure_json(f) for f in entry.failures]
    return data


def claim_entailment_from_json(data: dict[str, Any]) -> pb.ClaimEntailment:
    entry = pb.ClaimEntailment(
        claim_id=data.get("claimId", ""),
        passage_id=data.get("passageId", ""),
        source_type=data.get("sourceType", ""),
        failures=[failure_from_json(f) for f in data.get("failures", [])],
    )
    for name in ("extractor", "reliability", "judge", "auditor"):
        if name in data:
            getattr(entry, name).CopyFrom(getattr(output_from_json(data[name]), name))
    if "final" in data:
        entry.final.CopyFrom(final_from_json(data["final"]))
    if "error" in data:
        entry.error = data["error"]
    return entry


_AGENT_BY_KEY = {key: agent for agent, key in AGENT_KEYS.items()}


def failure_json(failure: pb.EntailmentAgentFailure) -> dict[str, Any]:
    return {"agent": AGENT_KEYS.get(failure.agent, ""), "model": failure.model, "message": failure.message}


def failure_from_json(data: dict[str, Any]) -> pb.EntailmentAgentFailure:
    return pb.EntailmentAgentFailure(
        agent=_AGENT_BY_KEY.get(data.get("agent", ""), pb.ENTAILMENT_AGENT_UNSPECIFIED),
        model=data.get("model", ""),
        message=data.get("message", ""),
    )
