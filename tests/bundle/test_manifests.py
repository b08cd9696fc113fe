"""Manifests rendered with the component's values, and their Helm hooks read per deployer.

Covers: the placement flags and ``--set skyhook-customizations:autoTaintNewNodes=false`` reach the
Skyhook CR in all five deployers (our catalog and upstream's); without flags the CR tolerates every
taint and selects no node; a ``--set`` path no manifest of a chartless component reads is refused
naming the flag; the ``--workload-selector`` warning fires when the flag is missing, goes when the
manifest applies it, and stays when the flag is given but the manifest (a plain file from
``--data``) does not use it; a construct outside the template subset and a value a template prints
that is missing are refused with the catalog file and line, through the CLI with exit 2, one line
and no output folder; a manifest rendering to comments only is left out; Helm hook annotations
become sync waves or Argo CD hooks (argocd, argocd-helm), are dropped (flux, helmfile) or kept as
rendered (helm, applied by kubectl); hooks with no GitOps equivalent are refused; every Flux
HelmRelease replaces its chart's CRDs on install and upgrade.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import errors, yamlio
from shared.bundle import hooks
from shared.bundle import plan as plan_mod
from shared.bundle.manifests import Manifest
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from tests.bundle import bundles
from tests.recipe import minicatalog

WAVE = "argocd.argoproj.io/sync-wave"
ARGO_HOOK = "argocd.argoproj.io/hook"
ARGO_POLICY = "argocd.argoproj.io/hook-delete-policy"
TRAINING = {"service": "eks", "accelerator": "h100", "os": "ubuntu", "intent": "training"}
FLAGS: dict[str, Any] = {
    "workload_selector": ["a=b"],
    "accelerated_node_selector": ["c=d"],
    "accelerated_node_toleration": ["nvidia.com/gpu=present:NoSchedule"],
    "sets": ["skyhook-customizations:autoTaintNewNodes=false"],
}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
WORKLOAD_WARNING = "skyhook-customizations is enabled but --workload-selector is not set."


def _skyhooks(root: Path) -> dict[str, dict[str, Any]]:
    """Every Skyhook object of a bundle, by the file that holds it."""
    found: dict[str, dict[str, Any]] = {}
    for rel, docs in bundles.yaml_documents(root).items():
        for doc in docs:
            if isinstance(doc, dict) and doc.get("kind") == "Skyhook":
                found[rel] = doc
    return found


@pytest.fixture()
def recipe(tmp_path: Path) -> Path:
    return bundles.write_recipe(tmp_path / "recipe.yaml", **TRAINING)


@pytest.mark.parametrize("source", ["ours", "upstream"])
@pytest.mark.parametrize("deployer", bundles.DEPLOYERS)
def test_placement_flags_and_set_reach_the_skyhook_in_every_deployer(
    request: pytest.FixtureRequest, tmp_path: Path, deployer: str, source: str
) -> None:
    catalog_dir = None
    if source == "upstream":
        catalog_dir = request.getfixturevalue("team_shared") / "reference/aicr-v0.11.1/recipes"
    cat = catalog.load_directory(catalog_dir) if catalog_dir else None
    recipe = bundles.write_recipe(tmp_path / "recipe.yaml", cat=cat, **TRAINING)
    result = bundles.make_bundle(recipe, tmp_path / "out", deployer, catalog_dir=catalog_dir, **FLAGS)
    (spec,) = [doc["spec"] for doc in _skyhooks(tmp_path / "out").values()]
    assert spec["autoTaintNewNodes"] is False
    assert spec["nodeSelectors"] == {"matchLabels": {"c": "d"}}
    assert spec["podNonInterruptLabels"] == {"matchLabels": {"a": "b"}}
    assert spec["additionalTolerations"] == [GPU_TOLERATION]
    assert not any("skyhook-customizations" in note for note in result.notes)


def test_without_flags_the_skyhook_tolerates_every_taint_and_both_warnings_stay(recipe: Path, tmp_path: Path) -> None:
    result = bundles.make_bundle(recipe, tmp_path / "out")
    (spec,) = [doc["spec"] for doc in _skyhooks(tmp_path / "out").values()]
    assert spec["autoTaintNewNodes"] is True
    assert spec["additionalTolerations"] == [{"operator": "Exists"}]
    assert "nodeSelectors" not in spec and "podNonInterruptLabels" not in spec
    assert any(WORKLOAD_WARNING in note for note in result.notes)
    assert any("--accelerated-node-selector is not set" in note for note in result.notes)
    applied = bundles.make_bundle(recipe, tmp_path / "out2", workload_selector=["a=b"])
    assert not any("--workload-selector" in note for note in applied.notes)


def test_a_set_no_manifest_reads_is_refused_for_a_component_without_a_chart(recipe: Path, tmp_path: Path) -> None:
    raw = "skyhook-customizations:spec.autoTaintNewNodes=false"
    with pytest.raises(errors.InvalidInput) as caught:
        bundles.make_bundle(recipe, tmp_path / "out", sets=[raw])
    assert caught.value.where == f"--set {raw!r}"
    assert "spec.autoTaintNewNodes is not used by any manifest of skyhook-customizations" in caught.value.message
    assert not (tmp_path / "out").exists()


def _data_dir(tmp_path: Path, manifest: str) -> Path:
    """A --data folder replacing the training Skyhook manifest of our catalog."""
    return minicatalog.write(
        tmp_path / "data",
        {
            "registry.yaml": {"apiVersion": minicatalog.API, "kind": "ComponentRegistry", "components": []},
            "components/skyhook-customizations/manifests/tuning-eks-h100-training.yaml": manifest,
        },
    )


PLAIN_SKYHOOK = (
    "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata:\n  name: tuning\n"
    "spec:\n  autoTaintNewNodes: true\n"
)


def test_the_workload_warning_stays_when_the_manifest_does_not_use_the_flag(recipe: Path, tmp_path: Path) -> None:
    result = bundles.make_bundle(
        recipe,
        tmp_path / "out",
        data_dir=_data_dir(tmp_path, PLAIN_SKYHOOK),
        workload_selector=["a=b"],
        accelerated_node_selector=["c=d"],
    )
    expected = (
        "Warning: skyhook-customizations: --workload-selector is set but no manifest of it uses it "
        "(components/skyhook-customizations/manifests/tuning-eks-h100-training.yaml)."
    )
    assert any(note.startswith(expected) for note in result.notes), result.notes
    assert any("--accelerated-node-selector is set but no manifest" in note for note in result.notes)


@pytest.mark.parametrize(
    ("manifest", "line", "message"),
    [
        ("a: 1\n{{ range .Values.x }}{{ end }}\n", 2, "'range' is outside"),
        (
            'kind: X\n\n{{ $c := index .Values "skyhook-customizations" }}{{ $c.nothing }}\n',
            3,
            "no value for $c.nothing",
        ),
        ("kind: X\n{{ lower .Release.Name }}\n", 2, "function 'lower' is outside"),
    ],
    ids=["range", "missing-value", "unknown-function"],
)
def test_a_manifest_outside_the_subset_exits_2_naming_file_and_line(
    run_cli: Any, recipe: Path, tmp_path: Path, manifest: str, line: int, message: str
) -> None:
    data = _data_dir(tmp_path, manifest)
    out = tmp_path / "out"
    result = run_cli("aicr", "bundle", "-r", str(recipe), "-o", str(out), "--data", str(data))
    assert result.code == 2, result.stderr
    (only,) = result.stderr.splitlines()
    assert only.startswith(f"error: components/skyhook-customizations/manifests/tuning-eks-h100-training.yaml:{line}")
    assert message in only
    assert not out.exists()


def test_every_recipe_of_our_catalog_renders_its_manifests(tmp_path: Path) -> None:
    """All criteria combinations, one per distinct recipe: every manifest renders in the subset to
    YAML objects, and every Skyhook reads the placement values."""
    recipes = bundles.distinct_recipes(catalog.embedded())
    skyhooks = 0
    for index, crit in enumerate(recipes.values()):
        recipe = bundles.write_recipe(tmp_path / f"r{index}.yaml", **crit.as_dict())
        plan = plan_mod.build(BundleRequest(recipe=recipe, workload_selector=["a=b"]))
        for component in plan.components:
            for manifest in component.manifests:
                docs = [d for d in yamlio.loads_all(manifest.text, source=manifest.source) if d is not None]
                assert docs and all(isinstance(d, dict) and "kind" in d for d in docs), manifest.source
                for doc in docs:
                    if doc["kind"] == "Skyhook":
                        skyhooks += 1
                        assert doc["spec"]["podNonInterruptLabels"] == {"matchLabels": {"a": "b"}}
    assert len(recipes) > 20 and skyhooks > 3


def test_a_manifest_rendering_to_comments_only_is_left_out(recipe: Path, tmp_path: Path) -> None:
    skipped = '# nothing for this recipe\n{{- if eq "a" "b" }}\nkind: X\n{{- end }}\n---\n'
    plan = plan_mod.build(BundleRequest(recipe=recipe, data_dir=_data_dir(tmp_path, skipped)))
    assert plan.component("skyhook-customizations").manifests == []


# ------------------------------------------------------------------ hooks per deployer
@pytest.mark.parametrize(
    ("deployer", "expected"),
    [
        ("helm", {"helm.sh/hook": "post-install,post-upgrade"}),
        ("argocd", {"argocd.argoproj.io/sync-wave": "10"}),
        ("argocd-helm", {"argocd.argoproj.io/sync-wave": "10"}),
        ("flux", {}),
        ("helmfile", {}),
    ],
)
def test_the_skyhook_hook_annotations_are_read_per_deployer(
    recipe: Path, tmp_path: Path, deployer: str, expected: dict[str, str]
) -> None:
    bundles.make_bundle(recipe, tmp_path / "out", deployer)
    (skyhook,) = _skyhooks(tmp_path / "out").values()
    annotations = skyhook["metadata"].get("annotations") or {}
    assert {k: v for k, v in annotations.items() if k in expected} == expected
    if deployer != "helm":
        assert not [k for k in annotations if k.startswith("helm.sh/hook")]


def _manifest(annotations: dict[str, str], kind: str = "Job") -> Manifest:
    doc = {"apiVersion": "batch/v1", "kind": kind, "metadata": {"name": "x", "annotations": annotations}}
    return Manifest(name="x.yaml", source="components/c/manifests/x.yaml", text=yamlio.dumps(doc))


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (
            {"helm.sh/hook": "post-install", "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"},
            {
                "argocd.argoproj.io/hook": "PostSync",
                "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
            },
        ),
        (
            {"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "5"},
            {"argocd.argoproj.io/sync-wave": "-1"},
        ),
        (
            {"helm.sh/hook": "post-upgrade", "helm.sh/hook-weight": "-3", "keep": "me"},
            {"argocd.argoproj.io/sync-wave": "1", "keep": "me"},
        ),
    ],
    ids=["job-hook", "pre-install-wave", "post-wave-and-other-annotations"],
)
def test_argocd_reads_persistent_objects_as_waves_and_deleted_ones_as_hooks(
    annotations: dict[str, str], expected: dict[str, str]
) -> None:
    out = hooks.argocd("argocd")(_manifest(annotations))
    assert yamlio.loads(out.text)["metadata"]["annotations"] == expected


@pytest.mark.parametrize("translate", [hooks.argocd("argocd"), hooks.plain("flux")], ids=["argocd", "flux"])
def test_a_hook_without_a_gitops_equivalent_is_refused_naming_the_file(translate: hooks.Translate) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        translate(_manifest({"helm.sh/hook": "pre-delete"}))
    assert caught.value.where == "components/c/manifests/x.yaml metadata.annotations.helm.sh/hook"
    assert "Helm hook pre-delete has no equivalent" in caught.value.message


def test_a_manifest_without_hooks_is_written_as_rendered() -> None:
    manifest = Manifest(name="m.yaml", source="m.yaml", text="# kept comment\nkind: ConfigMap\n")
    assert hooks.plain("flux")(manifest) is manifest
    assert hooks.argocd("argocd")(manifest) is manifest


def test_every_flux_helmrelease_replaces_its_charts_crds(recipe: Path, tmp_path: Path) -> None:
    bundles.make_bundle(recipe, tmp_path / "out", "flux")
    releases = [
        doc
        for docs in bundles.yaml_documents(tmp_path / "out").values()
        for doc in docs
        if doc.get("kind") == "HelmRelease"
    ]
    assert len(releases) > 5
    for release in releases:
        assert release["spec"]["install"]["crds"] == "CreateReplace", release["metadata"]["name"]
        assert release["spec"]["upgrade"]["crds"] == "CreateReplace", release["metadata"]["name"]
