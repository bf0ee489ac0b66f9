"""The `factcheck` command: `factcheck serve` runs the whole suite locally."""

from __future__ import annotations

import argparse
import sys

from factcheck.cli import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="factcheck", description="Fact-check text with the factcheck gRPC suite.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
