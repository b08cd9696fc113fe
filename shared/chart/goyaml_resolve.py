"""go-yaml v2's resolver, for :mod:`shared.chart.goyaml`: which plain strings read back as another type.

go-yaml v2's encoder double-quotes a string when its ``resolve`` would not give ``!!str`` for the
plain text: YAML 1.1 booleans and nulls (``yes``, ``off``, ``~``), numbers as Go's ``strconv``
parses them (``0x10``, ``1_000``, ``.5``), timestamps in the layouts ``parseTimestamp`` tries, and
YAML 1.1 base-60 numbers (``1:20``). Only the decision is here; the emitter writes the quotes.
"""

from __future__ import annotations

import datetime
import re

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


def needs_quotes(text: str) -> bool:
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
