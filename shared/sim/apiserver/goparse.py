"""The value parsers kube-apiserver's Go decoder runs inside a JSON body, with their error texts.

When a built-in object is decoded, a few field types parse their value themselves and fail the
whole request (400) when it does not parse: ``resource.Quantity`` (``cpu: "2 cores"``),
``metav1.Time``/``MicroTime`` (RFC 3339 timestamps) and ``[]byte`` fields (base64 ``Secret.data``).
Each function here returns the error text the Go code produces, or ``None`` when the value parses.
Only the checks are ported, not the values: nothing here computes a quantity or a time.

Sources: ``apimachinery:pkg/api/resource/quantity.go`` (``ParseQuantity``, ``parseQuantityString``,
suffix tables), Go's ``time/format.go`` (``Parse``, ``ParseError.Error``, ``quote``) and
``encoding/base64/base64.go`` (``decodeQuantum``, ``CorruptInputError``).
"""

from __future__ import annotations

QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
QUANTITY_SUFFIX = "unable to parse quantity's suffix"

_DIGITS = "0123456789"
_SUFFIX_CHARS = "eEinumkKMGTP"
_SUFFIXES = frozenset({"n", "u", "m", "", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"})


def quantity_error(text: str) -> str | None:
    """``resource.ParseQuantity``'s error for ``text`` (a JSON string's content or a number's literal)."""
    if not text:
        return QUANTITY_FORMAT
    if text == "0":
        return None
    end, pos = len(text), 0
    if text[0] in "+-":
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return None
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end and text[pos] == ".":
        pos += 1
        while pos < end and text[pos] in _DIGITS:
            pos += 1
    if pos >= end:
        return None
    start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        return QUANTITY_FORMAT
    suffix = text[start:]
    if suffix in _SUFFIXES:
        return None
    if len(suffix) > 1 and suffix[0] in "eE" and _go_int(suffix[1:]):
        return None
    return QUANTITY_SUFFIX


def _go_int(text: str) -> bool:
    """strconv.ParseInt(text, 10, 64) succeeds."""
    body = text[1:] if text[:1] in ("+", "-") else text
    return bool(body) and all(c in _DIGITS for c in body) and -(2**63) <= int(text) < 2**63


# ---------------------------------------------------------------- time.Parse

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
# The layouts split as Go's nextStdChunk splits them: (literal prefix, element).
_CHUNKS = {
    RFC3339: (("", "2006"), ("-", "01"), ("-", "02"), ("T", "15"), (":", "04"), (":", "05"), ("", "Z07:00")),
    RFC3339_MICRO: (
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", ".000000"),
        ("", "Z07:00"),
    ),
}
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def go_quote(text: str) -> str:
    """Go's time.quote: double quotes, ``"`` and ``\\`` escaped, other bytes outside printable ASCII as ``\\xNN``."""
    out = ['"']
    for ch in text:
        if ch < " " or ord(ch) >= 0x80:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        elif ch in '"\\':
            out.append("\\" + ch)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _num(value: str, *, fixed: bool) -> tuple[int, str] | None:
    """Go's getnum: one or two leading digits (exactly two when ``fixed``)."""
    if not value or value[0] not in _DIGITS:
        return None
    if len(value) < 2 or value[1] not in _DIGITS:
        return None if fixed else (int(value[0]), value[1:])
    return int(value[:2]), value[2:]


def time_error(text: str, layout: str = RFC3339) -> str | None:
    """``time.Parse(layout, text)``'s error for the RFC 3339 layouts metav1.Time and MicroTime use."""
    value = text
    year = month = day = 0

    def bad(element: str, rest: str) -> str:
        return (
            f"parsing time {go_quote(text)} as {go_quote(layout)}: cannot parse {go_quote(rest)} as {go_quote(element)}"
        )

    def out_of_range(what: str) -> str:
        return f"parsing time {go_quote(text)}: {what} out of range"

    for prefix, element in _CHUNKS[layout]:
        if not value.startswith(prefix):
            return bad(prefix, value)
        value = value[len(prefix) :]
        hold = value
        if element == "2006":
            if len(value) < 4 or not value[:4].isascii() or not value[:4].isdigit():
                return bad(element, hold)
            year, value = int(value[:4]), value[4:]
        elif element in ("01", "02", "15", "04", "05"):
            got = _num(value, fixed=element != "15")
            if got is None:
                return bad(element, hold)
            number, value = got
            limits = {"01": ("month", 1, 12), "15": ("hour", 0, 23), "04": ("minute", 0, 59), "05": ("second", 0, 59)}
            if element == "02":
                day = number
            elif element in limits:
                what, low, high = limits[element]
                if not low <= number <= high:
                    return out_of_range(what)
                if element == "01":
                    month = number
            if element == "05" and layout == RFC3339 and len(value) >= 2 and value[0] in ".," and value[1] in _DIGITS:
                n = 2
                while n < len(value) and value[n] in _DIGITS:
                    n += 1
                value = value[n:]  # digits past the ninth are read and dropped
        elif element == ".000000":
            if len(value) < 7 or value[0] not in ".," or not all(c in _DIGITS for c in value[1:7]):
                return bad(element, hold)
            value = value[7:]
        elif value.startswith("Z"):
            value = value[1:]
        else:
            if len(value) < 6 or value[3] != ":":
                return bad(element, hold)
            hours, minutes = _num(value[1:3], fixed=True), _num(value[4:6], fixed=True)
            if hours is None or minutes is None or value[0] not in "+-":
                return bad(element, hold)
            value = value[6:]
            # Go compares with > (offsets of 24 hours or 60 minutes are written) and reports the last one.
            if minutes[0] > 60:
                return out_of_range("time zone offset minute")
            if hours[0] > 24:
                return out_of_range("time zone offset hour")
    if value:
        return f"parsing time {go_quote(text)}: extra text: {go_quote(value)}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if day < 1 or day > (29 if month == 2 and leap else _DAYS[month - 1]):
        return out_of_range("day")
    return None


# ---------------------------------------------------------------- base64

_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> str | None:
    """``base64.StdEncoding.Decode``'s error for ``text`` (``[]byte`` fields such as ``Secret.data``)."""
    src = text.encode("utf-8", "surrogatepass")
    si, end = 0, len(src)
    while True:
        j = 0
        while j < 4:
            if si == end:
                if j == 0:
                    return None
                return _corrupt(si - j)
            ch = chr(src[si])
            si += 1
            if ch in _B64:
                j += 1
                continue
            if ch in "\r\n":
                continue
            if ch != "=":
                return _corrupt(si - 1)
            # Padding: only after two or three characters of a quantum, and the input ends with it.
            if j in (0, 1):
                return _corrupt(si - 1)
            if j == 2:
                while si < end and src[si] in b"\r\n":
                    si += 1
                if si == end:
                    return _corrupt(end)
                if src[si] != ord("="):
                    return _corrupt(si - 1)
                si += 1
            while si < end and src[si] in b"\r\n":
                si += 1
            if si < end:
                return _corrupt(si)
            return None


def _corrupt(offset: int) -> str:
    return f"illegal base64 data at input byte {offset}"
