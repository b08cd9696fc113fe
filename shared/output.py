"""The one place that writes data and messages for the three programs.

Data goes to stdout (or a file); messages, warnings and errors go to stderr. Tables use rich on a
terminal and plain aligned text otherwise or when ``NO_COLOR`` is set; rich markup is never
interpreted, so a name with brackets prints as written.

The format switch is here and only here: a command checks its ``-o`` value with ``parse_format``
(before it asks the cluster anything) and hands its result to ``emit`` with the table to show for
``table``/``wide``, declared as columns. Records that arrive over time (a polling monitor) go
through a ``Stream``: NDJSON lines as they come with ``-o json``, the whole list at the end
otherwise. What a result *means* stays with the domain packages; this module only lays it out.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
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


def to_ndjson(records: Iterable[Any]) -> str:
    """One compact JSON object per line, keys sorted (newline-delimited JSON, what ``jq -c`` reads)."""
    return "".join(json.dumps(record, sort_keys=True, default=str) + "\n" for record in records)


def plain(data: Any, *, exclude_none: bool = False) -> Any:
    """Models (anything with pydantic's ``model_dump``) as JSON-ready data, in lists too; the rest as given."""
    if hasattr(data, "model_dump"):
        return data.model_dump(mode="json", exclude_none=exclude_none)
    if isinstance(data, list | tuple):
        return [plain(item, exclude_none=exclude_none) for item in data]
    return data


@dataclass(frozen=True)
class Column:
    """One column of a table: its header and how an item's cell is read; ``wide`` only with ``-o wide``."""

    header: str
    cell: Callable[[Any], Any]
    wide: bool = False

    @classmethod
    def key(cls, header: str, key: str, *, wide: bool = False) -> Column:
        """A column showing one key of mapping items; a list value is shown comma-joined."""
        return cls(header, lambda item: _cell(item[key]), wide)


def _cell(value: Any) -> Any:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else value


@dataclass(frozen=True)
class Table:
    """Items shown one per row under declared columns; ``-o wide`` adds the columns marked ``wide``."""

    items: Sequence[Any]
    columns: Sequence[Column]
    title: str | None = None

    def headers(self, *, wide: bool) -> list[str]:
        return [c.header for c in self.columns if wide or not c.wide]

    def rows(self, *, wide: bool) -> list[list[Any]]:
        chosen = [c for c in self.columns if wide or not c.wide]
        return [[c.cell(item) for c in chosen] for item in self.items]


Shown = Table | str
"""What a table format prints: declared columns, or text a domain report already laid out."""


def emit(
    data: Any,
    fmt: Format,
    *,
    table: Shown | None = None,
    wide: Shown | None = None,
    exclude_none: bool = False,
    destination: Path | None = None,
) -> None:
    """The format switch: ``data`` as JSON or YAML, else ``table`` (``wide`` for ``-o wide`` when given).

    ``data`` may hold pydantic models (dumped in JSON mode, ``exclude_none`` as asked). Without a
    ``wide`` view, ``-o wide`` shows ``table`` with its wide columns. Tables go to the terminal through
    ``print_table``; with a ``destination`` every format is written there as plain text.
    """
    if fmt is Format.JSON:
        write_data(to_json(plain(data, exclude_none=exclude_none)), destination=destination)
        return
    if fmt is Format.YAML:
        write_data(to_yaml(plain(data, exclude_none=exclude_none)), destination=destination)
        return
    shown = wide if fmt is Format.WIDE and wide is not None else table
    if shown is None:
        raise ValueError("a table format needs a table")
    if isinstance(shown, str):
        write_data(shown, destination=destination)
        return
    is_wide = fmt is Format.WIDE
    if destination is not None:
        title = f"{shown.title}\n" if shown.title else ""
        write_data(title + render_table(shown.headers(wide=is_wide), shown.rows(wide=is_wide)), destination=destination)
        return
    print_table(shown.headers(wide=is_wide), shown.rows(wide=is_wide), title=shown.title)


@dataclass
class Stream:
    """Records that arrive in batches, e.g. a monitor polling its node.

    With ``-o json`` each batch is written at once as NDJSON (``record`` turns an item into its
    JSON data), so a pipe sees events as they happen; ``close`` then adds nothing. In the other
    formats the items are kept and ``close`` shows them all once, as ``emit`` would.
    """

    fmt: Format
    record: Callable[[Any], Any] = lambda item: item
    items: list[Any] = field(default_factory=list)

    def add(self, batch: Sequence[Any]) -> None:
        self.items.extend(batch)
        if self.fmt is Format.JSON and batch:
            write_data(to_ndjson(self.record(item) for item in batch))

    def close(self, *, columns: Sequence[Column]) -> None:
        if self.fmt is not Format.JSON:
            emit([self.record(item) for item in self.items], self.fmt, table=Table(self.items, columns))


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
        write_stdout(text)
        return
    files.atomic_write_text(destination, text)


def check_destination(destination: Path | str | None) -> None:
    """Refuse an ``-o`` file that could not be written (missing folder, a directory) before the work."""
    if destination is not None and str(destination) != "-":
        files.check_output(Path(destination), probe=True)


def write_stdout(text: str) -> None:
    """All of ``text`` on stdout, or an OSError (a full disk under a redirect: exit 9 in ``shared.cli``).

    Through the binary layer, written until every byte is out: with ``PYTHONUNBUFFERED=1`` (as in
    the image) that layer is the raw file, whose ``write`` may take only part of the bytes (a
    file-size limit reached mid-way), and the text layer would drop the rest without a word."""
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    data = memoryview(text.encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while data:
        written = buffer.write(data)
        data = data[written or 0 :]  # None: a non-blocking stdout took nothing yet
    buffer.flush()


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
    write_stdout((f"{title}\n" if title else "") + render_table(headers, rows))


def acted(kind: str, names: Iterable[str], verb: str, *, to_stderr: bool = False) -> None:
    """One ``KIND/NAME VERB`` line per object, as kubectl reports what it did; stdout unless ``to_stderr``."""
    text = "".join(f"{kind}/{name} {verb}\n" for name in names)
    if to_stderr:
        sys.stderr.write(text)
    else:
        write_data(text)


def message(text: str) -> None:
    """An informational line on stderr."""
    sys.stderr.write(text + "\n")


def warning(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")


def error_line(text: str) -> None:
    sys.stderr.write(text + "\n")


def error_lines(problems: Iterable[str]) -> None:
    """One ``error: PROBLEM`` line per problem on stderr (a check that lists everything it found)."""
    sys.stderr.write("".join(f"error: {problem}\n" for problem in problems))
