"""Fully merged Helm values per component, and the selector language of ``aicr query``.

Values stack as upstream stacks them: the component's default ``values.yaml``, then the values file
the most specific overlay chose, then the recipe's inline overrides, each merged over the last by
``shared.merge.deep_merge`` (Helm's rules: maps merge recursively, any other value, lists and null
included, replaces).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shared import errors, merge
from shared.recipe import resolver

if TYPE_CHECKING:
    from shared.recipe import catalog as catalog_mod
    from shared.recipe import models

_QUERIED = (
    "name",
    "type",
    "source",
    "namespace",
    "chart",
    "version",
    "tag",
    "path",
    "dependencyRefs",
    "manifestFiles",
    "healthCheckAsserts",
)
"""A component's fields in ``aicr query``'s tree (with its merged ``values``)."""


def component_values(ref: models.ComponentRef, cat: catalog_mod.Files) -> dict[str, Any]:
    """The values a deployer hands to Helm for ``ref``."""
    return stacked_values(ref.name, ref.valuesFile, ref.overrides, cat)


def stacked_values(
    name: str, values_file: str | None, overrides: dict[str, Any] | None, cat: catalog_mod.Files
) -> dict[str, Any]:
    """The values of component ``name``: its default file, the file the recipe chose, its overrides."""
    default_file = f"components/{name}/values.yaml"
    values: dict[str, Any] = {}
    if values_file and values_file != default_file and cat.has_file(default_file):
        values = merge.deep_merge(values, cat.values(default_file))
    if values_file:
        values = merge.deep_merge(values, cat.values(values_file))
    if overrides:
        values = merge.deep_merge(values, overrides)
    return values


def hydrate(doc: dict[str, Any], cat: catalog_mod.Files) -> dict[str, Any]:
    """The recipe (as ``Resolution.document`` gives it) as one tree that ``aicr query`` selects
    from: components by name, with values."""
    criteria = dict(doc["criteria"])
    criteria.setdefault("nodes", 0)
    components: dict[str, Any] = {}
    for ref in doc["componentRefs"]:
        entry = {k: v for k, v in resolver.component_document(ref).items() if k in _QUERIED}
        entry["values"] = stacked_values(ref["name"], ref.get("valuesFile"), ref.get("overrides"), cat)
        components[ref["name"]] = entry
    return {
        "kind": doc["kind"],
        "apiVersion": doc["apiVersion"],
        "metadata": doc["metadata"],
        "criteria": criteria,
        "constraints": doc.get("constraints", []),
        "components": components,
        "deploymentOrder": doc["deploymentOrder"],
        **({"validation": doc["validation"]} if "validation" in doc else {}),
    }


def select(tree: Any, selector: str) -> Any:
    """Follow a dotted path; a number indexes a list. A bad part raises NotFound naming it."""
    path = selector.strip().strip(".")
    if not path:
        return tree
    current = tree
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                keys = ", ".join(sorted(str(k) for k in current))
                raise errors.NotFound(
                    f"key {part!r} not found under {'.'.join(walked) or 'the root'}; available keys: {keys}",
                    where=f"selector {selector!r}",
                )
            current = current[part]
        elif isinstance(current, list):
            if not part.isdigit() or int(part) >= len(current):
                raise errors.NotFound(
                    f"{part!r} is not an index of the list at {'.'.join(walked)} (0..{len(current) - 1})",
                    where=f"selector {selector!r}",
                )
            current = current[int(part)]
        else:
            raise errors.NotFound(
                f"cannot descend into {part!r}: {'.'.join(walked)} is a {type(current).__name__}",
                where=f"selector {selector!r}",
            )
        walked.append(part)
    return current
