"""The lifecycle's passes over the node informer (``shared.kube.informer``) instead of node lists.

Covers: with a current informer a pass lists no node, yet a node that joins cordoned gets its
request and a request named on a node is still found; a node the informer still shows as a
candidate but that is claimed when read fresh gets no request (the cache only narrows the
search); a candidate that has become too old (``nodeAgeSeconds``) gets none either, though
nothing on it changed; an informer that is not current (its list refused) makes the pass list.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from shared import nodes
from shared.kube import informer, rest
from shared.lifecycle import controller as lifecycle
from shared.lifecycle import resource as vresource
from shared.lifecycle import triggers
from tests.lifecycle import kit
from tests.waiting import until

NEW_NODES = kit.FAST + "    newNodeValidation: {tests: [dcgm-diag-test]}\n"


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> tuple[Any, Any, list[str], informer.Informer]:
    names = gpu_sim.add_gpu_nodes(3)
    return gpu_sim, api_client, names, informer.Informer(api_client, rest.core_path("nodes"), watch_seconds=1)


def _no_node_lists(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every paged read of nodes the lifecycle's modules make."""
    listed: list[str] = []
    real = rest.iter_items

    def iter_items(api: Any, path: str, **kwargs: Any) -> Any:
        if path == rest.core_path("nodes"):
            listed.append(path)
        return real(api, path, **kwargs)

    for module in (lifecycle, triggers):
        monkeypatch.setattr(module.rest, "iter_items", iter_items)
    return listed


def _started(cache: informer.Informer) -> threading.Event:
    stop = threading.Event()
    cache.start(stop)
    assert cache.wait_synced(60)
    return stop


def _candidates(cache: informer.Informer) -> list[str]:
    store = cache.current()
    return [] if store is None else [n["metadata"]["name"] for n in store.by_index(triggers.CANDIDATES, "candidate")]


def test_a_pass_reads_the_informer_and_still_finds_a_joining_node(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, api, names, cache = cluster
    ctl = kit.make(api, tmp_path, NEW_NODES, node_cache=cache)
    stop = _started(cache)
    try:
        listed = _no_node_lists(monkeypatch)
        assert ctl.reconcile_once() == [] and _candidates(cache) == []
        nodes.update(api, names[1], lambda n: not nodes.cordon(n))  # provisioning joins it cordoned
        until(lambda: _candidates(cache) == [names[1]], what="the cordoned node indexed as a candidate")
        notes = ctl.reconcile_once()
        [vr] = vresource.list_all(api)
        assert f"created {vr.name}" in notes and vr.spec.node_names() == [names[1]]
        until(lambda: _candidates(cache) == [], what="the marked node no candidate any more")
        ctl.reconcile_once()
        assert len(vresource.list_all(api)) == 1  # marked: never asked twice
        assert listed == []
    finally:
        stop.set()
        cache.join(timeout=30)


def test_a_stale_candidate_claimed_meanwhile_gets_no_request(cluster: Any, tmp_path: Path) -> None:
    _, api, names, cache = cluster
    ctl = kit.make(api, tmp_path, NEW_NODES, node_cache=cache)
    stop = _started(cache)
    try:
        nodes.update(api, names[0], lambda n: not nodes.cordon(n))
        until(lambda: _candidates(cache) == [names[0]], what="the cordoned node indexed")
        stale = cache.current()
        assert stale is not None
        stop.set()
        cache.join(timeout=30)

        def claim(n: nodes.Node) -> bool:
            nodes.node_annotations(n)[nodes.CORDON_OWNER] = "fault-quarantine"
            return True

        nodes.update(api, names[0], claim)  # the informer is stopped: it never sees this
        cache.current = lambda: stale  # type: ignore[method-assign]
        assert ctl.reconcile_once() == []
        assert vresource.list_all(api) == []
    finally:
        stop.set()


def test_a_candidate_that_grew_too_old_gets_no_request(cluster: Any, tmp_path: Path) -> None:
    sim, api, names, cache = cluster
    ctl = kit.make(api, tmp_path, NEW_NODES, node_cache=cache)
    stop = _started(cache)
    try:
        sim.advance(1801)  # "recently-joined": nodeAgeSeconds < 1800
        nodes.update(api, names[2], lambda n: not nodes.cordon(n))
        until(lambda: _candidates(cache) == [names[2]], what="the cordoned node indexed (its age is no index matter)")
        assert ctl.reconcile_once() == []
        assert vresource.list_all(api) == []
    finally:
        stop.set()
        cache.join(timeout=30)


def test_an_informer_that_is_not_current_makes_the_pass_list(
    cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, api, names, cache = cluster
    ctl = kit.make(api, tmp_path, NEW_NODES, node_cache=cache)  # never started: never current
    listed = _no_node_lists(monkeypatch)
    nodes.update(api, names[1], lambda n: not nodes.cordon(n))
    notes = ctl.reconcile_once()
    [vr] = vresource.list_all(api)
    assert f"created {vr.name}" in notes and vr.spec.node_names() == [names[1]]
    assert listed  # it listed the nodes itself
