"""Garbage collection of old HealthEvents in the running controller, on the simulated cluster.

Covers: after the retention, a pass deletes processed events no quarantine holds, and keeps an
unprocessed one and the cause of a current quarantine (named in the node's causes annotation);
collection runs at most once per ``gcInterval`` of cluster time (old events wait for it); a
backlog larger than one batch is worked off over the next passes without waiting the interval; ``retention: 0s`` keeps
everything; ``events prune`` keeps the quarantine's cause too; a bad ``gcInterval`` is an error
naming the field; over the node informer the causes come from its index, with no node list.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared import clock, errors, nodes
from shared.health import config, controller, garbage, quarantine, resource
from shared.health import settings as hsettings
from shared.kube import informer, rest
from tests.health.test_drain_remediation_sim import event, make, publish

OFF = "node-drainer: {enabled: false}\nfault-remediation: {enabled: false}\n"
GC = "nvsentinel: {retention: 10m, gcInterval: 5m}\n"


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    names = gpu_sim.add_gpu_nodes(3)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    yield gpu_sim, api_client, names


def stored(api: Any) -> set[str]:
    return {s.name for s in resource.list_events(api)}


def by_node(api: Any, node: str) -> list[str]:
    return [s.name for s in resource.list_events(api, node=node)]


def test_old_processed_events_go_and_the_cause_of_a_quarantine_and_an_unprocessed_one_stay(
    cluster: Any, tmp_path: Path
) -> None:
    sim, api, names = cluster
    publish(api, event(names[0]))  # quarantines names[0]: its cause
    publish(api, event(names[1]))
    ctl = make(api, tmp_path, OFF + GC)
    ctl.reconcile_once()
    publish(api, event(names[1], healthy=True, stamp="2026-01-01T00:10:00Z"))  # releases names[1]
    assert ctl.reconcile_once().phases == {"UnQuarantined": 1}
    [cause] = by_node(api, names[0])
    assert {c["event"] for c in quarantine.causes(nodes.get(api, names[0])).values()} == {cause}
    sim.advance(601)
    # an old event nobody processed yet: the controller is not running when the collection does
    publish(api, event(names[2]))
    sim.advance(601)
    lonely, released = by_node(api, names[2]), by_node(api, names[1])
    assert len(released) == 2
    collector = garbage.Collector(api, hsettings.Ours(retention="10m"), now=clock.for_api_client(api, max_age=0).now)
    assert sorted(collector.maybe_run() or []) == sorted(released)
    assert stored(api) == {cause, *lonely}


def test_the_controller_collects_at_most_once_per_interval(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    ctl = make(api, tmp_path, OFF + "nvsentinel: {retention: 10m, gcInterval: 15m}\n")
    ctl.reconcile_once()  # the first pass collects (nothing there) and starts the interval
    publish(api, event(names[1], check="A"))
    ctl.reconcile_once()
    publish(api, event(names[1], healthy=True, check="A", stamp="2026-01-01T00:10:00Z"))
    ctl.reconcile_once()
    sim.advance(601)  # older than the retention, but the interval has 5 minutes to go
    ctl.reconcile_once()
    assert len(stored(api)) == 2
    sim.advance(300)
    ctl.reconcile_once()
    assert stored(api) == set()


def test_a_backlog_larger_than_a_batch_goes_over_the_next_passes(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sim, api, names = cluster
    monkeypatch.setattr(garbage, "BATCH", 2)
    values = OFF + "nvsentinel: {retention: 10m, gcInterval: 24h}\n"
    publish(api, *(event(names[1], healthy=True, uuid=f"GPU-{i}", stamp=f"2026-01-01T00:00:0{i}Z") for i in range(5)))
    make(api, tmp_path, values).reconcile_once()
    assert all(s.phase for s in resource.list_events(api))
    sim.advance(601)
    ctl = make(api, tmp_path, values)  # a restarted controller: its first pass collects
    left = []
    for _ in range(4):
        ctl.reconcile_once()
        left.append(len(stored(api)))
    assert left == [3, 1, 0, 0]  # a full batch each pass, not once a day, until the backlog is gone


def test_a_zero_retention_keeps_everything(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    publish(api, event(names[1]))
    publish(api, event(names[1], healthy=True, stamp="2026-01-01T00:10:00Z"))
    ctl = make(api, tmp_path, OFF + "nvsentinel: {retention: 0s}\n")
    ctl.reconcile_once()
    sim.advance(601)
    ctl.reconcile_once()
    assert len(stored(api)) == 2


def test_events_prune_keeps_the_cause_of_a_quarantine(
    cluster: Any, tmp_path: Path, run_cli: Any, sim_kubeconfig: Path
) -> None:
    _, api, names = cluster
    publish(api, event(names[0]))
    publish(api, event(names[1], healthy=True))
    make(api, tmp_path, OFF).reconcile_once()
    k = ["--kubeconfig", str(sim_kubeconfig)]
    dry = run_cli("nvsentinel", "events", "prune", "--older-than", "0s", "--dry-run", *k)
    assert dry.stderr == "would delete 1 event(s)\n"
    done = run_cli("nvsentinel", "events", "prune", "--older-than", "0s", *k)
    assert (done.code, done.stderr) == (0, "deleted 1 event(s)\n")
    assert stored(api) == set(by_node(api, names[0]))


def test_a_bad_gc_interval_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "values.yaml"
    path.write_text("nvsentinel: {gcInterval: soon}\n")
    with pytest.raises(errors.InvalidInput) as raised:
        config.load(path)
    assert "nvsentinel.gcInterval" in raised.value.line() and "invalid duration 'soon'" in raised.value.line()


def test_with_the_node_informer_the_cause_is_kept_from_its_index_without_listing_nodes(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same collection over ``nvsentinel run``'s node informer: the causes come from its index
    of nodes holding one; before its first list is in, the collection waits for a later pass."""
    sim, api, names = cluster
    publish(api, event(names[0]))
    publish(api, event(names[1]))
    ctl = make(api, tmp_path, OFF)
    ctl.reconcile_once()
    publish(api, event(names[1], healthy=True, stamp="2026-01-01T00:10:00Z"))
    ctl.reconcile_once()
    [cause] = by_node(api, names[0])
    released = by_node(api, names[1])
    sim.advance(1201)
    cache = informer.Informer(api, rest.core_path("nodes"), watch_seconds=1)
    garbage.index_nodes(cache)
    collector = garbage.Collector(
        api, hsettings.Ours(retention="10m"), now=clock.for_api_client(api, max_age=0).now, cache=cache
    )
    assert collector.maybe_run() is None  # not listed yet: no collection, and no list of its own
    stop = threading.Event()
    cache.start(stop)
    try:
        assert cache.wait_synced(60)
        listed: list[str] = []
        real = rest.iter_items
        monkeypatch.setattr(
            garbage.rest, "iter_items", lambda a, path, **kw: listed.append(path) or real(a, path, **kw)
        )
        assert sorted(collector.maybe_run() or []) == sorted(released)
        assert stored(api) == {cause}
        assert rest.core_path("nodes") not in listed
    finally:
        stop.set()
        cache.join(timeout=30)
