"""The helmfile deployer's helmfile.yaml for the seed recipe.

Covers: helmfile.yaml valid against SchemaStore's helmfile schema; one repository per chart (OCI
without scheme and ``oci: true``); needs naming existing releases as namespace/name; values files
that exist and hold the plan's values; manifests deployed as a release of their own after the chart;
a Kustomize component refused before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import errors, yamlio
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from tests.bundle import bundles, schemas


def test_helmfile_validates_against_schemastore(seed_bundles: dict[str, Path], team_shared: Path) -> None:
    helmfile = yamlio.load_file(seed_bundles["helmfile"] / "helmfile.yaml")
    assert schemas.json_schema_errors(team_shared, "schemastore-helmfile.json", helmfile) == []


def test_needs_name_existing_releases_and_values_files_exist(seed_bundles: dict[str, Path], seed_recipe: Path) -> None:
    root = seed_bundles["helmfile"]
    helmfile = yamlio.load_file(root / "helmfile.yaml")
    names = {f"{r['namespace']}/{r['name']}" if "namespace" in r else r["name"] for r in helmfile["releases"]}
    plan = plan_mod.build(BundleRequest(recipe=seed_recipe, output=Path("unused")))
    for release in helmfile["releases"]:
        assert set(release.get("needs", [])) <= names, release["name"]
        for values_file in release.get("values", []):
            assert yamlio.load_file(root / values_file) == plan.component(release["name"]).values


def test_oci_repositories_drop_the_scheme(seed_bundles: dict[str, Path]) -> None:
    helmfile = yamlio.load_file(seed_bundles["helmfile"] / "helmfile.yaml")
    repos = {r["name"]: r for r in helmfile["repositories"]}
    assert repos["kai-scheduler"] == {"name": "kai-scheduler", "url": "ghcr.io/nvidia/kai-scheduler", "oci": True}


def test_manifests_are_a_release_of_their_own_after_the_chart(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["helmfile"]
    releases = {r["name"]: r for r in yamlio.load_file(root / "helmfile.yaml")["releases"]}
    extra = releases["gpu-operator-manifests"]
    assert extra["needs"] == ["gpu-operator/gpu-operator"]
    assert (root / extra["chart"] / "dcgm-exporter.yaml").is_file()
    assert "skyhook/skyhook-customizations" in releases["gpu-operator"]["needs"]


def test_a_kustomize_component_is_refused(tmp_path: Path) -> None:
    recipe = bundles.write_document(
        tmp_path / "r.yaml",
        {
            "kind": "RecipeResult",
            "apiVersion": "aicr.run/v1alpha2",
            "metadata": {"version": "0.1.0"},
            "componentRefs": [
                {"name": "kz", "type": "Kustomize", "source": "https://github.com/x/y", "path": "deploy", "tag": "v1"}
            ],
            "deploymentOrder": ["kz"],
        },
    )
    with pytest.raises(errors.InvalidInput, match="'kz' is a Kustomize component, which the helmfile deployer"):
        bundles.make_bundle(recipe, tmp_path / "out", "helmfile")
    assert not (tmp_path / "out").exists()
