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


def _skip(text: str, pos: int, chars: str) -> int:
    """The position past the run of ``chars`` that starts at ``pos``."""
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def quantity_error(text: str) -> str | None:
    """``resource.ParseQuantity``'s error for ``text`` (a JSON string's content or a number's literal)."""
    if not text:
        return QUANTITY_FORMAT
    pos = _skip(text, 1 if text[0] in "+-" else 0, "0")
    if pos >= len(text):
        return None
    pos = _skip(text, pos, _DIGITS)
    if text.startswith(".", pos):
        pos = _skip(text, pos + 1, _DIGITS)
    if pos >= len(text):
        return None
    return _suffix_error(text, pos)


def _suffix_error(text: str, start: int) -> str | None:
    """parseQuantityString's suffix rules for ``text[start:]`` (what follows the number)."""
    pos = _skip(text, start, _SUFFIX_CHARS)
    if text.startswith(("+", "-"), pos):
        pos += 1
    if _skip(text, pos, _DIGITS) < len(text):
        return QUANTITY_FORMAT
    suffix = text[start:]
    if suffix in _SUFFIXES or (len(suffix) > 1 and suffix[0] in "eE" and _go_int(suffix[1:])):
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


_LIMITS = {"01": ("month", 1, 12), "15": ("hour", 0, 23), "04": ("minute", 0, 59), "05": ("second", 0, 59)}


class _TimeParse:
    """One ``time.Parse`` run: the text left to read and the date read so far."""

    def __init__(self, text: str, layout: str) -> None:
        self.text = text
        self.layout = layout
        self.value = text
        self.year = self.month = self.day = 0

    def bad(self, element: str, rest: str) -> str:
        return (
            f"parsing time {go_quote(self.text)} as {go_quote(self.layout)}: cannot parse {go_quote(rest)} as"
            f" {go_quote(element)}"
        )

    def out_of_range(self, what: str) -> str:
        return f"parsing time {go_quote(self.text)}: {what} out of range"

    def year_element(self, element: str) -> str | None:
        digits = self.value[:4]
        if len(self.value) < 4 or not digits.isascii() or not digits.isdigit():
            return self.bad(element, self.value)
        self.year, self.value = int(digits), self.value[4:]
        return None

    def number_element(self, element: str) -> str | None:
        """Month, day, hour, minute or second: one or two digits (two but for the hour), range-checked."""
        got = _num(self.value, fixed=element != "15")
        if got is None:
            return self.bad(element, self.value)
        number, self.value = got
        if element == "02":
            self.day = number  # checked against the month at the end
        else:
            what, low, high = _LIMITS[element]
            if not low <= number <= high:
                return self.out_of_range(what)
            if element == "01":
                self.month = number
        if element == "05" and self.layout == RFC3339:
            self._drop_fraction()
        return None

    def _drop_fraction(self) -> None:
        """After the seconds of a layout without a fraction, Go reads one anyway (digits past the ninth dropped)."""
        value = self.value
        if len(value) >= 2 and value[0] in ".," and value[1] in _DIGITS:
            self.value = value[_skip(value, 2, _DIGITS) :]

    def fraction_element(self, element: str) -> str | None:
        value = self.value
        if len(value) < 7 or value[0] not in ".," or not all(c in _DIGITS for c in value[1:7]):
            return self.bad(element, value)
        self.value = value[7:]
        return None

    def zone_element(self, element: str) -> str | None:
        value = self.value
        if value.startswith("Z"):
            self.value = value[1:]
            return None
        if len(value) < 6 or value[3] != ":":
            return self.bad(element, value)
        hours, minutes = _num(value[1:3], fixed=True), _num(value[4:6], fixed=True)
        if hours is None or minutes is None or value[0] not in "+-":
            return self.bad(element, value)
        self.value = value[6:]
        # Go compares with > (offsets of 24 hours or 60 minutes are written) and reports the last one.
        if minutes[0] > 60:
            return self.out_of_range("time zone offset minute")
        if hours[0] > 24:
            return self.out_of_range("time zone offset hour")
        return None

    def finish(self) -> str | None:
        """Nothing may follow the layout, and the day must exist in its month."""
        if self.value:
            return f"parsing time {go_quote(self.text)}: extra text: {go_quote(self.value)}"
        year, month = self.year, self.month
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        if self.day < 1 or self.day > (29 if month == 2 and leap else _DAYS[month - 1]):
            return self.out_of_range("day")
        return None


_ELEMENTS = {
    "2006": _TimeParse.year_element,
    "01": _TimeParse.number_element,
    "02": _TimeParse.number_element,
    "15": _TimeParse.number_element,
    "04": _TimeParse.number_element,
    "05": _TimeParse.number_element,
    ".000000": _TimeParse.fraction_element,
    "Z07:00": _TimeParse.zone_element,
}


def time_error(text: str, layout: str = RFC3339) -> str | None:
    """``time.Parse(layout, text)``'s error for the RFC 3339 layouts metav1.Time and MicroTime use."""
    parse = _TimeParse(text, layout)
    for prefix, element in _CHUNKS[layout]:
        if not parse.value.startswith(prefix):
            return parse.bad(prefix, parse.value)
        parse.value = parse.value[len(prefix) :]
        if problem := _ELEMENTS[element](parse, element):
            return problem
    return parse.finish()


# ---------------------------------------------------------------- base64

_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def base64_error(text: str) -> str | None:
    """``base64.StdEncoding.Decode``'s error for ``text`` (``[]byte`` fields such as ``Secret.data``)."""
    src = text.encode("utf-8", "surrogatepass")
    si = quantum = 0  # quantum: characters read of the current group of four
    while si < len(src):
        ch = chr(src[si])
        si += 1
        if ch in _B64:
            quantum = (quantum + 1) % 4
        elif ch == "=":
            return _padding_error(src, si, quantum)
        elif ch not in "\r\n":
            return _corrupt(si - 1)
    return None if quantum == 0 else _corrupt(si - quantum)


def _skip_newlines(src: bytes, si: int) -> int:
    while si < len(src) and src[si] in b"\r\n":
        si += 1
    return si


def _padding_error(src: bytes, si: int, quantum: int) -> str | None:
    """Padding (``si`` is past its first ``=``): only after two or three characters of a quantum, and the
    input ends with it."""
    if quantum in (0, 1):
        return _corrupt(si - 1)
    end = len(src)
    if quantum == 2:
        si = _skip_newlines(src, si)
        if si == end:
            return _corrupt(end)
        if src[si] != ord("="):
            return _corrupt(si - 1)
        si += 1
    si = _skip_newlines(src, si)
    return _corrupt(si) if si < end else None


def _corrupt(offset: int) -> str:
    return f"illegal base64 data at input byte {offset}"
