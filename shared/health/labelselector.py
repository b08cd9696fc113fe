"""Label selectors as the API server reads them, for the drain's ``podDrainPolicies``.

Its own module because two modules need it: ``values`` checks a policy's selector when the values
file loads, and ``drain`` matches pods with it; ``drain`` imports ``values``, so the grammar cannot
live in ``drain``. Set-based and equality requirements only (``a=b``, ``a!=b``, ``a in (x,y)``,
``a notin (x)``, ``a``, ``!a``); field selectors are not label selectors and are not read here.
"""

from __future__ import annotations

import re

Requirement = tuple[str, str, frozenset[str]]
"""(key, operator, values): operator is ``=``, ``!=``, ``in``, ``notin``, ``exists`` or ``!exists``."""

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_SET = re.compile(rf"^(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)$")
_CMP = re.compile(rf"^(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>[-A-Za-z0-9_.]*)$")
_EXISTS = re.compile(rf"^(?P<neg>!?)\s*(?P<key>{_KEY})$")


def parse(text: str) -> tuple[Requirement, ...]:
    """A label selector as the API server reads it (``a=b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``,
    ``a``, ``!a``, comma-separated); ValueError naming the part it cannot read."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    out: list[Requirement] = []
    for raw in parts:
        part = raw.strip()
        if m := _SET.match(part):
            out.append((m["key"], m["op"], frozenset(v.strip() for v in m["values"].split(","))))
        elif m := _CMP.match(part):
            out.append((m["key"], "!=" if m["op"] == "!=" else "=", frozenset({m["value"]})))
        elif m := _EXISTS.match(part):
            out.append((m["key"], "!exists" if m["neg"] else "exists", frozenset()))
        else:
            raise ValueError(f"cannot parse requirement {part!r} of label selector {text!r}")
    return tuple(out)


def matches(requirements: tuple[Requirement, ...], labels: dict[str, str]) -> bool:
    """True when ``labels`` meet every requirement (the empty selector matches everything)."""
    for key, op, values in requirements:
        value = labels.get(key)
        if op == "exists":
            ok = value is not None
        elif op == "!exists":
            ok = value is None
        elif op in ("=", "in"):
            ok = value is not None and value in values
        else:  # "!=", "notin": a missing label matches, as in Kubernetes
            ok = value is None or value not in values
        if not ok:
            return False
    return True
