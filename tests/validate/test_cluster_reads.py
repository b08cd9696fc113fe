"""What a validation round asks the API server for its pod asserts, on the simulated cluster over HTTP.

Covers: a selector-scoped pods assert lists its namespace's pods with the selector as a server-side
``labelSelector`` and pages through them (``limit``/``continue``), its result unchanged (a pod
of another app, unhealthy, is not its concern); a namespace that an assert reads whole is listed
once, without a selector, for that assert and the selector-scoped one beside it; a selector no
label can carry (a space in the value) is never sent, so the server's 400 does not replace the
check's own "0 pods found".
"""

from __future__ import annotations

from typing import Any

import pytest

from shared.kube import rest
from shared.recipe import models
from shared.validate import checks, run
from shared.validate.cluster import ClusterView
from tests.validate.install import recipe_document


class Recording:
    """The real client, noting the path and query of every request it sends."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.requests: list[tuple[str, str, dict[str, Any]]] = []

    def call_api(self, resource_path: str, method: str, **kwargs: Any) -> Any:
        self.requests.append((method, resource_path, dict(kwargs.get("query_params") or [])))
        return self.api.call_api(resource_path, method, **kwargs)

    def pod_lists(self) -> list[dict[str, Any]]:
        return [q for method, path, q in self.requests if method == "GET" and path.endswith("/pods")]


def _pod(api: Any, name: str, app: str, *, phase: str = "Running", waiting: str | None = None) -> None:
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
    current["status"] = {
        "phase": phase,
        "containerStatuses": [{**container, "ready": waiting is None, "state": state, "restartCount": 0}],
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


def test_a_selector_scoped_assert_lists_its_pods_with_the_selector_page_by_page(
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
    assert [q["limit"] for q in lists] == [3, 3]
    assert "continue" not in lists[0]
    assert lists[1]["continue"]


def test_a_namespace_read_whole_is_listed_once_for_every_assert_in_it(widgets: Any) -> None:
    api = Recording(widgets)
    recipe = _recipe({"selector": {"app": "gadget"}}, {})
    gadget, everything = _pods_results(recipe, api)
    assert (gadget.status, gadget.message) == ("failed", "pod gadget-0 is Pending")
    assert everything.message == (
        "pod gadget-0 is Pending; pod widget-operator-2 container main waiting: CrashLoopBackOff (phase Running)"
    )
    assert [q.get("labelSelector") for q in api.pod_lists()] == [None]


def test_a_selector_no_label_can_match_is_not_sent_to_the_server(widgets: Any) -> None:
    api = Recording(widgets)
    (result,) = _pods_results(_recipe({"selector": {"app": "widget operator"}}), api)
    assert (result.status, result.message) == ("failed", "0 pods found, at least 1 expected")
    assert [q.get("labelSelector") for q in api.pod_lists()] == [None]
