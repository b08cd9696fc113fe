"""Official schemas from the team's reference folder: CRD openAPIV3Schemas and SchemaStore files."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from shared import yamlio

FOLDER = "reference/schemas"
CRDS = {
    ("argoproj.io/v1alpha1", "Application"): "argocd-application-crd.yaml",
    ("helm.toolkit.fluxcd.io/v2", "HelmRelease"): "flux-helm.toolkit.fluxcd.io_helmreleases.yaml",
    ("source.toolkit.fluxcd.io/v1", "HelmRepository"): "flux-source.toolkit.fluxcd.io_helmrepositories.yaml",
    ("source.toolkit.fluxcd.io/v1", "OCIRepository"): "flux-source.toolkit.fluxcd.io_ocirepositories.yaml",
    ("kustomize.toolkit.fluxcd.io/v1", "Kustomization"): "flux-kustomize.toolkit.fluxcd.io_kustomizations.yaml",
}


def folder(team_shared: Path) -> Path:
    path = team_shared / FOLDER
    if not path.is_dir():
        pytest.skip(f"schema folder {path} is absent")
    return path


@functools.cache
def _crd_validator(path: Path, version: str) -> Any:
    crd = yamlio.load_file(path)
    (entry,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema = entry["schema"]["openAPIV3Schema"]
    return jsonschema.Draft7Validator(schema)


def crd_errors(team_shared: Path, document: dict[str, Any]) -> list[str]:
    """Every schema violation of one Kubernetes object against its official CRD."""
    key = (document["apiVersion"], document["kind"])
    path = folder(team_shared) / CRDS[key]
    validator = _crd_validator(path, key[0].rsplit("/", 1)[1])
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def json_schema_errors(team_shared: Path, name: str, document: Any) -> list[str]:
    schema = json.loads((folder(team_shared) / name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in cls(schema).iter_errors(document)]
