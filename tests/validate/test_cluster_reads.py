"""What a validation round asks the API server for its pod asserts, on the simulated cluster over HTTP.

Covers: a pods assert lists its pods as the server prints them (a Table, ``includeObject=None``)
with its selector as a server-side ``labelSelector``, page by page (``limit``/``continue``), and
reads whole only the pods whose row is not Running with every container ready, its result unchanged
(a pod of another app, unhealthy, is not its concern); each assert lists its own selector; past
``PROBE_AT_MOST`` doubtful pods, or when one of them is gone by the time it is read, the selector is
listed whole as JSON instead, one point in time; whatever the pods' states, the pod states a round
judges are those of the whole pods; a selector no label can carry (a space in the value) is never
sent, so the server's 400 does not replace the check's own "0 pods found".
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.kube import rest
from shared.recipe import models
from shared.validate import checks, cluster, run
from shared.validate.cluster import ClusterView
from tests.validate.install import recipe_document


class Recording:
    """The real client, noting the path and query of every request it sends."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.requests: list[tuple[str, str, dict[str, Any]]] = []

    def call_api(self, resource_path: str, method: str, **kwargs: Any) -> Any:
        query = dict(kwargs.get("query_params") or [])
        if "as=Table" in (kwargs.get("header_params") or {}).get("Accept", ""):
            query["as"] = "Table"
        self.requests.append((method, resource_path, query))
        return self.api.call_api(resource_path, method, **kwargs)

    def pod_lists(self, *, table: bool = True) -> list[dict[str, Any]]:
        """The pod lists sent, as Tables or (``table=False``) as plain JSON lists."""
        return [
            q
            for method, path, q in self.requests
            if method == "GET" and path.endswith("/pods") and (q.get("as") == "Table") == table
        ]

    def pod_reads(self) -> list[str]:
        """The names of the pods read one by one."""
        return [path.rsplit("/", 1)[1] for method, path, _ in self.requests if method == "GET" and "/pods/" in path]


def _pod(
    api: Any, name: str, app: str, *, phase: str = "Running", waiting: str | None = None, ready: bool | None = None
) -> None:
    container = {"name": "main", "image": "example.com/app:1"}
    rest.create(
        api,
        rest.core_path("pods", "widgets"),
        {
            "metadata": {"name": name, "labels": {"app": app}},
            "spec": {"nodeName": "node-000", "containers": [container]},
        },
    )
    path = rest.core_path("pods", "widgets", name)
    current = rest.get(api, path)
    state = {"waiting": {"reason": waiting}} if waiting else {"running": {}}
    if phase == "Succeeded":
        state = {"terminated": {"exitCode": 0, "reason": "Completed"}}
    ready = waiting is None and phase == "Running" if ready is None else ready
    current["status"] = {
        "phase": phase,
        "containerStatuses": [{**container, "ready": ready, "state": state, "restartCount": 0}],
    }
    rest.replace(api, path + "/status", current)


@pytest.fixture()
def widgets(sim: Any, api_client: Any) -> Any:
    rest.create(api_client, rest.core_path("namespaces"), {"metadata": {"name": "widgets"}})
    for i in range(4):
        _pod(api_client, f"widget-operator-{i}", "widget-operator", waiting="CrashLoopBackOff" if i == 2 else None)
    _pod(api_client, "gadget-0", "gadget", phase="Pending")
    return api_client


def _recipe(*pod_asserts: dict[str, Any]) -> models.RecipeResult:
    document = recipe_document()
    component = document["componentRefs"][0]
    component["healthCheckAsserts"] = {"pods": list(pod_asserts)}
    del component["source"]  # no chart check: only the pods asserts read the cluster
    return models.RecipeResult.model_validate(document)


def _pods_results(recipe: models.RecipeResult, api: Any) -> list[checks.Check]:
    return [c for c in run.component_checks(recipe, ClusterView(api)) if c.name.startswith("pods ")]


def test_a_selector_scoped_assert_lists_its_pods_as_a_table_page_by_page(
    widgets: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rest, "PAGE_SIZE", 3)
    api = Recording(widgets)
    (result,) = _pods_results(_recipe({"selector": {"app": "widget-operator"}}), api)
    assert (result.status, result.message) == (
        "failed",
        "pod widget-operator-2 container main waiting: CrashLoopBackOff (phase Running)",
    )
    lists = api.pod_lists()
    assert [q.get("labelSelector") for q in lists] == ["app=widget-operator", "app=widget-operator"]
    assert [(q["limit"], q["includeObject"]) for q in lists] == [(3, "None"), (3, "None")]
    assert "continue" not in lists[0]
    assert lists[1]["continue"]
    assert api.pod_reads() == ["widget-operator-2"]  # the one row that is not Running 1/1
    assert api.pod_lists(table=False) == []


def test_each_assert_lists_its_own_selector(widgets: Any) -> None:
    api = Recording(widgets)
    recipe = _recipe({"selector": {"app": "gadget"}}, {})
    gadget, everything = _pods_results(recipe, api)
    assert (gadget.status, gadget.message) == ("failed", "pod gadget-0 is Pending")
    assert everything.message == (
        "pod gadget-0 is Pending; pod widget-operator-2 container main waiting: CrashLoopBackOff (phase Running)"
    )
    assert [q.get("labelSelector") for q in api.pod_lists()] == ["app=gadget", None]
    assert sorted(api.pod_reads()) == ["gadget-0", "gadget-0", "widget-operator-2"]


def test_past_the_probe_limit_the_selector_is_listed_whole(widgets: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "PROBE_AT_MOST", 1)
    api = Recording(widgets)
    (everything,) = _pods_results(_recipe({}), api)
    assert everything.message == (
        "pod gadget-0 is Pending; pod widget-operator-2 container main waiting: CrashLoopBackOff (phase Running)"
    )
    assert api.pod_reads() == []
    assert [q.get("labelSelector") for q in api.pod_lists(table=False)] == [None]


class Vanishing(Recording):
    """Deletes a pod just before the client reads it alone: gone between the list and the read."""

    def call_api(self, resource_path: str, method: str, **kwargs: Any) -> Any:
        if method == "GET" and resource_path.endswith("/pods/gadget-0"):
            now = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
            rest._request(self.api, "DELETE", resource_path, body=now)
        return super().call_api(resource_path, method, **kwargs)


def test_a_pod_gone_before_it_is_read_makes_the_round_list_the_selector_again(widgets: Any) -> None:
    api = Vanishing(widgets)
    (gadget,) = _pods_results(_recipe({"selector": {"app": "gadget"}}), api)
    assert (gadget.status, gadget.message) == ("failed", "0 pods found, at least 1 expected")
    assert [q.get("labelSelector") for q in api.pod_lists(table=False)] == ["app=gadget"]


def test_the_states_judged_are_those_of_the_whole_pods(sim: Any, api_client: Any) -> None:
    """Pods in the states a cluster shows, each judged from its row or read whole: the same
    ``PodState`` as projecting the plain JSON list (labels aside, which the selector stands for)."""
    rest.create(api_client, rest.core_path("namespaces"), {"metadata": {"name": "widgets"}})
    states = {
        "running": ("Running", None, True),
        "not-ready": ("Running", None, False),  # a failing readiness probe: running, not ready
        "crashloop": ("Running", "CrashLoopBackOff", False),
        "pulling": ("Pending", "ImagePullBackOff", False),
        "pending": ("Pending", None, False),
        "done": ("Succeeded", None, False),
    }
    for name, (phase, waiting, ready) in states.items():
        _pod(api_client, name, "widget", phase=phase, waiting=waiting, ready=ready)
    full = sorted(checks.pod_state(p) for p in rest.list_items(api_client, rest.core_path("pods", "widgets")))
    api = Recording(api_client)
    judged = sorted(ClusterView(api).pods("widgets", {"app": "widget"}))
    assert [(s.name, s.phase, s.waiting) for s in judged] == [(s.name, s.phase, s.waiting) for s in full]
    assert sorted(api.pod_reads()) == sorted(n for n in states if n != "running")


def test_a_selector_no_label_can_match_is_not_sent_to_the_server(widgets: Any) -> None:
    api = Recording(widgets)
    (result,) = _pods_results(_recipe({"selector": {"app": "widget operator"}}), api)
    assert (result.status, result.message) == ("failed", "0 pods found, at least 1 expected")
    assert api.pod_lists() == api.pod_lists(table=False) == []
