"""Version strings as Kubernetes tooling writes them (``v1.33.5-eks-3025e55``, ``6.8.0-1024-aws``).

A version is 1–3 numbers; a leading ``v`` is dropped and anything after the first ``-`` or ``+``
that follows a digit is a build suffix. Two versions compare at the precision of the less precise
one, so ``>= 6.8`` holds for kernel ``6.8.0-1024-aws`` (upstream's rule).
"""

from __future__ import annotations

import re

_PIN = re.compile(r"^v?\d+(\.\d+){0,3}([-+][0-9A-Za-z.-]+)?$")
_FLOATING = re.compile(r"(^|[^0-9A-Za-z])(latest|stable|main|master|head)$|[*xX^~<>|=, ]")


class VersionError(ValueError):
    """Not a version this module can compare."""


def parse(text: str) -> tuple[int, ...]:
    """The numeric parts of a version string."""
    raw = text.strip()
    if raw[:1] in ("v", "V"):
        raw = raw[1:]
    match = re.match(r"^(\d+(?:\.\d+){0,2})(?:\.\d+)*(?:[-+].*)?$", raw)
    if not match:
        raise VersionError(f"not a version: {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def looks_like_version(text: str) -> bool:
    raw = text.strip().lstrip("vV")
    return any(c.isdigit() for c in raw) and "." in raw


def compare(left: str, right: str) -> int:
    """-1, 0 or 1, comparing only as many parts as the less precise version has."""
    a, b = parse(left), parse(right)
    width = min(len(a), len(b))
    a, b = a[:width], b[:width]
    return (a > b) - (a < b)


def is_pinned(version: str) -> bool:
    """A concrete release (``v25.10.1``, ``0.9.0``, ``1.2.3-rc.1``), not a tag or a range."""
    text = version.strip()
    return bool(text) and not _FLOATING.search(text) and bool(_PIN.match(text))
