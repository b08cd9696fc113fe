"""What Go's ``json.Unmarshal`` says about a byte string, for the Secret types that must hold JSON.

The server puts that error text into its 422 (``data[.dockerconfigjson]: Invalid value: "<secret
contents redacted>": invalid character 'o' in literal null (expecting 'u')``), so the scanner
below follows ``encoding/json/scanner.go``'s states and words: where a value, key, colon, comma
or literal letter was expected, and "unexpected end of JSON input". Only syntax and the top-level
type are judged — enough for ``map[string]interface{}``, the only target the server uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable

_WS = " \t\r\n"
_ESCAPES = '"\\/bfnrtu'
_HEX = "0123456789abcdefABCDEF"


class _Syntax(Exception):
    pass


def _quote(c: str) -> str:
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    return "'" + json.dumps(c)[1:-1] + "'"


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def peek(self) -> str:
        if self.pos >= len(self.text):
            raise _Syntax("unexpected end of JSON input")
        return self.text[self.pos]

    def fail(self, where: str) -> _Syntax:
        return _Syntax(f"invalid character {_quote(self.text[self.pos])} {where}")

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1

    def value(self) -> None:
        self.space()
        c = self.peek()
        if c == "{":
            self.pos += 1
            self.members("}", "looking for beginning of object key string", self.member, "after object key:value pair")
        elif c == "[":
            self.pos += 1
            self.members("]", "looking for beginning of value", self.value, "after array element")
        elif c == '"':
            self.string()
        elif c == "-" or c.isdigit():
            self.number()
        elif c in "tfn":
            word = {"t": "true", "f": "false", "n": "null"}[c]
            for expected in word[1:]:
                self.pos += 1
                if self.peek() != expected:
                    raise self.fail(f"in literal {word} (expecting {_quote(expected)})")
            self.pos += 1
        else:
            raise self.fail("looking for beginning of value")

    def members(self, close: str, first: str, item: Callable[[], None], after: str) -> None:
        self.space()
        if self.peek() == close:
            self.pos += 1
            return
        while True:
            self.space()
            if close == "}" and self.peek() != '"':
                raise self.fail(first)
            item()
            self.space()
            c = self.peek()
            if c == close:
                self.pos += 1
                return
            if c != ",":
                raise self.fail(after)
            self.pos += 1

    def member(self) -> None:
        self.string()
        self.space()
        if self.peek() != ":":
            raise self.fail("after object key")
        self.pos += 1
        self.value()

    def string(self) -> None:
        self.pos += 1
        while True:
            c = self.peek()
            if c == '"':
                self.pos += 1
                return
            if c == "\\":
                self.pos += 1
                if self.peek() not in _ESCAPES:
                    raise self.fail("in string escape code")
                if self.peek() == "u":
                    for _ in range(4):
                        self.pos += 1
                        if self.peek() not in _HEX:
                            raise self.fail("in \\u hexadecimal character escape")
            elif ord(c) < 0x20:
                raise self.fail("in string literal")
            self.pos += 1

    def digits(self, where: str) -> None:
        if not self.peek().isdigit():
            raise self.fail(where)
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1

    def number(self) -> None:
        if self.peek() == "-":
            self.pos += 1
        if self.peek() == "0":
            self.pos += 1
        else:
            self.digits("in numeric literal")
        if self.pos < len(self.text) and self.text[self.pos] == ".":
            self.pos += 1
            self.digits("after decimal point in numeric literal")
        if self.pos < len(self.text) and self.text[self.pos] in "eE":
            self.pos += 1
            if self.peek() in "+-":
                self.pos += 1
            self.digits("in exponent of numeric literal")


def unmarshal_map_error(raw: bytes) -> str | None:
    """The error of ``json.Unmarshal(raw, &map[string]interface{}{})``, or None when it succeeds."""
    text = raw.decode("utf-8", "replace")
    scanner = _Scanner(text)
    try:
        scanner.value()
        scanner.space()
        if scanner.pos < len(text):
            raise scanner.fail("after top-level value")
    except _Syntax as exc:
        return str(exc)
    first = text.strip()[0]
    kind = {"{": "", "[": "array", '"': "string", "t": "bool", "f": "bool", "n": ""}.get(first, "number")
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}" if kind else None
