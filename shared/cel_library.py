"""The Kubernetes CEL library functions CustomResourceDefinition rules call, in plain Python.

``isSorted``, ``sum``, ``min``/``max`` (lists), ``indexOf``/``lastIndexOf``, ``charAt``,
``substring``, ``reverse``, ``find``/``findAll`` (RE2 regular expressions, as cel-go's) and the
``optional`` accessors ``hasValue``/``value``/``orValue``, with cel-go's refusals (an index out of
range, ``min`` of an empty list, dereferencing ``optional.none()``) raised as ``LibraryError``.

A base module with no celpy in it: the functions take the CEL values celpy hands them (subclasses
of ``str``, ``int``, ``list``, … whose operators keep CEL's rules) and return either one of those
values or a plain ``bool``/``int``/``str``/``list``; ``shared.cel``, the only module that imports
celpy, binds them into its rule environment, making plain results CEL values and a
``LibraryError`` celpy's evaluation error. The string functions transpiled health rules also use
(``lowerAscii``, ``split``, …) stay in ``shared.cel``, which must hold them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class LibraryError(Exception):
    """A function refused its arguments; the message is cel-go's."""


@dataclass(frozen=True)
class OptionalValue:
    """``oldSelf`` under ``optionalOldSelf``: ``present`` is False for ``optional.none()``."""

    value: Any = None
    present: bool = False


def is_sorted(items: Any) -> bool:
    values = list(items)
    return all(values[i] <= values[i + 1] for i in range(len(values) - 1))


def total(items: Any) -> Any:
    """``sum``: the items added with CEL's ``+`` (0 for an empty list)."""
    values = list(items)
    if not values:
        return 0
    result = values[0]
    for item in values[1:]:
        result = result + item
    return result


def _extreme(pick: Callable[..., Any]) -> Callable[..., Any]:
    """``min``/``max`` of a list, or of the arguments themselves."""

    def fn(*args: Any) -> Any:
        values = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        if not values:
            raise LibraryError("min/max called on an empty list")
        return pick(values)

    return fn


def index_of(target: Any, item: Any, *start: Any) -> int:
    if isinstance(target, str):
        offset = int(start[0]) if start else 0
        if offset < 0 or offset > len(target):
            raise LibraryError(f"index out of range: {offset}")
        return str(target).find(str(item), offset)
    values = list(target)
    return next((i for i, v in enumerate(values) if v == item), -1)


def last_index_of(target: Any, item: Any, *end: Any) -> int:
    if isinstance(target, str):
        stop = int(end[0]) + len(item) if end else len(target)
        return str(target).rfind(str(item), 0, stop)
    values = list(target)
    return next((i for i in range(len(values) - 1, -1, -1) if values[i] == item), -1)


def char_at(s: Any, i: Any) -> str:
    if int(i) < 0 or int(i) > len(s):
        raise LibraryError(f"index out of range: {int(i)}")
    return str(s)[int(i) : int(i) + 1]


def substring(s: Any, start: Any, *end: Any) -> str:
    stop = int(end[0]) if end else len(s)
    if int(start) < 0 or stop > len(s) or int(start) > stop:
        raise LibraryError(f"index out of range: {int(start)}")
    return str(s)[int(start) : stop]


def reverse(s: Any) -> str:
    return str(s)[::-1]


def find(s: Any, pattern: Any) -> str:
    import re2  # type: ignore[import-untyped]  # on first use: a program that never calls it never pays

    found = re2.search(str(pattern), str(s))
    return str(found.group(0)) if found else ""


def find_all(s: Any, pattern: Any, *limit: Any) -> list[str]:
    import re2

    found = [str(m.group(0)) for m in re2.finditer(str(pattern), str(s))]
    return found[: int(limit[0])] if limit and int(limit[0]) >= 0 else found


def has_value(o: Any) -> bool:
    return isinstance(o, OptionalValue) and o.present


def value_of(o: Any) -> Any:
    if isinstance(o, OptionalValue) and o.present:
        return o.value
    raise LibraryError("optional.none() dereference")


def or_value(o: Any, default: Any) -> Any:
    return o.value if isinstance(o, OptionalValue) and o.present else default


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "isSorted": is_sorted,
    "sum": total,
    "min": _extreme(min),
    "max": _extreme(max),
    "indexOf": index_of,
    "lastIndexOf": last_index_of,
    "charAt": char_at,
    "substring": substring,
    "reverse": reverse,
    "find": find,
    "findAll": find_all,
    "hasValue": has_value,
    "value": value_of,
    "orValue": or_value,
}
"""The functions by the name a rule calls them."""
