"""How Go prints the values a Helm template holds: ``%v``, ``quote``, ``toJson``, and the number forms.

The chart's templates print values with ``{{ .Values.x }}``, ``quote`` and ``toJson``; Helm does so
with Go's ``fmt`` and ``encoding/json``, and ``nvsentinel manifests`` must print the same bytes.
Values hold what Helm's hold: strings, booleans, integers (from ``--set``, Go int64), floats (every
number of a values file is a Go float64, so ``1000000`` there prints as ``1e+06``), None, lists and
maps with string keys. ``toYaml`` is in :mod:`shared.chart.goyaml`.

Left out: Go's printing of maps and lists with ``%v`` (the template subset refuses it) and
``json.Marshal`` of anything but those values.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from shared import strvals


class UnsupportedValue(ValueError):
    """``json.Marshal`` refuses the value (an infinite or NaN float)."""


# ------------------------------------------------------------------ floats
def _digits(value: float) -> tuple[str, int]:
    """The shortest digits that read back as ``value`` (as Go's and Python's), and the decimal point."""
    _sign, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    if text == "0":
        return "0", 1
    assert isinstance(exponent, int)
    return text, len(digits) + exponent


def _fmt_e(negative: bool, digits: str, point: int) -> str:
    exponent = point - 1 if digits != "0" else 0
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exponent < 0 else "+"
    return f"{'-' if negative else ''}{mantissa}e{sign}{abs(exponent):02d}"


def _fmt_f(negative: bool, digits: str, point: int) -> str:
    if digits == "0":
        text = "0"
    elif point <= 0:
        text = "0." + "0" * -point + digits
    elif point >= len(digits):
        text = digits + "0" * (point - len(digits))
    else:
        text = digits[:point] + "." + digits[point:]
    return ("-" if negative else "") + text


def format_float_g(value: float) -> str:
    """Go's ``strconv.FormatFloat(f, 'g', -1, 64)``, which is also ``%v``: ``1e+06``, ``0.0001``, ``1.5``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    negative = math.copysign(1.0, value) < 0
    digits, point = _digits(value)
    exponent = point - 1
    # strconv's shortest 'g' switches to the exponent form below 1e-4 and from 1e6 on ("eprec = 6").
    if digits != "0" and (exponent < -4 or exponent >= 6):
        return _fmt_e(negative, digits, point)
    return _fmt_f(negative, digits, point)


def format_float_json(value: float) -> str:
    """``encoding/json``'s float: ES6 number form, ``1e+21``, ``1e-7``; UnsupportedValue for Inf and NaN."""
    if math.isnan(value) or math.isinf(value):
        raise UnsupportedValue(f"json: unsupported value: {format_float_g(value)}")
    negative = math.copysign(1.0, value) < 0
    digits, point = _digits(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = _fmt_e(negative, digits, point)
        head, _, tail = text.partition("e")
        if tail.startswith("-0"):
            tail = "-" + tail[2:]
        return f"{head}e{tail}"
    return _fmt_f(negative, digits, point)


# ------------------------------------------------------------------ %v and quote
def format_value(value: Any) -> str:
    """Go's ``%v`` of a scalar value: ``true``, ``42``, ``1e+06``, the string itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float_g(value)
    return str(value)


def quote(value: Any) -> str:
    """sprig's ``quote``: Go's ``%q`` of the value printed with ``%v``; nothing for nil."""
    if value is None:
        return ""
    return strvals.go_quote(format_value(value))


# ------------------------------------------------------------------ toJson
_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def json_string(text: str) -> str:
    """A JSON string as ``json.Marshal`` writes it."""
    out = ['"']
    for char in text:
        if char in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[char])
        elif ord(char) < 0x20 or char in "<>&\u2028\u2029":
            # json.Marshal escapes HTML characters and the JavaScript line separators too.
            out.append(f"\\u{ord(char):04x}")
        elif 0xD800 <= ord(char) <= 0xDFFF:
            out.append("\\ufffd")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def to_json(value: Any) -> str:
    """``json.Marshal``: keys sorted, no spaces, HTML escaped; UnsupportedValue for Inf and NaN."""
    if isinstance(value, list | tuple):
        return "[" + ",".join(to_json(item) for item in value) + "]"
    if isinstance(value, dict):
        items = sorted((str(key), item) for key, item in value.items())
        return "{" + ",".join(f"{json_string(key)}:{to_json(item)}" for key, item in items) + "}"
    return _json_scalar(value)


def _json_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float_json(value)
    return json_string(value if isinstance(value, str) else str(value))
