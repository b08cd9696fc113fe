"""Criteria: the closed vocabularies a recipe is selected by, and how overlays match them.

Each criterion is a ``StrEnum`` whose values drive the CLI help and the error that lists allowed
values. ``any`` is the wildcard. Aliases are upstream's (``self-managed`` → any, ``al2023`` →
amazonlinux). Matching is upstream's asymmetric rule: a wildcard in an overlay matches anything; a
value in an overlay matches only the same value in the query.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from shared import errors
from shared.recipe.vocabulary import ALIASES, ANY, API_VERSIONS, FIELDS, allowed_values

CRITERIA_KIND = "RecipeCriteria"
CRITERIA_API_VERSIONS = API_VERSIONS


def parse_value(field: str, raw: object, *, where: str | None = None) -> str:
    """Canonical value of one criterion; an unknown value lists the allowed ones."""
    if raw is None:
        return ANY
    if not isinstance(raw, str):
        raise errors.InvalidInput(f"{field} must be a string, got {raw!r}", where=where)
    text = raw.strip().lower()
    text = ALIASES[field].get(text, text)
    try:
        return FIELDS[field](text).value
    except ValueError:
        raise errors.InvalidInput(
            f"invalid {field} {raw!r}: allowed values are {', '.join(allowed_values(field))}",
            where=where,
        ) from None


def parse_nodes(raw: object, *, where: str | None = None) -> int:
    if raw is None:
        return 0
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise errors.InvalidInput(f"nodes must be a whole number, got {raw!r}", where=where)
    try:
        nodes = int(raw)
    except ValueError:
        raise errors.InvalidInput(f"nodes must be a whole number, got {raw!r}", where=where) from None
    if nodes < 0:
        raise errors.InvalidInput(f"invalid nodes count {nodes} (must be >= 0)", where=where)
    return nodes


# A plain dataclass, not a pydantic model: resolving a recipe must not import pydantic (``aicr
# recipe`` would spend more importing it than resolving). ``parse`` checks the values; the JSON
# Schema is still generated from this class (``shared.schemas``), whose docstring it carries.
@dataclasses.dataclass(frozen=True)
class Criteria:
    """A query or an overlay's selector. ``any`` = wildcard; ``nodes`` 0 = any."""

    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}

    service: str = ANY
    accelerator: str = ANY
    intent: str = ANY
    os: str = ANY
    platform: str = ANY
    nodes: int = 0

    @classmethod
    def parse(cls, raw: dict[str, Any], *, where: str | None = None) -> Criteria:
        """Build from untrusted data (a file or flags); every value is checked."""
        unknown = sorted(key_name(k) for k in raw if k not in FIELDS and k != "nodes")
        if unknown:
            raise errors.InvalidInput(
                f"unknown criteria field {unknown[0]!r}: known fields are {', '.join([*FIELDS, 'nodes'])}",
                where=f"{where} {unknown[0]}" if where else unknown[0],
            )
        values: dict[str, Any] = {
            name: parse_value(name, raw.get(name), where=f"{where} {name}" if where else name) for name in FIELDS
        }
        values["nodes"] = parse_nodes(raw.get("nodes"), where=f"{where} nodes" if where else "nodes")
        return cls(**values)

    def specificity(self) -> int:
        """How many fields are set; the correct count (upstream's counts empty strings too)."""
        return sum(1 for name in FIELDS if getattr(self, name) != ANY) + (1 if self.nodes else 0)

    def matches(self, query: Criteria) -> bool:
        """Does this overlay selector apply to ``query``?"""
        for name in FIELDS:
            mine = getattr(self, name)
            if mine != ANY and mine != getattr(query, name):
                return False
        return not (self.nodes and self.nodes != query.nodes)

    def merged(self, overrides: dict[str, Any]) -> Criteria:
        """These criteria with every non-None override applied (flags over a file)."""
        data = self.as_dict()
        data.update({k: v for k, v in overrides.items() if v is not None})
        return Criteria.parse(data)

    def as_dict(self) -> dict[str, Any]:
        """Every field, wildcards included."""
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """``criteria(service=eks, accelerator=h100)`` for logs and errors."""
        parts = [f"{n}={getattr(self, n)}" for n in FIELDS if getattr(self, n) != ANY]
        if self.nodes:
            parts.append(f"nodes={self.nodes}")
        return f"criteria({', '.join(parts) or 'any'})"

    def to_output(self) -> dict[str, Any]:
        """The recipe's criteria block: every field, nodes only when set."""
        data: dict[str, Any] = {n: getattr(self, n) for n in FIELDS}
        if self.nodes:
            data["nodes"] = self.nodes
        return data


def load_criteria_file(path: Path) -> Criteria:
    """Read a ``RecipeCriteria`` file (ours or upstream's apiVersion) or a bare criteria map."""
    from shared import yamlio

    return parse_criteria_text(yamlio.read_text(path), where=str(path))


def parse_criteria_text(text: str, *, where: str) -> Criteria:
    """Parse a ``RecipeCriteria`` document read from ``where`` (a file, ConfigMap key or URL)."""
    from shared import yamlio

    data = yamlio.loads(text, source=where)
    if not isinstance(data, dict):
        raise errors.InvalidInput("expected a RecipeCriteria mapping", where=where)
    kind = data.get("kind")
    if kind is not None and kind != CRITERIA_KIND:
        raise errors.InvalidInput(f"invalid kind {kind!r}, expected {CRITERIA_KIND!r}", where=f"{where} kind")
    api = data.get("apiVersion")
    if api is not None and api not in CRITERIA_API_VERSIONS:
        raise errors.InvalidInput(
            f"invalid apiVersion {api!r}, expected one of {', '.join(CRITERIA_API_VERSIONS)}",
            where=f"{where} apiVersion",
        )
    if "spec" in data or kind is not None:
        spec = data.get("spec") or {}
        extra = sorted(key_name(k) for k in data if k not in ("kind", "apiVersion", "metadata", "spec"))
        if extra:
            raise errors.InvalidInput(f"unknown field {extra[0]!r}", where=where)
        if not isinstance(spec, dict):
            raise errors.InvalidInput("spec must be a mapping", where=f"{where} spec")
        return _parse_located(spec, text, where, "spec.")
    return _parse_located(data, text, where, "")


def key_name(key: Any) -> str:
    """A mapping key as an error names it: YAML's null, numbers and booleans are keys too (``: x``)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)


def _parse_located(data: dict[str, Any], text: str, where: str, prefix: str) -> Criteria:
    """Parse criteria from a document; an error names its source, line and field."""
    from shared import yamlio

    try:
        return Criteria.parse(data)
    except errors.InvalidInput as exc:
        key = f"{prefix}{exc.where or ''}"  # parsed without a source: where is the field alone
        line = yamlio.line_of(text, key)
        raise errors.InvalidInput(exc.message, where=f"{where}:{line} {key}" if line else f"{where} {key}") from None
