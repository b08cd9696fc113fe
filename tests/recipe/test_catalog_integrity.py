"""The embedded catalog, tested as data.

Covers: every file loads strictly; every overlay is reachable and resolvable; all 648 criteria
combinations of the benchmark resolve; every component in every recipe is pinned, has health asserts
and a namespace; every values file parses to a mapping; the seed's dynamo example; nvsentinel and the
certification engine are always present; the deployment order respects every dependency.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.recipe import catalog, resolver, values, versions
from shared.recipe.criteria import Criteria

SERVICES = ["eks", "gke", "aks", "kind", "oke", "any"]
ACCELERATORS = ["h100", "gb200", "a100", "any"]
OSES = ["ubuntu", "cos", "any"]
INTENTS = ["training", "inference", "any"]
PLATFORMS = ["dynamo", "kubeflow", "any"]


def _combinations() -> list[Criteria]:
    out = []
    for combo in itertools.product(SERVICES, ACCELERATORS, OSES, INTENTS, PLATFORMS):
        crit = Criteria(**dict(zip(("service", "accelerator", "os", "intent", "platform"), combo, strict=True)))
        if crit.specificity():
            out.append(crit)
    return out


@pytest.fixture(scope="module")
def embedded() -> catalog.Catalog:
    return catalog.embedded()


def test_every_overlay_is_resolvable_from_its_own_criteria(embedded: catalog.Catalog) -> None:
    for name, overlay in sorted(embedded.overlays.items()):
        assert overlay.metadata.name == name
        if overlay.spec.criteria is None or Criteria.parse(overlay.spec.criteria).specificity() == 0:
            continue
        recipe = resolver.resolve(Criteria.parse(overlay.spec.criteria), embedded).recipe
        assert recipe.metadata.appliedOverlays[-1] == name


def test_every_registry_component_is_used_somewhere(embedded: catalog.Catalog) -> None:
    """Used by an overlay, or offered by a mixin for users' own overlays (mpi-operator)."""
    used = {ref.name for o in [embedded.base, *embedded.overlays.values()] if o for ref in o.spec.componentRefs or []}
    offered = {ref.name for m in embedded.mixins.values() for ref in m.spec.componentRefs or []}
    assert sorted(set(embedded.registry) - used - offered) == []
    assert sorted((used | offered) - set(embedded.registry)) == []


def test_an_overlay_of_ones_own_adds_the_mpi_operator_through_its_mixin(run_cli: Any, tmp_path: Path) -> None:
    overlays = tmp_path / "overlays"
    overlays.mkdir()
    (overlays / "with-mpi-operator.yaml").write_text(
        "apiVersion: aicr.run/v1alpha2\nkind: RecipeMetadata\nmetadata: {name: with-mpi-operator}\n"
        "spec: {base: base, criteria: {intent: any}, mixins: [mpi-operator]}\n",
        encoding="utf-8",
    )
    args = ("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "--intent", "training", "-t", "json")
    plain = json.loads(run_cli(*args).stdout)
    mine = run_cli(*args, "--data", str(tmp_path))
    assert mine.code == 0, mine.stderr
    ref = next(c for c in json.loads(mine.stdout)["componentRefs"] if c["name"] == "mpi-operator")
    assert (ref["type"], ref["namespace"], ref["tag"]) == ("Kustomize", "mpi-operator", "v0.8.0")
    assert ref["source"] == "https://github.com/kubeflow/mpi-operator"
    assert "mpi-operator" not in {c["name"] for c in plain["componentRefs"]}


def test_every_values_file_holds_a_mapping(embedded: catalog.Catalog) -> None:
    value_files = [p for p in embedded.files if p.startswith("components/") and "/manifests/" not in p]
    assert value_files
    for path in value_files:
        assert isinstance(embedded.values(path), dict), path


def test_all_combinations_resolve_to_pinned_healthy_ordered_recipes(embedded: catalog.Catalog) -> None:
    combos = _combinations()
    assert len(combos) == 647  # 648 minus the all-wildcard query, which is refused
    for crit in combos:
        recipe = resolver.resolve(crit, embedded).recipe
        names = {c.name for c in recipe.componentRefs}
        assert {"nvsentinel", "nvcre", "gpu-operator", "cert-manager"} <= names, crit
        position = {n: i for i, n in enumerate(recipe.deploymentOrder)}
        for ref in recipe.componentRefs:
            assert ref.namespace, (crit, ref.name)
            assert ref.healthCheckAsserts is not None and not ref.healthCheckAsserts.is_empty(), (crit, ref.name)
            if ref.source:
                assert ref.version and versions.is_pinned(ref.version), (crit, ref.name)
            for dep in ref.dependencyRefs or []:
                assert position[dep] < position[ref.name]


def test_the_seed_example_pins_dynamo_behind_its_dependencies(embedded: catalog.Catalog) -> None:
    crit = Criteria(service="eks", accelerator="h100", os="ubuntu", intent="inference", platform="dynamo")
    recipe = resolver.resolve(crit, embedded).recipe
    dynamo = recipe.component("dynamo-platform")
    assert dynamo is not None
    assert sorted(dynamo.dependencyRefs or []) == sorted(
        ["grove", "cert-manager", "kube-prometheus-stack", "gpu-operator", "kai-scheduler"]
    )
    order = recipe.deploymentOrder
    assert all(order.index(dep) < order.index("dynamo-platform") for dep in dynamo.dependencyRefs or [])


def test_gpu_operator_values_carry_a_driver_pin(embedded: catalog.Catalog) -> None:
    recipe = resolver.resolve(Criteria(service="eks", accelerator="h100", intent="training"), embedded).recipe
    gpu = recipe.component("gpu-operator")
    assert gpu is not None
    driver = values.component_values(gpu, embedded)["driver"]["version"]
    assert versions.is_pinned(str(driver))


def test_the_all_wildcard_query_is_refused(embedded: catalog.Catalog) -> None:
    with pytest.raises(errors.InvalidInput, match="no criteria given"):
        resolver.resolve(Criteria(), embedded)
