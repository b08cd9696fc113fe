"""Cached reads for one validation round: each collection is fetched once, however many asserts use it.

Pods are the bulk of a large cluster (a DaemonSet puts one on every node): at 10,000 nodes some
110,000 of them, 300 MB as JSON. They are asked for with the assert's labels as a server-side
``labelSelector`` and as the server prints them (a Table with no objects, about 100 bytes a pod):
a row whose STATUS is ``Running`` with every container ready (READY ``n/n``) is a pod in phase
Running with no container waiting, by the rules the server prints it with, so nothing more is
read of it. Only the pods whose row says anything else are read whole (one by one while they are
few, as a plain list of the selector past ``PROBE_AT_MOST``), and what the pod check reads of
each is kept (``checks.pod_state``).
"""

from __future__ import annotations

from typing import Any

from shared import errors, grammars
from shared.kube import rest
from shared.kube.api import KubeApi
from shared.snapshot import helm
from shared.validate import checks

PROBE_AT_MOST = 20
"""Pods whose row is not healthy read one by one up to this many; more, and the selector is listed whole."""

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
        """The pods of ``namespace`` that match ``selector`` (every pod without one), as
        ``checks.PodState``. A pod known only from its row carries the selector as its labels: the
        server matched them, and the caller's own matching gives the same answer."""
        wanted = dict(selector or {})
        label_selector = _label_selector(wanted)
        if wanted and label_selector is None:
            return []  # the API server refuses a pod whose labels break the grammar, so none has them
        key = f"pods/{namespace}?{label_selector or ''}"
        if key not in self._pods:
            self._pods[key] = self._pod_states(namespace, label_selector, wanted)
        return self._pods[key]

    def _pod_states(self, namespace: str, label_selector: str | None, labels: dict[str, str]) -> list[checks.PodState]:
        path = rest.core_path("pods", namespace)
        states: list[checks.PodState] = []
        doubtful: list[str] = []
        for page in rest.iter_pages(self._api, path, label_selector=label_selector, table=True):
            rows = _pod_rows(page) if page.get("kind") == "Table" else None
            if rows is None:  # no printed columns to judge by (a plain list, or an unknown table)
                return self._whole_pods(path, label_selector)
            states += [checks.PodState(name, labels, "Running", ()) for name, healthy in rows if healthy]
            doubtful += [name for name, healthy in rows if not healthy]
        if len(doubtful) > PROBE_AT_MOST:
            return self._whole_pods(path, label_selector)
        try:
            return states + [checks.pod_state(rest.get(self._api, f"{path}/{name}")) for name in doubtful]
        except errors.NotFound:  # gone since it was listed: read the selector again, at one point in time
            return self._whole_pods(path, label_selector)

    def _whole_pods(self, path: str, label_selector: str | None) -> list[checks.PodState]:
        items = rest.iter_items(self._api, path, label_selector=label_selector)
        with rest.collector_paused():  # each page is dropped as soon as it is projected
            return [checks.pod_state(pod) for pod in items]

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


def _pod_rows(table: dict[str, Any]) -> list[tuple[str, bool]] | None:
    """(name, healthy) of each row of a pod Table: healthy when STATUS is ``Running`` and READY is
    ``n/n`` with n > 0. The server prints ``Running`` only for a pod in phase Running none of whose
    containers (init containers included) waits or has terminated, and counts a container ready
    only while it runs. None for a table without the Name, Ready and Status columns."""
    columns = {str(c.get("name")): i for i, c in enumerate(table.get("columnDefinitions") or [])}
    at = [columns.get("Name"), columns.get("Ready"), columns.get("Status")]
    if None in at:
        return None
    name_at, ready_at, status_at = (int(i or 0) for i in at)
    out = []
    for row in table.get("rows") or []:
        cells = row.get("cells") or []
        if max(name_at, ready_at, status_at) >= len(cells):
            return None
        ready, _, total = str(cells[ready_at]).partition("/")
        healthy = cells[status_at] == "Running" and ready == total and ready.isdigit() and int(ready) > 0
        out.append((str(cells[name_at]), healthy))
    return out


def _label_selector(selector: dict[str, str]) -> str | None:
    """``key=value,…`` for a selector of label equalities the API server accepts, else None (a key or
    value that is no label's would be a 400, where matching here finds no pod)."""
    if not selector or any(
        grammars.label_key_problems(k) or grammars.label_value_problems(v) for k, v in selector.items()
    ):
        return None
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
