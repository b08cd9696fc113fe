"""The flux deployer's tree for the seed recipe.

Covers: every HelmRelease, HelmRepository, OCIRepository and Flux Kustomization valid against its
official CRD schema; kustomization.yaml listing exactly the object files, which exist; dependsOn
naming only HelmReleases of the bundle; OCI charts through an OCIRepository and chartRef; values
inline equal to the plan's; a Kustomize component refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import errors, yamlio
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from tests.bundle import bundles, schemas


def _objects(root: Path) -> list[dict]:  # type: ignore[type-arg]
    listed = yamlio.load_file(root / "kustomization.yaml")["resources"]
    return [yamlio.load_file(root / rel) for rel in listed]


def test_every_flux_object_validates_against_its_official_crd(seed_bundles: dict[str, Path], team_shared: Path) -> None:
    objects = _objects(seed_bundles["flux"])
    kinds = {o["kind"] for o in objects}
    assert kinds == {"HelmRelease", "HelmRepository", "OCIRepository", "Kustomization"}
    for obj in objects:
        assert schemas.crd_errors(team_shared, obj) == [], (obj["kind"], obj["metadata"]["name"])


def test_kustomization_lists_exactly_the_object_files(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["flux"]
    listed = yamlio.load_file(root / "kustomization.yaml")["resources"]
    on_disk = sorted(p.relative_to(root).as_posix() for p in root.glob("*/*.yaml"))
    assert sorted(listed) == on_disk


def test_depends_on_names_only_releases_of_the_bundle(seed_bundles: dict[str, Path]) -> None:
    releases = {o["metadata"]["name"]: o for o in _objects(seed_bundles["flux"]) if o["kind"] == "HelmRelease"}
    for release in releases.values():
        for dep in release["spec"].get("dependsOn", []):
            assert dep["name"] in releases
    assert [d["name"] for d in releases["gpu-operator"]["spec"]["dependsOn"]] == [
        "cert-manager",
        "kube-prometheus-stack",
        "skyhook-operator",
    ]


def test_oci_charts_come_from_an_oci_repository_and_values_are_inline(
    seed_bundles: dict[str, Path], seed_recipe: Path
) -> None:
    root = seed_bundles["flux"]
    plan = plan_mod.build(BundleRequest(recipe=seed_recipe, output=Path("unused")))
    kai = plan.component("kai-scheduler")
    source = yamlio.load_file(root / kai.folder / "source.yaml")
    release = yamlio.load_file(root / kai.folder / "helmrelease.yaml")
    assert (source["kind"], source["spec"]["url"], source["spec"]["ref"]) == (
        "OCIRepository",
        "oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler",
        {"tag": "v0.13.0"},
    )
    assert release["spec"]["chartRef"] == {"kind": "OCIRepository", "name": "kai-scheduler"}
    assert release["spec"]["values"] == kai.values


def test_a_kustomize_component_is_refused(tmp_path: Path) -> None:
    recipe = bundles.write_document(
        tmp_path / "r.yaml",
        {
            "kind": "RecipeResult",
            "apiVersion": "aicr.run/v1alpha2",
            "metadata": {"version": "0.1.0"},
            "componentRefs": [
                {
                    "name": "kz",
                    "type": "Kustomize",
                    "source": "https://github.com/x/y",
                    "path": "deploy",
                    "tag": "v1.0.0",
                    "namespace": "kz",
                }
            ],
            "deploymentOrder": ["kz"],
        },
    )
    with pytest.raises(errors.InvalidInput, match="Kustomize component, which the flux deployer"):
        bundles.make_bundle(recipe, tmp_path / "out", "flux")
    assert not (tmp_path / "out").exists()
    bundles.make_bundle(recipe, tmp_path / "helm", "helm")
    assert (
        "--kustomize 'https://github.com/x/y//deploy?ref=v1.0.0'"
        in next((tmp_path / "helm").glob("*-kz/install.sh")).read_text()
    )
