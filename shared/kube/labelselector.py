"""Label selectors as a Kubernetes API server reads, matches and prints them.

A port of apimachinery's ``pkg/labels/selector.go`` (the lexer, the recursive-descent parser,
``NewRequirement``'s checks, ``Requirement.Matches`` and ``String``), so text that a real server
refuses is refused here with the server's words, and what it accepts means the same here:
``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``, ``!a``, ``a>1``, ``a<1``,
comma-separated, requirements sorted by key and set values sorted, as the server keeps them.

Base layer and pure Python (no ``kubernetes`` import), so the drain's ``podDrainPolicies`` and a
simulated API server can both use it. Field selectors are another grammar and are not read here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from shared import grammars

Operator = Literal["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]
"""selection.Operator: ``exists`` is a bare key, ``!`` a key that must be absent."""

_INT64 = (-(2**63), 2**63 - 1)
_WHITESPACE = " \t\r\n"
_SPECIAL = "=!(),><"
_TOKENS = frozenset({")", ",", "!", "==", "=", ">", "in", "<", "!=", "notin", "("})
"""The lexer's string2token: every word that is not an identifier."""
_BINARY = "in, notin, =, ==, !=, gt, lt"
_OPERATORS: dict[str, Operator] = {"in": "in", "notin": "notin", "=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt"}
_WRITTEN = {"=": "=", "==": "==", "!=": "!=", "in": " in ", "notin": " notin ", "gt": ">", "lt": "<"}

# the label formats (IsQualifiedName, IsValidLabelValue) are shared.grammars'
label_key_problems = grammars.label_key_problems
label_value_problems = grammars.label_value_problems


class SelectorError(ValueError):
    """A selector the server refuses: ``reason`` is the server's message, ``selector`` the text."""

    def __init__(self, reason: str, selector: str) -> None:
        super().__init__(f"label selector {selector!r}: {reason}")
        self.reason = reason
        self.selector = selector


@dataclass(frozen=True)
class Requirement:
    """``key op values``: values sorted and unique, empty for ``exists`` and ``!``."""

    key: str
    op: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``Requirement.Matches``: a missing label satisfies ``!=``, ``notin`` and ``!`` only."""
        value = labels.get(self.key)
        if self.op in ("exists", "!"):
            return (value is not None) == (self.op == "exists")
        if value is None:
            return self.op in ("!=", "notin")
        if self.op in ("gt", "lt"):
            return _compare(self.op, value, self.values)
        return (value in self.values) == (self.op in ("=", "==", "in"))

    def __str__(self) -> str:
        """``Requirement.String``: what ``parse`` reads back as this requirement."""
        if self.op in ("exists", "!"):
            return ("!" if self.op == "!" else "") + self.key
        listed = ",".join(self.values)
        return (
            f"{self.key}{_WRITTEN[self.op]}({listed})"
            if self.op in ("in", "notin")
            else self.key + _WRITTEN[self.op] + listed
        )


def _compare(op: str, value: str, wanted: tuple[str, ...]) -> bool:
    have, want = _int64(value), _int64(wanted[0]) if len(wanted) == 1 else None
    if have is None or want is None:
        return False
    return have > want if op == "gt" else have < want


def _int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: an optional sign and decimal digits, in range."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    number = int(text)
    return number if _INT64[0] <= number <= _INT64[1] else None


def matches(requirements: Iterable[Requirement], labels: Mapping[str, str]) -> bool:
    """True when ``labels`` meet every requirement (the empty selector matches everything)."""
    return all(r.matches(labels) for r in requirements)


def format(requirements: Iterable[Requirement]) -> str:
    """The selector as the server prints it: requirements joined by commas."""
    return ",".join(str(r) for r in requirements)


def parse(text: str) -> tuple[Requirement, ...]:
    """Parse a label selector; SelectorError with the server's message when it refuses one."""
    try:
        found = _Parser(_lex(text)).selector()
    except _Refused as exc:
        raise SelectorError(str(exc), text) from None
    return tuple(sorted(found, key=lambda r: r.key))


# ---------------------------------------------------------------- printing problems


def _quote(text: str) -> str:
    """Go's ``%q`` for the printable text a selector holds."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _invalid(path: str, value: str, problems: list[str]) -> str:
    return f"{path}: Invalid value: {_quote(value)}: {'; '.join(problems)}"


def _requirement_problems(key: str, op: Operator, values: list[str]) -> str:
    """``NewRequirement``'s field errors for what the parser hands it, aggregated as apimachinery
    prints them ("" when none). The parser has checked the key and the number of values already."""
    found = [
        f"values[{i}]: Invalid value: {_quote(v)}: for 'Gt', 'Lt' operators, the value must be an integer"
        for i, v in enumerate(values)
        if op in ("gt", "lt") and _int64(v) is None
    ]
    found += [_invalid(f"values[{i}][{key}]", v, p) for i, v in enumerate(values) if (p := label_value_problems(v))]
    unique = list(dict.fromkeys(found))
    if len(unique) > 1:
        return f"[{', '.join(unique)}]"
    return unique[0] if unique else ""


# ---------------------------------------------------------------- lexer and parser


@dataclass(frozen=True)
class _Token:
    kind: str
    """An entry of ``_TOKENS``, ``identifier``, or ``end``."""
    text: str


class _Refused(Exception):
    """The parser's message; ``parse`` raises it as a SelectorError."""


def _lex(text: str) -> list[_Token]:
    """``Lexer.Lex`` to the end: identifiers run to whitespace or a symbol; symbols match longest.

    A NUL character ends the input, as the Go lexer reads byte 0 as the end of the string.
    """
    source = text.split("\x00", 1)[0]
    tokens: list[_Token] = []
    at = 0
    while True:
        while at < len(source) and source[at] in _WHITESPACE:
            at += 1
        if at == len(source):
            return [*tokens, _Token("end", "")]
        end = _symbol_end(source, at) if source[at] in _SPECIAL else _identifier_end(source, at)
        word = source[at:end]
        tokens.append(_Token(word if word in _TOKENS else "identifier", word))
        at = end


def _symbol_end(source: str, at: int) -> int:
    end = at + 1  # every single symbol is a token; two make one only as == or !=
    if end < len(source) and source[at : end + 1] in _TOKENS:
        end += 1
    return end


def _identifier_end(source: str, at: int) -> int:
    end = at
    while end < len(source) and source[end] not in _SPECIAL and source[end] not in _WHITESPACE:
        end += 1
    return end


class _Parser:
    """``Parser``: ``in`` and ``notin`` are operators after a key and identifiers everywhere else."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self, *, values: bool = True) -> _Token:
        return self._as(self.tokens[self.at], values)

    def take(self, *, values: bool = True) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return self._as(token, values)

    @staticmethod
    def _as(token: _Token, values: bool) -> _Token:
        return _Token("identifier", token.text) if values and token.kind in ("in", "notin") else token

    def selector(self) -> list[Requirement]:
        found: list[Requirement] = []
        while True:
            token = self.peek()
            if token.kind == "end":
                return found
            if token.kind not in ("identifier", "!"):
                raise _Refused(f"found '{token.text}', expected: !, identifier, or 'end of string'")
            found.append(self.requirement())
            after = self.take()
            if after.kind == "end":
                return found
            if after.kind != ",":
                raise _Refused(f"found '{after.text}', expected: ',' or 'end of string'")
            if (following := self.peek()).kind not in ("identifier", "!"):
                raise _Refused(f"found '{following.text}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        try:
            key, op = self.key()
            values = self.operand(op) if op not in ("exists", "!") else []
            problems = _requirement_problems(key, op, values)
        except _Refused as exc:
            raise _Refused(f"unable to parse requirement: {exc}") from None
        if problems:
            raise _Refused(f"unable to parse requirement: {problems}")
        return Requirement(key, op, tuple(values))

    def key(self) -> tuple[str, Operator]:
        token = self.take()
        absent = token.kind == "!"
        if absent:
            token = self.take()
        if token.kind != "identifier":
            raise _Refused(f"found '{token.text}', expected: identifier")
        if problems := label_key_problems(token.text):
            raise _Refused(_invalid("<nil>", token.text, problems))
        if absent:
            return token.text, "!"
        if self.peek().kind in ("end", ","):
            return token.text, "exists"
        operator = self.take(values=False)
        if operator.kind not in _OPERATORS:
            raise _Refused(f"found '{operator.text}', expected: {_BINARY}")
        return token.text, _OPERATORS[operator.kind]

    def operand(self, op: Operator) -> list[str]:
        if op not in ("in", "notin"):
            return self.exact_value()
        opening = self.take()
        if opening.kind != "(":
            raise _Refused(f"found '{opening.text}' expected: '('")
        first = self.peek()
        if first.kind == ")":
            self.take()
            return [""]
        if first.kind not in ("identifier", ","):
            raise _Refused(f"found '{first.text}', expected: ',', ')' or identifier")
        listed = self.identifiers()
        self.take()  # the ")" ``identifiers`` stopped at
        return sorted(listed)

    def identifiers(self) -> set[str]:
        """``parseIdentifiersList``: empty members (``(,a)``, ``(a,,b)``, ``(a,)``) are ""."""
        found: set[str] = set()
        while True:
            token = self.take()
            if token.kind == "identifier":
                found.add(token.text)
                following = self.peek()
                if following.kind == ")":
                    return found
                if following.kind != ",":
                    raise _Refused(f"found '{following.text}', expected: ',' or ')'")
            elif token.kind == ",":
                if not found or self.peek().kind in (")", ","):
                    found.add("")
                if self.peek().kind == ")":
                    return found
                if self.peek().kind == ",":
                    self.take()
            else:
                raise _Refused(f"found '{token.text}', expected: ',', or identifier")

    def exact_value(self) -> list[str]:
        if self.peek().kind in ("end", ","):
            return [""]
        token = self.take()
        if token.kind != "identifier":
            raise _Refused(f"found '{token.text}', expected: identifier")
        return [token.text]
