"""What the gateway's audit (factcheck/core/audit.py) catches of a checker that vouches for everything, and what it
costs: each claim of the contrast set (bench/contrast.py's data) answered VERIFIED against its passage, with a
quote from the passage (faithful) and with a quote of the claim itself (fabricated unless the passage holds it).

Figures, by kind of change: the share of VERIFIED answers the audit flags with an unsupported detail (a changed
copy should be flagged; a supported claim should not), the share of fabricated quotes flagged, and the time one
audit takes.

    python -m bench.audit [--split dev|test|all] [--show 5]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from bench.contrast import CHANGES, load
from factcheck.core.audit import FABRICATED_QUOTE, UNSUPPORTED_DETAIL, AuditPassage, audit
from factcheck.core.domain import Citation, ClaimVerification


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="all", choices=["dev", "test", "all"])
    parser.add_argument("--show", type=int, default=5, help="supported claims flagged, shown as examples")
    args = parser.parse_args(argv)
    items = load(args.split)
    detail, faithful, fabricated, quoted, total = (Counter[str]() for _ in range(5))
    examples: list[str] = []
    started = time.perf_counter()
    for item in items:
        passage = AuditPassage("P1", item.passage, (item.title,))
        first = item.passage.split(". ")[0]
        for quote in (first, item.claim):
            answer = ClaimVerification(
                item.id, "VERIFIED", "", None, "HIGH", "bench/vouch", (Citation("P1", quote=quote),)
            )
            kinds = {flag.kind for flag in audit(answer, item.claim, [passage], {"P1": passage})}
            if quote is first:
                total[item.change] += 1
                detail[item.change] += UNSUPPORTED_DETAIL in kinds
                faithful[item.change] += FABRICATED_QUOTE in kinds
                if UNSUPPORTED_DETAIL in kinds and item.change == "supported" and len(examples) < args.show:
                    examples.append(item.claim)
            elif item.claim not in item.passage:
                quoted[item.change] += 1
                fabricated[item.change] += FABRICATED_QUOTE in kinds
    took = time.perf_counter() - started
    print(f"contrast set, split {args.split}: {len(items)} claims, each answered VERIFIED twice")
    print(
        f"{'change':<10} {'claims':>6} {'detail flagged':>15} {'real quote flagged':>19} {'claim as quote flagged':>23}"
    )
    for change in CHANGES:
        if total[change]:
            share = detail[change] / total[change]
            print(
                f"{change:<10} {total[change]:>6} {f'{detail[change]} ({share:.0%})':>15} {faithful[change]:>19} "
                f"{f'{fabricated[change]} of {quoted[change]}':>23}"
            )
    print(f"{took / (2 * len(items)) * 1000:.2f} ms per audit (one claim, one passage; caches cold)")
    for claim in examples:
        print(f"  supported, flagged: {claim}")


if __name__ == "__main__":
    main()
