"""The Snapshot document: what was measured on a cluster, grouped type → subtype → key.

Upstream's shape (``measurements[type, subtypes[subtype, data]]``) so snapshots move between the
tools. The recipe command reads it to detect criteria and to drop overlays whose own constraints
the cluster does not meet; ``aicr snapshot`` fills it from a live cluster.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shared import errors
from shared.recipe import constraints, criteria

KIND = "Snapshot"
MULTI_VALUE_SEPARATOR = constraints.MULTI_VALUE_SEPARATOR
"""Joins the distinct values of a measurement that differs between nodes; a constraint must hold for each."""
MEASUREMENT_TYPES = ("K8s", "GPU", "OS", "SystemD", "NodeTopology")
Scalar = str | int | float | bool | None


class Subtype(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subtype: str
    data: dict[str, Scalar] = Field(default_factory=dict)
    context: dict[str, Any] | None = None


class Measurement(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str
    subtypes: list[Subtype] = Field(default_factory=list)


class Snapshot(BaseModel):
    """Measurements of one cluster; identical for an unchanged cluster (no timestamps in data)."""

    model_config = ConfigDict(extra="forbid")

    kind: str = KIND
    apiVersion: str = "aicr.run/v1alpha2"
    metadata: dict[str, Any] = Field(default_factory=dict)
    measurements: list[Measurement] = Field(default_factory=list)

    def lookup(self, path: str) -> str | None:
        """The measured value at ``Type.subtype.key`` as a string, or None when absent."""
        kind, subtype, key = constraints.split_path(path)
        for measurement in self.measurements:
            if measurement.type != kind:
                continue
            for entry in measurement.subtypes:
                if entry.subtype == subtype and key in entry.data:
                    value = entry.data[key]
                    if isinstance(value, bool):
                        return "true" if value else "false"
                    return None if value is None else str(value)
        return None

    def detect_criteria(self) -> criteria.Criteria:
        """Service from the server version suffix, accelerator from the GPU model, OS from
        os-release; intent and platform cannot be measured."""
        values: dict[str, Any] = {}
        service = self.lookup("K8s.server.service")
        version = self.lookup("K8s.server.version") or ""
        if service:
            values["service"] = service
        else:
            for marker, name in (("-eks-", "eks"), ("-gke", "gke"), ("-aks", "aks")):
                if marker in version:
                    values["service"] = name
                    break
        model = (
            self.lookup("GPU.smi.gpu.model")
            or self.lookup("GPU.smi.model")
            or self.lookup("GPU.device.gpu.model")
            or ""
        ).lower()
        for name in ("gb200", "b200", "h100", "a100", "l40"):
            if name in model:
                values["accelerator"] = name
                break
        os_id = self.lookup("OS.release.ID")
        if os_id:
            # An OS we have no recipes for leaves the criterion open.
            with contextlib.suppress(errors.InvalidInput):
                values["os"] = criteria.parse_value("os", os_id)
        return criteria.Criteria.parse(values)


def parse(data: Any, *, where: str) -> Snapshot:
    if not isinstance(data, dict):
        raise errors.InvalidInput("expected a Snapshot mapping", where=where)
    if data.get("kind", KIND) != KIND:
        raise errors.InvalidInput(f"invalid kind {data.get('kind')!r}, expected {KIND!r}", where=f"{where} kind")
    try:
        return Snapshot.model_validate(data)
    except ValidationError as exc:
        raise errors.from_validation(exc, where=where) from None


def load_file(path: Path) -> Snapshot:
    from shared import yamlio

    return parse(yamlio.load_file(path), where=str(path))
