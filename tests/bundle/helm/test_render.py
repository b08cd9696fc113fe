"""The helm deployer's tree for the seed recipe.

Covers: one numbered folder per component in deployment order; values.yaml equal to the plan's
merged values (and absent for manifest-only components); manifests copied byte for byte from the
catalog; executable scripts; deploy.sh calling the installs in order and undeploy.sh in reverse;
OCI charts installed by reference without --repo; the README naming every component; a Kustomize
component applied server-side.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path

from shared import yamlio
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from tests.bundle import bundles


def _plan(recipe: Path) -> plan_mod.BundlePlan:
    return plan_mod.build(BundleRequest(recipe=recipe, output=Path("unused")))


def test_every_component_gets_a_numbered_folder_in_deployment_order(
    seed_bundles: dict[str, Path], seed_recipe: Path
) -> None:
    root = seed_bundles["helm"]
    order = yamlio.load_file(seed_recipe)["deploymentOrder"]
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert folders == [f"{i:03d}-{name}" for i, name in enumerate(order, start=1)]


def test_values_files_hold_the_merged_values_and_manifests_are_rendered_from_them(
    seed_bundles: dict[str, Path], seed_recipe: Path
) -> None:
    root = seed_bundles["helm"]
    files = catalog.embedded().files
    for component in _plan(seed_recipe).components:
        folder = root / component.folder
        if component.has_chart or component.manifests:
            assert yamlio.load_file(folder / "values.yaml") == component.values
        else:
            assert not (folder / "values.yaml").exists()
        for manifest in component.manifests:
            written = (folder / "manifests" / manifest.name).read_text(encoding="utf-8")
            assert written == manifest.text
            source = files[manifest.source].read_text(encoding="utf-8")
            assert "{{" not in written
            if "{{" not in source:  # a plain manifest is a template without actions
                assert written == source


def test_scripts_are_executable_and_other_files_are_not(seed_bundles: dict[str, Path]) -> None:
    for path in seed_bundles["helm"].rglob("*"):
        if path.is_file():
            executable = bool(path.stat().st_mode & stat.S_IXUSR)
            assert executable == (path.suffix == ".sh"), path


def test_deploy_runs_installs_in_order_and_undeploy_in_reverse(
    seed_bundles: dict[str, Path], seed_recipe: Path
) -> None:
    root = seed_bundles["helm"]
    order = yamlio.load_file(seed_recipe)["deploymentOrder"]
    installs = re.findall(r"^\"\$\{HERE\}/\"\d+-([a-z0-9-]+)/install\.sh$", (root / "deploy.sh").read_text(), re.M)
    removals = re.findall(r"^\"\$\{HERE\}/\"\d+-([a-z0-9-]+)/uninstall\.sh$", (root / "undeploy.sh").read_text(), re.M)
    assert installs == order
    assert removals == list(reversed(order))


def test_oci_charts_are_installed_by_reference_and_https_charts_with_repo(seed_bundles: dict[str, Path]) -> None:
    root = seed_bundles["helm"]
    (kai,) = root.glob("*-kai-scheduler/install.sh")
    (gpu,) = root.glob("*-gpu-operator/install.sh")
    expected = "helm upgrade --install kai-scheduler oci://ghcr.io/nvidia/kai-scheduler/kai-scheduler \\\n"
    assert expected in kai.read_text()
    assert "--repo" not in kai.read_text()
    assert "  --repo https://helm.ngc.nvidia.com/nvidia \\\n" in gpu.read_text()
    assert 'kubectl apply --namespace gpu-operator --filename "${HERE}/manifests/"' in gpu.read_text()


def test_the_readme_lists_every_component(seed_bundles: dict[str, Path], seed_recipe: Path) -> None:
    readme = (seed_bundles["helm"] / "README.md").read_text()
    for name in yamlio.load_file(seed_recipe)["deploymentOrder"]:
        assert f"| {name} |" in readme


def test_a_kustomize_component_is_applied_server_side(tmp_path: Path) -> None:
    """Server-side apply: a large CRD (the MPI Operator's) is over client-side apply's annotation limit."""
    recipe = bundles.write_document(
        tmp_path / "kz.yaml",
        {
            "kind": "RecipeResult",
            "apiVersion": "aicr.run/v1alpha2",
            "metadata": {"version": "0.1.0"},
            "componentRefs": [
                {
                    "name": "mpi-operator",
                    "type": "Kustomize",
                    "namespace": "mpi-operator",
                    "source": "https://github.com/kubeflow/mpi-operator",
                    "path": "manifests/overlays/standalone",
                    "tag": "v0.8.0",
                }
            ],
        },
    )
    bundles.make_bundle(recipe, tmp_path / "b")
    script = (tmp_path / "b" / "001-mpi-operator" / "install.sh").read_text(encoding="utf-8")
    assert (
        "kubectl apply --server-side --namespace mpi-operator --kustomize "
        "'https://github.com/kubeflow/mpi-operator//manifests/overlays/standalone?ref=v0.8.0'"
    ) in script
