"""Helm's ``--set`` and ``--set-string`` syntax, read the way helm reads it (``pkg/strvals/parser.go``).

One parser for every ``--set`` the programs take: ``nvsentinel manifests`` / ``nvcrectl manifests``
read whole expressions into chart values with :func:`parse_into`; ``aicr bundle --set
COMPONENT:path=value`` types its value with :func:`typed_value`. It is a base module (standard
library and ``shared.errors`` only).

The rules, each checked against helm 3.19 and 4.1 by ``tests/ship/test_helm_parity.py``:

- ``a.b=1,c[0]=x,d={p,q}``: ``,`` separates assignments, ``.`` nests maps, ``[N]`` indexes lists
  (gaps are filled with null; at most index 65536, at most 30 nested names), ``{…}`` is a list;
- a backslash takes the next character literally anywhere (``\\,`` ``\\.`` ``\\=`` ``\\[``);
- typing (``--set`` only): ``true``/``false``/``null`` in any letter case become booleans and null;
  ``0`` and integers not starting with ``0`` that fit int64 become integers (``-01`` is -1, ``+5``
  is 5, ``010``, ``1.5``, ``1e3`` and ``0x10`` stay strings); ``a=`` is the empty string and
  ``a={}`` the list ``[""]`` (helm's result, not an empty list); ``--set-string`` keeps every value
  a string;
- expressions are read into the values given so far (values files, earlier ``--set``), so
  ``l[1]=x`` changes one item of an existing list, and a path through a value of another type
  fails with helm's message; a null is stored as null and deletes the chart's key later, when the
  values are coalesced (``shared.chart.values``);
- errors carry helm's text, e.g. ``key "a" has no value``.

It leaves out ``--set-json``, ``--set-file`` and ``--set-literal``.
"""

from __future__ import annotations

import re
from typing import Any

from shared import errors

MAX_INDEX = 65536
"""helm's ``strvals.MaxIndex``."""
MAX_NESTED_NAME_LEVEL = 30
"""helm's ``strvals.MaxNestedNameLevel``."""

_INT = re.compile(r"[+-]?[0-9]+")


class SetSyntaxError(Exception):
    """A ``--set`` expression helm refuses; the message is helm's text."""


class _EOF(Exception):
    """The expression ended (helm's ``io.EOF``), which at the right place is success."""


class _NotList(Exception):
    """The value does not start with ``{`` (helm's ``ErrNotList``)."""


# ------------------------------------------------------------------ typing
def _fold_equal(text: str, word: str) -> bool:
    """Go's ``strings.EqualFold`` for the ASCII words helm compares with."""
    return len(text) == len(word) and text.casefold() == word


def typed_value(text: str) -> Any:
    """helm's ``typedVal``: true/false/null in any case, int64 without a leading zero, else the text."""
    if _fold_equal(text, "true"):
        return True
    if _fold_equal(text, "false"):
        return False
    if _fold_equal(text, "null"):
        return None
    if text == "0":
        return 0
    if text and text[0] != "0" and _INT.fullmatch(text):
        number = int(text)
        if -(2**63) <= number < 2**63:
            return number
    return text


# ------------------------------------------------------------------ Go type names for helm's messages
_GO_TYPE_NAMES: tuple[tuple[type, str], ...] = (
    (bool, "bool"),  # before int: a Python bool is an int
    (int, "int64"),
    (float, "float64"),
    (str, "string"),
    (list, "[]interface {}"),
    (dict, "map[string]interface {}"),
)


def go_type(value: Any) -> str:
    """The Go type helm's values hold for ``value`` (``--set`` integers are int64, file numbers float64)."""
    if value is None:
        return "nil"
    return next((name for kind, name in _GO_TYPE_NAMES if isinstance(value, kind)), type(value).__name__)


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``)."""
    return '"' + "".join(_go_escape(char, '"') for char in text) + '"'


def _go_quote_rune(char: str) -> str:
    return "'" + _go_escape(char, "'") + "'"


_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v"}


def _go_escape(char: str, quote: str) -> str:
    if char in (quote, "\\"):
        return "\\" + char
    if char.isprintable():
        return char
    if char in _GO_ESCAPES:
        return _GO_ESCAPES[char]
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _conversion(value: Any, wanted: str) -> SetSyntaxError:
    # helm recovers the panic of a failed Go type assertion into this message.
    text = f"interface conversion: interface {{}} is {go_type(value)}, not {wanted}"
    return SetSyntaxError(f"unable to parse key: {text}")


_MAP = "map[string]interface {}"
_LIST = "[]interface {}"


# ------------------------------------------------------------------ the parser
class _Parser:
    """A port of helm's ``parser``: reads runes, writes into ``data`` as it goes."""

    def __init__(self, text: str, *, as_string: bool) -> None:
        self.text = text
        self.pos = 0
        self.as_string = as_string

    # -- reading
    def _read(self) -> str:
        if self.pos >= len(self.text):
            raise _EOF
        char = self.text[self.pos]
        self.pos += 1
        return char

    def _until(self, stop: str) -> tuple[str, str | None]:
        """helm's ``runesUntil``: text up to a stop rune, with ``\\x`` meaning x; stop None at the end."""
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char in stop:
                return "".join(out), char
            if char == "\\":
                if self.pos >= len(self.text):
                    return "".join(out), None
                out.append(self.text[self.pos])
                self.pos += 1
                continue
            out.append(char)
        return "".join(out), None

    def _typed(self, text: str) -> Any:
        return text if self.as_string else typed_value(text)

    # -- grammar
    def parse(self, data: dict[str, Any]) -> None:
        while True:
            try:
                self._key(data, 0)
            except _EOF:
                return

    def _key(self, data: dict[str, Any], level: int) -> None:
        """One assignment into ``data``; returns normally when more may follow, raises _EOF at the end."""
        key, last = self._until("=[,.")
        if last is None:
            if not key:
                raise _EOF
            raise SetSyntaxError(f"key {go_quote(key)} has no value")
        if last == ",":
            raise SetSyntaxError(f"key {go_quote(key)} has no value (cannot end with ,)")
        if last == "[":
            self._key_index(data, key, level)
        elif last == "=":
            self._key_value(data, key)
        else:  # last == "."
            self._key_nested(data, key, level + 1)

    def _key_index(self, data: dict[str, Any], key: str, level: int) -> None:
        """``key[N]…``: the rest of the assignment goes into the list at ``key``."""
        index = self._bracketed_index()
        existing = data.get(key, [])
        if key in data and not isinstance(existing, list):
            raise _conversion(existing, _LIST)
        # helm hands the list itself down (items are changed in place) and stores what comes back,
        # or, when the expression ends early, the list as it stands.
        try:
            items = self._list_item(existing, index, level)
        except _EOF:
            _set(data, key, existing)
            raise
        _set(data, key, items)

    def _key_value(self, data: dict[str, Any], key: str) -> None:
        """``key=…``: a ``{…}`` list or one typed value."""
        try:
            value = self._value_list()
        except _EOF:
            _set(data, key, "")
            raise
        except _NotList:
            text, _ = self._until(",")
            value = self._typed(text)
        _set(data, key, value)

    def _key_nested(self, data: dict[str, Any], key: str, level: int) -> None:
        """``key.…``: the rest of the assignment goes into the map at ``key``, one level down."""
        if level > MAX_NESTED_NAME_LEVEL:
            raise SetSyntaxError(
                f"value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
            )
        inner = data.get(key, {})
        if key in data and not isinstance(inner, dict):
            raise _conversion(inner, _MAP)
        try:
            self._key(inner, level)
        except _EOF:
            if inner:
                _set(data, key, inner)
            raise
        if not inner:
            raise SetSyntaxError(f"key map {go_quote(key)} has no value")
        _set(data, key, inner)

    def _bracketed_index(self) -> int:
        """The ``N]`` after a ``[``, with helm's prefix on its error."""
        try:
            return self._index()
        except SetSyntaxError as exc:
            raise SetSyntaxError(f"error parsing index: {exc}") from None

    def _index(self) -> int:
        text, last = self._until("]")
        if last is None:
            # helm 3 refuses ``a[`` like this; helm 4 takes the wrapped io.EOF for the end and ignores it.
            raise SetSyntaxError("EOF")
        return _atoi(text)

    def _list_item(self, items: list[Any], index: int, level: int) -> list[Any]:
        if index < 0:
            raise SetSyntaxError(f"negative {index} index not allowed")
        rest, last = self._until("[.=")
        if rest:
            raise SetSyntaxError(f"unexpected data at end of array index: [{' '.join(map(_go_quote_rune, rest))}]")
        if last is None:
            raise _EOF
        if last == "=":
            return _set_index(items, index, self._item_value())
        if last == "[":
            return self._item_list(items, index, level)
        return self._item_map(items, index, level)  # last == "."

    def _item_value(self) -> Any:
        """The value after ``[N]=``: a ``{…}`` list, one typed value, or "" when nothing follows."""
        try:
            return self._value_list()
        except _EOF:
            return ""
        except _NotList:
            text, _ = self._until(",")
            return self._typed(text)

    def _item_list(self, items: list[Any], index: int, level: int) -> list[Any]:
        """``[N][M]…``: the rest goes into the list at ``items[index]``."""
        inner_index = self._bracketed_index()
        current: list[Any] = []
        if index < len(items) and items[index] is not None:
            if not isinstance(items[index], list):
                raise _conversion(items[index], _LIST)
            current = items[index]
        # On _EOF helm leaves the item as it was (an inner list changed in place stays changed).
        inner = self._list_item(current, inner_index, level)
        return _set_index(items, index, inner)

    def _item_map(self, items: list[Any], index: int, level: int) -> list[Any]:
        """``[N].…``: the rest goes into the map at ``items[index]``."""
        mapping: dict[str, Any] = {}
        if index < len(items):
            if isinstance(items[index], dict):
                mapping = items[index]
            else:
                # helm: "indices out of order" – anything but a map there is replaced by one.
                items[index] = mapping
        # On _EOF helm does not store a new map (one already in the list was changed in place).
        self._key(mapping, level)
        return _set_index(items, index, mapping)

    def _value_list(self) -> list[Any]:
        """``{a,b}`` → a list; _NotList when the value is not a list; _EOF when nothing follows ``=``."""
        first = self._read()
        if first != "{":
            self.pos -= 1
            raise _NotList
        items: list[Any] = []
        while True:
            text, last = self._until(",}")
            if last is None:
                raise SetSyntaxError("list must terminate with '}'")
            items.append(self._typed(text))
            if last == "}":
                if self.pos < len(self.text) and self.text[self.pos] == ",":
                    self.pos += 1
                return items


def _atoi(text: str) -> int:
    """Go's ``strconv.Atoi`` with its error text."""
    if not _INT.fullmatch(text):
        raise SetSyntaxError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    number = int(text)
    if not -(2**63) <= number < 2**63:
        raise SetSyntaxError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return number


def _set(data: dict[str, Any], key: str, value: Any) -> None:
    # helm skips an empty key silently (``--set =1`` sets nothing).
    if key:
        data[key] = value


def _set_index(items: list[Any], index: int, value: Any) -> list[Any]:
    if index < 0:
        raise SetSyntaxError(f"negative {index} index not allowed")
    if index > MAX_INDEX:
        raise SetSyntaxError(f"index of {index} is greater than maximum supported index of {MAX_INDEX}")
    while len(items) <= index:
        items.append(None)
    items[index] = value
    return items


# ------------------------------------------------------------------ entry points
def parse_into(expression: str, values: dict[str, Any], *, as_string: bool = False, flag: str = "--set") -> None:
    """Read ``expression`` into ``values`` in place, as ``helm --set`` (``as_string``: ``--set-string``).

    Raises InvalidInput with helm's message, ``where`` naming the flag and the expression; on error
    ``values`` may hold part of the expression, as helm's does (callers discard it).
    """
    try:
        _Parser(expression, as_string=as_string).parse(values)
    except SetSyntaxError as exc:
        raise errors.InvalidInput(str(exc), where=f"{flag} {expression!r}") from None


def parse(expression: str, *, as_string: bool = False, flag: str = "--set") -> dict[str, Any]:
    """``expression`` read into empty values (helm's ``strvals.Parse`` / ``ParseString``)."""
    values: dict[str, Any] = {}
    parse_into(expression, values, as_string=as_string, flag=flag)
    return values
