"""The one place that writes data and messages for the three programs.

Data goes to stdout (or a file); messages, warnings and errors go to stderr. Tables use rich on a
terminal and plain aligned text otherwise or when ``NO_COLOR`` is set; rich markup is never
interpreted, so a name with brackets prints as written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, TextIO

from shared import errors, files

NO_COLOR = "NO_COLOR"


class Format(StrEnum):
    """Formats every data-printing command understands; ``wide`` is a table with more columns."""

    YAML = "yaml"
    JSON = "json"
    TABLE = "table"
    WIDE = "wide"


def parse_format(value: str, *, allowed: Sequence[Format], flag: str) -> Format:
    """Check a format flag against the formats this command offers."""
    names = [f.value for f in allowed]
    if value.lower() not in names:
        raise errors.InvalidInput(f"unknown output format {value!r}, valid formats are: {', '.join(names)}", where=flag)
    return Format(value.lower())


def to_json(data: Any) -> str:
    """Indented JSON with a trailing newline; keys keep their order."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"


def to_yaml(data: Any) -> str:
    from shared import yamlio

    return yamlio.dumps(data)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain text table with two spaces between columns, kubectl-style upper-case headers."""
    cells = [[str(h).upper() for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in cells]
    return "\n".join(lines) + "\n"


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get(NO_COLOR)


def write_data(text: str, *, destination: Path | None = None) -> None:
    """Write rendered data to stdout, or atomically to a file."""
    if destination is None or str(destination) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    files.atomic_write_text(destination, text)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, title: str | None = None) -> None:
    """A table on stdout: rich on a colour terminal, plain text otherwise."""
    if use_color(sys.stdout):
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, box=None, header_style="bold", pad_edge=False, highlight=False)
        for header in headers:
            table.add_column(str(header).upper(), overflow="fold")
        for row in rows:
            table.add_row(*["" if c is None else str(c) for c in row])
        Console(markup=False, emoji=False, highlight=False).print(table)
        return
    if title:
        sys.stdout.write(f"{title}\n")
    sys.stdout.write(render_table(headers, rows))


def message(text: str) -> None:
    """An informational line on stderr."""
    sys.stderr.write(text + "\n")


def warning(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")


def error_line(text: str) -> None:
    sys.stderr.write(text + "\n")
