"""Resource quantities (``cpu: 500m``, ``memory: 1Gi``) parsed, compared and printed as the server does.

The server stores every quantity in canonical form (``apimachinery:pkg/api/resource/quantity.go``
``CanonicalizeBytes``): ``2000m`` comes back as ``2``, ``1024Mi`` as ``1Gi``, ``0.5`` as ``500m``;
values finer than a nano-unit are rounded up. A string that is not a quantity fails decoding
(400), before any validation. Arithmetic beyond comparison is left out.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from fractions import Fraction

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_ERROR = "unable to parse quantity's suffix"

_SHAPE = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)\Z")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)\Z")
_EXPONENT = re.compile(r"^[eE][+-]?\d+\Z")
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BINARY_SUFFIX = {v // 10: k for k, v in _BINARY.items()}


class QuantityError(ValueError):
    """Not a quantity; the message is the server's decode error."""


@dataclass(frozen=True)
class Quantity:
    value: Fraction
    format: str  # "DecimalSI", "BinarySI" or "DecimalExponent"

    def __str__(self) -> str:
        return canonical(self)


def parse(text: object) -> Quantity:
    """A quantity from its JSON form (a string or a number)."""
    raw = str(text).strip() if not isinstance(text, bool) else ""
    if not raw or not _SHAPE.match(raw):
        raise QuantityError(FORMAT_ERROR)
    split = re.match(r"^([+-]?[0-9.]*)(.*)$", raw)
    assert split is not None
    number, suffix = split.group(1), split.group(2)
    if not _NUMBER.match(number):
        raise QuantityError(FORMAT_ERROR)
    amount = Fraction(number)
    if suffix in _BINARY:
        amount *= 2 ** _BINARY[suffix]
        fmt = "BinarySI"
    elif suffix in _DECIMAL:
        amount *= Fraction(10) ** _DECIMAL[suffix]
        fmt = "DecimalSI"
    elif _EXPONENT.match(suffix):
        amount *= Fraction(10) ** int(suffix[1:])
        fmt = "DecimalExponent"
    else:
        raise QuantityError(SUFFIX_ERROR)
    nanos = amount * 10**9
    # Precision below a nano-unit is rounded up (away from zero), as the server does.
    rounded = math.ceil(abs(nanos)) * (1 if nanos >= 0 else -1)
    return Quantity(Fraction(rounded, 10**9), fmt)


def canonical(q: Quantity) -> str:
    if q.value == 0:
        return "0"
    fmt = q.format
    if fmt == "BinarySI" and (-1024 < q.value < 1024 or q.value.denominator != 1):
        fmt = "DecimalSI"
    if fmt == "BinarySI":
        mantissa, power = int(q.value), 0
        while mantissa % 1024 == 0:
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_SUFFIX.get(power, '')}"
    mantissa, exponent = int(q.value * 10**9), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if fmt == "DecimalExponent" or exponent not in _DECIMAL_SUFFIX:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"


def normalize(text: object) -> str:
    """The canonical text of a quantity as sent; raises :class:`QuantityError`."""
    if isinstance(text, str | int):
        return _normalized(text)
    return canonical(parse(text))


@functools.lru_cache(maxsize=4096)
def _normalized(text: str | int) -> str:
    # Every pod write normalizes the same few quantities ("1", "1Gi", "500m"): parse each once.
    return canonical(parse(text))
