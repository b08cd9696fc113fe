"""The operations behind nvsentinel's commands, each one call from a thin CLI module.

Each takes plain arguments (paths, names, flags), opens what it needs (values, the cluster through
``shared.kube.client.LazyClient``), and returns data the command prints. Nothing here prints.
"""

from __future__ import annotations

import json
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from shared import clock, errors, nodes
from shared.health import event as hevent


@dataclass(frozen=True)
class Cluster:
    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str = "nvsentinel"


def _client(cluster: Cluster) -> Any:
    from shared.kube import client

    return client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context)


def read_events(source: str) -> list[hevent.HealthEvent]:
    text = sys.stdin.read() if source == "-" else _read(Path(source))
    return hevent.parse_text(text, source=source)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise errors.NotFound("file not found", where=str(path)) from None


def install_crds(cluster: Cluster) -> list[str]:
    from shared.health import resource
    from shared.lifecycle import resource as validation

    with _client(cluster) as lazy:
        resource.install(lazy())
        validation.install(lazy())
    return [resource.RESOURCE.name, validation.RESOURCE.name]


def publish(cluster: Cluster, source: str) -> dict[str, Any]:
    from shared.health import resource

    events = hevent.unique(read_events(source))
    with _client(cluster) as lazy:
        api = lazy()
        return resource.publish(api, events, now=clock.for_api_client(api).now).document()


def list_events(cluster: Cluster, node: str | None) -> list[dict[str, Any]]:
    from shared.health import resource

    with _client(cluster) as lazy:
        stored = resource.list_events(lazy(), node=node)
    return [
        {
            "name": s.name,
            "node": s.event.nodeName,
            "agent": s.event.agent,
            "checkName": s.event.checkName,
            "isFatal": s.event.isFatal,
            "isHealthy": s.event.isHealthy,
            "recommendedAction": s.event.recommendedAction.name,
            "errorCode": ",".join(s.event.errorCode),
            "phase": s.phase or "",
            "generatedTimestamp": s.event.wire().get("generatedTimestamp", ""),
        }
        for s in stored
    ]


def prune(cluster: Cluster, older_than: str | None, values_file: Path | None, dry_run: bool) -> list[str]:
    from shared.health import config, resource, values

    age = values.parse_duration(older_than or config.load(values_file).values.nvsentinel.retention)
    with _client(cluster) as lazy:
        api = lazy()
        return resource.prune(api, older_than=age, now=clock.for_api_client(api).now, dry_run=dry_run)


def check_rules(path: Path) -> list[str]:
    from shared.health import rulecheck

    return [p.line() for p in rulecheck.check(path)]


def replay(values_file: Path, events_file: str, nodes_file: Path | None) -> dict[str, Any]:
    from shared.health import config
    from shared.health import replay as hreplay

    cfg = config.load(values_file)
    node_objects = None
    if nodes_file is not None:
        data = json.loads(_read(nodes_file))
        node_objects = data.get("items", []) if isinstance(data, dict) else data
    return hreplay.run(cfg, read_events(events_file), node_objects=node_objects).document()


def breaker_status(cluster: Cluster, values_file: Path | None, reset: bool = False) -> dict[str, Any]:
    from shared.health import breaker, config

    cfg = config.load(values_file)
    with _client(cluster) as lazy:
        api = lazy()
        b = breaker.ConfigMapBreaker(
            api,
            namespace=cluster.namespace,
            settings=cfg.fq.circuitBreaker,
            gpu_node_label=cfg.fq.gpuNodeLabel,
            now=clock.for_api_client(api).now,
        )
        return (b.reset() if reset else b.status()).document()


def node_table(cluster: Cluster) -> list[dict[str, Any]]:
    from shared.health import quarantine

    with _client(cluster) as lazy:
        items = nodes.list_nodes(lazy())
    rows = []
    for node in items:
        held = quarantine.causes(node)
        failing = [
            c["type"]
            for c in (node.get("status") or {}).get("conditions") or []
            if c.get("status") == "True" and c.get("type") not in ("Ready",)
        ]
        rows.append(
            {
                "node": node["metadata"]["name"],
                "quarantined": bool(held),
                "cordoned": nodes.is_cordoned(node),
                "causes": sorted({rs for c in held.values() for rs in c.get("ruleSets", [])}),
                "conditions": failing,
                "state": ((node["metadata"].get("labels") or {}).get(quarantine.STATE_LABEL, "")),
            }
        )
    return rows


def release_node(cluster: Cluster, name: str, values_file: Path | None) -> bool:
    from shared.health import config, kevents, quarantine
    from shared.kube import events

    cfg = config.load(values_file)
    with _client(cluster) as lazy:
        api = lazy()
        ticker = clock.for_api_client(api)
        now = ticker.now()
        box = [False]

        def mutate(node: nodes.Node) -> bool:
            box[0] = quarantine.release(node, label_prefix=cfg.fq.labelPrefix, stamp=hevent.format_time(now))
            return box[0]

        written = nodes.update(api, name, mutate)
        if box[0]:
            recorder = events.Recorder(api, component=kevents.QUARANTINE, now=ticker.now)
            recorder.normal(written, kevents.NODE_UNQUARANTINED, "released by hand (nvsentinel nodes release)")
    return box[0]


def run(
    cluster: Cluster,
    values_file: Path | None,
    enforce: bool | None,
    stop: threading.Event | None = None,
    install: bool = True,
) -> None:
    """Run the controllers until ``stop`` (or Ctrl-C); ``install=False`` trusts the CRD and namespace exist
    (the chart's pods: their role may then neither write CRDs nor create namespaces)."""
    from shared.health import config, controller, resource

    cfg = config.load(values_file, enforce=enforce)
    stop = stop or threading.Event()
    with _client(cluster) as lazy:
        api = lazy()
        if install:
            resource.install(api)
            controller.ensure_namespace(api, cluster.namespace)
        ctl = controller.Controller(api, cfg, namespace=cluster.namespace, clk=clock.for_api_client(api))
        from shared.lifecycle import controller as lifecycle

        lifecycle_thread = lifecycle.start(
            api,
            cfg.values.lifecycle_manager,
            namespace=cluster.namespace,
            clk=clock.for_api_client(api),
            label_prefix=cfg.fq.labelPrefix,
            source=cfg.source,
            stop=stop,
            install=install,
        )
        try:
            ctl.run(stop)
        except KeyboardInterrupt:
            stop.set()
        if lifecycle_thread is not None:
            lifecycle_thread.join(timeout=5)


def monitor_xid(
    *,
    file: str | None,
    node: str | None,
    node_root: Path | None,
    boot_time: str | None,
    dry_run: bool,
    cluster: Cluster,
) -> list[hevent.HealthEvent]:
    """Xid events of a kernel log (or every DIR/<node>/kern.log), published unless ``dry_run``."""
    from shared.health import xid

    boot = datetime.fromisoformat(boot_time.replace("Z", "+00:00")) if boot_time else None
    now = clock.WALL.now()
    sources: list[tuple[str, str]] = []
    if node_root is not None:
        for log in sorted(node_root.glob("*/kern.log")):
            sources.append((log.parent.name, _read(log)))
    else:
        if not node:
            raise errors.InvalidInput("--node is required with --file", where="--node")
        sources.append((node, sys.stdin.read() if file in (None, "-") else _read(Path(str(file)))))
    events = [e for name, text in sources for e in xid.events_from_text(text, node=name, now=now, boot_time=boot)]
    if not dry_run:
        from shared.health import resource

        with _client(cluster) as lazy:
            resource.publish(lazy(), hevent.unique(events), now=clock.WALL.now)
    return events
