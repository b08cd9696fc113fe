"""String formats a custom resource value is checked against (``format:`` in a CRD schema).

Only the formats the real server checks: kube-openapi's strfmt registry as the apiextensions
server keeps it (apiextensions-apiserver:pkg/apiserver/validation/formats.go; checkers from
kube-openapi:pkg/validation/strfmt and govalidator). Anything else (``int32`` on a string, a
made-up name) is dropped before validation, so it is never looked up here. The checks mirror the Go
ones closely enough for the values people write; exotic corner cases of Go's parsers are not chased.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit

_L = r"[^\W_]"  # a letter or digit (Go's pattern also admits unicode letters, as here)
_HOSTNAME = re.compile(
    rf"^({_L}((-?{_L}{{0,62}})?)|({_L}(((?:{_L}|-){{0,61}}{_L})?)(\.)){{1,}}({_L})(-?{_L}){{1,62}})$"
)
_UUID = {
    "uuid": re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I),
    "uuid3": re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I),
    "uuid4": re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I),
    "uuid5": re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$", re.I),
}
_EMAIL = re.compile(r"^[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+\Z")
_MAC = re.compile(
    r"^([0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\2){4,18}[0-9A-Fa-f]{2}$|^([0-9A-Fa-f]{4}\.){2,9}[0-9A-Fa-f]{4}$"
)
_SSN = re.compile(r"^\d{3}[- ]?\d{2}[- ]?\d{4}\Z")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_RGB_PART = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RGBCOLOR = re.compile(rf"^rgb\({_RGB_PART},{_RGB_PART},{_RGB_PART}\)\Z")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_CREDITCARD = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}"
    r"|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}"
    r"|6[27][0-9]{14})$"
)
_DURATION = re.compile(r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+\Z")
_SCALA_DURATION = re.compile(
    r"^(\d+)\s*(ns|nanos?|nanoseconds?|us|micros?|microseconds?|ms|millis?|milliseconds?|s|secs?|seconds?"
    r"|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?)$"
)
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}|[+-]\d{4})?\Z")
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?\d+))?\Z")
_BSON = re.compile(r"^[0-9a-fA-F]{24}\Z")
_SHORT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_LONG_SEGMENT = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")


def _uri(value: str) -> bool:
    """Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment."""
    if not value or "#" in value or any(c in value for c in " \t\n"):
        return False
    if value.startswith("/"):
        return True
    parts = urlsplit(value)
    return bool(parts.scheme) and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme) is not None


def _ip(value: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(value).version == version
    except ValueError:
        return False


def _cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _isbn10(value: str) -> bool:
    digits = re.sub(r"[\s-]", "", value)
    if not re.fullmatch(r"\d{9}[\dX]", digits):
        return False
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(digits))
    return total % 11 == 0


def _isbn13(value: str) -> bool:
    digits = re.sub(r"[\s-]", "", value)
    if not re.fullmatch(r"\d{13}", digits):
        return False
    return sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(digits)) % 10 == 0


def _creditcard(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    if not _CREDITCARD.match(digits):
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        n = int(c) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _datetime(value: str) -> bool:
    if not _DATETIME.match(value):
        return False
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00")[:26] if "." in value else value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _byte(value: str) -> bool:
    if not _BASE64.match(value):
        return False
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        return False
    return True


def _long_name(value: str) -> bool:
    return len(value) <= 253 and all(_LONG_SEGMENT.match(part) for part in value.split("."))


def _matcher(rx: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda v: rx.match(v) is not None


CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": lambda v: bool(_BSON.match(v)),
    "uri": _uri,
    "email": lambda v: bool(_EMAIL.match(v)),
    "hostname": lambda v: bool(_HOSTNAME.match(v)) and len(v) <= 255 and all(len(p) <= 63 for p in v.split(".")),
    "ipv4": lambda v: _ip(v, 4),
    "ipv6": lambda v: _ip(v, 6),
    "cidr": _cidr,
    "mac": lambda v: bool(_MAC.match(v)),
    "isbn": lambda v: _isbn10(v) or _isbn13(v),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _creditcard,
    "ssn": lambda v: bool(_SSN.match(v)),
    "hexcolor": lambda v: bool(_HEXCOLOR.match(v)),
    "rgbcolor": lambda v: bool(_RGBCOLOR.match(v)),
    "byte": _byte,
    "password": lambda v: True,
    "date": _date,
    "duration": lambda v: bool(_DURATION.match(v) or _SCALA_DURATION.match(v)),
    "datetime": _datetime,
    "quantity": lambda v: bool(_QUANTITY.match(v)),
    "k8sshortname": lambda v: len(v) <= 63 and bool(_SHORT_NAME.match(v)),
    "k8slongname": _long_name,
    **{name: _matcher(rx) for name, rx in _UUID.items()},
}


def valid(format_name: str, value: str) -> bool:
    """Whether ``value`` passes ``format_name`` (a format the server keeps; unknown ones pass)."""
    check = CHECKS.get(format_name.replace("-", ""))
    return True if check is None else bool(check(value))
