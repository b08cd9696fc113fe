"""The byte-level heartbeat views agree with the object-level ones, for any node or Lease.

Lists and watches send stored bytes with the heartbeat times spliced in (fast); GET decodes the
object and sets the fields (simple). Property: for nodes and Leases of any shape — conditions of
any type and status, strings holding quotes, braces, non-ASCII text or the field names
themselves, times before and after the base, a node that went down — decoding the spliced bytes
gives exactly the object view.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.sim.apiserver import api, resources, store, vclock
from shared.sim.apiserver.controllers import heartbeats, kit

BASE = 1_800_000_000.0
PIECES = [*'ab"{}[]:,\\é✓ ', '"lastHeartbeatTime":"', '"conditions":[', '"renewTime":"']
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)


def stamp(offset: int) -> str:
    return heartbeats.seconds_time(BASE + offset)


conditions = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["Ready", "MemoryPressure", "GpuHealthy", "DiskPressure", "Custom"]),
            "status": st.sampled_from(["True", "False", "Unknown"]),
            "message": TEXT,
            "lastHeartbeatTime": st.integers(-600, 600).map(stamp),
            "lastTransitionTime": st.integers(-600, 600).map(stamp),
        }
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(
    conditions=conditions,
    annotation=TEXT,
    elapsed=st.integers(0, 4000),
    down_after=st.one_of(st.none(), st.integers(0, 4000)),
)
def test_spliced_nodes_read_like_the_object_view(
    conditions: list[dict[str, Any]], annotation: str, elapsed: int, down_after: int | None
) -> None:
    views = _views()
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n1", "annotations": {"note": annotation}},
        "status": {"conditions": conditions},
    }
    entry = _entry(node, "", "n1")
    views.ctx.clock.advance(BASE + elapsed - views.ctx.clock.time())
    if down_after is not None:
        views.down["n1"] = BASE + down_after
    assert json.loads(views.node_raws([entry])[0]) == views.node_object(json.loads(entry.raw))


@settings(max_examples=100, deadline=None)
@given(note=TEXT, elapsed=st.integers(-30, 4000), micros=st.integers(0, 999_999))
def test_spliced_leases_read_like_the_object_view(note: str, elapsed: int, micros: int) -> None:
    views = _views()
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease", "labels": {"x": "y"}, "annotations": {"a": note}},
        "spec": {"holderIdentity": "n1", "renewTime": heartbeats.micro_time(BASE + micros / 1e6)},
    }
    entry = _entry(lease, "kube-node-lease", "n1")
    views.ctx.clock.advance(max(0.0, BASE + elapsed - views.ctx.clock.time()))
    assert json.loads(views.lease_raws([entry])[0]) == views.lease_object(json.loads(entry.raw))


def _views() -> heartbeats.Heartbeats:
    """Heartbeats over a store holding one node ``n1``, the clock paused at BASE (no server)."""
    clock = vclock.VirtualClock(speed=0, start=BASE)
    objects, table = store.Store(), resources.ResourceTable.with_builtins()
    verbs = api.Api(objects=objects, table=table, clock=clock.now, rng=random.Random(1))
    nodes = table.by_group_resource("", "nodes")
    assert nodes is not None
    verbs.create(nodes, None, {"metadata": {"name": "n1"}})
    ctx = kit.Context(api=verbs, clock=clock, nodes=dict, requeue=lambda *_: None, record=lambda *_a, **_k: None)
    hb = heartbeats.Heartbeats(ctx, is_down=lambda _name: False)
    hb.enabled = True
    return hb


def _entry(obj: dict[str, Any], namespace: str, name: str) -> store.Entry:
    raw = store.encode(obj)
    return store.Entry(raw, 1, "uid", namespace, name, {}, {}, ())
