"""Where a key, a value, or a place inside a CEL expression is in a values file (1-based line, column).

Only ``rules check`` and the start-up check need positions, and only when something is wrong, so the
file is parsed again with the round-trip loader (which keeps them) on that path alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from shared import errors, yamlio


@dataclass(frozen=True)
class Position:
    line: int
    column: int


class Locator:
    """Positions in one file's text; ``source`` prefixes every place (``values.yaml:12:9``)."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.source = source
        try:
            self._tree: Any = yamlio.load_roundtrip(text) if text.strip() else None
        except errors.InvalidInput:
            self._tree = None

    def place(self, position: Position | None) -> str:
        return self.source if position is None else f"{self.source}:{position.line}:{position.column}"

    def of(self, dotted: str, *, value: bool = False) -> Position | None:
        """The key at a dotted path (``a.b[2].c``), or its value with ``value=True``; the nearest
        enclosing key's position when the path goes further than the file does."""
        node = self._tree
        found: Position | None = None
        parts = _parts(dotted)
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                if isinstance(part, int):
                    line, column = node.lc.item(part)
                else:
                    line, column = node.lc.value(part) if (value and last) else node.lc.key(part)
                node = node[part]
            except (AttributeError, KeyError, IndexError, TypeError):
                return found
            found = Position(line + 1, column + 1)
        return found

    def in_expression(self, dotted: str, expression: str, line: int, column: int) -> Position | None:
        """The file position of (``line``, ``column``) of the CEL ``expression`` held at ``dotted``.

        Exact when the expression is written verbatim (plain or quoted without escapes on one line,
        or a ``|`` block); otherwise the position of the value itself.
        """
        start = self.of(dotted, value=True)
        if start is None:
            return None
        wanted = expression.split("\n")[line - 1] if line - 1 < len(expression.split("\n")) else ""
        first = self.lines[start.line - 1] if start.line - 1 < len(self.lines) else ""
        if line == 1:
            offset = start.column - 1
            if first[offset : offset + 1] in ("'", '"'):
                offset += 1
            if first[offset : offset + len(wanted)] == wanted:
                return Position(start.line, offset + column)
        if first[start.column - 1 : start.column] == "|":  # a literal block: lines as written, indented
            body = self.lines[start.line : start.line + len(expression.split("\n"))]
            indent = len(body[0]) - len(body[0].lstrip(" ")) if body else 0
            at = start.line + line  # the block's first line follows the indicator
            if at - 1 < len(self.lines) and self.lines[at - 1][indent:].rstrip() == wanted.rstrip():
                return Position(at, indent + column)
        return start


def _parts(dotted: str) -> list[str | int]:
    parts: list[str | int] = []
    for piece in dotted.split("."):
        match = re.match(r"^([^\[]*)((?:\[\d+\])*)$", piece)
        if not match:
            return parts
        if match.group(1):
            parts.append(match.group(1))
        parts.extend(int(i) for i in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts
