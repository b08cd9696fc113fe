"""Cached reads for one validation round: each collection is fetched once, however many asserts use it."""

from __future__ import annotations

from typing import Any

from shared import errors
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.snapshot import helm

_WORKLOAD_PLURALS = {"Deployment": "deployments", "DaemonSet": "daemonsets", "StatefulSet": "statefulsets"}


class ClusterView:
    """What a validation round has read so far; build a new one for each round."""

    def __init__(self, api: KubeApi) -> None:
        self._api = api
        self._lists: dict[str, list[dict[str, Any]]] = {}
        self._crds: dict[str, dict[str, Any]] | None = None
        self._releases: dict[tuple[str, str], str] | None = None

    def _list(self, path: str, **selectors: str) -> list[dict[str, Any]]:
        key = path + repr(sorted(selectors.items()))
        if key not in self._lists:
            self._lists[key] = rest.list_items(self._api, path, **selectors)
        return self._lists[key]

    def workloads(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        return self._list(rest.group_path("apps", "v1", _WORKLOAD_PLURALS[kind], namespace))

    def pods(self, namespace: str) -> list[dict[str, Any]]:
        return self._list(rest.core_path("pods", namespace))

    def crd(self, name: str) -> dict[str, Any] | None:
        if self._crds is None:
            items = self._list(rest.group_path("apiextensions.k8s.io", "v1", "customresourcedefinitions"))
            self._crds = {str((c.get("metadata") or {}).get("name")): c for c in items}
        return self._crds.get(name)

    def chart_version(self, namespace: str, release: str) -> str | None:
        if self._releases is None:
            try:
                secrets = self._list(rest.core_path("secrets"), label_selector=helm.LABEL_SELECTOR)
            except errors.Unauthorized:
                # A validator allowed to read only some namespaces still checks the ones it may.
                secrets = []
            self._releases = {(r.namespace, r.name): r.version for r in helm.current(secrets)}
        return self._releases.get((namespace, release))
