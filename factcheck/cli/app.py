"""The `factcheck` command's parser and entry point (the console script runs `main`)."""

from __future__ import annotations

import argparse
import os
import sys

# The entry point imports every command; the commands import one another, never this module.
from factcheck.cli import check, claims, client, council, demo, entail, kb, results, reviews, runs, serve, usage
from factcheck.kit.version import installed_version


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="factcheck", description="Fact-check text with the factcheck gRPC suite.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    parser.add_argument(
        "--gateway",
        metavar="TARGET",
        help="the gateway's gRPC target, e.g. localhost:50051 (default: FACTCHECK_GATEWAY_TARGET, else localhost:50051)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(commands)
    check.add_parser(commands)
    council.add_parser(commands)
    runs.add_parsers(commands)
    results.add_parsers(commands)
    kb.add_parser(commands)
    reviews.add_parser(commands)
    claims.add_parser(commands)
    demo.add_parser(commands)
    entail.add_parser(commands)
    usage.add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.gateway is not None:
        # Every command reads the target from the settings when it runs (messages name it too).
        os.environ["FACTCHECK_GATEWAY_TARGET"] = args.gateway
    try:
        return args.run(args)
    except BrokenPipeError:
        return client.quiet_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
