"""The `factcheck` command's parser and entry point (the console script runs `main`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from factcheck.kit.version import installed_version

# The entry point imports every command; the commands import one another, never this module.
from factcheck_cli import (
    check,
    claims,
    client,
    council,
    demo,
    entail,
    evaluate,
    kb,
    results,
    reviews,
    runs,
    serve,
    usage,
)

GATEWAY_HELP = (
    "the gateway's gRPC target, e.g. localhost:50051 (default: FACTCHECK_GATEWAY_TARGET, else localhost:50051); "
    "accepted before or after the command"
)


class Commands(argparse._SubParsersAction):
    """The subcommands of a parser; a command without a description of its own is described by its help line."""

    def add_parser(self, name, **kwargs):
        if kwargs.get("help") and not kwargs.get("description"):
            kwargs["description"] = f"{kwargs['help'][0].upper()}{kwargs['help'][1:]}."
        return super().add_parser(name, **kwargs)


class OneLineErrors(argparse.ArgumentParser):
    """A bad value for an option is one line naming it (`factcheck kb search: error: argument --top-k:
    must be between 1 and 50 (got 0)`), as gh says "invalid limit"; an unknown option or a missing
    argument still comes with the command's usage."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument "):
            self.exit(client.EXIT_USAGE, f"{self.prog}: error: {message}\n")
        super().error(message)


class TopParser(OneLineErrors):
    """`factcheck`: an unknown option before the command is reported as such (`factcheck --bogus-flag x`
    says `--bogus-flag`), not as an unknown command `x`."""

    def parse_known_args(self, args=None, namespace=None):
        arguments = sys.argv[1:] if args is None else list(args)
        value_next = False
        for token in arguments:
            if value_next:
                value_next = False
                continue
            if token == "--" or not token.startswith("-") or token == "-":
                break  # the command
            name = token.split("=", 1)[0]
            matches = [option for option in self._option_string_actions if option.startswith(name)]
            if not matches:
                self.error(f"unrecognized arguments: {token}")
            value_next = "=" not in token and self._option_string_actions[matches[0]].nargs is None
        return super().parse_known_args(args, namespace)


class CommandParser(OneLineErrors):
    """A command's parser: it takes the global options too (`factcheck check "…" --gateway H:P` works
    as `factcheck --gateway H:P check "…"` does), and it reports an unknown option with its own usage
    line. Its subcommands' parsers are CommandParsers as well."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", Commands)
        # SUPPRESS: a command that was not given --gateway leaves the value given before it alone.
        self.add_argument("--gateway", metavar="TARGET", default=argparse.SUPPRESS, help=GATEWAY_HELP)

    def parse_known_args(self, args=None, namespace=None):
        # argparse hands what a command did not recognise up to the top-level parser, which would
        # report it with the top-level usage; the command's own parser reports it instead.
        parsed, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed, unknown


def build_parser() -> argparse.ArgumentParser:
    parser = TopParser(prog="factcheck", description="Fact-check text with the factcheck gRPC suite.")
    parser.register("action", "parsers", Commands)
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    parser.add_argument("--gateway", metavar="TARGET", help=GATEWAY_HELP)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=CommandParser, help="one of these commands"
    )
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
    evaluate.add_parser(commands)
    usage.add_parsers(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.gateway is not None and getattr(args, "no_gateway", None):
        # serve and demo start a gateway of their own: another one named is a mistake, not a target.
        print(f"factcheck {args.command}: error: argument --gateway: {args.no_gateway}", file=sys.stderr)
        return client.EXIT_USAGE
    if args.gateway is not None:
        # Every command reads the target from the settings when it runs (messages name it too).
        os.environ["FACTCHECK_GATEWAY_TARGET"] = args.gateway
    try:
        return args.run(args)
    except BrokenPipeError:
        return client.quiet_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
