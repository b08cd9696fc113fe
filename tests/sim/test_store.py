"""The versioned store and the verbs over it, used in-process (no HTTP).

Covers: every write takes the next resourceVersion and emits one event; reads are copies;
key order and namespace scans; history compaction raises Compacted; the owner index; dump and
load keep objects and resourceVersions; namespace and CRD defaults; no-op updates emit nothing.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from shared.sim.apiserver import api, patchtypes, resources, store
from shared.sim.apiserver.apierrors import ApiError


def _fixed_clock() -> datetime:
    return datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture()
def world() -> api.Api:
    table = resources.ResourceTable.with_builtins()
    verbs = api.Api(objects=store.Store(history=10), table=table, clock=_fixed_clock, rng=random.Random(1))
    verbs.create(_row(verbs, "namespaces"), None, {"metadata": {"name": "default"}})
    return verbs


def _row(verbs: api.Api, plural: str) -> resources.Resource:
    found = next(r for r in verbs.table if r.plural == plural)
    return found


def _cm(name: str, **data: str) -> dict[str, object]:
    return {"metadata": {"name": name}, "data": dict(data)}


def test_each_write_takes_the_next_resource_version_and_emits_one_event(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    start = world.store.resource_version
    made = world.create(cms, "default", _cm("a", x="1"))
    changed = world.patch(cms, "default", "a", patchtypes.MERGE, {"data": {"x": "2"}})
    world.delete(cms, "default", "a")
    events = world.store.events_after(start)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert [e.rv for e in events] == [start + 1, start + 2, start + 3]
    assert int(made["metadata"]["resourceVersion"]) + 1 == int(changed["metadata"]["resourceVersion"])


def test_reads_are_copies_that_cannot_change_the_store(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    world.create(cms, "default", _cm("a", x="1"))
    copy = world.get(cms, "default", "a")
    copy["data"]["x"] = "tampered"
    assert world.get(cms, "default", "a")["data"] == {"x": "1"}


def test_a_no_op_update_emits_nothing(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    made = world.create(cms, "default", _cm("a", x="1"))
    rv = world.store.resource_version
    again = world.update(cms, "default", "a", made)
    assert again["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    assert world.store.resource_version == rv


def test_scans_follow_namespace_then_name_order(world: api.Api) -> None:
    ns, cms = _row(world, "namespaces"), _row(world, "configmaps")
    world.create(ns, None, {"metadata": {"name": "zeta"}})
    for namespace, name in (("zeta", "b"), ("default", "c"), ("zeta", "a")):
        world.create(cms, namespace, _cm(name))
    assert [(e.namespace, e.name) for e in world.store.scan(cms.group_resource, None)] == [
        ("default", "c"),
        ("zeta", "a"),
        ("zeta", "b"),
    ]
    assert [e.name for e in world.store.scan(cms.group_resource, "zeta", after=("zeta", "a"))] == ["b"]


def test_old_history_is_compacted_and_reading_it_raises(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    start = world.store.resource_version
    for n in range(25):
        world.create(cms, "default", _cm(f"c{n}"))
    with pytest.raises(store.Compacted):
        world.store.events_after(start)
    assert len(world.store.events_after(world.store.resource_version - 5)) == 5


def test_the_owner_index_finds_dependents(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    owner = world.create(cms, "default", _cm("owner"))
    body = _cm("dep")
    body["metadata"] = {
        "name": "dep",
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
        ],
    }
    world.create(cms, "default", body)
    assert world.store.dependents(owner["metadata"]["uid"]) == [(("", "configmaps"), ("default", "dep"))]


def test_dump_and_load_keep_objects_and_resource_versions(world: api.Api) -> None:
    cms = _row(world, "configmaps")
    made = world.create(cms, "default", _cm("kept", x="1"))
    state = world.store.dump()
    fresh = store.Store()
    fresh.load(state, world.table)
    entry = fresh.get(cms.group_resource, "default", "kept")
    assert entry is not None and entry.object()["data"] == {"x": "1"}
    assert str(entry.rv) == made["metadata"]["resourceVersion"]
    assert fresh.resource_version == world.store.resource_version


def test_a_new_namespace_is_active_and_gets_a_default_service_account(world: api.Api) -> None:
    made = world.create(_row(world, "namespaces"), None, {"metadata": {"name": "team"}})
    assert made["status"] == {"phase": "Active"}
    assert made["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    assert world.get(_row(world, "serviceaccounts"), "team", "default")["metadata"]["name"] == "default"


def test_a_crd_name_must_be_plural_dot_group(world: api.Api) -> None:
    crds = _row(world, "customresourcedefinitions")
    body = {
        "metadata": {"name": "wrong.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": True, "storage": True}],
        },
    }
    with pytest.raises(ApiError) as caught:
        world.create(crds, None, body)
    assert caught.value.code == 422


def test_identical_seeds_give_identical_uids() -> None:
    def first_uid() -> str:
        verbs = api.Api(
            objects=store.Store(),
            table=resources.ResourceTable.with_builtins(),
            clock=_fixed_clock,
            rng=random.Random(7),
        )
        return str(verbs.create(_row(verbs, "namespaces"), None, {"metadata": {"name": "x"}})["metadata"]["uid"])

    assert first_uid() == first_uid()
