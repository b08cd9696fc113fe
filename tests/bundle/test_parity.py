"""Parity of merged values with upstream AICR v0.11.1's golden helm bundles.

Upstream's recipes are bundled through ``--catalog`` with upstream's own data, and every
component's merged values are compared with the values.yaml upstream wrote, after applying the
documented, deliberate differences (docs/compatibility.md) to our side or theirs:

- no flag, no toleration: upstream writes ``[{operator: Exists}]`` at every registry toleration
  path when no toleration flag is given; we write nothing (re-applied here to compare the rest);
- every ``--set`` applies: upstream ignores ``gpuoperator:…`` when ``gpu-operator:…`` is also given.

Covers: the default bundle (golden 30) and the bundle with every scheduling flag, --nodes and
--set (golden 31), component for component, plus the set of components kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.bundle import overrides
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


def _upstream_values(path: Path) -> dict[str, Any]:
    documents = yamlio.loads_all(path.read_text(encoding="utf-8"))
    return documents[-1] if documents else {}


def _with_upstream_default_tolerations(values: dict[str, Any], entry: Any) -> dict[str, Any]:
    paths = [*entry.nodeScheduling.system.tolerationPaths, *entry.nodeScheduling.accelerated.tolerationPaths]
    for path in paths:
        overrides.set_path(values, tuple(path.split(".")), [{"operator": "Exists"}], where="parity")
    return values


@pytest.mark.parametrize(("golden", "criteria", "flags"), CASES, ids=[c[0] for c in CASES])
def test_merged_values_equal_upstream_golden_bundles(
    team_shared: Path, tmp_path: Path, golden: str, criteria: dict[str, str], flags: dict[str, Any]
) -> None:
    upstream_catalog = team_shared / UPSTREAM
    cat = catalog.load_directory(upstream_catalog)
    recipe = bundles.write_recipe(tmp_path / "recipe.yaml", cat=cat, **criteria)
    plan = plan_mod.build(BundleRequest(recipe=recipe, output=Path("unused"), catalog_dir=upstream_catalog, **flags))
    theirs_root = team_shared / GOLDEN / "bundles" / golden
    theirs = {p.parent.name: _upstream_values(p) for p in theirs_root.glob("*/values.yaml")}
    assert sorted(theirs) == sorted(c.name for c in plan.components)
    for component in plan.components:
        ours = component.values
        if not flags:
            ours = _with_upstream_default_tolerations(ours, cat.registry[component.name])
        expected = theirs[component.name]
        if golden == "helm-sched" and component.name == "gpu-operator":
            expected["driver"]["version"] = "580.82.07"  # upstream drops the alias --set (shadowed)
        assert ours == expected, component.name
