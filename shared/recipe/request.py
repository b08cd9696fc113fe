"""What a recipe or query command asks for, and the one function that answers it.

Criteria come from, in rising precedence: a snapshot (detected), a criteria file, then flags.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from shared.recipe import compiled, resolver
from shared.recipe import criteria as criteria_mod

if TYPE_CHECKING:
    from shared import refs
    from shared.recipe import snapshot as snapshot_mod

logger = logging.getLogger(__name__)

_PATHS = ("catalog_dir", "data_dir", "kubeconfig")


@dataclasses.dataclass(frozen=True)
class RecipeRequest:
    """What ``recipe`` and ``query`` were asked, as the command line gave it (values are checked
    when criteria are built). A dataclass, so that answering it needs no pydantic."""

    service: str | None = None
    accelerator: str | None = None
    intent: str | None = None
    os: str | None = None
    platform: str | None = None
    nodes: int | None = None
    criteria_file: str | None = None
    snapshot_file: str | None = None
    catalog_dir: Path | None = None
    data_dir: Path | None = None
    kubeconfig: Path | None = None
    context: str | None = None

    @classmethod
    def of(cls, fields: Mapping[str, object]) -> RecipeRequest:
        """From keyword fields (a None is a flag not given); folders and files given as text become paths."""
        given = {k: (Path(str(v)) if k in _PATHS and v is not None else v) for k, v in fields.items()}
        return cls(**given)  # type: ignore[arg-type]

    def flag_values(self) -> dict[str, object]:
        return {
            "service": self.service,
            "accelerator": self.accelerator,
            "intent": self.intent,
            "os": self.os,
            "platform": self.platform,
            "nodes": self.nodes,
        }


def _read(request: RecipeRequest, reference: str, kind: refs.Kind) -> tuple[str, str]:
    """A criteria or snapshot input (file, URL or ``cm://`` read with the request's cluster access)."""
    from shared import refs
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=request.kubeconfig, context=request.context) as api:
        return refs.read_text(reference, api=api, kind=kind)


def _load_snapshot(request: RecipeRequest) -> snapshot_mod.Snapshot:
    from shared import yamlio
    from shared.recipe import snapshot as snapshot_mod

    text, where = _read(request, str(request.snapshot_file), "snapshot")
    return snapshot_mod.parse(yamlio.loads(text, source=where), where=where)


def criteria_for(request: RecipeRequest) -> tuple[criteria_mod.Criteria, snapshot_mod.Snapshot | None]:
    """The query criteria and the snapshot they were detected from (if any)."""
    snap = _load_snapshot(request) if request.snapshot_file else None
    query = snap.detect_criteria() if snap is not None else criteria_mod.Criteria()
    if request.criteria_file is not None:
        text, where = _read(request, request.criteria_file, "criteria")
        from_file = criteria_mod.parse_criteria_text(text, where=where)
        query = query.merged({k: v for k, v in from_file.as_dict().items() if v not in ("any", 0)})
    flags = request.flag_values()
    if snap is not None:
        for name, value in flags.items():
            if value is not None:
                logger.info(
                    "flag overrides a value detected from the snapshot",
                    extra={"field": name, "detected": getattr(query, name), "flag": value},
                )
    for name, value in flags.items():
        if value is not None and name != "nodes":
            flags[name] = criteria_mod.parse_value(name, value, where=f"--{name}")
        elif name == "nodes" and value is not None:
            flags[name] = criteria_mod.parse_nodes(value, where="--nodes")
    return query.merged(flags), snap


def build(request: RecipeRequest) -> tuple[resolver.Resolution, compiled.CompiledCatalog]:
    """Resolve the recipe a request asks for, with the catalog it came from (for values)."""
    query, snap = criteria_for(request)
    resolver.require_criteria(query)
    cat = compiled.select(catalog_dir=request.catalog_dir, data_dir=request.data_dir)
    logger.debug("building recipe", extra={"criteria": query.describe(), "catalog": cat.label})
    resolution = resolver.resolve(query, cat, snapshot=snap)
    logger.debug(
        "recipe resolved",
        extra={
            "components": len(resolution.document()["componentRefs"]),
            "overlays": len(resolution.document()["metadata"]["appliedOverlays"]),
        },
    )
    return resolution, cat
