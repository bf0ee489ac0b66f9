"""The `factcheck` command: `serve` runs the suite locally; `check`, `council`, `entail`, `watch`, `cancel`, `show`,
`list` and `kb` use its gateway."""

from __future__ import annotations

import argparse
import sys

from factcheck.cli import check, council, demo, entail, kb, results, runs, serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="factcheck", description="Fact-check text with the factcheck gRPC suite.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(commands)
    check.add_parser(commands)
    council.add_parser(commands)
    runs.add_parsers(commands)
    results.add_parsers(commands)
    kb.add_parser(commands)
    demo.add_parser(commands)
    entail.add_parser(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
