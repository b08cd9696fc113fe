"""The lifecycle controller: ValidationRequests in, gated and validated nodes out.

Runs inside ``nvsentinel run`` on its own thread (``start``), beside fault quarantine, with its own
leader Lease (``LEASE_NAME``). A pass: the automatic clients (``triggers``: repaired nodes, new
nodes), then one ``reconcile.step`` for every request that is not finished — or that is finished
but still named on a node in a way its verdict contradicts (a controller killed mid-way) — and,
when ``runCertificationController`` is on, one pass of the certification engine
(``shared.certify.controller``) over the provider's namespace, so a Certification the lifecycle
creates is run without a separate ``nvcrectl controller``. The loop is
``shared.kube.leaderloop.LeaderLoop``: passes ``SETTINGS.poll_seconds`` of cluster time apart
(virtual on the simulated cluster).
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared import clock, errors, metrics
from shared.certify import controller as ccontroller
from shared.kube import informer, rest
from shared.kube.api import KubeApi
from shared.kube.leaderloop import ControllerSettings, LeaderLoop
from shared.lifecycle import models, reconcile, resource, sessions, settings, triggers

logger = logging.getLogger(__name__)

LEASE_NAME = "nvsentinel-lifecycle-manager"
SETTINGS = ControllerSettings(min_wait_seconds=1.0)
"""The defaults (a 60-second Lease, a pass every 10 cluster seconds: short next to any test, which
takes minutes), and at least a real second between passes: it shares ``nvsentinel run``'s
interpreter with fault quarantine, which must not starve when a simulated clock runs fast."""

DURATION = metrics.histogram(
    "nvsentinel_validation_duration_seconds",
    "Cluster seconds from a ValidationRequest's start to its verdict, by phase.",
    ["phase"],
    buckets=(60, 300, 600, 1200, 1800, 3600, 7200, 14400),
)
VERDICTS = metrics.counter(
    "nvsentinel_validation_requests_total", "ValidationRequests that reached a verdict, by phase.", ["phase"]
)
STEP_ERRORS = metrics.counter(
    "nvsentinel_validation_step_errors_total", "ValidationRequest steps that failed and will be retried."
)


NAMING = "nvsentinel/validation-session"
"""The node informer's index of nodes carrying a validation session or an active request (key ``NAMES``)."""
NAMES = "names"


def _naming(node: dict[str, Any]) -> list[str]:
    anns = (node.get("metadata") or {}).get("annotations") or {}
    return [NAMES] if sessions.SESSION in anns or sessions.ACTIVE in anns else []


class Controller:
    """One replica of the lifecycle manager; ``reconcile_once`` is one pass."""

    def __init__(
        self,
        api: KubeApi,
        lm: settings.LifecycleManager,
        *,
        namespace: str,
        clk: clock.Clock,
        label_prefix: str,
        source: str = "values",
        identity: str | None = None,
        notify: Callable[[str, str, str], None] | None = None,
        node_cache: informer.Informer | None = None,
    ) -> None:
        """``node_cache``: the process's node informer; a pass then reads its indexes (the nodes
        naming a request, the candidates for new-node validation) instead of listing every node."""
        self.api = api
        self.lm = lm
        self.cfg = settings.with_catalog(lm.config)
        programs = settings.check(self.cfg, source=source)
        self.readiness = {k.split("/", 1)[1]: v for k, v in programs.items() if k.startswith("readinessCriteria/")}
        self.new_node = {
            k.split("/", 1)[1]: v for k, v in programs.items() if k.startswith("newNodeValidation.criteria/")
        }
        self.namespace = namespace
        self.clock = clk
        self.label_prefix = label_prefix
        self.identity = identity or f"{socket.gethostname()}-{id(self):x}"
        self.ctx = reconcile.Context(api, self.cfg, self.readiness, clk)
        self.node_cache = node_cache
        if node_cache is not None:
            node_cache.add_index(NAMING, _naming)
            if self.cfg.newNodeValidation.enabled and self.new_node:
                triggers.index_new_nodes(node_cache, self.new_node)
        if notify is not None:
            self.ctx = dataclasses.replace(self.ctx, notify=notify)
        self.certifications: ccontroller.Controller | None = None
        if lm.runCertificationController:
            cert_namespace = next(
                (p.namespace for p in self.cfg.providers.values() if p.kind == settings.CERTIFICATION), namespace
            )
            self.certifications = ccontroller.Controller(api, cert_namespace, f"{self.identity}-certify", clk)

    def reconcile_once(self) -> list[str]:
        """One pass; returns one note per request that moved."""
        notes = [
            f"created {n}"
            for n in triggers.post_remediation(self.api, self.cfg, label_prefix=self.label_prefix, clock=self.clock)
        ]
        notes += [
            f"created {n}"
            for n in triggers.new_nodes(self.api, self.cfg, self.new_node, clock=self.clock, cache=self.node_cache)
        ]
        named = self._named_on_nodes()
        for vr in resource.list_all(self.api):
            if vr.status.phase in models.TERMINAL and not vr.deleting and not self._contradicted(vr, named):
                continue
            try:
                progress = reconcile.step(self.ctx, vr.name)
            except errors.NotFound:
                continue
            except errors.ToolError as exc:  # a conflict or a flaky API: the next pass retries
                STEP_ERRORS.inc()
                logger.warning("step failed: %s", exc.line(), extra={"subject": vr.name})
                continue
            if progress.ended:
                VERDICTS.inc(phase=str(progress.phase))
                if progress.seconds is not None:
                    DURATION.observe(progress.seconds, phase=str(progress.phase))
            if progress.ended or vr.status.message != progress.note:
                notes.append(f"{vr.name}: {progress.phase}: {progress.note}")
        if self.certifications is not None:
            notes += self.certifications.reconcile()
        return notes

    def _named_on_nodes(self) -> dict[str, list[tuple[sessions.Entry | None, bool]]]:
        """Request name → how each node names it (its session entry, whether it is the active one)."""
        named: dict[str, list[tuple[sessions.Entry | None, bool]]] = {}
        store = self.node_cache.current() if self.node_cache is not None else None
        # the informer's index (the few nodes with a session), else page by page: at 10,000
        # nodes a full list would dominate nvsentinel run's memory
        found = (
            store.by_index(NAMING, NAMES)
            if store is not None
            else (n for n in rest.iter_items(self.api, rest.core_path("nodes")) if _naming(n))
        )
        for node in found:
            entries, active = sessions.read(node)
            for e in entries:
                named.setdefault(e.name, []).append((e, e.name == active))
            if active and not any(e.name == active for e in entries):
                named.setdefault(active, []).append((None, True))
        return named

    def _contradicted(
        self, vr: models.ValidationRequest, named: dict[str, list[tuple[sessions.Entry | None, bool]]]
    ) -> bool:
        for entry, active in named.get(vr.name, []):
            if active or vr.status.phase is models.Phase.SUCCEEDED or (entry is not None and not entry.failed):
                return True
        return False

    def loop(self) -> LeaderLoop:
        """This replica on the leader loop; on stop the embedded certification engine's Leases
        go too, so the next holder need not wait for them to expire."""
        return LeaderLoop.of(
            self,
            lease=LEASE_NAME,
            settings=SETTINGS,
            reconcile=self._logged_pass,
            on_error=self._failed_pass,
            on_stop=self.certifications.release if self.certifications is not None else lambda: None,
        )

    def run(self, stop: threading.Event) -> None:
        """Hold the Lease and pass every ``SETTINGS.poll_seconds`` of cluster time until ``stop``."""
        self.loop().run(stop)

    def _logged_pass(self) -> None:
        for note in self.reconcile_once():
            logger.info("%s", note, extra={"subject": "lifecycle"})

    @staticmethod
    def _failed_pass(exc: errors.ToolError) -> None:
        STEP_ERRORS.inc()
        logger.warning("lifecycle pass failed, retrying: %s", exc.line())


@dataclass
class Running:
    """A replica on its own thread, and the error that ended it early (refused credentials)."""

    thread: threading.Thread
    error: errors.ToolError | None = None

    def join(self, timeout: float) -> None:
        self.thread.join(timeout=timeout)


def start(
    api: KubeApi,
    lm: settings.LifecycleManager,
    *,
    namespace: str,
    clk: clock.Clock,
    label_prefix: str,
    source: str,
    stop: threading.Event,
    install: bool = True,
    notify: Callable[[str, str, str], None] | None = None,
    node_cache: informer.Informer | None = None,
) -> Running | None:
    """Install the CRDs (unless ``install`` is False: the chart did) and run a replica on a daemon
    thread until ``stop`` (None when disabled). An error that ends the replica (its credentials
    refused) is kept on the result and sets ``stop``, so the whole program ends with it instead of
    running on half blind."""
    if not lm.enabled:
        return None
    if install:
        resource.install(api)
    replica = Controller(
        api,
        lm,
        namespace=namespace,
        clk=clk,
        label_prefix=label_prefix,
        source=source,
        notify=notify,
        node_cache=node_cache,
    )
    if replica.certifications is not None and install:
        from shared.certify import service as cservice

        cservice.install_crds(lambda: api)

    def run() -> None:
        try:
            if node_cache is not None:
                _await_sync(node_cache, stop)
            replica.run(stop)
        except errors.ToolError as exc:
            running.error = exc
            stop.set()

    running = Running(threading.Thread(target=run, name="nvsentinel-lifecycle", daemon=True))
    running.thread.start()
    return running


SYNC_SECONDS = 120.0
"""Real seconds the first pass waits for the node informer's first list before it lists itself."""


def _await_sync(cache: informer.Informer, stop: threading.Event) -> None:
    """Before the first pass: the informer's first list, so that pass reads the indexes instead of
    listing and evaluating every node itself (at 10,000 nodes, the work of many passes)."""
    deadline = time.monotonic() + SYNC_SECONDS
    while not stop.is_set() and time.monotonic() < deadline and not cache.wait_synced(0.5):
        pass
