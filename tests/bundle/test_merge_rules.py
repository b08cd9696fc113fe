"""One test per merge and scheduling rule upstream documents (research/aicr.md §2.7, §3.1, §3.2).

Each row names its rule; where we differ on purpose (docs/compatibility.md) the row says so and
pins our behaviour. Covers: which values files stack (default + variant, or one), deep merge of
maps, lists and null replacing, overrides on top, ``--set`` creating maps on its path, selectors
replacing the map and tolerations the list at the registry's paths, the toleration's fields,
upstream's accelerated toleration default (not at system paths), workload selector, gate string,
node count (not written for 0), and the enabled filter (recipe ``enabled: false``, ``--set``
both ways).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from tests.bundle import bundles
from tests.recipe import minicatalog

MISSING = object()


def _documents() -> dict[str, Any]:
    docs = minicatalog.default_documents()
    alpha = docs["registry.yaml"]["components"][0]
    alpha["nodeScheduling"] = {
        "system": {"nodeSelectorPaths": ["sys.nodeSelector"], "tolerationPaths": ["sys.tolerations"]},
        "accelerated": {
            "nodeSelectorPaths": ["gpu.nodeSelector"],
            "tolerationPaths": ["gpu.tolerations"],
            "taintStrPaths": ["gate.taint"],
        },
        "nodeCountPaths": ["count"],
    }
    alpha["podScheduling"] = {"workload": {"workloadSelectorPaths": ["protect"]}}
    docs["components/alpha/values.yaml"] = {
        "image": {"tag": "v1", "pull": "Always"},
        "replicas": 1,
        "list": [1, 2],
        "nulled": "set",
        "sys": {"nodeSelector": {"old": "x", "keep": "no"}, "tolerations": [{"key": "old", "operator": "Exists"}]},
        "gpu": {"tolerations": [{"key": "narrow", "operator": "Exists"}]},
    }
    docs["components/alpha/values-train.yaml"] = {"replicas": 3, "list": [9], "nulled": None, "image": {"tag": "v2"}}
    return docs


def _value(values: dict[str, Any], path: str) -> Any:
    current: Any = values
    for part in path.split("."):
        if not isinstance(current, dict) or part not in current:
            return MISSING
        current = current[part]
    return current


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", _documents())


def _plan(tmp_path: Path, cat_dir: Path, intent: str = "training", **fields: Any) -> plan_mod.BundlePlan:
    cat = catalog.load_directory(cat_dir)
    recipe = bundles.write_recipe(tmp_path / "recipe.yaml", cat=cat, service="eks", intent=intent)
    return plan_mod.build(BundleRequest(recipe=recipe, catalog_dir=cat_dir, **fields))


RULES: list[tuple[str, dict[str, Any], str, Any]] = [
    # §2.7 values resolution
    ("2.7 default values.yaml under a variant valuesFile", {}, "image.pull", "Always"),
    ("2.7 the variant valuesFile over the default", {}, "image.tag", "v2"),
    ("2.7 only the default when the valuesFile is the default", {"intent": "inference"}, "replicas", 1),
    ("2.7 deep merge: maps merge key by key", {}, "image", {"tag": "v2", "pull": "Always"}),
    ("2.7 deep merge: lists replace", {}, "list", [9]),
    ("2.7 deep merge: null is stored, replacing", {}, "nulled", None),
    ("2.7 overrides over the values files", {}, "a", 1),
    # §3.2 --set
    ("3.2 --set creates the maps on its path", {"sets": ["alpha:new.deep.key=x"]}, "new.deep.key", "x"),
    ("3.2 --set over the overrides", {"sets": ["alpha:a=2"]}, "a", 2),
    # §3.2 scheduling injection
    ("3.2 a selector replaces the map", {"system_node_selector": ["pool=sys"]}, "sys.nodeSelector", {"pool": "sys"}),
    (
        "3.2 a toleration replaces the list; Equal with a value",
        {"system_node_toleration": ["dedicated=sys:NoSchedule"]},
        "sys.tolerations",
        [{"key": "dedicated", "operator": "Equal", "value": "sys", "effect": "NoSchedule"}],
    ),
    (
        "3.2 a toleration without a value is Exists",
        {"accelerated_node_toleration": ["nvidia.com/gpu:NoExecute"]},
        "gpu.tolerations",
        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}],
    ),
    ("3.2 the accelerated toleration defaults to Exists", {}, "gpu.tolerations", [{"operator": "Exists"}]),
    (
        "3.2 differs: no system toleration default (the values keep theirs)",
        {},
        "sys.tolerations",
        [{"key": "old", "operator": "Exists"}],
    ),
    ("3.2 the accelerated selector", {"accelerated_node_selector": ["g=1"]}, "gpu.nodeSelector", {"g": "1"}),
    ("3.2 the workload selector", {"workload_selector": ["app=train"]}, "protect", {"app": "train"}),
    ("3.2 the gate as key=value:Effect", {"workload_gate": "g=on:NoSchedule"}, "gate.taint", "g=on:NoSchedule"),
    ("3.2 the node count as an integer", {"nodes": 16}, "count", 16),
    ("3.2 no node count for 0", {"nodes": 0}, "count", MISSING),
]


@pytest.mark.parametrize(("rule", "fields", "path", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_documented_rule(
    tmp_path: Path, cat_dir: Path, rule: str, fields: dict[str, Any], path: str, expected: Any
) -> None:
    values = _plan(tmp_path, cat_dir, **fields).component("alpha").values
    assert _value(values, path) == expected, rule


@pytest.mark.parametrize(
    ("rule", "sets", "recipe_enabled", "kept"),
    [
        ("3.1 --set enabled=false drops the component", ["beta:enabled=false"], True, False),
        ("3.1 recipe overrides.enabled false drops it", [], False, False),
        ("3.1 --set enabled=true brings a recipe-disabled one back", ["beta:enabled=true"], False, True),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_the_enabled_filter(
    tmp_path: Path, cat_dir: Path, rule: str, sets: list[str], recipe_enabled: bool, kept: bool
) -> None:
    if not recipe_enabled:
        docs = _documents()
        base = docs["overlays/base.yaml"]["spec"]["componentRefs"]
        next(r for r in base if r["name"] == "beta")["overrides"] = {"enabled": False}
        cat_dir = minicatalog.write(tmp_path / "cat2", docs)
    plan = _plan(tmp_path, cat_dir, sets=sets)
    assert ("beta" in [c.name for c in plan.components]) is kept, rule
    assert ("beta" in plan.disabled) is not kept
