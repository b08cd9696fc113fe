"""Cached reads for one validation round: each collection is fetched once, however many asserts use it.

Pods are the bulk of a large cluster (a DaemonSet puts one on every node): they are asked for with
the assert's labels as a server-side ``labelSelector`` where that says the same, streamed page by
page, and only what the pod check reads of each is kept (``checks.pod_state``).
"""

from __future__ import annotations

from typing import Any

from shared import errors, grammars
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.snapshot import helm
from shared.validate import checks

_WORKLOAD_PLURALS = {"Deployment": "deployments", "DaemonSet": "daemonsets", "StatefulSet": "statefulsets"}


class ClusterView:
    """What a validation round has read so far; build a new one for each round."""

    def __init__(self, api: KubeApi) -> None:
        self._api = api
        self._lists: dict[str, list[dict[str, Any]]] = {}
        self._pods: dict[str, list[checks.PodState]] = {}
        self._crds: dict[str, dict[str, Any]] | None = None
        self._releases: dict[tuple[str, str], str] | None = None
        self._groups: set[tuple[str, str]] | None = None

    def _list(self, path: str, **selectors: str) -> list[dict[str, Any]]:
        key = path + repr(sorted(selectors.items()))
        if key not in self._lists:
            self._lists[key] = rest.list_items(self._api, path, **selectors)
        return self._lists[key]

    def workloads(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        return self._list(rest.group_path("apps", "v1", _WORKLOAD_PLURALS[kind], namespace))

    def pods(self, namespace: str, selector: dict[str, str] | None = None) -> list[checks.PodState]:
        """The pods of ``namespace`` the server matches to ``selector`` (every pod without one, or
        with one a labelSelector cannot spell), as ``checks.PodState``; the caller still matches
        ``selector`` itself, so the answer is the same either way."""
        label_selector = _label_selector(selector or {})
        key = f"pods/{namespace}?{label_selector or ''}"
        if key not in self._pods:
            items = rest.iter_items(self._api, rest.core_path("pods", namespace), label_selector=label_selector)
            with rest.collector_paused():  # each page is dropped as soon as it is projected
                self._pods[key] = [checks.pod_state(pod) for pod in items]
        return self._pods[key]

    def crd(self, name: str) -> dict[str, Any] | None:
        if self._crds is None:
            items = self._list(rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))
            self._crds = {str((c.get("metadata") or {}).get("name")): c for c in items}
        return self._crds.get(name)

    def node_readiness(self) -> dict[str, bool]:
        """Node name → whether its Ready condition is True."""
        out = {}
        for node in self._list(rest.core_path("nodes")):
            conditions = (node.get("status") or {}).get("conditions") or []
            ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
            out[str((node.get("metadata") or {}).get("name"))] = ready
        return out

    def serves(self, group: str, version: str) -> bool:
        """Does the API server serve ``group/version`` (discovery)?"""
        if self._groups is None:
            found = rest.get(self._api, "/apis").get("groups") or []
            self._groups = {(str(g.get("name")), str(v.get("version"))) for g in found for v in g.get("versions") or []}
        return (group, version) in self._groups

    def chart_version(self, namespace: str, release: str) -> str | None:
        if self._releases is None:
            try:
                secrets = self._list(rest.core_path("secrets"), label_selector=helm.LABEL_SELECTOR)
            except errors.Unauthorized:
                # A validator allowed to read only some namespaces still checks the ones it may.
                secrets = []
            self._releases = {(r.namespace, r.name): r.version for r in helm.current(secrets)}
        return self._releases.get((namespace, release))


def _label_selector(selector: dict[str, str]) -> str | None:
    """``key=value,…`` for a selector of label equalities the API server accepts, else None (a key or
    value that is no label's would be a 400, where matching here finds no pod)."""
    if not selector or any(
        grammars.label_key_problems(k) or grammars.label_value_problems(v) for k, v in selector.items()
    ):
        return None
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
