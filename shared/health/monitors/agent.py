"""Run a monitor: read one node or every node of a node root, keep memory, poll, publish.

A real node agent reads host paths (``/sys``, the dcgmi output it is given); against the simulated
cluster one process covers every ``DIR/<node>/…``. Each read goes through ``memory.Memory`` so
only changes are returned and published. Polling (``interval`` and ``duration``) runs in the
caller's thread: no threads to leak, and ``--for`` bounds it in tests.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from shared import clock, errors
from shared.health import event as hevent
from shared.health.monitors import csp, dcgm, memory, nic

DCGM_FILE = "dcgm-health.json"


@dataclass(frozen=True)
class Target:
    """One node's input: a file (dcgm) or a sysfs root (nic)."""

    node: str
    path: Path


def targets(*, node: str | None, path: Path | None, node_root: Path | None, relative: str, flag: str) -> list[Target]:
    """``--node-root DIR`` → every DIR/<node>/<relative> that exists; else ``--node N`` with the path."""
    if node_root is not None:
        if not node_root.is_dir():
            raise errors.NotFound("node root not found", where=str(node_root))
        return [Target(p.name, p / relative) for p in sorted(node_root.iterdir()) if (p / relative).exists()]
    if not node:
        raise errors.InvalidInput(f"--node is required with {flag}", where="--node")
    if path is None:
        raise errors.InvalidInput(f"give {flag} or --node-root", where=flag)
    return [Target(node, path)]


def read_dcgm(target: Target, now: datetime) -> list[hevent.HealthEvent]:
    try:
        doc = json.loads(target.path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise errors.NotFound("file not found", where=str(target.path)) from None
    except json.JSONDecodeError as exc:
        raise errors.InvalidInput(f"not JSON: {exc.msg}", where=f"{target.path}:{exc.lineno}") from None
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


def publisher(cluster: Any, dry_run: bool) -> Callable[[list[hevent.HealthEvent]], None]:
    """A sink that publishes HealthEvent resources (nothing when ``dry_run``)."""
    if dry_run:
        return lambda events: None

    def publish(events: list[hevent.HealthEvent]) -> None:
        if not events:
            return
        from shared.health import resource
        from shared.kube import client

        with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
            resource.publish(lazy(), hevent.unique(events), now=clock.WALL.now)

    return publish


def node_ready_check(cluster: Any) -> Callable[[str], bool]:
    """Asks the cluster whether a Node is Ready (a client per call: polls are minutes apart)."""

    def check(node: str) -> bool:
        from shared.kube import client

        with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
            return csp.node_ready(lazy(), node)

    return check


Once = Callable[[list[Target], memory.Memory, datetime], list[hevent.HealthEvent]]
"""One poll over the targets: the events that changed since the memory's last save."""


def _csp_reader(
    *, url: str | None, node: str | None, ready_timeout: str | None, cluster: Any
) -> tuple[list[Target], Once]:
    """``monitor csp``: the one node and a poll of its maintenance endpoint (flags checked here)."""
    from shared.health import settings

    if not url:
        raise errors.InvalidInput("--url is required", where="--url")
    if not node:
        raise errors.InvalidInput("--node is required with --url", where="--node")
    endpoint, name = url, node
    wait = csp.READY_TIMEOUT
    if ready_timeout is not None:
        try:
            wait = timedelta(0) if ready_timeout.strip() == "0" else settings.parse_duration(ready_timeout)
        except errors.InvalidInput as exc:
            raise errors.InvalidInput(exc.message, where="--node-ready-timeout") from None
    ready = node_ready_check(cluster) if wait.total_seconds() > 0 else None

    def read_csp(_found: list[Target], mem: memory.Memory, now: datetime) -> list[hevent.HealthEvent]:
        return csp.once(endpoint, name, mem, now, ready=ready, ready_timeout=wait)

    return [Target(node, Path(url))], read_csp


def run(
    kind: str,
    *,
    node: str | None,
    path: Path | None,
    node_root: Path | None,
    state: Path | None,
    interval: str | None,
    duration: str | None,
    dry_run: bool,
    cluster: Any,
    emit: Callable[[list[hevent.HealthEvent]], None],
    url: str | None = None,
    ready_timeout: str | None = None,
) -> list[hevent.HealthEvent]:
    """``nvsentinel monitor dcgm|nic|csp``: poll, hand each batch to ``emit`` and publish it; all events.

    ``ready_timeout`` (csp): how long a healthy event waits for the Node to be Ready; "0" sends it
    without asking the cluster."""
    from shared.health import settings

    once: Once
    if kind == "csp":
        found, once = _csp_reader(url=url, node=node, ready_timeout=ready_timeout, cluster=cluster)
    elif kind == "dcgm":
        found = targets(node=node, path=path, node_root=node_root, relative=DCGM_FILE, flag="--file")
        once = dcgm_once
    else:
        found = targets(node=node, path=path, node_root=node_root, relative="sys", flag="--sysfs")
        once = nic_once
    every = None if interval is None else settings.parse_duration(interval).total_seconds()
    bound = None if duration is None else settings.parse_duration(duration).total_seconds()
    if bound is not None and every is None:
        raise errors.InvalidInput("--for needs --interval", where="--for")
    mem = memory.Memory(state)
    publish = publisher(cluster, dry_run)
    seen: list[hevent.HealthEvent] = []

    def sink(events: list[hevent.HealthEvent]) -> None:
        publish(events)
        if not dry_run:  # a dry run must not make a later real run think these were published
            mem.save()
        seen.extend(events)
        emit(events)

    poll(lambda now: once(found, mem, now), interval=every, duration=bound, sink=sink)
    return seen
