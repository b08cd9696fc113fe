"""go-yaml v2's emitter (a port of libyaml's), for :mod:`shared.chart.goyaml`: block output of JSON-shaped data.

What Helm's ``toYaml`` reaches: block mappings (keys in go-yaml's order,
:mod:`shared.chart.goyaml_keys`; long or multi-line keys in the ``? key`` form) and block
sequences, ``{}``/``[]`` for empty ones, and the four scalar styles
(:mod:`shared.chart.goyaml_scalars`) with go-yaml's indentation, escapes and folding at 80
columns. It leaves out anchors, tags, flow collections with items and the canonical form.
"""

from __future__ import annotations

from typing import Any

from shared.chart.goyaml_keys import sorted_keys
from shared.chart.goyaml_scalars import BREAKS, DOUBLE, LITERAL, PLAIN, SINGLE, Analysis, encoded, printable, simple_key

BEST_INDENT = 2
BEST_WIDTH = 80


def document(value: Any) -> str:
    """The YAML document go-yaml v2 writes for ``value`` (already as go-yaml reads back JSON)."""
    emitter = _Emitter()
    emitter.node(value, root=True)
    emitter.write_indent()
    return "".join(emitter.out)


class _Emitter:
    """The state of go-yaml v2's emitter that block output of JSON-shaped data touches."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0
        self.indent = -1
        self.indents: list[int] = []
        self.whitespace = True
        self.indention = True
        self.flow_level = 0
        self.mapping_context = False
        self.simple_key_context = False
        self.root_context = False

    # -- output primitives
    def put(self, char: str) -> None:
        self.out.append(char)
        self.column += 1

    def put_break(self) -> None:
        self.out.append("\n")
        self.column = 0

    def write_break(self, char: str) -> None:
        if char == "\n":
            self.put_break()
        else:
            self.out.append(char)
            self.column = 0

    def write_indent(self) -> None:
        indent = max(self.indent, 0)
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        while self.column < indent:
            self.put(" ")
        self.whitespace = True
        self.indention = True

    def write_indicator(self, text: str, *, need_ws: bool, is_ws: bool, is_indention: bool) -> None:
        if need_ws and not self.whitespace:
            self.put(" ")
        for char in text:
            self.put(char)
        self.whitespace = is_ws
        self.indention = self.indention and is_indention

    def increase_indent(self, *, flow: bool, indentless: bool) -> None:
        self.indents.append(self.indent)
        if self.indent < 0:
            self.indent = BEST_INDENT if flow else 0
        elif not indentless:
            self.indent += BEST_INDENT

    def pop_indent(self) -> None:
        self.indent = self.indents.pop()

    # -- nodes
    def node(self, value: Any, *, root: bool = False, mapping: bool = False, simple_key: bool = False) -> None:
        self.root_context = root
        self.mapping_context = mapping
        self.simple_key_context = simple_key
        if isinstance(value, dict):
            if value:
                self.block_mapping(value)
            else:
                self.empty_flow("{", "}")
        elif isinstance(value, list):
            if value:
                self.block_sequence(value)
            else:
                self.empty_flow("[", "]")
        else:
            self.scalar(*encoded(value))

    def empty_flow(self, opening: str, closing: str) -> None:
        self.write_indicator(opening, need_ws=True, is_ws=True, is_indention=False)
        self.increase_indent(flow=True, indentless=False)
        self.pop_indent()
        self.write_indicator(closing, need_ws=False, is_ws=False, is_indention=False)

    def block_sequence(self, items: list[Any]) -> None:
        self.increase_indent(flow=False, indentless=self.mapping_context and not self.indention)
        for item in items:
            self.write_indent()
            self.write_indicator("-", need_ws=True, is_ws=False, is_indention=True)
            self.node(item)
        self.pop_indent()

    def block_mapping(self, mapping: dict[str, Any]) -> None:
        self.increase_indent(flow=False, indentless=False)
        for key in sorted_keys(list(mapping)):
            self.write_indent()
            if simple_key(encoded(key)[0]):
                self.node(key, mapping=True, simple_key=True)
                self.write_indicator(":", need_ws=False, is_ws=False, is_indention=False)
            else:
                self.write_indicator("?", need_ws=True, is_ws=False, is_indention=True)
                self.node(key, mapping=True)
                self.write_indent()
                self.write_indicator(":", need_ws=True, is_ws=False, is_indention=True)
            self.node(mapping[key], mapping=True)
        self.pop_indent()

    def scalar(self, text: str, style: str) -> None:
        analysis = Analysis(text)
        if self.simple_key_context and analysis.multiline:
            style = DOUBLE
        if style == PLAIN:
            if (self.flow_level > 0 and not analysis.flow_plain) or (self.flow_level == 0 and not analysis.block_plain):
                style = SINGLE
            if not text and (self.flow_level > 0 or self.simple_key_context):
                style = SINGLE
        if style == SINGLE and not analysis.single_allowed:
            style = DOUBLE
        if style == LITERAL and (not analysis.block_allowed or self.flow_level > 0 or self.simple_key_context):
            style = DOUBLE
        self.increase_indent(flow=True, indentless=False)
        breaks_allowed = not self.simple_key_context
        if style == PLAIN:
            self.write_plain(text, breaks_allowed)
        elif style == SINGLE:
            self.write_single(text, breaks_allowed)
        elif style == DOUBLE:
            self.write_double(text, breaks_allowed)
        else:
            self.write_literal(text)
        self.pop_indent()

    # -- scalar writers
    def write_plain(self, text: str, allow_breaks: bool) -> None:
        if not self.whitespace:
            self.put(" ")
        self._write_folding(text, allow_breaks=allow_breaks, inner_only=False)
        self.whitespace = False
        self.indention = False

    def write_single(self, text: str, allow_breaks: bool) -> None:
        self.write_indicator("'", need_ws=True, is_ws=False, is_indention=False)
        self._write_folding(text, allow_breaks=allow_breaks, inner_only=True, doubled="'")
        self.write_indicator("'", need_ws=False, is_ws=False, is_indention=False)
        self.whitespace = False
        self.indention = False

    def _write_folding(self, text: str, *, allow_breaks: bool, inner_only: bool, doubled: str = "") -> None:
        """The characters of a plain or single-quoted scalar, as go-yaml's two writers share them.

        A lone space past ``BEST_WIDTH`` folds the line (in a quoted scalar never the first or the
        last character: ``inner_only``), line breaks are kept as breaks, and ``doubled`` (the single
        quote inside single quotes) is written twice."""
        spaces = breaks = False
        for i, char in enumerate(text):
            if char == " ":
                inner = not inner_only or 0 < i < len(text) - 1
                if allow_breaks and not spaces and self.column > BEST_WIDTH and inner and text[i + 1 : i + 2] != " ":
                    self.write_indent()
                else:
                    self.put(char)
                spaces = True
            elif char in BREAKS:
                if not breaks and char == "\n":
                    self.put_break()
                self._text_break(char)
                breaks = True
            else:
                self._text_char(char, after_break=breaks)
                if char == doubled:
                    self.put(char)
                spaces = breaks = False

    def _text_break(self, char: str) -> None:
        """A line break of a scalar's text, kept: the next character starts the line at the indentation."""
        self.write_break(char)
        self.indention = True

    def _text_char(self, char: str, *, after_break: bool) -> None:
        """A character of a scalar's text other than a break (indented first when it starts a line)."""
        if after_break:
            self.write_indent()
        self.put(char)
        self.indention = False

    def write_double(self, text: str, allow_breaks: bool) -> None:
        self.write_indicator('"', need_ws=True, is_ws=False, is_indention=False)
        spaces = False
        # go-yaml's is_bom looks at the start of the text, not at the character: after a leading
        # byte order mark every character is escaped.
        bom = text.startswith("\ufeff")
        for i, char in enumerate(text):
            if bom or not printable(char) or char in BREAKS or char in '"\\':
                self.put("\\")
                escape = _DOUBLE_ESCAPES.get(char)
                if escape is None:
                    code = ord(char)
                    width = 2 if code <= 0xFF else 4 if code <= 0xFFFF else 8
                    escape = "xuU"[(width > 2) + (width > 4)] + f"{code:0{width}X}"
                for part in escape:
                    self.put(part)
                spaces = False
            elif char == " ":
                if allow_breaks and not spaces and self.column > BEST_WIDTH and i != 0 and i != len(text) - 1:
                    self.write_indent()
                    if text[i + 1 : i + 2] == " ":
                        self.put("\\")
                else:
                    self.put(char)
                spaces = True
            else:
                self.put(char)
                spaces = False
        self.write_indicator('"', need_ws=False, is_ws=False, is_indention=False)
        self.whitespace = False
        self.indention = False

    def write_literal(self, text: str) -> None:
        self.write_indicator("|", need_ws=True, is_ws=False, is_indention=False)
        if text and (text[0] == " " or text[0] in BREAKS):
            self.write_indicator(str(BEST_INDENT), need_ws=False, is_ws=False, is_indention=False)
        if not text or text[-1] not in BREAKS:
            chomp = "-"
        elif len(text) == 1 or text[-2] in BREAKS:
            chomp = "+"
        else:
            chomp = ""
        if chomp:
            self.write_indicator(chomp, need_ws=False, is_ws=False, is_indention=False)
        self.put_break()
        self.indention = True
        self.whitespace = True
        breaks = True
        for char in text:
            if char in BREAKS:
                self._text_break(char)
                breaks = True
            else:
                self._text_char(char, after_break=breaks)
                breaks = False


_DOUBLE_ESCAPES = {
    "\0": "0",
    "\a": "a",
    "\b": "b",
    "\t": "t",
    "\n": "n",
    "\v": "v",
    "\f": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}
