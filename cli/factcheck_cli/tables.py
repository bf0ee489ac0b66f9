"""The one table every listing prints (`list`, `claims`, `reviews`, `kb list`, `eval list`, `eval sets`,
`usage`), as gh and kubectl print theirs: a header of upper-case names, one line per row, columns two
spaces apart and no box. What does not fit the terminal is cut with "…", the flexible columns (titles,
claims) first; ids are shortened the way git and gh shorten commit hashes (a UUID to its first 8
characters, which every command that takes an id accepts: `factcheck_cli.ids`). `--wide` shows every
value whole, and the columns only it has, on lines as long as they need (`--json` has the full values
too).

A command describes its columns once (`Column`) and calls `print_table`; cell text is untrusted and goes
through `terminal.plain`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.text import Text

from factcheck_cli.ids import short_id
from factcheck_cli.terminal import plain

GAP = 2
# A flexible column keeps at least this many characters (a cut value still says what it was).
MIN_FLEXIBLE = 8
# Any other column, cut only when the flexible ones are down to their minimum and the line is still too long.
MIN_FIXED = 4


@dataclass(frozen=True)
class Column:
    """One column: its header, the cell of a row (a string or a styled Text), and how it behaves.

    flexible: takes the room the others leave, and is cut first; wide_only: shown only with --wide;
    id: a UUID in it is shortened unless --wide."""

    header: str
    cell: Callable[[Any], str | Text]
    flexible: bool = False
    wide_only: bool = False
    id: bool = False
    justify: Literal["left", "right"] = "left"


def add_wide_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wide",
        action="store_true",
        help="show every value whole (ids, titles) and more columns, on lines as long as they need",
    )


def print_table(console: Console, columns: Sequence[Column], rows: Iterable[Any], *, wide: bool = False) -> None:
    """The rows as a table on the console: fitted to its width, or (`wide`) every value whole."""
    shown = [column for column in columns if wide or not column.wide_only]
    cells = [[_cell(column, row, wide) for column in shown] for row in rows]
    headers = [Text(column.header.upper(), style="bold") for column in shown]
    natural = [max([header.cell_len, *(line[i].cell_len for line in cells)]) for i, header in enumerate(headers)]
    widths = natural if wide else fit(natural, [column.flexible for column in shown], console.width)
    for line in [headers, *cells]:
        console.print(_line(line, widths, shown), soft_wrap=True)


def _cell(column: Column, row: Any, wide: bool) -> Text:
    value = column.cell(row)
    if isinstance(value, Text):
        return value
    return plain(value if wide or not column.id else short_id(value))


def _line(cells: list[Text], widths: list[int], columns: Sequence[Column]) -> Text:
    line = Text()
    for index, (cell, width, column) in enumerate(zip(cells, widths, columns)):
        cell = cell.copy()
        cell.truncate(width, overflow="ellipsis")
        padding = " " * (width - cell.cell_len)
        last = index == len(cells) - 1
        if column.justify == "right":
            line.append(padding)
            line.append(cell)
        else:
            line.append(cell)
            if not last:
                line.append(padding)
        if not last:
            line.append(" " * GAP)
    line.rstrip()
    return line


def fit(natural: list[int], flexible: list[bool], width: int) -> list[int]:
    """Column widths that fit `width`: the natural ones if they do; else the flexible columns share what
    the others leave (the narrow ones whole, the rest evenly, none below MIN_FLEXIBLE); and if even that
    is too wide, the widest other columns give way too (none below MIN_FIXED)."""
    widths = list(natural)
    room = width - GAP * (len(widths) - 1)
    if sum(widths) <= room:
        return widths
    flexible_columns = sorted((i for i, f in enumerate(flexible) if f), key=lambda i: natural[i])
    left = room - sum(w for i, w in enumerate(widths) if not flexible[i])
    for position, i in enumerate(flexible_columns):
        share = left // (len(flexible_columns) - position)
        widths[i] = max(min(natural[i], share), min(natural[i], MIN_FLEXIBLE))
        left -= widths[i]
    while sum(widths) > room:
        widest = max(range(len(widths)), key=lambda i: widths[i] if not flexible[i] else -1)
        if flexible[widest] or widths[widest] <= MIN_FIXED:
            break  # nothing left to give: the terminal cuts the line
        widths[widest] -= min(sum(widths) - room, widths[widest] - MIN_FIXED)
    return widths
