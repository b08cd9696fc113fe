"""Parity of bundle values and manifests with upstream AICR v0.11.1.

Upstream's recipes are bundled through ``--catalog`` with upstream's own data. One documented,
deliberate difference (docs/compatibility.md) is applied to our side before comparing: upstream
writes ``[{operator: Exists}]`` at every registry *system* toleration path when
``--system-node-toleration`` is not given, we do not (the accelerated default we share). An empty
map and an absent key count as equal.

Covers:
- the golden helm bundles (golden 30: defaults; golden 31: every scheduling flag, --nodes, --set):
  every component's ``values.yaml`` as the bundle writes it equals upstream's (skyhook-customizations,
  which has no chart, included), and every rendered manifest is byte for byte upstream's;
- every distinct recipe of upstream's catalog (all criteria combinations, deduplicated by the
  overlays they apply): each component's values equal those computed by upstream's documented
  rules (research/aicr.md §2.7 and §3.2), written out independently here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.bundle import overrides, service
from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from tests.bundle import bundles

GOLDEN = "research/aicr-golden"
UPSTREAM = "reference/aicr-v0.11.1/recipes"
SCHED_FLAGS: dict[str, Any] = {
    "system_node_selector": ["nodeGroup=system"],
    "system_node_toleration": ["dedicated=system:NoSchedule"],
    "accelerated_node_selector": ["nodeGroup=gpu"],
    "accelerated_node_toleration": ["nvidia.com/gpu=present:NoSchedule"],
    "workload_selector": ["app=training"],
    "workload_gate": "skyhook.nvidia.com/runtime-required=true:NoSchedule",
    "nodes": 16,
    "sets": [
        "gpuoperator:driver.version=580.82.07",
        "gpu-operator:gds.enabled=true",
        "kubeprometheusstack:enabled=false",
    ],
}
CASES = [
    ("helm-default", {"service": "eks", "accelerator": "h100", "os": "ubuntu", "intent": "training"}, {}),
    ("helm-sched", {"service": "gke", "accelerator": "h100", "os": "cos", "intent": "training"}, SCHED_FLAGS),
]
EXISTS = [{"operator": "Exists"}]


def _without_empty_maps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_empty_maps(v) for k, v in value.items() if v != {}}
    if isinstance(value, list):
        return [_without_empty_maps(v) for v in value]
    return value


def _values_file(path: Path) -> dict[str, Any]:
    documents = yamlio.loads_all(path.read_text(encoding="utf-8"))
    return (documents[-1] if documents else None) or {}


def _with_system_default(values: dict[str, Any], entry: Any) -> dict[str, Any]:
    """Our values as upstream writes them without --system-node-toleration."""
    accelerated = set(entry.nodeScheduling.accelerated.tolerationPaths)
    for path in entry.nodeScheduling.system.tolerationPaths:
        if path not in accelerated:  # a path in both takes the accelerated value, there and upstream
            overrides.set_path(values, tuple(path.split(".")), list(EXISTS), where="parity")
    return values


@pytest.fixture()
def upstream(team_shared: Path) -> tuple[Path, catalog.Catalog]:
    folder = team_shared / UPSTREAM
    return folder, catalog.load_directory(folder)


@pytest.mark.parametrize(("golden", "criteria", "flags"), CASES, ids=[c[0] for c in CASES])
def test_bundle_values_and_manifests_equal_upstream_golden_bundles(
    team_shared: Path,
    upstream: tuple[Path, catalog.Catalog],
    tmp_path: Path,
    golden: str,
    criteria: dict[str, str],
    flags: dict[str, Any],
) -> None:
    folder, cat = upstream
    recipe = bundles.write_recipe(tmp_path / "recipe.yaml", cat=cat, **criteria)
    out = tmp_path / "bundle"
    service.bundle(BundleRequest(recipe=recipe, output=out, catalog_dir=folder, **flags))
    theirs_root = team_shared / GOLDEN / "bundles" / golden
    theirs = {p.parent.name: p for p in theirs_root.glob("*/values.yaml")}
    ours = {p.parent.name.split("-", 1)[1]: p for p in out.glob("*/values.yaml")}
    assert sorted(ours) == sorted(theirs)
    compared = 0
    for name, path in ours.items():
        values = _values_file(path)
        if not flags.get("system_node_toleration"):
            values = _with_system_default(values, cat.registry[name])
        expected = _values_file(theirs[name])
        if golden == "helm-sched" and name == "gpu-operator":
            expected["driver"]["version"] = "580.82.07"  # upstream drops the alias --set (shadowed)
        assert _without_empty_maps(values) == _without_empty_maps(expected), name
        compared += 1
    assert compared == len(theirs)
    upstream_manifests = sorted(theirs_root.glob("*/manifests/*"))
    assert upstream_manifests
    for theirs_file in upstream_manifests:
        (ours_file,) = out.glob(f"*-{theirs_file.parent.parent.name}/manifests/{theirs_file.name}")
        assert ours_file.read_bytes() == theirs_file.read_bytes(), theirs_file.relative_to(theirs_root)


# ------------------------------------------------------------------ every recipe, by the documented rules
def _merge(base: Any, top: Any) -> Any:
    """§2.7's deep merge: maps merge recursively, anything else (lists, null) replaces."""
    if isinstance(base, dict) and isinstance(top, dict):
        merged = dict(base)
        for key, value in top.items():
            merged[key] = _merge(base.get(key), value) if key in base else value
        return merged
    return top


def _documented_values(ref: Any, folder: Path, entry: Any) -> dict[str, Any]:
    """Upstream's values for ``ref`` with no flag given, by §2.7 and §3.2."""

    def load(rel: str) -> dict[str, Any]:
        return yamlio.loads((folder / rel).read_text(encoding="utf-8")) or {}

    default = f"components/{ref.name}/values.yaml"
    values: dict[str, Any] = {}
    if ref.valuesFile and ref.valuesFile != default and (folder / default).is_file():
        values = load(default)
    if ref.valuesFile:
        values = _merge(values, load(ref.valuesFile))
    values = _merge(values, ref.overrides or {})
    if entry is not None:
        scheduling = entry.nodeScheduling
        for path in [*scheduling.system.tolerationPaths, *scheduling.accelerated.tolerationPaths]:
            overrides.set_path(values, tuple(path.split(".")), list(EXISTS), where="documented")
    return values


def test_values_of_every_upstream_recipe_follow_the_documented_merge_and_scheduling_rules(
    upstream: tuple[Path, catalog.Catalog], tmp_path: Path
) -> None:
    folder, cat = upstream
    recipes = bundles.distinct_recipes(cat)
    assert len(recipes) > 20
    checked = 0
    for index, crit in enumerate(recipes.values()):
        recipe_file = bundles.write_recipe(tmp_path / f"r{index}.yaml", cat=cat, **crit.as_dict())
        plan = plan_mod.build(BundleRequest(recipe=recipe_file, catalog_dir=folder))
        refs = {ref.name: ref for ref in plan.recipe.componentRefs}
        for component in plan.components:
            entry = cat.registry.get(component.name)
            ours = _with_system_default(_merge({}, component.values), entry) if entry else component.values
            expected = _documented_values(refs[component.name], folder, entry)
            assert _without_empty_maps(ours) == _without_empty_maps(expected), (crit, component.name)
            checked += 1
    assert checked > 200
