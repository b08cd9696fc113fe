"""The order each deployer encodes is a valid topological order of the recipe's dependencies.

Covers: for random dependency graphs (hypothesis) mixing https charts, OCI charts, charts with
manifests and manifest-only components, and for the recipe of every leaf overlay of the embedded
catalog, every deployer's encoding (script order, sync waves, HelmRelease and Kustomization
dependsOn, helmfile needs) puts each component after everything it depends on, transitively, with
no dangling reference and no cycle.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.bundle import plan as plan_mod
from shared.bundle.request import BundleRequest
from shared.recipe import catalog
from shared.recipe.criteria import Criteria
from tests.bundle import bundles, encoded_order
from tests.recipe import minicatalog

KINDS = ("https", "oci", "chart+manifests", "manifests")


@pytest.fixture(scope="module")
def manifest_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    documents: dict[str, Any] = {
        "registry.yaml": {"apiVersion": minicatalog.API, "kind": "ComponentRegistry", "components": []}
    }
    for i in range(10):
        documents[f"components/x/manifests/m{i}.yaml"] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"m{i}"},
        }
    return minicatalog.write(tmp_path_factory.mktemp("dag-cat"), documents)


@st.composite
def dags(draw: st.DrawFn) -> list[dict[str, Any]]:
    size = draw(st.integers(min_value=1, max_value=9))
    names = draw(st.permutations([f"c{i}" for i in range(size)]))
    refs = []
    for i, name in enumerate(names):
        deps = draw(st.lists(st.sampled_from(names[:i]), unique=True, max_size=3)) if i else []
        kind = draw(st.sampled_from(KINDS))
        ref: dict[str, Any] = {
            "name": name,
            "namespace": f"ns-{name}",
            "type": "Helm",
            "dependencyRefs": deps,
            "source": {
                "https": "https://charts.example.com",
                "oci": "oci://r.example.com/c",
                "chart+manifests": "https://charts.example.com",
                "manifests": "",
            }[kind],
        }
        if ref["source"]:
            ref["version"] = "1.0.0"
        if "manifests" in kind:
            ref["manifestFiles"] = [f"components/x/manifests/m{i}.yaml"]
        refs.append(ref)
    return refs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(refs=dags())
def test_every_deployer_encodes_a_valid_order_for_random_graphs(
    manifest_catalog: Path, refs: list[dict[str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as work:
        recipe = bundles.write_document(
            Path(work) / "r.yaml",
            {
                "kind": "RecipeResult",
                "apiVersion": minicatalog.API,
                "metadata": {"version": "0.1.0"},
                "componentRefs": refs,
            },
        )
        plan = plan_mod.build(BundleRequest(recipe=recipe, output=Path("unused"), catalog_dir=manifest_catalog))
        for deployer in bundles.DEPLOYERS:
            bundles.make_bundle(recipe, Path(work) / deployer, deployer, catalog_dir=manifest_catalog)
            encoded_order.check(plan, deployer, Path(work) / deployer)


def _leaf_criteria() -> list[tuple[str, dict[str, Any]]]:
    cat = catalog.embedded()
    bases = {o.spec.base for o in cat.overlays.values()}
    leaves = []
    for name in sorted(cat.overlays):
        criteria = cat.overlays[name].spec.criteria or {}
        if name not in bases and Criteria.parse(dict(criteria)).specificity():
            leaves.append((name, dict(criteria)))
    return leaves


@pytest.mark.parametrize(("leaf", "criteria"), _leaf_criteria(), ids=[n for n, _ in _leaf_criteria()])
def test_every_deployer_encodes_a_valid_order_for_each_leaf_of_the_catalog(
    tmp_path: Path, leaf: str, criteria: dict[str, Any]
) -> None:
    recipe = bundles.write_recipe(tmp_path / "r.yaml", **criteria)
    plan = plan_mod.build(BundleRequest(recipe=recipe, output=Path("unused")))
    assert len(plan.components) > 5
    for deployer in bundles.DEPLOYERS:
        bundles.make_bundle(recipe, tmp_path / deployer, deployer)
        encoded_order.check(plan, deployer, tmp_path / deployer)
