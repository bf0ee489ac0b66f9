"""Terminal primitives shared by every report and progress display: untrusted text made inert,
the console, and the progress line layout ("stage     message").

Every piece of untrusted text (content, claims, model output) goes into a rich `Text`,
never into markup, and loses its control characters, so it can neither restyle nor
drive the terminal.
"""

from __future__ import annotations

import json
import os
import re
from typing import Iterable

from google.protobuf import json_format
from rich.console import Console
from rich.rule import Rule
from rich.text import Text

import factcheck_cli.view as view
from factcheck.text.wording import counted
from factcheck.v1 import factcheck_pb2

__all__ = ["counted"]  # the commands' one plural rule, where they import the rest of the terminal's

# Plain output (pipes, files) gets this width unless COLUMNS says otherwise; rich would use 80,
# which squeezes ids and tables.
PIPE_WIDTH = 120
STAGE_WIDTH = 9

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """Untrusted text without control characters (escape sequences could drive the terminal)."""
    return _CONTROL.sub("", text)


def plain(text: str, style: str = "") -> Text:
    return Text(clean(text), style=style)


def proto_json(message, *, with_defaults: bool = False) -> str:
    """A proto as one line of JSON: what every --json prints. Field names are the proto3 JSON mapping's
    lowerCamelCase (`messageId`), as the TypeScript client, buf curl and grpcurl print them; fields at their
    default value are left out unless `with_defaults` (a usage table's zeros)."""
    as_dict = json_format.MessageToDict(message, always_print_fields_with_no_presence=with_defaults)
    return json.dumps(as_dict, ensure_ascii=False)


class _PipeConsole(Console):
    """A console that lets a closed stdout (`| head`) end the command quietly: rich's own handling exits 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def make_console() -> Console:
    """A rich console on stdout; plain (not a terminal) output is wider than rich's 80 columns."""
    console = _PipeConsole(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


def stage_line(stage: str, *parts: str | Text) -> Text:
    """A progress line: the stage in a fixed-width column, then the parts (strings are untrusted text)."""
    line = Text.assemble((f"{stage:<{STAGE_WIDTH}}", "bold cyan"), " ")
    for part in parts:
        line.append(part if isinstance(part, Text) else plain(part))
    return line


def with_lines(line: Text, texts: Iterable[str]) -> Text:
    """The line, then each text on a line of its own under the line's message, as a warning."""
    for text in texts:
        line.append("\n" + " " * (STAGE_WIDTH + 1))
        line.append(plain(text, "yellow"))
    return line


def section(console: Console, title: str, body=None, style: str = "bold") -> None:
    """A report section: a titled rule, then its body (none: the caller prints it, e.g. `tables.print_table`)."""
    console.print()
    console.print(Rule(Text(title, style=style), align="left"))
    if body is not None:
        console.print(body)


def print_status(console: Console, result: factcheck_pb2.FactCheckResult) -> None:
    """Why a report is incomplete (its status note), and why the run failed: the message and each cause."""
    note = view.status_note(result)
    if note:
        console.print(Text(note, style="bold yellow"))
    message, causes = view.explanation(result)
    if message:
        console.print(plain(message, "bold"))
    for cause in causes:
        console.print(Text.assemble("  ", plain(cause, "yellow")))
