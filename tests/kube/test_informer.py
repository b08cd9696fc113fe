"""The node informer on the simulated cluster: a list page by page, then every change, with indexes.

Covers: the first list takes every node across pages (more nodes than ``rest.PAGE_SIZE``); a
write, an addition and a deletion reach the store and its indexes; an index added after the list
files what is there already; a watch the server drops is resumed, and an expired one lists
again; ``current`` is None before the first list and while the server refuses the list, and the
store is trusted again once a list works; an index function that raises leaves that object out
of the index, not the watch stopped.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from shared import nodes
from shared.kube import errors as kube_errors
from shared.kube import informer, rest, watch
from tests.waiting import until

LABEL = "example.com/pool"


def _pool(node: dict[str, Any]) -> list[str]:
    value = ((node.get("metadata") or {}).get("labels") or {}).get(LABEL)
    return [value] if value else []


def _label(value: str | None) -> nodes.Mutation:
    def mutate(node: nodes.Node) -> bool:
        return nodes.set_map(nodes.labels(node), {LABEL: value})

    return mutate


@pytest.fixture()
def running(sim: Any, api_client: Any) -> tuple[Any, Any, informer.Informer]:
    cache = informer.Informer(api_client, rest.core_path("nodes"), watch_seconds=1)
    cache.add_index("pool", _pool)
    return sim, api_client, cache


def _start(cache: informer.Informer) -> threading.Event:
    stop = threading.Event()
    cache.start(stop)
    return stop


def _pools(store: informer.Store, key: str) -> list[str]:
    return [n["metadata"]["name"] for n in store.by_index("pool", key)]


def test_lists_every_page_then_follows_writes_additions_and_deletions(running: Any) -> None:
    sim, api, cache = running
    names = sim.add_nodes(rest.PAGE_SIZE + 20)
    assert cache.current() is None
    stop = _start(cache)
    try:
        assert cache.wait_synced(60)
        store = cache.current()
        assert store is not None
        assert len(store) == len(nodes.list_nodes(api)) >= len(names)
        assert store.count("pool", "a") == 0

        nodes.update(api, names[3], _label("a"))
        nodes.update(api, names[7], _label("a"))
        until(lambda: _pools(store, "a") == sorted([names[3], names[7]]), what="both labelled nodes indexed")
        nodes.update(api, names[3], _label("b"))
        until(lambda: _pools(store, "b") == [names[3]] and _pools(store, "a") == [names[7]], what="moved bucket")
        assert store.get(names[3])["metadata"]["labels"][LABEL] == "b"  # type: ignore[index]

        [added] = sim.add_nodes(1)
        until(lambda: store.get(added) is not None, what="the added node")
        rest.delete(api, nodes.path(names[7]))
        until(lambda: store.get(names[7]) is None and store.count("pool", "a") == 0, what="the deleted node gone")
        assert cache.lists == 1  # all of that was the watch, not a list
    finally:
        stop.set()
        cache.join(timeout=30)


def test_an_index_added_after_the_list_files_what_is_there(running: Any) -> None:
    sim, api, cache = running
    names = sim.add_nodes(3)
    nodes.update(api, names[1], _label("z"))
    stop = _start(cache)
    try:
        assert cache.wait_synced(60)
        cache.add_index("again", _pool)
        store = cache.current()
        assert store is not None
        assert [n["metadata"]["name"] for n in store.by_index("again", "z")] == [names[1]]
    finally:
        stop.set()
        cache.join(timeout=30)


def test_a_dropped_watch_resumes_from_where_it_was(running: Any) -> None:
    sim, api, cache = running
    names = sim.add_nodes(2)
    stop = _start(cache)
    try:
        assert cache.wait_synced(60)
        store = cache.current()
        assert store is not None
        sim.faults.drop_watches()
        nodes.update(api, names[0], _label("after-drop"))
        until(lambda: _pools(store, "after-drop") == [names[0]], what="the change after a dropped watch")
        assert cache.lists == 1
    finally:
        stop.set()
        cache.join(timeout=30)


def test_an_expired_watch_lists_again_and_drops_what_went_meanwhile(
    running: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 410 itself: a server that compacted the version the watch resumes from."""
    sim, api, cache = running
    names = sim.add_nodes(2)
    real = watch.events
    expired = threading.Event()

    def events(*args: Any, **kwargs: Any) -> Any:
        if not expired.is_set():
            expired.set()
            rest.delete(api, nodes.path(names[1]))  # gone while nobody watches: only a new list shows it
            raise kube_errors.Expired("410: too old resource version")
        return real(*args, **kwargs)

    monkeypatch.setattr(watch, "events", events)
    stop = _start(cache)
    try:
        until(lambda: cache.lists >= 2, what="a second list after the 410")
        store = cache.current()
        assert store is not None
        until(lambda: store.get(names[1]) is None and store.get(names[0]) is not None, what="the fresh list's nodes")
    finally:
        stop.set()
        cache.join(timeout=30)


def test_a_refused_list_is_not_current_until_a_list_works_again(running: Any) -> None:
    sim, _api, cache = running
    names = sim.add_nodes(2)
    sim.faults.inject(503, verb="list", resource="nodes", count=3)
    stop = _start(cache)
    try:
        assert cache.current() is None
        assert cache.wait_synced(60)  # after the three refusals, with backoff
        store = cache.current()
        assert store is not None and store.get(names[0]) is not None
    finally:
        stop.set()
        cache.join(timeout=30)


def test_an_index_function_that_raises_leaves_the_object_out_not_the_watch_stopped(running: Any) -> None:
    sim, api, cache = running
    names = sim.add_nodes(2)

    def picky(node: dict[str, Any]) -> list[str]:
        if node["metadata"]["name"] == names[0]:
            raise ValueError("odd node")
        return ["all"]

    cache.add_index("picky", picky)
    stop = _start(cache)
    try:
        assert cache.wait_synced(60)
        store = cache.current()
        assert store is not None
        assert names[0] not in [n["metadata"]["name"] for n in store.by_index("picky", "all")]
        nodes.update(api, names[1], _label("still"))
        until(lambda: _pools(store, "still") == [names[1]], what="changes after the failing index")
    finally:
        stop.set()
        cache.join(timeout=30)
