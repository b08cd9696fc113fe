"""Drift between snapshots and between a recipe and a snapshot.

Covers: added/removed/modified with both values, sorted by path; the nodes a NodeTopology change
concerns; --ignore globs listed but not counted; a recipe baseline compares only chart versions, the
pinned driver and constraints, those on node facts naming the nodes with each wrong value (the
aggregate when a snapshot has no per-node lists). Property tests: a snapshot never drifts from
itself, and swapping baseline and target swaps added with removed.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.recipe import models
from shared.recipe.snapshot import Measurement, Snapshot, Subtype
from shared.snapshot import diff


def snap(data: dict[str, dict[str, str]]) -> Snapshot:
    by_type: dict[str, list[Subtype]] = {}
    for path, values in sorted(data.items()):
        kind, sub = path.split(".", 1)
        by_type.setdefault(kind, []).append(Subtype(subtype=sub, data=dict(values)))
    return Snapshot(measurements=[Measurement(type=k, subtypes=v) for k, v in by_type.items()])


BASE = snap(
    {
        "GPU.smi": {"driver": "580.105.08"},
        "NodeTopology.label": {"nvidia.com/cuda.driver.major=580": "node-000,node-001,node-002"},
        "K8s.helm": {"gpu-operator/gpu-operator.version": "v25.10.1"},
    }
)
UPGRADED = snap(
    {
        "GPU.smi": {"driver": "580.105.08 | 590.44.01"},
        "NodeTopology.label": {
            "nvidia.com/cuda.driver.major=580": "node-000,node-002",
            "nvidia.com/cuda.driver.major=590": "node-001",
        },
        "K8s.helm": {"gpu-operator/gpu-operator.version": "v25.10.1"},
    }
)


def test_a_driver_upgrade_on_one_node_shows_exactly_the_changed_fields_and_the_node() -> None:
    changes = diff.compare(BASE, UPGRADED)
    assert [(c.kind, c.path, c.nodes) for c in changes] == [
        ("modified", "GPU.smi.driver", None),
        ("modified", "NodeTopology.label.nvidia.com/cuda.driver.major=580", ["node-001"]),
        ("added", "NodeTopology.label.nvidia.com/cuda.driver.major=590", ["node-001"]),
    ]
    assert changes[0].baseline == "580.105.08" and changes[0].target == "580.105.08 | 590.44.01"


def test_ignored_changes_are_listed_but_not_counted() -> None:
    report = diff.report(diff.compare(BASE, UPGRADED), ignore=["NodeTopology.*"], baseline="b", target="t")
    assert report.summary.model_dump() == {"added": 0, "removed": 0, "modified": 1, "ignored": 2, "total": 1}
    assert [c.ignored for c in report.changes] == [None, True, True]
    assert report.drifted


def test_a_recipe_baseline_compares_only_what_it_pins() -> None:
    recipe = models.RecipeResult(
        metadata=models.ResultMetadata(version="t"),
        constraints=[
            models.Constraint(name="GPU.smi.driver", value=">= 585"),
            models.Constraint(name="OS.release.ID", value="ubuntu"),
        ],
        componentRefs=[
            models.ComponentRef(
                name="gpu-operator",
                namespace="gpu-operator",
                source="https://x",
                version="v25.10.1",
                chart="gpu-operator",
            ),
            models.ComponentRef(name="cert-manager", namespace="cert-manager", source="https://y", version="v1.17.2"),
            models.ComponentRef(name="tuning", namespace="skyhook", source=""),
        ],
    )
    changes = diff.compare_recipe(recipe, UPGRADED)
    assert [(c.kind, c.path, c.baseline, c.target) for c in changes] == [
        ("modified", "GPU.smi.driver", ">= 585", "580.105.08 | 590.44.01"),
        ("removed", "K8s.helm.cert-manager/cert-manager.version", "v1.17.2", None),
        ("removed", "OS.release.ID", "ubuntu", None),
    ]


PER_NODE = snap(
    {
        "GPU.smi": {"driver": "580.105.08 | 590.44.01"},
        "NodeTopology.driver": {"580.105.08": "node-000,node-002", "590.44.01": "node-001"},
        "NodeTopology.kernel": {"6.5.0-1019-aws": "node-002", "6.8.0-60-generic": "node-000,node-001"},
    }
)


def test_a_recipe_baseline_names_the_nodes_off_its_driver_and_node_constraints() -> None:
    recipe = models.RecipeResult(
        metadata=models.ResultMetadata(version="t"),
        constraints=[models.Constraint(name="K8s.node.kernel-version", value=">= 6.8")],
    )
    changes = diff.compare_recipe(recipe, PER_NODE, driver="580.105.08")
    assert [(c.path, c.baseline, c.target, c.nodes) for c in changes] == [
        ("GPU.smi.driver", "580.105.08", "590.44.01", ["node-001"]),
        ("K8s.node.kernel-version", ">= 6.8", "6.5.0-1019-aws", ["node-002"]),
    ]
    assert diff.compare_recipe(recipe, PER_NODE, driver=None)[0].path == "K8s.node.kernel-version"


def test_without_per_node_lists_the_driver_pin_falls_back_to_the_aggregate() -> None:
    changes = diff.compare_recipe(
        models.RecipeResult(metadata=models.ResultMetadata(version="t")), UPGRADED, driver="580.105.08"
    )
    assert [(c.kind, c.path, c.baseline, c.target, c.nodes) for c in changes] == [
        ("modified", "GPU.smi.driver", "580.105.08", "580.105.08 | 590.44.01", None)
    ]
    assert (
        diff.compare_recipe(models.RecipeResult(metadata=models.ResultMetadata(version="t")), BASE, driver="580.105.08")
        == []
    )


_snapshots = st.dictionaries(
    st.sampled_from(["K8s.server", "GPU.smi", "OS.release", "NodeTopology.label"]),
    st.dictionaries(
        st.from_regex(r"[a-z]{1,5}", fullmatch=True), st.from_regex(r"[a-z0-9,.]{1,8}", fullmatch=True), max_size=4
    ),
    max_size=4,
).map(snap)


@given(a=_snapshots)
def test_a_snapshot_never_drifts_from_itself(a: Snapshot) -> None:
    assert diff.compare(a, a) == []


@given(a=_snapshots, b=_snapshots)
def test_swapping_baseline_and_target_swaps_added_and_removed(a: Snapshot, b: Snapshot) -> None:
    forward = {(c.path, c.kind) for c in diff.compare(a, b)}
    swap = {"added": "removed", "removed": "added", "modified": "modified"}
    assert {(c.path, swap[c.kind]) for c in diff.compare(b, a)} == forward
