"""The argocd deployer's tree for the seed recipe.

Covers: every Application (and the app-of-apps) valid against Argo CD's official CRD schema;
``--repo`` filling every repository URL (no template text left); sync waves equal to positions in
the deployment order; OCI charts named without the scheme; manifest-only components synced from
their manifests folder; the placeholder URL and a note when ``--repo`` is missing.
"""

from __future__ import annotations

from pathlib import Path

from shared import yamlio
from tests.bundle import bundles, schemas
from tests.bundle.conftest import REPO


def _applications(root: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    return {p.parent.name: yamlio.load_file(p) for p in sorted(root.glob("*/application.yaml"))}


def test_every_application_validates_against_the_official_crd(seed_bundles: dict[str, Path], team_shared: Path) -> None:
    root = seed_bundles["argocd"]
    documents = [*_applications(root).values(), yamlio.load_file(root / "app-of-apps.yaml")]
    assert len(documents) > 10
    for document in documents:
        assert schemas.crd_errors(team_shared, document) == [], document["metadata"]["name"]


def test_repo_fills_every_repository_url_of_the_bundle(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["argocd"]
    assert yamlio.load_file(root / "app-of-apps.yaml")["spec"]["source"]["repoURL"] == REPO
    for app in _applications(root).values():
        sources = app["spec"].get("sources") or [app["spec"]["source"]]
        own = [s for s in sources if "chart" not in s]
        assert own and all(s["repoURL"] == REPO for s in own)
    assert "{{" not in "".join(p.read_text() for p in root.rglob("application.yaml"))


def test_sync_waves_are_positions_in_the_deployment_order(seed_bundles: dict[str, Path], seed_recipe: Path) -> None:
    order = yamlio.load_file(seed_recipe)["deploymentOrder"]
    waves = {
        app["metadata"]["name"]: int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
        for app in _applications(seed_bundles["argocd"]).values()
    }
    assert waves == {name: i for i, name in enumerate(order, start=1)}


def test_oci_charts_name_the_registry_without_scheme_and_manifest_only_apps_sync_a_path(
    seed_bundles: dict[str, Path],
) -> None:
    apps = {a["metadata"]["name"]: a for a in _applications(seed_bundles["argocd"]).values()}
    kai = apps["kai-scheduler"]["spec"]["sources"][0]
    assert (kai["repoURL"], kai["chart"], kai["targetRevision"]) == (
        "ghcr.io/nvidia/kai-scheduler",
        "kai-scheduler",
        "v0.13.0",
    )
    sky = apps["skyhook-customizations"]["spec"]["source"]
    assert sky["path"].endswith("-skyhook-customizations/manifests") and sky["repoURL"] == REPO


def test_without_repo_the_placeholder_is_used_and_a_note_says_so(seed_recipe: Path, tmp_path: Path) -> None:
    result = bundles.make_bundle(seed_recipe, tmp_path / "b", "argocd")
    app = yamlio.load_file(tmp_path / "b" / "app-of-apps.yaml")
    assert app["spec"]["source"]["repoURL"] == "https://github.com/YOUR-ORG/YOUR-REPO.git"
    assert any("--repo not set" in note for note in result.notes)
