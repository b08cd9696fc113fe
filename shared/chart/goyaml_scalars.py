"""go-yaml v2's scalars: the text and style its encoder asks for, and the styles its emitter allows.

Part of :mod:`shared.chart.goyaml` (Helm's ``toYaml``). The encoder (``encode.go``) turns a value
into text and asks for a style: plain, double-quoted where the resolver would read the plain text
back as another type (:mod:`shared.chart.goyaml_resolve`), literal for multi-line text. The
emitter's ``yaml_emitter_analyze_scalar`` then decides which styles the text allows: a leading or
trailing space, a line break, an indicator character or a non-printable character each rule some
out. :mod:`shared.chart.goyaml_emitter` applies both when it writes the scalar.
"""

from __future__ import annotations

import itertools
from typing import Any

from shared.chart import gofmt
from shared.chart.goyaml_resolve import needs_quotes

PLAIN, SINGLE, DOUBLE, LITERAL = "plain", "single", "double", "literal"
BREAKS = "\r\n\x85\u2028\u2029"


def printable(char: str) -> bool:
    code = ord(char)
    return (
        code == 0x0A or 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
    )


def encoded(value: Any) -> tuple[str, str]:
    """go-yaml v2's encoder: the text of a scalar and the style it asks the emitter for."""
    if value is None:
        return "null", PLAIN
    if isinstance(value, bool):
        return ("true" if value else "false"), PLAIN
    if isinstance(value, int):
        return str(value), PLAIN
    if isinstance(value, float):
        text = gofmt.format_float_g(value)
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text), PLAIN
    text = str(value)
    if "\n" in text:
        return text, LITERAL
    return text, DOUBLE if needs_quotes(text) else PLAIN


def simple_key(text: str) -> bool:
    """A key the emitter writes as ``key:`` rather than in the ``? key`` form."""
    return not Analysis(text).multiline and len(text.encode("utf-8", "surrogatepass")) <= 128


class Analysis:
    """``yaml_emitter_analyze_scalar``: which styles ``text`` allows."""

    __slots__ = ("block_allowed", "block_plain", "flow_plain", "multiline", "single_allowed")

    def __init__(self, text: str) -> None:
        if not text:
            self.multiline, self.flow_plain, self.block_plain = False, False, True
            self.single_allowed, self.block_allowed = True, False
            return
        flow_indicators, block_indicators = _indicators(text)
        line_breaks = any(char in BREAKS for char in text)
        special = not all(printable(char) for char in text)
        at_edge = text[0] == " " or text[0] in BREAKS or text[-1] == " " or text[-1] in BREAKS
        neighbours = list(itertools.pairwise(text))
        break_space = any(before in BREAKS and after == " " for before, after in neighbours)
        space_break = any(before == " " and after in BREAKS for before, after in neighbours)
        mixed = break_space or space_break or special  # no single-quoted form keeps these as they are
        self.multiline = line_breaks
        plain = not (at_edge or mixed or line_breaks)
        self.flow_plain = plain and not flow_indicators
        self.block_plain = plain and not block_indicators
        self.single_allowed = not mixed
        self.block_allowed = not (text[-1] == " " or space_break or special)


def _indicators(text: str) -> tuple[bool, bool]:
    """(flow, block): whether a character of ``text`` is an indicator in the flow / block context."""
    flow = block = text.startswith(("---", "..."))
    preceded_by_ws = True
    for i, char in enumerate(text):
        followed_by_ws = i + 1 >= len(text) or text[i + 1] in " \t"
        if i == 0:
            in_flow, in_block = _first_indicator(char, followed_by_ws=followed_by_ws)
        else:
            in_flow, in_block = _inner_indicator(char, preceded_by_ws=preceded_by_ws, followed_by_ws=followed_by_ws)
        flow, block = flow or in_flow, block or in_block
        preceded_by_ws = char in " \t\0" or char in BREAKS
    return flow, block


def _first_indicator(char: str, *, followed_by_ws: bool) -> tuple[bool, bool]:
    if char in "#,[]{}&*!|>'\"%@`":
        return True, True
    if char in "?:":
        return True, followed_by_ws
    return (True, True) if char == "-" and followed_by_ws else (False, False)


def _inner_indicator(char: str, *, preceded_by_ws: bool, followed_by_ws: bool) -> tuple[bool, bool]:
    if char in ",?[]{}":
        return True, False
    if char == ":":
        return True, followed_by_ws
    return (True, True) if char == "#" and preceded_by_ws else (False, False)
