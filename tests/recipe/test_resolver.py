"""Resolution on small catalogs written by the tests.

Covers: overlay selection and order, upstream's merge rules (scalars, shallow overrides, replaced
dependencyRefs, additive manifests), registry defaults, mixins, --data layering, --explain
provenance, byte-identical output, and every rejection the issue lists: unknown field, cycle,
dangling reference, duplicate component, missing valuesFile, floating version, a chart, version or
source outside its grammar, inheritance faults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.recipe import catalog, resolver, values
from shared.recipe.criteria import Criteria
from tests.recipe import minicatalog


def _resolve(root: Path, **query: Any) -> resolver.Resolution:
    return resolver.resolve(Criteria(**query), catalog.load_directory(root))


@pytest.fixture()
def cat_dir(tmp_path: Path) -> Path:
    return minicatalog.write(tmp_path / "cat", minicatalog.default_documents())


def test_overlays_apply_root_to_leaf_and_the_most_specific_wins(cat_dir: Path) -> None:
    result = _resolve(cat_dir, service="eks", intent="training").recipe
    assert result.metadata.appliedOverlays == ["base", "eks", "eks-training"]
    alpha = result.component("alpha")
    assert alpha is not None
    assert alpha.version == "1.1.0"
    assert alpha.valuesFile == "components/alpha/values-train.yaml"
    assert [c.value for c in result.constraints] == [">= 1.30"]
    assert result.deploymentOrder == ["alpha", "beta", "gamma"]


def test_overrides_merge_shallowly_across_overlays(cat_dir: Path) -> None:
    alpha = _resolve(cat_dir, service="eks").recipe.component("alpha")
    assert alpha is not None
    assert alpha.overrides == {"a": 1, "b": {"y": 2}}


def test_registry_defaults_fill_only_empty_fields(cat_dir: Path) -> None:
    beta = _resolve(cat_dir, service="eks").recipe.component("beta")
    assert beta is not None
    assert (beta.chart, beta.namespace, beta.version, beta.source) == (
        "beta",
        "ns-beta",
        "v2.0.0",
        "https://charts.example.com/beta",
    )
    assert beta.healthCheckAsserts is not None and beta.healthCheckAsserts.workloads[0].name == "beta"


def test_values_stack_default_file_then_variant_then_overrides(cat_dir: Path) -> None:
    cat = catalog.load_directory(cat_dir)
    alpha = resolver.resolve(Criteria(service="eks", intent="training"), cat).recipe.component("alpha")
    assert alpha is not None
    assert values.component_values(alpha, cat) == {
        "image": {"tag": "v1"},
        "replicas": 3,
        "list": [9],
        "a": 1,
        "b": {"y": 2},
    }


def test_explain_names_the_overlay_behind_each_field(cat_dir: Path) -> None:
    resolution = _resolve(cat_dir, service="eks", intent="training")
    alpha = resolution.component_origin["alpha"]
    assert alpha["version"] == "eks"
    assert alpha["valuesFile"] == "eks-training"
    assert alpha["overrides.a"] == "base"
    assert alpha["overrides.b"] == "eks"
    assert alpha["namespace"] == resolver.REGISTRY
    assert resolution.constraint_origin == {"K8s.server.version": "eks-training"}


def test_output_is_byte_identical_across_runs(cat_dir: Path) -> None:
    from shared import output

    first = output.to_yaml(_resolve(cat_dir, service="eks").document())
    assert output.to_yaml(_resolve(cat_dir, service="eks").document()) == first


def test_mixins_are_merged_after_the_overlay_that_names_them(tmp_path: Path) -> None:
    docs = minicatalog.default_documents()
    docs["overlays/eks.yaml"]["spec"]["mixins"] = ["monitoring"]
    docs["mixins/monitoring.yaml"] = {
        "apiVersion": minicatalog.API,
        "kind": "RecipeMixin",
        "metadata": {"name": "monitoring"},
        "spec": {"componentRefs": [{"name": "gamma", "version": "3.2.0"}]},
    }
    resolution = _resolve(minicatalog.write(tmp_path, docs), service="eks")
    gamma = resolution.recipe.component("gamma")
    assert gamma is not None and gamma.version == "3.2.0"
    assert resolution.component_origin["gamma"]["version"] == "eks (mixin monitoring)"


def test_data_dir_replaces_objects_by_name_and_path(cat_dir: Path, tmp_path: Path) -> None:
    extra = minicatalog.write(
        tmp_path / "extra",
        {
            "registry.yaml": {
                "apiVersion": minicatalog.API,
                "kind": "ComponentRegistry",
                "components": [
                    {
                        "name": "beta",
                        "displayName": "Beta",
                        "helm": {
                            "defaultRepository": "oci://r.example.com/charts",
                            "defaultChart": "beta",
                            "defaultVersion": "9.9.9",
                        },
                    }
                ],
            },
            "overlays/eks.yaml": minicatalog.overlay("eks", criteria={"service": "eks"}, refs=[{"name": "alpha"}]),
            "components/alpha/values.yaml": {"replicas": 7},
        },
    )
    cat = catalog.load_directory(cat_dir).layered(catalog.load_directory(extra))
    recipe = resolver.resolve(Criteria(service="eks"), cat).recipe
    beta, alpha = recipe.component("beta"), recipe.component("alpha")
    assert beta is not None and alpha is not None
    assert (beta.version, beta.source) == ("9.9.9", "oci://r.example.com/charts")
    assert recipe.component("gamma") is None
    assert values.component_values(alpha, cat)["replicas"] == 7


def _bend(tmp_path: Path, change: Any) -> Path:
    docs = minicatalog.default_documents()
    change(docs)
    return minicatalog.write(tmp_path / "bent", docs)


def _set(path: list[Any], value: Any) -> Any:
    def change(docs: dict[str, Any]) -> None:
        node = docs
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


BAD_CATALOGS = [
    (
        "unknown-field",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "verison"], "1.0.0"),
        "unknown field 'spec.componentRefs[0].verison'",
    ),
    (
        "unknown-registry-field",
        _set(["registry.yaml", "components", 1, "helm", "repo"], "x"),
        "unknown field 'components[1].helm.repo'",
    ),
    (
        "four-part-version",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "version"], "1.2.3.4"),
        "invalid chart version '1.2.3.4'",
    ),
    (
        "chart-name",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "chart"], "Alpha_Chart"),
        "invalid chart name 'Alpha_Chart'",
    ),
    (
        "registry-source",
        _set(["registry.yaml", "components", 0, "helm", "defaultRepository"], "https://charts.example.com/a b"),
        "invalid chart source 'https://charts.example.com/a b'",
    ),
    (
        "cycle",
        _set(["overlays/base.yaml", "spec", "componentRefs", 0, "dependencyRefs"], ["beta"]),
        "dependency cycle: ",
    ),
    (
        "dangling",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 1, "dependencyRefs"], ["delta"]),
        "component 'gamma' depends on 'delta', which is not in the recipe",
    ),
    (
        "duplicate",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 1], {"name": "alpha"}),
        "duplicate component 'alpha'",
    ),
    (
        "missing-values-file",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "valuesFile"], "components/x.yaml"),
        "valuesFile 'components/x.yaml' does not exist in the catalog",
    ),
    (
        "floating-version",
        _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "version"], "latest"),
        "version 'latest' is not a pin",
    ),
    (
        "range-version",
        _set(["registry.yaml", "components", 2, "helm", "defaultVersion"], "^3.0.0"),
        "version '^3.0.0' is not a pin",
    ),
    (
        "missing-parent",
        _set(["overlays/eks-training.yaml", "spec", "base"], "ekss"),
        "overlay 'eks-training' inherits from 'ekss', which does not exist",
    ),
    ("inheritance-cycle", _set(["overlays/eks.yaml", "spec", "base"], "eks-training"), "inheritance cycle"),
    ("bad-criteria", _set(["overlays/eks.yaml", "spec", "criteria", "service"], "ecs"), "invalid service 'ecs'"),
    ("bad-api-version", _set(["overlays/eks.yaml", "apiVersion"], "aicr.run/v9"), "unsupported apiVersion"),
]


@pytest.mark.parametrize(
    ("change", "message"), [(c, m) for _, c, m in BAD_CATALOGS], ids=[name for name, _, _ in BAD_CATALOGS]
)
def test_inconsistent_catalogs_are_refused_naming_the_problem(tmp_path: Path, change: Any, message: str) -> None:
    root = _bend(tmp_path, change)
    with pytest.raises(errors.InvalidInput) as caught:
        _resolve(root, service="eks", intent="training")
    assert message in caught.value.message
    assert caught.value.where


def test_unknown_field_errors_carry_file_and_line(tmp_path: Path) -> None:
    root = _bend(tmp_path, _set(["overlays/eks.yaml", "spec", "componentRefs", 0, "verison"], "1.0.0"))
    with pytest.raises(errors.InvalidInput) as caught:
        _resolve(root, service="eks")
    assert caught.value.where is not None
    assert caught.value.where.startswith(f"{root / 'overlays/eks.yaml'}:")
    assert caught.value.where.endswith(" spec.componentRefs[0].verison")


def _upstream_format(tmp_path: Path, component: dict[str, Any]) -> Path:
    docs = minicatalog.default_documents()
    for doc in docs.values():
        if isinstance(doc, dict) and "apiVersion" in doc:
            doc["apiVersion"] = "aicr.nvidia.com/v1alpha1"
    docs["registry.yaml"]["components"][0].update(component)
    return minicatalog.write(tmp_path, docs)


def test_upstream_format_files_load_the_fields_upstream_has_and_refuse_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    known = {"manifest": {"defaultNamespace": "x"}, "healthCheck": {"assertFile": "checks/a.yaml"}}
    recipe = _resolve(_upstream_format(tmp_path / "known", known), service="eks").recipe
    assert recipe.component("alpha") is not None
    assert not [r for r in caplog.records if r.levelname == "WARNING"]
    with pytest.raises(errors.InvalidInput) as caught:
        _resolve(_upstream_format(tmp_path / "unknown", {"manifests": {"defaultNamespace": "x"}}), service="eks")
    assert caught.value.message == "unknown field 'components[0].manifests'"
    assert caught.value.where is not None and caught.value.where.endswith(" components[0].manifests")


def _line_of(path: Path, text: str, *, after: str = "") -> int:
    """1-based number of the first line holding ``text`` after the first line holding ``after``."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if after in line)
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


def test_a_dangling_dependency_names_the_overlay_file_and_line(tmp_path: Path) -> None:
    root = _bend(tmp_path, _set(["overlays/eks.yaml", "spec", "componentRefs", 1, "dependencyRefs"], ["delta"]))
    with pytest.raises(errors.InvalidInput) as caught:
        _resolve(root, service="eks")
    eks = root / "overlays/eks.yaml"
    assert caught.value.message == "component 'gamma' depends on 'delta', which is not in the recipe"
    assert caught.value.where == f"{eks}:{_line_of(eks, '- delta')} spec.componentRefs[1].dependencyRefs[0] (eks)"


def test_a_cycle_across_overlays_names_the_file_and_line_of_each_edge(tmp_path: Path) -> None:
    # alpha (base) -> gamma (eks) -> beta (base) -> alpha: three edges declared in two files.
    root = _bend(tmp_path, _set(["overlays/base.yaml", "spec", "componentRefs", 0, "dependencyRefs"], ["gamma"]))
    with pytest.raises(errors.InvalidInput) as caught:
        _resolve(root, service="eks")
    base, eks = root / "overlays/base.yaml", root / "overlays/eks.yaml"
    sites = {
        "alpha -> gamma": f"{base}:{_line_of(base, '- gamma')} spec.componentRefs[0].dependencyRefs[0] (base)",
        "gamma -> beta": f"{eks}:{_line_of(eks, '- beta')} spec.componentRefs[1].dependencyRefs[0] (eks)",
        "beta -> alpha": f"{base}:{_line_of(base, '- alpha', after='name: beta')} "
        "spec.componentRefs[1].dependencyRefs[0] (base)",
    }
    message, where = caught.value.message, caught.value.where
    assert message.startswith("dependency cycle: ") and "(each depends on the next)" in message
    first = next(edge for edge, site in sites.items() if site == where)
    assert message.split(";")[0].split(": ")[1].startswith(first.split(" -> ")[0] + " -> ")
    assert sorted(f"{edge} at {site}" for edge, site in sites.items() if edge != first) == sorted(
        message.split("; ", 1)[1].split(", ")
    )
