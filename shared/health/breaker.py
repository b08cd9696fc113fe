"""The circuit breaker: at most ceil(GPU nodes × percentage / 100) new quarantines per window.

State lives in the ConfigMap ``circuit-breaker`` (upstream's name and keys ``status`` =
CLOSED|TRIPPED, ``cursor`` = RESUME|CREATE) plus ``window``: the unique nodes quarantined in the
sliding window with their time. Every admission is a read-modify-write of that ConfigMap with its
resourceVersion, so any number of workers — threads or processes — count exactly: two admissions
cannot both see the last free slot. A node already in the window is admitted again (re-cordoning
moves it to the newest slot, as upstream). Reaching the threshold admits that node; the next new
node trips the breaker, which stays TRIPPED — across restarts — until ``breaker reset``.

Admission is a reservation: the quarantine step reserves a slot before it cordons and the
controller releases it when the node write fails or turns out not to be needed, so the window
holds exactly the nodes that were quarantined (a crash in between leaves a slot that the redone
event takes again, never a second one). The controller's workers run nodes in parallel; to keep
the outcome what one-at-a-time processing in first-event order gives (and what ``rules replay``
predicts), a pass hands the breaker its node order and a node whose admission could take a slot
an earlier, still-undecided node may need waits for that node — only near the threshold, so a
storm runs in parallel until the window is almost full.

The window is stored compactly (node → milliseconds since the epoch, about 17 bytes and the name per
node; the ISO times of older releases are still read), so a window of 25,000 nodes fits the
ConfigMap's 1 MiB. A window that would not fit is not written: the breaker trips instead, naming
``circuitBreaker.maxNodes``, because refusing a quarantine is the safe side. The GPU node count the
threshold comes from is read from the node informer when the controller has one, else listed
again at most once a minute, so a growing fleet raises the threshold without a restart.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from shared import errors
from shared.health import settings
from shared.kube import errors as kube_errors
from shared.kube import informer, rest, retry
from shared.kube.api import KubeApi

logger = logging.getLogger(__name__)

NAME = "circuit-breaker"
CLOSED, TRIPPED = "CLOSED", "TRIPPED"
_POLICY = retry.RetryPolicy(attempts=50, base_delay=0.005, max_delay=0.2)
WINDOW_MAX_BYTES = 1_000_000
"""The window's JSON at most: a ConfigMap holds 1 MiB (1,048,576 bytes) of data, the rest of it is
the status, the cursor and their keys."""
GPU_COUNT_SECONDS = 60.0
"""How long a listed GPU node count is used before it is listed again (no informer)."""
GPU_INDEX, GPU_KEY = "breaker-gpu-node", "gpu"


@dataclass(frozen=True)
class Admission:
    """A reservation's answer; ``new`` when the node was not in the window before (only those are released)."""

    admitted: bool
    new: bool = False


@dataclass(frozen=True)
class Status:
    state: str
    threshold: int
    gpu_nodes: int
    recent: dict[str, int]
    """Node → when it was quarantined, in milliseconds since the epoch."""
    window: str

    def document(self) -> dict[str, Any]:
        return {
            "status": self.state,
            "threshold": self.threshold,
            "gpuNodes": self.gpu_nodes,
            "recentQuarantines": len(self.recent),
            "window": self.window,
            "nodes": sorted(self.recent),
        }


def _path(namespace: str, name: str | None = None) -> str:
    return rest.core_path("configmaps", namespace, name)


class ConfigMapBreaker:
    """The breaker of one controller; ``allow`` is what the quarantine step asks."""

    def __init__(
        self,
        api: KubeApi,
        *,
        namespace: str,
        settings: settings.CircuitBreaker,
        gpu_node_label: str,
        now: Callable[[], datetime],
        node_cache: informer.Informer | None = None,
    ) -> None:
        """``node_cache``: the controller's node informer; the GPU nodes are then counted from it."""
        self.api = api
        self.namespace = namespace
        self.settings = settings
        self.gpu_node_label = gpu_node_label
        self.now = now
        self._gpu_nodes: int | None = None
        self._gpu_counted_at = 0.0
        self._gpu_match = _label_match(gpu_node_label)
        self.node_cache = node_cache
        if node_cache is not None and self._gpu_match is not None:
            match = self._gpu_match
            node_cache.add_index(GPU_INDEX, lambda node: (GPU_KEY,) if match(node) else ())
        # One lock for this process's workers: the ConfigMap write is the cross-process guarantee,
        # the lock keeps our own workers from conflicting and guards the pass order below.
        self._cond = threading.Condition(threading.Lock())
        self._cm: dict[str, Any] | None = None  # the ConfigMap as we last read or wrote it
        self._ranks: dict[str, int] = {}
        self._undecided: set[str] = set()

    def gpu_nodes(self) -> int:
        """The GPU nodes now: the informer's index when it is current, else a count listed at most
        ``GPU_COUNT_SECONDS`` ago."""
        store = self.node_cache.current() if self.node_cache is not None and self._gpu_match else None
        if store is not None:
            return store.count(GPU_INDEX, GPU_KEY)
        moment = time.monotonic()
        if self._gpu_nodes is None or moment - self._gpu_counted_at >= GPU_COUNT_SECONDS:
            self._gpu_nodes = sum(
                1
                for _ in rest.iter_items(self.api, rest.core_path("nodes"), label_selector=self.gpu_node_label or None)
            )
            self._gpu_counted_at = moment
        return self._gpu_nodes

    # ------------------------------------------------------------ pass order
    def begin_pass(self, order: list[str]) -> None:
        """The nodes of a pass in first-event order; the cached ConfigMap is re-read (a reset counts)."""
        with self._cond:
            self._ranks = {name: i for i, name in enumerate(order)}
            self._undecided = set(order)
            self._cm = None

    def finished(self, node: str) -> None:
        """``node`` will ask for no slot in this pass any more: later nodes need not wait for it."""
        with self._cond:
            self._undecided.discard(node)
            self._cond.notify_all()

    def end_pass(self) -> None:
        with self._cond:
            self._ranks, self._undecided = {}, set()
            self._cond.notify_all()

    def _waiting_for(self, node: str, recent: dict[str, int]) -> int:
        """Earlier nodes of this pass that may still want a slot (none outside a pass)."""
        rank = self._ranks.get(node)
        if rank is None:
            return 0
        return sum(1 for other in self._undecided if self._ranks[other] < rank and other not in recent)

    # ------------------------------------------------------------ the ConfigMap
    def _read(self) -> dict[str, Any]:
        try:
            return rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")
        except errors.NotFound:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": self.namespace},
                "data": {"status": CLOSED, "cursor": "RESUME", "window": "{}"},
            }
            try:
                return rest.create(self.api, _path(self.namespace), body, what=f"configmap {self.namespace}/{NAME}")
            except kube_errors.AlreadyExists:
                return rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")

    def _cached(self) -> dict[str, Any]:
        if self._cm is None:
            self._cm = self._read()
        return copy.deepcopy(self._cm)

    def _write(self, cm: dict[str, Any]) -> None:
        """Replace with the resourceVersion read; a conflict (someone else wrote) drops the cache."""
        try:
            self._cm = rest.replace(
                self.api, _path(self.namespace, NAME), cm, what=f"configmap {self.namespace}/{NAME}"
            )
        except Exception:
            self._cm = None
            raise

    def _recent(self, data: dict[str, str], moment: datetime) -> dict[str, int]:
        """The window's nodes quarantined after ``moment`` minus the window, with their time in ms."""
        window = decode_window(data.get("window"))
        oldest = _millis(moment - self.settings.window())
        return {n: t for n, t in window.items() if t > oldest}

    # ------------------------------------------------------------ admission
    def allow(self, node: str) -> bool:
        """Admit one quarantine of ``node``; False (and TRIPPED) when the window is full."""
        return self.reserve(node).admitted

    def reserve(self, node: str) -> Admission:
        """Take a slot for ``node`` before it is quarantined (see the module docstring)."""
        if not self.settings.enabled:
            return Admission(True)
        threshold = self.settings.threshold(self.gpu_nodes())

        def attempt() -> Admission:
            while True:
                cm = self._cached()
                data = cm.get("data") or {}
                cm["data"] = data
                if data.get("status") == TRIPPED:
                    return Admission(False)
                moment = self.now()
                recent = self._recent(data, moment)
                new = node not in recent
                free = threshold - len(recent)
                waiting_for = self._waiting_for(node, recent) if new else 0
                if new and free <= waiting_for and waiting_for > 0:
                    self._cond.wait(timeout=1.0)  # an earlier node decides first
                    continue
                admitted = not new or free > 0
                if admitted:
                    recent[node] = _millis(moment)
                    if new and len(encode_window(recent)) > WINDOW_MAX_BYTES:
                        admitted = False
                        recent.pop(node)
                        logger.warning(
                            "circuit breaker TRIPPED: a window of %d nodes does not fit its ConfigMap "
                            "(%d bytes at most); set circuitBreaker.maxNodes lower",
                            len(recent) + 1,
                            WINDOW_MAX_BYTES,
                            extra={"subject": node},
                        )
                        data["status"] = TRIPPED
                else:
                    data["status"] = TRIPPED
                    logger.warning(
                        "circuit breaker TRIPPED: %d node(s) quarantined within %s (threshold %d)",
                        len(recent),
                        self.settings.duration,
                        threshold,
                        extra={"subject": node},
                    )
                data["window"] = encode_window(recent)
                self._write(cm)
                self._cond.notify_all()
                return Admission(admitted, new and admitted)

        with self._cond:
            return retry.call(attempt, policy=_POLICY, what=f"configmap {self.namespace}/{NAME}")

    def release(self, node: str) -> None:
        """Give back a slot reserved for a quarantine that did not happen."""
        if not self.settings.enabled:
            return

        def attempt() -> None:
            cm = self._cached()
            data = cm.get("data") or {}
            cm["data"] = data
            window = decode_window(data.get("window"))
            if window.pop(node, None) is None:
                return
            data["window"] = encode_window(window)
            self._write(cm)
            self._cond.notify_all()

        with self._cond:
            retry.call(attempt, policy=_POLICY, what=f"configmap {self.namespace}/{NAME}")

    def status(self) -> Status:
        """The stored state; CLOSED and empty when the ConfigMap does not exist yet (nothing is written)."""
        try:
            cm = rest.get(self.api, _path(self.namespace, NAME), what=f"configmap {self.namespace}/{NAME}")
        except errors.NotFound:
            cm = {}
        data = cm.get("data") or {}
        threshold = self.settings.threshold(self.gpu_nodes())
        return Status(
            data.get("status", CLOSED),
            threshold,
            self.gpu_nodes(),
            self._recent(data, self.now()),
            self.settings.duration,
        )

    def reset(self, *, skip_backlog: bool = False) -> Status:
        """CLOSED with an empty window; ``skip_backlog`` sets cursor=CREATE as upstream's runbook."""

        def attempt() -> None:
            cm = self._read()
            cm["data"] = {"status": CLOSED, "cursor": "CREATE" if skip_backlog else "RESUME", "window": "{}"}
            self._write(cm)

        with self._cond:
            retry.call(attempt, policy=_POLICY)
        return self.status()


def _millis(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def encode_window(window: dict[str, int]) -> str:
    """The window as stored: compact JSON, nodes in name order."""
    return json.dumps(window, sort_keys=True, separators=(",", ":"))


def decode_window(text: str | None) -> dict[str, int]:
    """A stored window; times written by older releases as ISO strings are read too, and a window
    that cannot be read counts as empty (as before: the breaker must not stop on its own state)."""
    try:
        stored = json.loads(text or "{}")
    except ValueError:
        return {}
    if not isinstance(stored, dict):
        return {}
    out: dict[str, int] = {}
    for name, value in stored.items():
        if isinstance(value, int) and not isinstance(value, bool):
            out[str(name)] = value
        elif isinstance(value, str):
            try:
                out[str(name)] = _millis(datetime.fromisoformat(value.replace("Z", "+00:00")))
            except ValueError:
                continue
    return out


def _label_match(selector: str) -> Callable[[dict[str, Any]], bool] | None:
    """A matcher for ``key=value``, ``key==value`` or ``key`` (the forms ``gpuNodeLabel`` takes);
    None for any other selector, which is then left to the API server."""
    text = selector.strip()
    if not text:
        return lambda node: True
    if any(c in text for c in ",!() ") or text.count("=") > 2:
        return None
    key, sep, value = text.partition("==") if "==" in text else text.partition("=")

    def match(node: dict[str, Any]) -> bool:
        labels = (node.get("metadata") or {}).get("labels") or {}
        return key in labels and (not sep or labels[key] == value)

    return match


class MemoryBreaker:
    """The same admission rule in memory, for ``rules replay``."""

    def __init__(self, settings: settings.CircuitBreaker, gpu_nodes: int, now: Callable[[], datetime]) -> None:
        self.settings = settings
        self.threshold = settings.threshold(gpu_nodes)
        self.now = now
        self.window: dict[str, datetime] = {}
        self.tripped = False

    def release(self, node: str) -> None:
        self.window.pop(node, None)

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


def window_seconds(settings: settings.CircuitBreaker) -> float:
    return float(settings.window() / timedelta(seconds=1))
