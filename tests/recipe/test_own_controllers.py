"""Our catalog deploys our own controllers: nvsentinel and nvcre as two releases of our chart.

Covers: both components resolve to the dsx-cluster-tools chart in every kind of recipe; each release
switches on only its half and the CRDs are installed by exactly one release, which is deployed
first; nvsentinel starts in monitor mode; the asserted workloads are the chart's workload names (one
DaemonSet per monitor the values enable); the asserted CRDs are exactly those that `nvcrectl crds
install` and `nvsentinel crds install` create; every recipe carries Kubeflow Trainer, deployed
before the certification engine that runs its tests as TrainJobs; every key our values files set,
and every value path the placement flags write, exists in the chart's own values.yaml, and the
chart's name and version are the registry's pin; rendering the chart with each component's values
gives exactly the asserted workloads, pods the asserts select, the asserted CRDs from the nvcre
release only, and no object in both releases.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import yamlio
from shared.recipe import catalog, models, resolver, values
from shared.recipe.criteria import Criteria

CHART = "dsx-cluster-tools"
REPOSITORY = "oci://ghcr.io/dsx-cluster-tools/charts"
ROOT = Path(__file__).resolve().parents[2]
# The chart's directory, and the package data it is also shipped as.
CHART_DIRS = [ROOT / "deploy" / "helm" / CHART, ROOT / "shared" / "chart" / "files"]
OURS = ("nvsentinel", "nvcre")

CRITERIA = [
    {"service": "eks", "accelerator": "h100", "os": "ubuntu", "intent": "inference", "platform": "dynamo"},
    {"service": "eks", "accelerator": "gb200", "os": "ubuntu", "intent": "training", "platform": "kubeflow"},
    {"service": "gke", "accelerator": "h100", "os": "cos", "intent": "training"},
    {"service": "aks", "accelerator": "h100", "os": "ubuntu", "intent": "training", "platform": "kubeflow"},
    {"service": "kind", "accelerator": "h100", "intent": "inference"},
    {"service": "oke"},
    {"accelerator": "a100"},
]
IDS = ["-".join(c.values()) for c in CRITERIA]


@pytest.fixture(scope="module")
def embedded() -> catalog.Catalog:
    return catalog.embedded()


def _resolve(embedded: catalog.Catalog, criteria: dict[str, str]) -> models.RecipeResult:
    return resolver.resolve(Criteria(**criteria), embedded).recipe


def _ours(embedded: catalog.Catalog, recipe: models.RecipeResult) -> dict[str, tuple[models.ComponentRef, Any]]:
    found = {}
    for name in OURS:
        ref = recipe.component(name)
        assert ref is not None, name
        found[name] = (ref, values.component_values(ref, embedded))
    return found


def _leaves(tree: Any, prefix: str = "") -> list[str]:
    if isinstance(tree, dict) and tree:
        return [leaf for key, value in tree.items() for leaf in _leaves(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


@pytest.mark.parametrize("criteria", CRITERIA, ids=IDS)
def test_both_controllers_come_from_our_chart_with_one_owner_of_the_crds(
    embedded: catalog.Catalog, criteria: dict[str, str]
) -> None:
    recipe = _resolve(embedded, criteria)
    ours = _ours(embedded, recipe)
    for ref, _ in ours.values():
        assert (ref.source, ref.chart, ref.version) == (REPOSITORY, CHART, "0.1.0"), ref.name
    sentinel, cre = ours["nvsentinel"][1], ours["nvcre"][1]
    assert sentinel["nvcre"]["enabled"] is False and cre["nvcre"]["enabled"] is True
    assert not any(m["enabled"] for m in cre["monitors"].values())
    assert sentinel["nvsentinel-controller"]["enabled"] is True and cre["nvsentinel-controller"]["enabled"] is False
    assert [v["crds"]["enabled"] for v in (sentinel, cre)] == [False, True]
    assert sentinel["global"]["dryRun"] is True  # monitor mode until someone switches enforcement on
    order = recipe.deploymentOrder
    assert order.index("nvcre") < order.index("nvsentinel")  # the CRDs before their first user


def test_the_asserted_workloads_are_the_charts_with_a_daemonset_per_enabled_monitor(embedded: catalog.Catalog) -> None:
    ours = _ours(embedded, _resolve(embedded, CRITERIA[0]))
    ref, sentinel = ours["nvsentinel"]
    assert ref.healthCheckAsserts is not None
    monitors = sorted(f"nvsentinel-monitor-{kind}" for kind, m in sentinel["monitors"].items() if m["enabled"])
    assert monitors == ["nvsentinel-monitor-dcgm", "nvsentinel-monitor-nic", "nvsentinel-monitor-xid"]
    assert sorted((w.kind.value, w.name) for w in ref.healthCheckAsserts.workloads) == sorted(
        [("Deployment", "nvsentinel-controller"), *(("DaemonSet", m) for m in monitors)]
    )
    cre = ours["nvcre"][0].healthCheckAsserts
    assert cre is not None
    assert [(w.kind.value, w.name) for w in cre.workloads] == [("Deployment", "nvcre-controller")]
    for asserts in (ref.healthCheckAsserts, cre):
        assert [p.selector for p in asserts.pods] == [{"app.kubernetes.io/name": CHART}]


def test_the_asserted_crds_are_the_ones_the_programs_install(embedded: catalog.Catalog) -> None:
    from shared.certify import resource as certify_resource
    from shared.certify import workload
    from shared.health import resource as health_resource
    from shared.lifecycle import resource as lifecycle_resource

    ours = _ours(embedded, _resolve(embedded, CRITERIA[0]))
    asserted = {
        name: (ref.healthCheckAsserts.crds if ref.healthCheckAsserts else []) for name, (ref, _) in ours.items()
    }
    assert sorted(asserted["nvcre"]) == sorted([certify_resource.RESOURCE.name, workload.RESOURCE.name])
    assert sorted(asserted["nvsentinel"]) == sorted([health_resource.RESOURCE.name, lifecycle_resource.RESOURCE.name])


@pytest.mark.parametrize("criteria", CRITERIA, ids=IDS)
def test_every_recipe_carries_kubeflow_trainer_before_the_certification_engine(
    embedded: catalog.Catalog, criteria: dict[str, str]
) -> None:
    recipe = _resolve(embedded, criteria)
    assert recipe.component("kubeflow-trainer") is not None
    order = recipe.deploymentOrder
    assert order.index("kubeflow-trainer") < order.index("nvcre")


def test_our_values_set_only_keys_the_chart_has(embedded: catalog.Catalog) -> None:
    chart_dir = next((d for d in CHART_DIRS if (d / "values.yaml").is_file()), None)
    if chart_dir is None:
        pytest.skip(f"the chart is not in this tree ({', '.join(str(d.relative_to(ROOT)) for d in CHART_DIRS)})")
    chart = yamlio.load_file(chart_dir / "Chart.yaml")
    assert (chart["name"], str(chart["version"])) == (CHART, "0.1.0")
    known = set(_leaves(yamlio.load_file(chart_dir / "values.yaml")))
    prefixes = {leaf.rsplit(".", n)[0] for leaf in known for n in range(leaf.count(".") + 1)}
    for name, (_, merged) in _ours(embedded, _resolve(embedded, CRITERIA[0])).items():
        unknown = [leaf for leaf in _leaves(merged) if leaf not in known and leaf not in prefixes]
        assert unknown == [], f"{name}: the chart has no value {unknown}"
        scheduling = embedded.registry[name].nodeScheduling
        assert scheduling is not None
        paths = [
            p
            for group in (scheduling.system, scheduling.accelerated)
            for p in (*group.nodeSelectorPaths, *group.tolerationPaths)
        ]
        assert paths and [p for p in paths if p not in known | prefixes] == [], f"{name}: placement flags land nowhere"


WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")


def _render_release(ref: models.ComponentRef, merged: dict[str, Any], tmp_path: Path) -> list[dict[str, Any]]:
    """The objects Helm would install for this component: our chart, its values, its release name."""
    from shared.chart import manifests

    path = tmp_path / f"{ref.name}-values.yaml"
    path.write_text(yamlio.dumps(merged), encoding="utf-8")
    return manifests.render(
        manifests.Request(values_files=(path,), namespace=ref.namespace or "default", release=ref.name)
    )


def test_each_release_renders_exactly_what_its_asserts_check(embedded: catalog.Catalog, tmp_path: Path) -> None:
    ours = _ours(embedded, _resolve(embedded, CRITERIA[0]))
    rendered = {name: _render_release(ref, merged, tmp_path) for name, (ref, merged) in ours.items()}
    for name, (ref, _) in ours.items():
        asserts = ref.healthCheckAsserts
        assert asserts is not None
        workloads = [o for o in rendered[name] if o["kind"] in WORKLOAD_KINDS]
        assert sorted((o["kind"], o["metadata"]["name"]) for o in workloads) == sorted(
            (w.kind.value, w.name) for w in asserts.workloads
        ), name
        for obj in workloads:  # the pods assert selects every pod the release runs
            labels = obj["spec"]["template"]["metadata"]["labels"]
            assert all(labels.get(k) == v for p in asserts.pods for k, v in (p.selector or {}).items()), obj
    crds = {
        o["metadata"]["name"]: release
        for release, objs in rendered.items()
        for o in objs
        if o["kind"] == "CustomResourceDefinition"
    }
    asserted = {
        crd for ref, _ in ours.values() for crd in (ref.healthCheckAsserts.crds if ref.healthCheckAsserts else [])
    }
    assert asserted <= set(crds), f"asserted CRDs the chart does not install: {sorted(asserted - set(crds))}"
    assert set(crds.values()) == {"nvcre"}


def test_the_two_releases_render_no_cluster_scoped_object_twice(embedded: catalog.Catalog, tmp_path: Path) -> None:
    ours = _ours(embedded, _resolve(embedded, CRITERIA[0]))
    seen: dict[tuple[str, str, str], str] = {}
    for name, (ref, merged) in ours.items():
        for obj in _render_release(ref, merged, tmp_path):
            key = (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            assert key not in seen, f"{key} rendered by both {seen.get(key)} and {name}: Helm refuses the second"
            seen[key] = name
