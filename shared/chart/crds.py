"""The chart's CRD templates, generated from the pydantic models that define the resources.

The models are the source of each CRD's schema (``shared.kube.crds``); the chart carries the
generated documents as templates (under ``crds.enabled``, kept on uninstall) so Helm needs no
Python. ``python -m shared.chart.crds`` rewrites them after a model changes; tests/ship fails
while a template and its model disagree.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shared import files


@dataclass(frozen=True)
class CrdTemplate:
    file: str
    component: str
    """``nvsentinel-crds`` or ``nvcre-crds``: which program's ``manifests`` renders it."""
    module: str
    """Module whose ``RESOURCE`` is the custom resource."""


TEMPLATES = (
    CrdTemplate("crd-healthevents.yaml", "nvsentinel-crds", "shared.health.resource"),
    CrdTemplate("crd-validationrequests.yaml", "nvsentinel-crds", "shared.lifecycle.resource"),
    CrdTemplate("crd-certifications.yaml", "nvcre-crds", "shared.certify.resource"),
    CrdTemplate("crd-workloadruns.yaml", "nvcre-crds", "shared.certify.workload"),
)
_HEADER = "{{/* Generated from %s.RESOURCE by `python -m shared.chart.crds`; do not edit. */}}\n"


def expected(spec: CrdTemplate) -> dict[str, Any]:
    """The CRD object the template must render: the model's document plus the chart's metadata."""
    import importlib

    from shared.kube import crds

    doc = crds.document(importlib.import_module(spec.module).RESOURCE)
    doc["metadata"]["labels"] = {
        "app.kubernetes.io/name": "dsx-cluster-tools",
        "app.kubernetes.io/component": spec.component,
    }
    # Deleting a CRD deletes every object of its kind: uninstalling the chart must not.
    doc["metadata"]["annotations"] = {"helm.sh/resource-policy": "keep"}
    return doc


def text(spec: CrdTemplate) -> str:
    from shared import yamlio

    return _HEADER % spec.module + "{{- if .Values.crds.enabled }}\n" + yamlio.dumps(expected(spec)) + "{{- end }}\n"


def write(folder: Path) -> list[Path]:
    """Rewrite every CRD template under ``folder`` (the chart's templates/)."""
    written = []
    for spec in TEMPLATES:
        path = folder / spec.file
        files.atomic_write_text(path, text(spec))
        written.append(path)
    return written


if __name__ == "__main__":
    for done in write(Path(__file__).resolve().parent / "files" / "templates"):
        sys.stdout.write(f"wrote {done}\n")
