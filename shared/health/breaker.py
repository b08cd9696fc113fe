"""The circuit breaker: at most ceil(GPU nodes × percentage / 100) new quarantines per window.

State lives in the ConfigMap ``circuit-breaker`` (upstream's name and keys ``status`` =
CLOSED|TRIPPED, ``cursor`` = RESUME|CREATE) plus ``window``: the unique nodes quarantined in the
sliding window with their time. Every admission is a read-modify-write of that ConfigMap with its
resourceVersion, so any number of workers — threads or processes — count exactly: two admissions
cannot both see the last free slot. A node already in the window is admitted again (re-cordoning
moves it to the newest slot, as upstream). Reaching the threshold admits that node; the next new
node trips the breaker, which stays TRIPPED — across restarts — until ``breaker reset``.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shared import errors
from shared.health import event as hevent
from shared.health import values
from shared.kube import errors as kube_errors
from shared.kube import rest, retry

logger = logging.getLogger(__name__)

NAME = "circuit-breaker"
CLOSED, TRIPPED = "CLOSED", "TRIPPED"
_POLICY = retry.RetryPolicy(attempts=50, base_delay=0.005, max_delay=0.2)


@dataclass(frozen=True)
class Status:
    state: str
    threshold: int
    gpu_nodes: int
    recent: dict[str, str]
    window: str

    def document(self) -> dict[str, Any]:
        return {"status": self.state, "threshold": self.threshold, "gpuNodes": self.gpu_nodes,
                "recentQuarantines": len(self.recent), "window": self.window, "nodes": sorted(self.recent)}


def _path(namespace: str, name: str | None = None) -> str:
    return rest.core_path("configmaps", namespace, name)


class ConfigMapBreaker:
    """The breaker of one controller; ``allow`` is what the quarantine step asks."""

    def __init__(self, api: Any, *, namespace: str, settings: values.CircuitBreaker, gpu_node_label: str,
                 now: Callable[[], datetime]) -> None:
        self.api = api
        self.namespace = namespace
        self.settings = settings
        self.gpu_node_label = gpu_node_label
        self.now = now
        self._gpu_nodes: int | None = None
        self._lock = threading.Lock()   # saves this process's workers from conflicting with each other

    def gpu_nodes(self) -> int:
        if self._gpu_nodes is None:
            self._gpu_nodes = len(rest.list_items(self.api, rest.core_path("nodes"),
                                                  label_selector=self.gpu_node_label or None))
        return self._gpu_nodes

    def _read(self) -> dict[str, Any]:
        try:
            return rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")
        except errors.NotFound:
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME, "namespace": self.namespace},
                    "data": {"status": CLOSED, "cursor": "RESUME", "window": "{}"}}
            try:
                return rest.create(self.api, _path(self.namespace), body, what=f"configmap {self.namespace}/{NAME}")
            except kube_errors.AlreadyExists:
                return rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")

    def _recent(self, data: dict[str, str], moment: datetime) -> dict[str, str]:
        try:
            window: dict[str, str] = json.loads(data.get("window") or "{}")
        except ValueError:
            window = {}
        oldest = moment - self.settings.window()
        return {n: t for n, t in window.items()
                if datetime.fromisoformat(t.replace("Z", "+00:00")) > oldest}

    def allow(self, node: str) -> bool:
        """Admit one quarantine of ``node``; False (and TRIPPED) when the window is full."""
        if not self.settings.enabled:
            return True
        threshold = self.settings.threshold(self.gpu_nodes())

        def attempt() -> bool:
            cm = self._read()
            data = cm.setdefault("data", {}) or {}
            cm["data"] = data
            if data.get("status") == TRIPPED:
                return False
            moment = self.now()
            recent = self._recent(data, moment)
            admitted = node in recent or len(recent) < threshold
            if admitted:
                recent[node] = hevent.format_time(moment)
            else:
                data["status"] = TRIPPED
                logger.warning("circuit breaker TRIPPED: %d node(s) quarantined within %s (threshold %d)",
                               len(recent), self.settings.duration, threshold, extra={"subject": node})
            data["window"] = json.dumps(recent, sort_keys=True)
            rest.replace(self.api, _path(self.namespace, NAME), cm, what=f"configmap {self.namespace}/{NAME}")
            return admitted

        with self._lock:
            return retry.call(attempt, policy=_POLICY, what=f"configmap {self.namespace}/{NAME}")

    def status(self) -> Status:
        """The stored state; CLOSED and empty when the ConfigMap does not exist yet (nothing is written)."""
        try:
            cm = rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")
        except errors.NotFound:
            cm = {}
        data = cm.get("data") or {}
        threshold = self.settings.threshold(self.gpu_nodes())
        return Status(data.get("status", CLOSED), threshold, self.gpu_nodes(), self._recent(data, self.now()),
                      self.settings.duration)

    def reset(self, *, skip_backlog: bool = False) -> Status:
        """CLOSED with an empty window; ``skip_backlog`` sets cursor=CREATE as upstream's runbook."""
        def attempt() -> None:
            cm = self._read()
            cm["data"] = {"status": CLOSED, "cursor": "CREATE" if skip_backlog else "RESUME", "window": "{}"}
            rest.replace(self.api, _path(self.namespace, NAME), cm, what=f"configmap {self.namespace}/{NAME}")

        retry.call(attempt, policy=_POLICY)
        return self.status()


class MemoryBreaker:
    """The same admission rule in memory, for ``rules replay``."""

    def __init__(self, settings: values.CircuitBreaker, gpu_nodes: int, now: Callable[[], datetime]) -> None:
        self.settings = settings
        self.threshold = settings.threshold(gpu_nodes)
        self.now = now
        self.window: dict[str, datetime] = {}
        self.tripped = False

    def allow(self, node: str) -> bool:
        if not self.settings.enabled:
            return True
        if self.tripped:
            return False
        moment = self.now()
        self.window = {n: t for n, t in self.window.items() if t > moment - self.settings.window()}
        if node in self.window or len(self.window) < self.threshold:
            self.window[node] = moment
            return True
        self.tripped = True
        return False


def window_seconds(settings: values.CircuitBreaker) -> float:
    return float(settings.window() / timedelta(seconds=1))
