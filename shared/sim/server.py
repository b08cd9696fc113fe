"""The emulator as one object: start it, point clients at it, hook behaviour onto it, stop it.

Everything a test or a later part of the simulation needs hangs off :class:`SimServer`:
``store`` (objects and events), ``api`` (the verbs, for seeding without HTTP), ``faults``,
``audit``, ``identities``, ``logs`` (pod logs a kubelet writes) and ``clock``, and part 2's
``vclock`` (virtual time), ``fabric`` (GPU hardware and faults), ``noderoot`` (node files),
``kubelet``, ``jobctl``, ``controllers`` (Deployments, ReplicaSets, DaemonSets, StatefulSets,
garbage collection, node lifecycle and heartbeats, Event expiry) and ``repair``;
``advance(seconds)`` runs the cluster in virtual time.
Stopping closes every connection and joins every thread
the server started, so a test that used it leaks nothing.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from shared import files
from shared.sim import clusterobjects, control
from shared.sim.apiserver import (
    api,
    audit,
    eventsv1,
    faults,
    handler,
    hpaversions,
    jobcontroller,
    kubeconfig,
    podlogs,
    rbac,
    readviews,
    resources,
    store,
    tls,
    vclock,
    watch,
)
from shared.sim.apiserver.controllers import manager
from shared.sim.gpu import fabric, gpunodes, kubelet, noderoot, repair, stages
from shared.sim.operators import catalog as operators_catalog

logger = logging.getLogger(__name__)


@dataclass
class ServerSettings:
    """Tunables of one server."""

    bookmark_interval: float = watch.BOOKMARK_INTERVAL
    """Seconds between BOOKMARK events on an idle watch that asked for them."""
    max_watch_seconds: float = 1800.0
    """Longest a watch stays open (the real default is 30-60 minutes)."""


def wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class GpuSettings:
    """What ``serve --gpu`` asks for: the GPU nodes, their racks and the faults they start with."""

    gpu: str | None = None
    """Profile name (h100, gb200, a100); None: plain GPU-less nodes, as in part 1."""
    racks: int = 1
    faults: tuple[str, ...] = ()


def node_names(count: int) -> list[str]:
    """``node-000`` … zero-padded to the width ``count`` needs (at least three digits)."""
    width = max(3, len(str(max(count - 1, 0))))
    return [f"node-{i:0{width}d}" for i in range(count)]


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 128
    tls_context: ssl.SSLContext | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that drops the connection or refuses the certificate is not the server's error.
        logger.debug("connection from %s ended with an error", client_address, exc_info=True)

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = self.socket.accept()
        if self.tls_context is not None:
            # The handshake runs on the connection's own thread (first read), not the accept loop.
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


class SimServer:
    """One emulated API server on 127.0.0.1. Use as a context manager or call start()/stop()."""

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        nodes: int = 0,
        seed: int | None = None,
        state_file: Path | None = None,
        clock: Callable[[], datetime] | None = None,
        history: int = store.DEFAULT_HISTORY,
        use_tls: bool = True,
        gpus: GpuSettings | None = None,
        speed: float = 1.0,
        node_root: Path | None = None,
        run_kubelet: bool = False,
        operators: tuple[str, ...] = (),
    ) -> None:
        self.vclock = vclock.VirtualClock(speed=speed)
        self.clock = clock or self.vclock.now
        self.nodes = nodes
        self.gpus = gpus or GpuSettings()
        self.run_kubelet = run_kubelet
        self.fabric = fabric.Fabric(seed=seed)
        self.noderoot = noderoot.NodeRoot(node_root, self.fabric, now=self.vclock.time)
        self.fabric.listeners.append(self.noderoot.refresh)
        self.fabric.xid_listeners.append(self.noderoot.xid)
        self.state_file = state_file
        self.settings = ServerSettings()
        self.table = resources.ResourceTable.with_builtins()
        self.store = store.Store(history=history)
        self.store.on_write = self.vclock.queued  # the clock waits for the kubelet loop to see each write
        self.api = api.Api(objects=self.store, table=self.table, clock=self.clock, rng=random.Random(seed))
        self.identities = rbac.Identities(random.SystemRandom())
        self.authorizer = rbac.Authorizer(self.store)
        self.faults = faults.Faults(rng=random.Random(seed))
        self.audit = audit.AuditLog()
        self.logs = podlogs.PodLogs()
        self.kubelet = kubelet.Kubelet(self)
        self.controllers = manager.Manager(
            api=self.api,
            clock=self.vclock,
            nodes=lambda: self.kubelet.nodes,
            static_pods=self.kubelet.static,
            static_workloads=self.kubelet.static_workloads,
            node_down=self.kubelet.is_down,
        )
        self.operator_names = tuple(operators_catalog.Operator(o) for o in operators)
        """The workload operators (JobSet, Trainer, MPI Operator) whose CRDs every fresh cluster has."""
        self.operators = operators_catalog.Operators(api=self.api, manager=self.controllers, now=self.api.now)
        self._wire_views()
        self.jobctl = jobcontroller.JobController(self)
        self.repair = repair.Janitor(self)
        self.closing = False
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._lock = threading.Lock()
        handler_class = type("SimHandler", (handler.Handler,), {"sim": self})
        self._httpd = _HTTPServer((host, port), handler_class)
        # TLS by default: kubectl sends bearer tokens only over https, and RBAC needs them.
        self.tls = tls.identity() if use_tls else None
        if self.tls is not None:
            self._httpd.tls_context = tls.server_context(self.tls)
        self.port = int(self._httpd.server_address[1])
        self.url = f"{'https' if self.tls else 'http'}://{host}:{self.port}"
        self._thread: threading.Thread | None = None
        if state_file is not None and state_file.exists():
            self.load_state(state_file)
        else:
            self.seed()

    def _wire_views(self) -> None:
        """What reads compute: node heartbeats, events.k8s.io Events over the core ones, and
        autoscaling/v1 HorizontalPodAutoscalers over the v2 ones."""
        views = readviews.Views()
        self.controllers.register_views(views)
        events, new_events = self._resource("", "events"), self._resource(eventsv1.GROUP, "events")
        self.store.alias(
            new_events,
            store.Alias(
                target=events,
                to_storage=eventsv1.to_core,
                from_storage=eventsv1.from_core,
                fields=eventsv1.FIELD_LABELS,
            ),
        )
        views.register(eventsv1.GROUP, "events", eventsv1.EventsView())
        views.register_conversion(hpaversions.GROUP, "v1", "horizontalpodautoscalers", hpaversions.V1Conversion())
        self.api.views = views

    # ------------------------------------------------------------ state
    def seed(self) -> None:
        """The objects every cluster starts with, plus the plain nodes asked for."""
        clusterobjects.bootstrap(self.api, self._resource)
        self.operators.install(self.operator_names)
        if self.gpus.gpu is None:
            self.add_nodes(self.nodes)
            return
        self.add_gpu_nodes(self.nodes, racks=self.gpus.racks, gpu=self.gpus.gpu)
        self.repair.install_crds()
        self.fabric.inject(fabric.parse_all(self.gpus.faults))

    def add_nodes(self, count: int) -> list[str]:
        """Register ``count`` plain nodes (the next free names), each with the heartbeat Lease a
        kubelet keeps."""
        nodes, leases = self._resource("", "nodes"), self._resource("coordination.k8s.io", "leases")
        first = self.store.count(nodes.group_resource)
        free = [
            (i, n)
            for i, n in enumerate(node_names(first + count))
            if self.store.get(nodes.group_resource, "", n) is None
        ]
        names = [n for _, n in free[:count]]
        now = self.api.now()
        renew = self.clock().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for index, name in free[:count]:
            node = self.api.create(nodes, None, clusterobjects.plain_node(name, index, now))
            self.api.create(leases, clusterobjects.LEASE_NAMESPACE, clusterobjects.node_lease(node, renew))
        return names

    def add_gpu_nodes(self, count: int, *, racks: int = 1, gpu: str = "h100") -> list[str]:
        """Register ``count`` GPU nodes of profile ``gpu`` over ``racks`` racks, with their node files."""
        profile = stages.profile(gpu)
        nodes, leases = self._resource("", "nodes"), self._resource("coordination.k8s.io", "leases")
        first = self.store.count(nodes.group_resource)
        names = [n for n in node_names(first + count) if self.store.get(nodes.group_resource, "", n) is None][:count]
        now = self.api.now()
        renew = self.clock().strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        for hw in self.fabric.add_nodes(names, racks=racks, profile=profile):
            node = self.api.create(nodes, None, gpunodes.node_object(hw, now))
            self.api.create(leases, clusterobjects.LEASE_NAMESPACE, clusterobjects.node_lease(node, renew))
            self.noderoot.boot(hw)
        return names

    def advance(self, seconds: float) -> None:
        """Run the cluster for ``seconds`` of virtual time, timer by timer, letting the kubelet
        catch up at each step; returns when everything due by then has happened."""
        target = self.vclock.time() + seconds
        self.kubelet.settle()
        while True:
            now = self.vclock.time()
            due = self.vclock.next_due()
            step_to = target if due is None else min(due, target)
            if step_to > now:
                self.vclock.advance(step_to - now)
                self.store.wake()
            self.kubelet.settle()
            if step_to >= target:
                return

    def reset(self) -> None:
        """Back to a fresh cluster: objects, CRDs, faults, tokens, audit and logs are cleared."""
        with self.store.lock, self.kubelet.lock:
            self.vclock.reset()
            self.fabric.clear()
            self.noderoot.root = None
            self.kubelet.reset()
            self.controllers.reset()
            self.jobctl.reset()
            self.repair.reset()
            self.store.clear()
            self.table.reset()
            self.faults.clear()
            self.faults.drop_watches()
            self.identities.reset()
            self.audit.clear()
            self.logs.clear()
            self.settings = ServerSettings()
            self.seed()

    def control(self, method: str, path: str, query: dict[str, str], raw: bytes, token: str | None) -> tuple[int, Any]:
        """Answer one request under ``/sim/v1/`` (the handler hands these over untouched)."""
        return control.handle(self, method, path, query, raw, token)

    def _resource(self, group: str, plural: str) -> resources.Resource:
        found = self.table.by_group_resource(group, plural)
        assert found is not None, (group, plural)
        return found

    def save_state(self, path: Path) -> None:
        files.atomic_write_text(path, json.dumps(self.store.dump()), mode=0o600)

    def load_state(self, path: Path) -> None:
        state = json.loads(path.read_text(encoding="utf-8"))
        for (group, plural), obj in state.get("objects", []):
            if (group, plural) == ("apiextensions.k8s.io", "customresourcedefinitions"):
                self.table.register_crd(obj)
        self.store.load(state, self.table)

    # ------------------------------------------------------------ lifecycle
    def start(self) -> SimServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"sim-apiserver:{self.port}",
            daemon=True,
        )
        self._thread.start()
        if self.run_kubelet:
            self.kubelet.start()
        return self

    def stop(self) -> None:
        """Stop accepting, end watches, close connections, join threads. Idempotent."""
        if self.closing:
            return
        self.closing = True
        self.kubelet.stop()
        self.store.closed = True
        self.store.wake()
        if self._thread is not None:
            self._httpd.shutdown()
        with self._lock:
            connections = dict(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in connections.values():
            thread.join(timeout=5)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.state_file is not None:
            self.save_state(self.state_file)

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections[conn] = threading.current_thread()
            else:
                self._connections.pop(conn, None)

    def write_kubeconfig(self, path: Path, *, namespace: str = "default") -> Path:
        kubeconfig.write(
            path,
            self.url,
            self.identities.admin_token,
            namespace=namespace,
            ca_pem=self.tls.cert_pem if self.tls else None,
        )
        return path

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
