"""Constraint expressions (``>= 1.32.4``, ``== ubuntu``, ``ubuntu``) evaluated against a snapshot.

Paths are ``Type.subtype.key`` split on the first two dots only, so a key may itself hold dots
(``OS.sysctl./proc/sys/kernel/osrelease``). Ordering operators always compare versions; ``==`` and
``!=`` compare versions when both sides look like one, else strings; no operator means equality.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.recipe import versions

OPERATORS = (">=", "<=", "!=", "==", ">", "<")


@dataclass(frozen=True)
class Outcome:
    passed: bool
    actual: str | None
    error: str | None = None


def split_expression(expression: str) -> tuple[str, str]:
    """(operator, operand); the operator is ``==`` when none is written."""
    text = expression.strip()
    for op in OPERATORS:
        if text.startswith(op):
            return op, text[len(op) :].strip()
    return "==", text


def split_path(path: str) -> tuple[str, str, str]:
    parts = path.split(".", 2)
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"constraint name {path!r} is not Type.subtype.key")
    return parts[0], parts[1], parts[2]


def check_expression(expression: str) -> None:
    """Raise ValueError when an ordering operator has no version operand."""
    op, operand = split_expression(expression)
    if op in (">=", "<=", ">", "<"):
        versions.parse(operand)


def holds(expression: str, actual: str) -> bool:
    """Does ``actual`` satisfy ``expression``? Raises VersionError when a side is no version."""
    op, expected = split_expression(expression)
    if op in (">=", "<=", ">", "<"):
        result = versions.compare(actual, expected)
        return {">=": result >= 0, "<=": result <= 0, ">": result > 0, "<": result < 0}[op]
    same: bool
    if versions.looks_like_version(expected) and versions.looks_like_version(actual):
        try:
            same = versions.compare(actual, expected) == 0
        except versions.VersionError:
            same = actual == expected
    else:
        same = actual == expected
    return same if op == "==" else not same


MULTI_VALUE_SEPARATOR = " | "


def evaluate(expression: str, actual: str | None) -> Outcome:
    """Evaluate with a missing measurement or unparsable version reported, not raised.

    A measurement that differs between nodes holds each distinct value joined by `` | ``; the
    constraint must hold for every one of them.
    """
    if actual is None:
        return Outcome(False, None, "measurement not found in snapshot")
    try:
        return Outcome(all(holds(expression, part) for part in actual.split(MULTI_VALUE_SEPARATOR)), actual)
    except versions.VersionError as exc:
        return Outcome(False, actual, str(exc))
