"""Helm's ``toYaml``, byte for byte: sigs.k8s.io/yaml over go-yaml v2's encoder and emitter.

``toYaml`` in a Helm template marshals the value to JSON, reads the JSON back with go-yaml v2 and
writes it with go-yaml v2's emitter (a port of libyaml), then drops the final newline. The chart
prints the nvsentinel values into a ConfigMap with it, so the ConfigMap's text, and with it the
object, depends on every detail: keys in go-yaml's "natural" order (``a2`` before ``a10``), strings
quoted only when they would read back as another type (YAML 1.1 rules: ``"yes"``, ``"1"``,
``"2001-12-14"``), single quotes where a plain scalar cannot start with the character, double
quotes with escapes for control characters, literal blocks (``|-``) for multi-line text, and plain
and quoted scalars folded at 80 columns.

This module ports the parts of go-yaml v2 that a JSON-shaped value reaches (block mappings and
sequences, ``[]``/``{}``, the four scalar styles, long keys); it leaves out anchors, tags, flow
collections with items and the canonical form, which that path never produces.
"""

from __future__ import annotations

import datetime
import functools
import re
import unicodedata
from typing import Any

from shared.chart import gofmt

BEST_INDENT = 2
BEST_WIDTH = 80
_PLAIN, _SINGLE, _DOUBLE, _LITERAL = "plain", "single", "double", "literal"
_BREAKS = "\r\n\x85\u2028\u2029"


# ------------------------------------------------------------------ the JSON round trip
# json.Marshal leaves these raw; go-yaml's reader refuses them, so Helm's toYaml prints nothing.
_REFUSED = re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")
# A raw NEL (json.Marshal leaves it too) is a line break to go-yaml: folded like one in a quoted scalar.
_NEL_RUN = re.compile(" *\x85[ \x85]*")


def _reread(text: str) -> str:
    if _REFUSED.search(text):
        raise gofmt.UnsupportedValue("control characters are not allowed")
    if "\x85" not in text:
        return text
    return _NEL_RUN.sub(lambda m: " " if m.group().count("\x85") == 1 else "\n" * (m.group().count("\x85") - 1), text)


def _reread_key(key: str) -> str:
    # A key is a YAML simple key: one line, at most 1024 characters as JSON writes it.
    if "\x85" in key or len(gofmt.json_string(key)) > 1024:
        raise gofmt.UnsupportedValue("did not find expected ',' or '}'")
    return _reread(key)


def _json_shape(value: Any) -> Any:
    """The value as go-yaml reads back ``json.Marshal``'s output: numbers become int or float by their text."""
    if isinstance(value, dict):
        return {_reread_key(str(key)): _json_shape(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_shape(item) for item in value]
    if isinstance(value, float):
        return _resolve_number(gofmt.format_float_json(value))
    if isinstance(value, str):
        return _reread(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _resolve_number(text: str) -> int | float:
    if re.fullmatch(r"-?[0-9]+", text) and -(2**63) <= int(text) < 2**64:
        return int(text)
    return float(text)


# ------------------------------------------------------------------ go-yaml v2's resolver (which strings need quotes)
_RESOLVED = frozenset(
    {
        *("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"),
        *("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"),
        *("", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF"),
        *("+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF"),
    }
)
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_DIGITS = r"[0-9](?:_?[0-9])*"  # Go allows an underscore between two digits
_GO_DECIMAL_FLOAT = re.compile(rf"[+-]?({_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?{_DIGITS})?")
_TIMESTAMPS = (
    re.compile(r"(\d{4})-(\d\d?)-(\d\d?)[Tt](\d\d?):(\d\d?):(\d\d?)([.,]\d+)?(Z|[+-]\d\d:\d\d)"),
    re.compile(r"(\d{4})-(\d\d?)-(\d\d?) (\d\d?):(\d\d?):(\d\d?)([.,]\d+)?"),
    re.compile(r"(\d{4})-(\d\d?)-(\d\d?)"),
)


def _go_parses_float(text: str) -> bool:
    """Go's ``strconv.ParseFloat(text, 64)`` of a decimal succeeds (it fails on overflow, not underflow)."""
    if not _GO_DECIMAL_FLOAT.fullmatch(text):
        return False
    return abs(float(text.replace("_", ""))) != float("inf")


def _go_parses_int(text: str) -> bool:
    """Go's ``strconv.ParseInt(text, 0, 64)`` or ``ParseUint(text, 0, 64)`` succeeds."""
    match = _GO_INT.fullmatch(text)
    if match is None:
        return False
    sign, body = match.groups()
    if body[:2].lower() in ("0x", "0o", "0b"):
        number = int(body, 0)
    elif body.startswith("0") and len(body) > 1:
        number = int(body[1:], 8)
    else:
        number = int(body)
    if sign == "-":
        return number <= 2**63
    return number < 2**63 or (not sign and number < 2**64)


def _is_timestamp(text: str) -> bool:
    """go-yaml v2's ``parseTimestamp``: the layouts it tries with Go's ``time.Parse``."""
    if not re.match(r"[0-9]{4}-", text):
        return False
    for pattern in _TIMESTAMPS:
        match = pattern.fullmatch(text)
        if match is None:
            continue
        year, month, day = (int(match.group(i)) for i in (1, 2, 3))
        try:
            datetime.date(year, month, day)
        except ValueError:
            continue
        if pattern.groups >= 6:
            hour, minute, second = (int(match.group(i)) for i in (4, 5, 6))
            if hour > 23 or minute > 59 or second > 59:
                continue
        return True
    return False


def _needs_quotes(text: str) -> bool:
    """go-yaml v2 would read the plain text back as something else (``resolve`` is not ``!!str``), or
    as a YAML 1.1 base-60 number."""
    hint = text[:1]
    if text in _RESOLVED:
        return True
    if hint == ".":
        return _go_parses_float(text)
    if hint and hint in "+-0123456789":
        if _is_timestamp(text):
            return True
        plain = text.replace("_", "")
        if _go_parses_int(plain) or _go_parses_float(plain):
            return True
        return ":" in text and bool(_BASE60.fullmatch(text))
    return False


# ------------------------------------------------------------------ go-yaml v2's key order
def _is_letter(char: str) -> bool:
    return unicodedata.category(char).startswith("L")


def _is_digit(char: str) -> bool:
    return unicodedata.category(char) == "Nd"


def _wrap64(number: int) -> int:
    return (number + 2**63) % 2**64 - 2**63


def _key_less(a: str, b: str) -> bool:
    """go-yaml v2's ``keyList.Less`` for two string keys: letters by code, digit runs by number."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        a_letter, b_letter = _is_letter(a[i]), _is_letter(b[i])
        if a_letter and b_letter:
            return a[i] < b[i]
        if a_letter or b_letter:
            return b_letter
        a_number = b_number = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and _is_digit(a[j]):
                if a[j] != "0":
                    a_number = b_number = 1
                    break
                j -= 1
        a_end = i
        while a_end < len(a) and _is_digit(a[a_end]):
            a_number = _wrap64(a_number * 10 + ord(a[a_end]) - ord("0"))
            a_end += 1
        b_end = i
        while b_end < len(b) and _is_digit(b[b_end]):
            b_number = _wrap64(b_number * 10 + ord(b[b_end]) - ord("0"))
            b_end += 1
        if a_number != b_number:
            return a_number < b_number
        if a_end != b_end:
            return a_end < b_end
        return a[i] < b[i]
    return len(a) < len(b)


def _compare(a: str, b: str) -> int:
    return -1 if _key_less(a, b) else 1 if _key_less(b, a) else 0


def sorted_keys(keys: list[str]) -> list[str]:
    """Keys in the order go-yaml v2 writes them."""
    return sorted(keys, key=functools.cmp_to_key(_compare))


# ------------------------------------------------------------------ scalar analysis (yaml_emitter_analyze_scalar)
def _printable(char: str) -> bool:
    code = ord(char)
    return (
        code == 0x0A or 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
    )


class _Analysis:
    __slots__ = ("block_allowed", "block_plain", "flow_plain", "multiline", "single_allowed")

    def __init__(self, text: str) -> None:
        if not text:
            self.multiline, self.flow_plain, self.block_plain = False, False, True
            self.single_allowed, self.block_allowed = True, False
            return
        block_ind = flow_ind = line_breaks = special = False
        leading_space = leading_break = trailing_space = trailing_break = False
        break_space = space_break = previous_space = previous_break = False
        if text.startswith(("---", "...")):
            block_ind = flow_ind = True
        preceded_by_ws = True
        for i, char in enumerate(text):
            followed_by_ws = i + 1 >= len(text) or text[i + 1] in " \t"
            if i == 0:
                if char in "#,[]{}&*!|>'\"%@`":
                    flow_ind = block_ind = True
                elif char in "?:":
                    flow_ind = True
                    block_ind = block_ind or followed_by_ws
                elif char == "-" and followed_by_ws:
                    flow_ind = block_ind = True
            elif char in ",?[]{}":
                flow_ind = True
            elif char == ":":
                flow_ind = True
                block_ind = block_ind or followed_by_ws
            elif char == "#" and preceded_by_ws:
                flow_ind = block_ind = True
            if not _printable(char):
                special = True
            if char == " ":
                leading_space = leading_space or i == 0
                trailing_space = trailing_space or i == len(text) - 1
                break_space = break_space or previous_break
                previous_space, previous_break = True, False
            elif char in _BREAKS:
                line_breaks = True
                leading_break = leading_break or i == 0
                trailing_break = trailing_break or i == len(text) - 1
                space_break = space_break or previous_space
                previous_space, previous_break = False, True
            else:
                previous_space = previous_break = False
            preceded_by_ws = char in " \t\0" or char in _BREAKS
        self.multiline = line_breaks
        self.flow_plain = self.block_plain = self.single_allowed = self.block_allowed = True
        if leading_space or leading_break or trailing_space or trailing_break:
            self.flow_plain = self.block_plain = False
        if trailing_space:
            self.block_allowed = False
        if break_space:
            self.flow_plain = self.block_plain = self.single_allowed = False
        if space_break or special:
            self.flow_plain = self.block_plain = self.single_allowed = self.block_allowed = False
        if line_breaks:
            self.flow_plain = self.block_plain = False
        if flow_ind:
            self.flow_plain = False
        if block_ind:
            self.block_plain = False


# ------------------------------------------------------------------ the emitter
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
            self.scalar(*_scalar(value))

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
            if _simple_key(_scalar(key)[0]):
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
        analysis = _Analysis(text)
        if self.simple_key_context and analysis.multiline:
            style = _DOUBLE
        if style == _PLAIN:
            if (self.flow_level > 0 and not analysis.flow_plain) or (self.flow_level == 0 and not analysis.block_plain):
                style = _SINGLE
            if not text and (self.flow_level > 0 or self.simple_key_context):
                style = _SINGLE
        if style == _SINGLE and not analysis.single_allowed:
            style = _DOUBLE
        if style == _LITERAL and (not analysis.block_allowed or self.flow_level > 0 or self.simple_key_context):
            style = _DOUBLE
        self.increase_indent(flow=True, indentless=False)
        breaks_allowed = not self.simple_key_context
        if style == _PLAIN:
            self.write_plain(text, breaks_allowed)
        elif style == _SINGLE:
            self.write_single(text, breaks_allowed)
        elif style == _DOUBLE:
            self.write_double(text, breaks_allowed)
        else:
            self.write_literal(text)
        self.pop_indent()

    # -- scalar writers
    def write_plain(self, text: str, allow_breaks: bool) -> None:
        if not self.whitespace:
            self.put(" ")
        spaces = breaks = False
        i = 0
        while i < len(text):
            char = text[i]
            if char == " ":
                if allow_breaks and not spaces and self.column > BEST_WIDTH and text[i + 1 : i + 2] != " ":
                    self.write_indent()
                else:
                    self.put(char)
                spaces = True
            elif char in _BREAKS:
                if not breaks and char == "\n":
                    self.put_break()
                self.write_break(char)
                self.indention = True
                breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(char)
                self.indention = False
                spaces = breaks = False
            i += 1
        self.whitespace = False
        self.indention = False

    def write_single(self, text: str, allow_breaks: bool) -> None:
        self.write_indicator("'", need_ws=True, is_ws=False, is_indention=False)
        spaces = breaks = False
        for i, char in enumerate(text):
            if char == " ":
                if (
                    allow_breaks
                    and not spaces
                    and self.column > BEST_WIDTH
                    and 0 < i < len(text) - 1
                    and text[i + 1] != " "
                ):
                    self.write_indent()
                else:
                    self.put(char)
                spaces = True
            elif char in _BREAKS:
                if not breaks and char == "\n":
                    self.put_break()
                self.write_break(char)
                self.indention = True
                breaks = True
            else:
                if breaks:
                    self.write_indent()
                if char == "'":
                    self.put("'")
                self.put(char)
                self.indention = False
                spaces = breaks = False
        self.write_indicator("'", need_ws=False, is_ws=False, is_indention=False)
        self.whitespace = False
        self.indention = False

    def write_double(self, text: str, allow_breaks: bool) -> None:
        self.write_indicator('"', need_ws=True, is_ws=False, is_indention=False)
        spaces = False
        # go-yaml's is_bom looks at the start of the text, not at the character: after a leading
        # byte order mark every character is escaped.
        bom = text.startswith("\ufeff")
        for i, char in enumerate(text):
            if bom or not _printable(char) or char in _BREAKS or char in '"\\':
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
        if text and (text[0] == " " or text[0] in _BREAKS):
            self.write_indicator(str(BEST_INDENT), need_ws=False, is_ws=False, is_indention=False)
        if not text or text[-1] not in _BREAKS:
            chomp = "-"
        elif len(text) == 1 or text[-2] in _BREAKS:
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
            if char in _BREAKS:
                self.write_break(char)
                self.indention = True
                breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(char)
                self.indention = False
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


def _scalar(value: Any) -> tuple[str, str]:
    """go-yaml v2's encoder: the text of a scalar and the style it asks the emitter for."""
    if value is None:
        return "null", _PLAIN
    if isinstance(value, bool):
        return ("true" if value else "false"), _PLAIN
    if isinstance(value, int):
        return str(value), _PLAIN
    if isinstance(value, float):
        text = gofmt.format_float_g(value)
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(text, text), _PLAIN
    text = str(value)
    if "\n" in text:
        return text, _LITERAL
    return text, _DOUBLE if _needs_quotes(text) else _PLAIN


def _simple_key(text: str) -> bool:
    return not _Analysis(text).multiline and len(text.encode("utf-8", "surrogatepass")) <= 128


def to_yaml(value: Any) -> str:
    """Helm's ``toYaml``: the document go-yaml v2 writes for ``value``, without its last newline.

    An infinite or NaN float makes ``json.Marshal`` fail, and Helm's ``toYaml`` then prints nothing.
    """
    try:
        shaped = _json_shape(value)
    except gofmt.UnsupportedValue:
        return ""
    emitter = _Emitter()
    emitter.node(shaped, root=True)
    emitter.write_indent()
    text = "".join(emitter.out)
    return text[:-1] if text.endswith("\n") else text
