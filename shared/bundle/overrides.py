"""``--set COMPONENT:path.to.key=value``: parsing, typing the value, and writing it into values.

The component is named by its recipe name or by any registry ``valueOverrideKeys`` alias. Unlike
upstream, every ``--set`` applies, in command-line order (upstream silently ignores an alias when
the plain name also has entries), and a mistake is an error rather than a logged warning: an
unknown component, an empty path or value, or a path that runs through a scalar or a list.

The value is everything after the first ``=`` (commas included: one ``--set`` sets one key) and is
typed by Helm's rules (:func:`shared.strvals.typed_value`), the same as ``nvsentinel manifests
--set``: ``true``/``false``/``null`` in any case, int64 integers without a leading zero, anything
else (``1.5``, ``01``, ``580.82.07``) a string. A ``null`` is written as null into the component's
values, where Helm removes the chart's key at install time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shared import errors, strvals

ENABLED_KEY = "enabled"


@dataclass(frozen=True)
class SetOverride:
    """One ``--set``: the key as typed, the dotted path and the typed value."""

    key: str
    path: tuple[str, ...]
    value: Any
    raw: str


def parse(raw: str) -> SetOverride:
    """Parse ``component:path.to.key=value``; InvalidInput naming the flag on any malformed part."""
    where = f"--set {raw!r}"
    key, colon, rest = raw.partition(":")
    path, equals, value = rest.partition("=")
    if not colon or not key:
        raise errors.InvalidInput("expected COMPONENT:path.to.key=value (the component is missing)", where=where)
    if not equals or not path or not value:
        raise errors.InvalidInput("expected COMPONENT:path.to.key=value (path and value cannot be empty)", where=where)
    parts = tuple(path.split("."))
    if any(not p for p in parts):
        raise errors.InvalidInput(f"empty key in path {path!r}", where=where)
    return SetOverride(key=key, path=parts, value=strvals.typed_value(value), raw=raw)


def set_path(values: dict[str, Any], path: tuple[str, ...], value: Any, *, where: str) -> None:
    """Write ``value`` at ``path``, creating maps on the way; a scalar or list in the way is an error."""
    current = values
    for depth, part in enumerate(path[:-1]):
        nxt = current.get(part)
        if nxt is None:
            nxt = current[part] = {}
        elif not isinstance(nxt, dict):
            walked = ".".join(path[: depth + 1])
            raise errors.InvalidInput(
                f"cannot set {'.'.join(path)}: {walked} is a {_kind(nxt)}, not a map", where=where
            )
        current = nxt
    current[path[-1]] = value


def _kind(value: Any) -> str:
    return "list" if isinstance(value, list) else f"scalar ({type(value).__name__})"


def enabled_flag(override: SetOverride) -> bool:
    """The boolean of an ``enabled`` override; anything but true/false is invalid input."""
    if not isinstance(override.value, bool):
        raise errors.InvalidInput(
            f"{ENABLED_KEY} must be true or false, got {override.value!r}", where=f"--set {override.raw!r}"
        )
    return override.value


def resolve_targets(
    sets: list[SetOverride], components: list[str], aliases: dict[str, str]
) -> dict[str, list[SetOverride]]:
    """Group overrides by the recipe component they name (``aliases``: alias → component).

    InvalidInput for a key that is neither a recipe component nor an alias of one.
    """
    grouped: dict[str, list[SetOverride]] = {name: [] for name in components}
    for override in sets:
        target = override.key if override.key in grouped else aliases.get(override.key)
        if target is None or target not in grouped:
            known = ", ".join(sorted(grouped))
            raise errors.InvalidInput(
                f"unknown component {override.key!r}; the recipe has: {known}", where=f"--set {override.raw!r}"
            )
        grouped[target].append(override)
    return grouped
