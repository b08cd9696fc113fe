"""What ``--watch`` prints: a table kept up to date, like ``kubectl get -w``.

On a terminal the table is redrawn in place (rich Live on stdout) each time a row changes. Into a
pipe or a file it is plain text that only grows: the header and every row once, then one line per
row whose content changed, so a log reads as a trail and ``grep`` finds each change. Rows are keyed
(a node's name, a Certification's namespace/name); a row equal to the last one printed for its key
prints nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Hashable, Sequence
from types import TracebackType
from typing import Any, TextIO

from shared import output

Row = Sequence[Any]


class WatchView:
    """A keyed table on ``stream`` (stdout), redrawn on a terminal, appended to otherwise."""

    def __init__(self, headers: Sequence[str], *, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.headers = [str(h).upper() for h in headers]
        self.stream = stream or sys.stdout
        self.live_mode = self.stream.isatty() if live is None else live
        self._rows: dict[Hashable, list[str]] = {}
        self._printed: dict[Hashable, list[str]] = {}
        self._widths: list[int] = []
        self._live: Any = None

    def __enter__(self) -> WatchView:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.__exit__(kind, value, tb)
            self._live = None

    def show(self, rows: dict[Hashable, Row]) -> None:
        """The table as it is now (every row, by key): what changed is printed or redrawn."""
        self._rows = {key: ["" if c is None else str(c) for c in row] for key, row in rows.items()}
        if self.live_mode:
            self._redraw()
        else:
            self._append()

    def _append(self) -> None:
        changed = [(k, r) for k, r in self._rows.items() if self._printed.get(k) != r]
        if not changed:
            return
        if not self._widths:  # the first table sets the column widths, as kubectl's first page does
            cells = [self.headers, *(r for _, r in changed)]
            self._widths = [max(len(row[i]) for row in cells) for i in range(len(self.headers))]
            lines = [self._line(self.headers)]
        else:
            lines = []
        for key, row in changed:
            lines.append(self._line(row))
            self._printed[key] = row
        self._write("".join(lines))

    def _write(self, text: str) -> None:
        if self.stream is sys.stdout:  # stdout's writes go through shared.output (a full disk is exit 9)
            output.write_stdout(text)
            return
        self.stream.write(text)
        self.stream.flush()

    def _line(self, row: Sequence[str]) -> str:
        return "  ".join(cell.ljust(self._widths[i]) for i, cell in enumerate(row)).rstrip() + "\n"

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(box=None, header_style="bold", pad_edge=False, highlight=False)
        for header in self.headers:
            table.add_column(header, overflow="fold")
        for row in self._rows.values():
            table.add_row(*row)
        return table

    def _redraw(self) -> None:
        if self._live is None:
            from rich.console import Console
            from rich.live import Live

            console = Console(
                file=self.stream, markup=False, emoji=False, highlight=False, no_color=bool(os.environ.get("NO_COLOR"))
            )
            self._live = Live(self._table(), console=console, auto_refresh=False)
            self._live.__enter__()
        self._live.update(self._table(), refresh=True)
