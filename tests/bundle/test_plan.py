"""Planning a bundle: the recipe file, merged values, --set, scheduling flags and the enabled filter.

Covers: the value stack (default values → overlay values → overrides → placement flags → --set);
--set by name and by registry alias, all of them applied in order; typed --set values; unknown
component, empty parts, a path through a scalar or a list → InvalidInput; nothing written at the
system paths unless asked, upstream's tolerate-everything default at the accelerated toleration
paths; selectors, tolerations, workload selector, gate and node count at the registry's paths;
enabled:false in the recipe and through --set (and back on); dependencies on a disabled component
noted; registry validations as notes; recipe files of the wrong kind, apiVersion, order or names
refused; upstream recipes accepted and their Go-template manifests rendered with the values.
tests/bundle/test_manifests.py covers manifests rendered with flags and --set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import errors, yamlio
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from tests.bundle import bundles
from tests.recipe import minicatalog


def _documents() -> dict[str, Any]:
    docs = minicatalog.default_documents()
    alpha = docs["registry.yaml"]["components"][0]
    alpha["nodeScheduling"] = {
        "system": {"nodeSelectorPaths": ["nodeSelector", "webhook.nodeSelector"], "tolerationPaths": ["tolerations"]},
        "accelerated": {
            "nodeSelectorPaths": ["gpu.nodeSelector"],
            "tolerationPaths": ["gpu.tolerations"],
            "taintStrPaths": ["gate.taint"],
        },
        "nodeCountPaths": ["nodes"],
    }
    alpha["podScheduling"] = {"workload": {"workloadSelectorPaths": ["protect"]}}
    alpha["validations"] = [
        {
            "function": "CheckAcceleratedSelectorMissing",
            "severity": "warning",
            "conditions": {"intent": ["training"]},
            "message": "Narrow it.",
        }
    ]
    gamma = next(r for r in docs["overlays/eks.yaml"]["spec"]["componentRefs"] if r["name"] == "gamma")
    gamma["manifestFiles"] = ["components/gamma/manifests/cm.yaml"]
    docs["components/gamma/manifests/cm.yaml"] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    return docs


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", _documents())


@pytest.fixture()
def recipe(cat_dir: Path, tmp_path: Path) -> Path:
    cat = catalog.load_directory(cat_dir)
    return bundles.write_recipe(tmp_path / "recipe.yaml", cat=cat, service="eks", intent="training")


def _plan(recipe: Path, cat_dir: Path, **fields: Any) -> plan_mod.BundlePlan:
    return plan_mod.build(BundleRequest(recipe=recipe, output=Path("unused"), catalog_dir=cat_dir, **fields))


def test_values_stack_defaults_then_overlay_file_then_overrides_then_set(recipe: Path, cat_dir: Path) -> None:
    plan = _plan(recipe, cat_dir, sets=["alpha:image.tag=v9", "alpha:b.z=true"])
    assert plan.component("alpha").values == {
        "image": {"tag": "v9"},
        "replicas": 3,
        "list": [9],
        "a": 1,
        "b": {"y": 2, "z": True},
        "gpu": {"tolerations": [{"operator": "Exists"}]},  # the accelerated default
    }


def test_set_by_alias_and_by_name_both_apply_in_command_line_order(recipe: Path, cat_dir: Path) -> None:
    plan = _plan(recipe, cat_dir, sets=["alpha:replicas=4", "alpha:x=1", "alpha:replicas=5"])
    assert plan.component("alpha").values["replicas"] == 5
    plan = _plan(recipe, cat_dir, sets=["alpha:x=1", "alpha:image.tag=by-name"])
    assert plan.component("alpha").values["image"]["tag"] == "by-name"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("nope:a=1", "unknown component 'nope'; the recipe has: alpha, beta, gamma"),
        ("alpha:replicas.deep=1", "cannot set replicas.deep: replicas is a scalar (int), not a map"),
        ("alpha:list.0=1", "cannot set list.0: list is a list, not a map"),
        ("alpha:=1", "path and value cannot be empty"),
        ("alpha:a=", "path and value cannot be empty"),
        ("a=1", "the component is missing"),
        ("alpha:a..b=1", "empty key in path 'a..b'"),
        ("alpha:enabled=maybe", "enabled must be true or false, got 'maybe'"),
    ],
    ids=[
        "unknown-component",
        "through-scalar",
        "through-list",
        "empty-path",
        "empty-value",
        "no-component",
        "empty-key",
        "enabled-not-bool",
    ],
)
def test_bad_set_is_invalid_input_naming_the_flag(recipe: Path, cat_dir: Path, raw: str, message: str) -> None:
    with pytest.raises(errors.InvalidInput) as caught:
        _plan(recipe, cat_dir, sets=[raw])
    assert caught.value.where == f"--set {raw!r}"
    assert message in caught.value.message


def test_only_the_accelerated_toleration_default_is_written_unless_asked(recipe: Path, cat_dir: Path) -> None:
    """Upstream's default ``--accelerated-node-toleration`` is tolerate-everything (what lets a
    device plugin reach a GPU node with a provider's taint); system paths stay unwritten."""
    values = _plan(recipe, cat_dir).component("alpha").values
    for key in ("tolerations", "nodeSelector", "webhook", "gate", "nodes", "protect"):
        assert key not in values
    assert values["gpu"] == {"tolerations": [{"operator": "Exists"}]}
    given = _plan(recipe, cat_dir, accelerated_node_toleration=["nvidia.com/gpu:NoSchedule"]).component("alpha")
    assert given.values["gpu"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_placement_flags_land_at_every_declared_path(recipe: Path, cat_dir: Path) -> None:
    values = (
        _plan(
            recipe,
            cat_dir,
            system_node_selector=["pool=sys"],
            system_node_toleration=["dedicated:NoSchedule"],
            accelerated_node_selector=["pool=gpu"],
            accelerated_node_toleration=["nvidia.com/gpu=yes:NoExecute"],
            workload_selector=["app=train"],
            workload_gate="gate=on:NoSchedule",
            nodes=8,
        )
        .component("alpha")
        .values
    )
    assert values["nodeSelector"] == values["webhook"]["nodeSelector"] == {"pool": "sys"}
    assert values["tolerations"] == [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    assert values["gpu"] == {
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "yes", "effect": "NoExecute"}],
    }
    assert (values["protect"], values["gate"], values["nodes"]) == (
        {"app": "train"},
        {"taint": "gate=on:NoSchedule"},
        8,
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("system_node_toleration", ["key=value"], "expected key=value:Effect or key:Effect"),
        ("accelerated_node_toleration", ["k=v:Sometimes"], "expected key=value:Effect or key:Effect"),
        ("system_node_selector", ["novalue"], "expected key=value"),
        ("accelerated_node_selector", ["bad key=v"], "invalid label key 'bad key'"),
        ("system_node_selector", ["pool=gpu;reboot"], "invalid label value 'gpu;reboot'"),
        ("workload_selector", ["app=" + "x" * 64], "must be no more than 63 characters"),
        ("system_node_toleration", ["dedicated=a b:NoSchedule"], "invalid taint value 'a b'"),
        ("accelerated_node_toleration", ["-gpu:NoExecute"], "invalid taint key '-gpu'"),
        ("workload_gate", "gate=$(x):NoSchedule", "invalid taint value"),
        ("nodes", -1, "invalid nodes count -1"),
    ],
    ids=[
        "toleration-without-effect",
        "unknown-effect",
        "selector-without-value",
        "bad-key",
        "bad-label-value",
        "label-value-too-long",
        "bad-taint-value",
        "bad-taint-key",
        "bad-gate-value",
        "negative-nodes",
    ],
)
def test_bad_placement_flags_are_invalid_input(
    recipe: Path, cat_dir: Path, field: str, value: Any, message: str
) -> None:
    with pytest.raises(errors.InvalidInput, match=message):
        _plan(recipe, cat_dir, **{field: value})


def test_enabled_false_in_the_recipe_drops_a_component_and_set_brings_it_back(recipe: Path, cat_dir: Path) -> None:
    doc = yamlio.load_file(recipe)
    next(c for c in doc["componentRefs"] if c["name"] == "beta")["overrides"] = {"enabled": False}
    bundles.write_document(recipe, doc)
    plan = _plan(recipe, cat_dir)
    assert [c.name for c in plan.components] == ["alpha", "gamma"]
    assert plan.disabled == ["beta"]
    assert plan.component("gamma").dependencies == []
    assert "gamma depends on beta, which is disabled: it must already be installed" in plan.notes
    assert plan.recipe.deploymentOrder == ["alpha", "gamma"]
    assert [c.name for c in _plan(recipe, cat_dir, sets=["beta:enabled=true"]).components] == ["alpha", "beta", "gamma"]


def test_disabling_everything_is_invalid_input(recipe: Path, cat_dir: Path) -> None:
    with pytest.raises(errors.InvalidInput, match="no enabled components after filtering"):
        _plan(recipe, cat_dir, sets=["alpha:enabled=false", "beta:enabled=false", "gamma:enabled=false"])


def test_registry_validations_become_notes(recipe: Path, cat_dir: Path) -> None:
    assert _plan(recipe, cat_dir).notes == [
        "Warning: alpha is enabled but --accelerated-node-selector is not set. Narrow it."
    ]
    assert _plan(recipe, cat_dir, accelerated_node_selector=["a=b"]).notes == []


def test_manifests_are_read_from_the_catalog(recipe: Path, cat_dir: Path) -> None:
    (manifest,) = _plan(recipe, cat_dir).component("gamma").manifests
    assert manifest.name == "cm.yaml"
    assert yamlio.loads(manifest.text)["kind"] == "ConfigMap"


def _rename(doc: dict[str, Any], old: str, new: str) -> None:
    next(c for c in doc["componentRefs"] if c["name"] == old)["name"] = new
    doc["deploymentOrder"] = [new if n == old else n for n in doc["deploymentOrder"]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d.update(kind="RecipeMetadata"),
            "expected kind RecipeResult (from aicr recipe), got 'RecipeMetadata'",
        ),
        (lambda d: d.update(apiVersion="v1"), "unsupported apiVersion 'v1'"),
        (lambda d: d.update(componentRefs=[]), "the recipe has no components"),
        (lambda d: d.update(deploymentOrder=["gamma", "beta", "alpha"]), "'gamma' comes before its dependency 'beta'"),
        (lambda d: d.update(deploymentOrder=["alpha"]), "deploymentOrder must list every component exactly once"),
        (lambda d: _rename(d, "gamma", "Gamma_1"), "component name 'Gamma_1' is not a DNS-1123 label"),
        (lambda d: d["componentRefs"][1].update(namespace="ns with space"), "namespace 'ns with space'"),
        (
            lambda d: d["componentRefs"][0].update(valuesFile="components/alpha/gone.yaml"),
            "values file 'components/alpha/gone.yaml' does not exist",
        ),
    ],
    ids=[
        "kind",
        "api-version",
        "no-components",
        "bad-order",
        "incomplete-order",
        "bad-name",
        "bad-namespace",
        "missing-values-file",
    ],
)
def test_a_recipe_that_cannot_be_bundled_is_invalid_input(
    recipe: Path, cat_dir: Path, change: Any, message: str
) -> None:
    doc = yamlio.load_file(recipe)
    change(doc)
    bundles.write_document(recipe, doc)
    with pytest.raises(errors.InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        _plan(recipe, cat_dir)


def test_a_recipe_without_an_order_gets_the_recipe_commands_order(recipe: Path, cat_dir: Path) -> None:
    doc = yamlio.load_file(recipe)
    del doc["deploymentOrder"]
    bundles.write_document(recipe, doc)
    assert [c.name for c in _plan(recipe, cat_dir).components] == ["alpha", "beta", "gamma"]


def test_upstream_recipes_and_their_go_template_manifests_are_rendered(team_shared: Path) -> None:
    golden = team_shared / "research/aicr-golden/recipes/eks-h100-ubuntu-training.yaml"
    upstream = team_shared / "reference/aicr-v0.11.1/recipes"
    plan = plan_mod.build(BundleRequest(recipe=golden, output=Path("unused"), catalog_dir=upstream))
    assert plan.recipe.apiVersion == "aicr.nvidia.com/v1alpha1"
    for component in plan.components:
        for manifest in component.manifests:
            assert "{{" not in manifest.text, manifest.source
    (dcgm,) = plan.component("gpu-operator").manifests
    assert yamlio.loads_all(dcgm.text)[-1]["metadata"]["namespace"] == "gpu-operator"
    assert not any("Go template" in n for n in plan.notes)
