"""Run a monitor: read one node or every node of a node root, keep memory, poll, publish.

A real node agent reads host paths (``/sys``, the dcgmi output it is given); against the simulated
cluster one process covers every ``DIR/<node>/…``. Each read goes through ``memory.Memory`` so
only changes are returned and published. Polling (``interval`` and ``duration``) runs in the
caller's thread: no threads to leak, and ``--for`` bounds it in tests.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from shared import clock, durations, errors, files, grammars, metrics
from shared.health import event as hevent
from shared.health.monitors import csp, dcgm, memory, nic

DCGM_FILE = "dcgm-health.json"
Kind = Literal["dcgm", "nic", "csp"]

PUBLISHED = metrics.counter(
    "nvsentinel_monitor_events_published_total",
    "HealthEvents a monitor created on the cluster, by agent and check.",
    ["agent", "check"],
)
READ_ERRORS = metrics.counter(
    "nvsentinel_monitor_read_errors_total",
    "Reads of a monitor's input (log, DCGM output, sysfs, maintenance endpoint) that failed, by monitor.",
    ["monitor"],
)
PUBLISH_ERRORS = metrics.counter(
    "nvsentinel_monitor_publish_errors_total", "Batches of HealthEvents a monitor failed to publish."
)


class Connection(Protocol):
    """Where a monitor publishes and asks about Nodes: the kubeconfig and context a client is built from.

    nvsentinel's ``health.service.Cluster`` is one. A client is built per publish or question and
    closed after it (``client.LazyClient``): polls are seconds to minutes apart, and a long-running
    agent then holds no idle connection."""

    @property
    def kubeconfig(self) -> Path | None: ...

    @property
    def context(self) -> str | None: ...


class PollRequest(BaseModel):
    """What ``monitor dcgm|nic|csp`` was asked to read, flags as typed (checked by ``run``)."""

    model_config = ConfigDict(frozen=True)

    node: str | None = None
    path: Path | None = None
    """``--file`` (dcgm) or ``--sysfs`` (nic)."""
    node_root: Path | None = None
    state: Path | None = None
    interval: str | None = None
    duration: str | None = None
    dry_run: bool = False
    url: str | None = None
    """csp: the maintenance endpoint."""
    ready_timeout: str | None = None
    """csp: how long a healthy event waits for the Node to be Ready; "0" sends it without asking."""


@dataclass(frozen=True)
class Target:
    """One node's input: a file (dcgm) or a sysfs root (nic)."""

    node: str
    path: Path


def check_node(name: str, *, where: str = "--node") -> None:
    """A node name the events will carry: a DNS-1123 subdomain, or exit 2 naming where it came from."""
    problem = grammars.node_name(name)
    if problem is not None:
        raise errors.InvalidInput(problem, where=where)


def targets(*, node: str | None, path: Path | None, node_root: Path | None, relative: str, flag: str) -> list[Target]:
    """``--node-root DIR`` → every DIR/<node>/<relative> that exists; else ``--node N`` with the path."""
    if node_root is not None:
        if not node_root.is_dir():
            raise errors.NotFound("node root not found", where=str(node_root))
        found = [Target(p.name, p / relative) for p in sorted(node_root.iterdir()) if (p / relative).exists()]
        for target in found:
            check_node(target.node, where=str(node_root / target.node))
        return found
    if not node:
        raise errors.InvalidInput(f"--node is required with {flag}", where="--node")
    check_node(node)
    if path is None:
        raise errors.InvalidInput(f"give {flag} or --node-root", where=flag)
    if flag == "--sysfs" and not path.is_dir():  # no sysfs is not a node whose ports are all fine
        reason = "is a file, expected a folder" if path.exists() else "folder does not exist"
        raise errors.InvalidInput(reason, where=str(path))
    return [Target(node, path)]


def read_dcgm(target: Target, now: datetime) -> list[hevent.HealthEvent]:
    doc = files.load_json(target.path)
    try:
        return dcgm.events(doc, node=target.node, now=now)
    except errors.InvalidInput as exc:
        raise errors.InvalidInput(str(exc), where=str(target.path)) from None


def dcgm_once(found: list[Target], mem: memory.Memory, now: datetime) -> list[hevent.HealthEvent]:
    """One read of every target: the events that are news (failures, changes, recoveries)."""
    out: list[hevent.HealthEvent] = []
    for target in found:
        unhealthy = read_dcgm(target, now)
        for agent in (dcgm.AGENT, dcgm.DIAG_AGENT):
            out += mem.changes(target.node, agent, [e for e in unhealthy if e.agent == agent], now=now)
    return out


def nic_once(found: list[Target], mem: memory.Memory, now: datetime) -> list[hevent.HealthEvent]:
    out: list[hevent.HealthEvent] = []
    for target in found:
        ports = nic.read_ports(target.path)
        unhealthy = nic.events(ports, node=target.node, now=now, mem=mem)
        out += mem.changes(target.node, nic.AGENT, unhealthy, now=now, seen=nic.seen(ports))
    return out


def poll(
    read: Callable[[datetime], list[hevent.HealthEvent]],
    *,
    interval: float | None,
    duration: float | None,
    sink: Callable[[list[hevent.HealthEvent]], None],
    stop: threading.Event | None = None,
    now: Callable[[], datetime] = clock.WALL.now,
) -> None:
    """Read once, or every ``interval`` seconds until ``duration`` passed or ``stop`` is set."""
    stop = stop or threading.Event()
    deadline = None if duration is None else time.monotonic() + duration
    while True:
        sink(read(now()))
        if interval is None or stop.is_set():
            return
        wait = interval if deadline is None else min(interval, deadline - time.monotonic())
        if wait <= 0 or stop.wait(wait) or (deadline is not None and time.monotonic() >= deadline):
            return


def publisher(cluster: Connection, dry_run: bool) -> Callable[[list[hevent.HealthEvent]], None]:
    """A sink that publishes HealthEvent resources (nothing when ``dry_run``)."""
    if dry_run:
        return lambda events: None

    def publish(events: list[hevent.HealthEvent]) -> None:
        if not events:
            return
        from shared.health import resource
        from shared.kube import client

        # stamped here, as publish would, so each created name maps back to its event's agent and check
        stamp = clock.WALL.now()
        batch = [
            e if e.generatedTimestamp is not None else e.model_copy(update={"generatedTimestamp": stamp})
            for e in hevent.unique(events)
        ]
        try:
            with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
                created = set(resource.publish(lazy(), batch, now=clock.WALL.now).created)
        except errors.ToolError:
            PUBLISH_ERRORS.inc()
            raise
        for ev in batch:
            if resource.object_name(ev) in created:
                PUBLISHED.inc(agent=ev.agent, check=ev.checkName)

    return publish


def node_ready_check(cluster: Connection) -> Callable[[str], bool]:
    """Asks the cluster whether a Node is Ready (a client per call: polls are minutes apart)."""

    def check(node: str) -> bool:
        from shared.kube import client

        with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
            return csp.node_ready(lazy(), node)

    return check


Once = Callable[[list[Target], memory.Memory, datetime], list[hevent.HealthEvent]]
"""One poll over the targets: the events that changed since the memory's last save."""


def _csp_reader(request: PollRequest, cluster: Connection) -> tuple[list[Target], Once]:
    """``monitor csp``: the one node and a poll of its maintenance endpoint (flags checked here)."""
    from shared.health import settings

    if not request.url:
        raise errors.InvalidInput("--url is required", where="--url")
    if not request.node:
        raise errors.InvalidInput("--node is required with --url", where="--node")
    check_node(request.node)
    endpoint, name, timeout = request.url, request.node, request.ready_timeout
    wait = csp.READY_TIMEOUT
    if timeout is not None:
        try:
            wait = timedelta(0) if timeout.strip() == "0" else settings.parse_duration(timeout)
        except errors.InvalidInput as exc:
            raise errors.InvalidInput(exc.message, where="--node-ready-timeout") from None
    ready = node_ready_check(cluster) if wait.total_seconds() > 0 else None

    def read_csp(_found: list[Target], mem: memory.Memory, now: datetime) -> list[hevent.HealthEvent]:
        return csp.once(endpoint, name, mem, now, ready=ready, ready_timeout=wait)

    return [Target(name, Path(endpoint))], read_csp


def run(
    kind: Kind, request: PollRequest, *, cluster: Connection, emit: Callable[[list[hevent.HealthEvent]], None]
) -> list[hevent.HealthEvent]:
    """``nvsentinel monitor dcgm|nic|csp``: poll, hand each batch to ``emit`` and publish it; all events.

    InvalidInput for flags that do not go together (named by the flag), NotFound for a missing
    node root; nothing is read before the flags are checked."""
    once: Once
    if kind == "csp":
        found, once = _csp_reader(request, cluster)
    else:
        relative, flag, once = (DCGM_FILE, "--file", dcgm_once) if kind == "dcgm" else ("sys", "--sysfs", nic_once)
        found = targets(node=request.node, path=request.path, node_root=request.node_root, relative=relative, flag=flag)
    every = None if request.interval is None else durations.parse(request.interval, where="--interval")
    bound = None if request.duration is None else durations.parse(request.duration, where="--for")
    if bound is not None and every is None:
        raise errors.InvalidInput("--for needs --interval", where="--for")
    mem = memory.Memory(request.state)
    publish = publisher(cluster, request.dry_run)
    seen: list[hevent.HealthEvent] = []

    def sink(events: list[hevent.HealthEvent]) -> None:
        publish(events)
        if not request.dry_run:  # a dry run must not make a later real run think these were published
            mem.save()
        seen.extend(events)
        emit(events)

    def read(now: datetime) -> list[hevent.HealthEvent]:
        try:
            return once(found, mem, now)
        except errors.ToolError:
            READ_ERRORS.inc(monitor=kind)
            raise

    poll(read, interval=every, duration=bound, sink=sink)
    return seen
