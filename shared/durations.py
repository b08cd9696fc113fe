"""Durations as users and upstream write them: ``500ms``, ``90s``, ``5m``, ``1h30m``, ``7d``.

One parser for every flag and values key that takes a duration, so they all accept the same forms.
"""

from __future__ import annotations

import re

from shared import errors

_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse(text: str, *, where: str | None = None) -> float:
    """Seconds in ``text``; InvalidInput naming ``where`` when it is not a duration."""
    raw = text.strip()
    parts = _PART.findall(raw)
    if not parts or "".join(n + u for n, u in parts) != raw:
        raise errors.InvalidInput(f"invalid duration {text!r} (use e.g. 30s, 5m, 1h30m, 7d)", where=where)
    return sum(float(n) * _UNIT[u] for n, u in parts)
