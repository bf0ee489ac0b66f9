"""`factcheck claims`: the stored claims of runs with citations (ClaimsService), listed or shown one by one."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

import factcheck_cli.ids as ids
import factcheck_cli.render as render
from factcheck.text.text_safety import excerpt
from factcheck.text.wording import counted
from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2
from factcheck_cli.client import (
    EXIT_OK,
    EXIT_USAGE,
    MAX_PAGE_SIZE,
    UNARY_TIMEOUT_S,
    Gateway,
    add_page_options,
    channel_command,
    next_page_command,
    run_id,
)
from factcheck_cli.tables import Column, add_wide_option, print_table
from factcheck_cli.view import local_time

TIERS = {
    "supported": citations_pb2.SUPPORT_TIER_SUPPORTED,
    "partial": citations_pb2.SUPPORT_TIER_PARTIAL,
    "unsupported": citations_pb2.SUPPORT_TIER_UNSUPPORTED,
    "contradicted": citations_pb2.SUPPORT_TIER_CONTRADICTED,
}
VERDICTS = {
    "verified": common_pb2.VERDICT_VERIFIED,
    "disputed": common_pb2.VERDICT_DISPUTED,
    "unverifiable": common_pb2.VERDICT_UNVERIFIABLE,
}
TYPES = {"general": citations_pb2.CITATION_CLAIM_TYPE_GENERAL, "numeric": citations_pb2.CITATION_CLAIM_TYPE_NUMERIC}


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "claims",
        help="list the stored claims of runs checked with --citations, or show one",
        description=(
            "Claims of runs with claim-level citations, newest first, across runs (filters combine), "
            "or one claim with its evidence spans, citations, corrections and numeric detail."
        ),
    )
    parser.add_argument(
        "claim_id", nargs="?", help="show this claim in full instead of listing (its id, or the start of it)"
    )
    parser.add_argument("--run", dest="message_id", help="only this run's claims (its message id, or the start of it)")
    parser.add_argument("--support", choices=sorted(TIERS), help="only claims with this four-tier support")
    parser.add_argument("--verdict", choices=sorted(VERDICTS), help="only claims with this spec verdict")
    parser.add_argument("--type", dest="claim_type", choices=sorted(TYPES), help="general or numeric claims")
    parser.add_argument("--warning", choices=["yes", "no"], help="only claims of runs whose summary warned (or not)")
    parser.add_argument("--source", dest="source_id", help="only claims citing this source id")
    parser.add_argument("--since", help="only claims stored at or after this ISO date-time (UTC if no offset)")
    parser.add_argument("--until", help="only claims stored before this ISO date-time")
    add_page_options(parser, "claims")
    add_wide_option(parser)
    parser.add_argument("--json", action="store_true", help="print the response as one JSON object")
    parser.set_defaults(run=channel_command(run_claims))


def _timestamp(text: str | None) -> Timestamp | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    stamp = Timestamp()
    stamp.FromDatetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))
    return stamp


def list_request(args: argparse.Namespace) -> citations_pb2.ListClaimsRequest:
    request = citations_pb2.ListClaimsRequest(page_size=args.page_size, page_token=args.page_token)
    if args.message_id:
        request.message_id = args.message_id
    if args.support:
        request.support = TIERS[args.support]
    if args.verdict:
        request.spec_verdict = VERDICTS[args.verdict]
    if args.claim_type:
        request.claim_type = TYPES[args.claim_type]
    if args.warning:
        request.warning = args.warning == "yes"
    if args.source_id:
        request.source_id = args.source_id
    for name, value in (("created_after", args.since), ("created_before", args.until)):
        if (stamp := _timestamp(value)) is not None:
            getattr(request, name).CopyFrom(stamp)
    return request


def run_claims(args: argparse.Namespace, channel) -> int:
    stub = citations_pb2_grpc.ClaimsServiceStub(channel)
    if args.claim_id:
        claim_id = ids.expand(args.claim_id, lambda token: _claim_page(stub, token), "claim")
        claim = stub.GetClaim(citations_pb2.GetClaimRequest(claim_id=claim_id), timeout=UNARY_TIMEOUT_S).claim
        print(render.proto_json(claim) if args.json else describe(claim))
        return EXIT_OK
    try:
        request = list_request(args)
    except ValueError as error:
        print(f"factcheck claims: --since/--until must be ISO date-times ({error})", file=sys.stderr)
        return EXIT_USAGE
    if request.HasField("message_id"):
        request.message_id = run_id(Gateway(channel), request.message_id)
    response = stub.ListClaims(request, timeout=UNARY_TIMEOUT_S)
    if args.json:
        print(render.proto_json(response))
        return EXIT_OK
    console = render.make_console()
    if not response.claims:
        console.print("No claims." if not args.page_token else "No more claims.")
    else:
        print_table(console, CLAIM_COLUMNS, response.claims, wide=args.wide)
    if response.next_page_token:
        hint = next_page_command("factcheck claims", response.next_page_token, args)
        console.print(hint.append(" (with the same filters)"), soft_wrap=True)
    return EXIT_OK


def _claim_page(stub: citations_pb2_grpc.ClaimsServiceStub, token: str) -> tuple[list[str], str]:
    request = citations_pb2.ListClaimsRequest(page_size=MAX_PAGE_SIZE, page_token=token)
    listed = stub.ListClaims(request, timeout=UNARY_TIMEOUT_S)
    return [claim.id for claim in listed.claims], listed.next_page_token


def tier_name(claim: citations_pb2.ClaimRecord) -> str:
    if claim.abstained:
        return "abstained"
    return citations_pb2.SupportTier.Name(claim.support).removeprefix("SUPPORT_TIER_").lower()


def verdict_name(claim: citations_pb2.ClaimRecord) -> str:
    return common_pb2.Verdict.Name(claim.spec_verdict).removeprefix("VERDICT_")


def level_name(claim: citations_pb2.ClaimRecord) -> str:
    return citations_pb2.ConfidenceLevel.Name(claim.confidence_level).removeprefix("CONFIDENCE_LEVEL_").lower()


def number_text(claim: citations_pb2.ClaimRecord) -> str:
    if not claim.HasField("numeric_detail"):
        return ""
    detail = claim.numeric_detail
    qa = detail.qa_verification
    mark = "" if not qa else (" ✓" if any(q.match for q in qa) else " ✗")
    return f"{excerpt(detail.number.raw_value, 20)}{mark}"


CLAIM_COLUMNS = [
    Column("id", lambda c: c.id, id=True),
    Column("run", lambda c: c.message_id, id=True),
    Column("key", lambda c: c.claim_key, wide_only=True),
    Column("claim", lambda c: c.claim_text, flexible=True),
    Column("support", tier_name),
    Column("verdict", verdict_name),
    Column("level", level_name),
    Column("number", number_text),
    Column("audit", lambda c: counted(len(c.audit_flags), "flag") if c.audit_flags else ""),
    Column("created", lambda c: local_time(c.created_at), wide_only=True),
]


def describe(claim: citations_pb2.ClaimRecord) -> str:
    """One claim in plain text: its verdicts, spans, corrections and numeric comparison."""
    lines = [
        f"{claim.claim_key} of run {claim.message_id}: {excerpt(claim.claim_text, 300)}",
        f"support: {tier_name(claim)}   spec verdict: {verdict_name(claim)}   level: {level_name(claim)}",
        f"reasoning: {excerpt(claim.verification_reasoning, 300)}",
    ]
    for link in claim.citations:
        span = link.evidence_span
        role = "primary" if link.is_primary else "alternate"
        lines.append(
            f"  [{role}] {excerpt(span.source_title or span.source_id, 60)} {excerpt(span.source_url, 80)} "
            f'chars {span.start_offset}-{span.end_offset}: "{excerpt(span.quote_text, 200)}"'
        )
    for correction in claim.corrections:
        kind = citations_pb2.CorrectionType.Name(correction.correction_type).removeprefix("CORRECTION_TYPE_").lower()
        lines.append(f"  correction {kind}: {excerpt(correction.reasoning, 200)}")
    for flag in claim.audit_flags:  # what the gateway's audit found in a checker's answer
        lines.append(f"  audit: {excerpt(flag.checker_model, 60)}: {excerpt(flag.detail, 200)}")
    if claim.HasField("numeric_detail"):
        detail = claim.numeric_detail
        lines.append(
            f"  number: {excerpt(detail.number.raw_value, 40)} = {detail.number.value:g} {detail.number.unit} "
            f"({excerpt(detail.entity_reference, 80)})"
        )
        for qa in detail.qa_verification:
            lines.append(
                f"  QA: {excerpt(qa.question, 100)} claim {excerpt(qa.claim_answer, 40)!s} vs evidence "
                f"{excerpt(qa.evidence_answer or 'not stated', 40)}: {'match' if qa.match else 'no match'} "
                f"({excerpt(qa.explanation, 120)})"
            )
    return "\n".join(lines)
