"""Watches through ``kubernetes.watch.Watch``, as controllers use them.

Covers: ADDED/MODIFIED/DELETED for the selected objects only; an object leaving a selector is
seen as DELETED; resuming from a resourceVersion replays exactly what was missed; bookmarks;
timeoutSeconds ends the stream; a compacted resourceVersion gives 410; a dropped stream is
resumed from the last resourceVersion without losing or repeating events.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import urllib3
from kubernetes import client as k8s
from kubernetes import watch

from tests import waiting
from tests.contract import objects
from tests.contract.conftest import Cluster


def _collect(stream: Any, until: int) -> list[tuple[str, str]]:
    seen = []
    for event in stream:
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) >= until:
            break
    return seen


def test_a_selector_watch_sees_its_objects_come_change_and_go(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    start = core.list_namespaced_config_map(cluster.namespace).metadata.resource_version
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("other"))
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("w", labels={"watch": "me"}))
    core.patch_namespaced_config_map("w", cluster.namespace, {"data": {"a": "1"}})
    core.patch_namespaced_config_map("other", cluster.namespace, {"data": {"a": "1"}})
    core.patch_namespaced_config_map("w", cluster.namespace, {"metadata": {"labels": {"watch": "no"}}})
    w = watch.Watch()
    seen = _collect(
        w.stream(
            core.list_namespaced_config_map,
            cluster.namespace,
            label_selector="watch=me",
            resource_version=start,
            timeout_seconds=5,
        ),
        until=3,
    )
    w.stop()
    assert seen == [("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_a_watch_without_resource_version_starts_with_the_current_objects(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("present", labels={"x": "1"}))
    w = watch.Watch()
    seen = _collect(
        w.stream(core.list_namespaced_config_map, cluster.namespace, label_selector="x=1", timeout_seconds=5), until=1
    )
    w.stop()
    assert seen == [("ADDED", "present")]


def test_a_live_watch_receives_changes_made_after_it_started(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    start = core.list_namespaced_config_map(cluster.namespace).metadata.resource_version
    w = watch.Watch()
    seen: list[tuple[str, str]] = []
    reader = threading.Thread(
        target=lambda: seen.extend(
            _collect(
                w.stream(core.list_namespaced_config_map, cluster.namespace, resource_version=start, timeout_seconds=5),
                until=2,
            )
        )
    )
    reader.start()
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("live"))
    core.delete_namespaced_config_map("live", cluster.namespace)
    reader.join(timeout=waiting.REAL_SECONDS)
    w.stop()
    assert seen == [("ADDED", "live"), ("DELETED", "live")]


def test_timeout_seconds_ends_the_stream(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    # The client's read timeout is the safety net: a stream the server did not end would raise
    # there (generous real time, far past the 1 s asked for) instead of ending quietly.
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map,
            cluster.namespace,
            label_selector="nothing=here",
            timeout_seconds=1,
            _request_timeout=(30, 60),
        )
    )
    assert events == []


def test_bookmarks_carry_the_latest_resource_version(cluster: Cluster) -> None:
    cluster.require_sim("real servers send bookmarks about once a minute")
    core = k8s.CoreV1Api(cluster.api)
    start = core.list_namespaced_config_map(cluster.namespace).metadata.resource_version
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("bm"))
    events = list(
        watch.Watch().stream(
            core.list_namespaced_config_map,
            cluster.namespace,
            resource_version=start,
            allow_watch_bookmarks=True,
            timeout_seconds=1,
        )
    )
    assert events[0]["type"] == "ADDED"
    bookmark = events[-1]
    assert bookmark["type"] == "BOOKMARK"
    assert int(bookmark["raw_object"]["metadata"]["resourceVersion"]) >= int(
        events[0]["object"].metadata.resource_version
    )


def test_a_compacted_resource_version_is_410_gone(cluster: Cluster) -> None:
    sim = cluster.require_sim("compaction cannot be forced on a real cluster")
    core = k8s.CoreV1Api(cluster.api)
    old = core.list_namespaced_config_map(cluster.namespace).metadata.resource_version
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("after"))
    sim.store.compact()
    with pytest.raises(k8s.ApiException) as caught:
        list(
            watch.Watch().stream(
                core.list_namespaced_config_map, cluster.namespace, resource_version=old, timeout_seconds=2
            )
        )
    assert caught.value.status == 410


def test_a_dropped_watch_resumes_from_the_last_resource_version(cluster: Cluster) -> None:
    sim = cluster.require_sim("drops the stream from the server side")
    core = k8s.CoreV1Api(cluster.api)
    start = core.list_namespaced_config_map(cluster.namespace).metadata.resource_version
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("before"))
    w = watch.Watch()
    stream = w.stream(core.list_namespaced_config_map, cluster.namespace, resource_version=start, timeout_seconds=5)
    first = next(stream)
    assert first["object"].metadata.name == "before"
    sim.faults.drop_watches()
    with pytest.raises(urllib3.exceptions.ProtocolError):  # the client sees a broken chunked stream
        for _ in stream:
            pass
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("after-drop"))
    resumed = _collect(
        watch.Watch().stream(
            core.list_namespaced_config_map,
            cluster.namespace,
            resource_version=first["object"].metadata.resource_version,
            timeout_seconds=5,
        ),
        until=1,
    )
    assert resumed == [("ADDED", "after-drop")]
