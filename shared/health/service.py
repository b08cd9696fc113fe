"""The health operations behind nvsentinel's commands, each one call from a thin CLI module.

Each takes plain arguments (paths, names, flags) or a loaded ``config.Config``, opens the cluster
through ``shared.kube.client.LazyClient`` when it needs it, and returns data the command prints.
Nothing here prints. Commands that read the values file go through ``shared.operate.service``,
which loads the whole file (its ``lifecycle-manager`` section included) and calls these with
health's part; ``nvsentinel run`` and ``crds install``, which span health and the lifecycle, are
there too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared import clock, durations, errors, files, grammars, nodes
from shared.health import event as hevent
from shared.kube import listing

if TYPE_CHECKING:
    from shared.health import config
    from shared.kube.client import LazyClient


@dataclass(frozen=True)
class Cluster:
    kubeconfig: Path | None = None
    context: str | None = None
    namespace: str = "nvsentinel"


def _client(cluster: Cluster) -> LazyClient:
    from shared.kube import client

    return client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context)


def read_events(source: str) -> list[hevent.HealthEvent]:
    text = files.read_stdin(where="-") if source == "-" else files.read_text(Path(source))
    return hevent.parse_text(text, source=source)


def publish(cluster: Cluster, source: str) -> dict[str, Any]:
    from shared.health import resource

    events = hevent.unique(read_events(source))
    with _client(cluster) as lazy:
        api = lazy()
        return resource.publish(api, events, now=clock.for_api_client(api).now).document()


def list_events(
    cluster: Cluster,
    *,
    node: str | None = None,
    check: str | None = None,
    agent: str | None = None,
    fatal: bool | None = None,
    phase: str | None = None,
    since: str | None = None,
    after: str | None = None,
    skipped: list[listing.Skipped] | None = None,
) -> list[dict[str, Any]]:
    """The stored events every given filter selects (``shared.health.eventfilter``), oldest first.

    A bad filter value is InvalidInput before the cluster is asked anything. ``skipped`` receives
    the malformed events left out (``resource.list_events``)."""
    from shared.health import eventfilter, resource

    def chosen(now: Callable[[], datetime]) -> eventfilter.Filter:
        return eventfilter.Filter.of(
            node=node, check=check, agent=agent, fatal=fatal, phase=phase, since=since, after=after, now=now
        )

    chosen(clock.WALL.now)  # a bad flag is exit 2 before connecting
    with _client(cluster) as lazy:
        api = lazy()
        wanted = chosen(clock.for_api_client(api).now if since is not None else clock.WALL.now)
        stored = [
            s for s in resource.list_events(api, selector=wanted.selector(), skipped=skipped) if wanted.matches(s)
        ]
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


def prune(cluster: Cluster, older_than: str, dry_run: bool) -> list[str]:
    """Delete HealthEvents older than ``older_than`` (e.g. 720h); the names deleted (or, dry, to delete)."""
    from shared.health import garbage

    age = timedelta(seconds=durations.parse(older_than, where="--older-than"))
    with _client(cluster) as lazy:
        api = lazy()
        return garbage.prune(api, older_than=age, now=clock.for_api_client(api).now, dry_run=dry_run)


def replay(cfg: config.Config, events_file: str, nodes_file: Path | None) -> dict[str, Any]:
    from shared.health import replay as hreplay

    node_objects = None
    if nodes_file is not None:
        data = files.load_json(nodes_file)
        node_objects = data.get("items", []) if isinstance(data, dict) else data
        if not isinstance(node_objects, list):
            raise errors.InvalidInput("expected a node list (kubectl get nodes -o json)", where=str(nodes_file))
        for i, obj in enumerate(node_objects):
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if not (
                isinstance(meta, dict)
                and isinstance(meta.get("name"), str)
                and isinstance(meta.get("labels") or {}, dict)
                and isinstance(obj.get("spec") or {}, dict)
            ):
                raise errors.InvalidInput(
                    f"items[{i}]: not a Node (metadata.name, labels, spec)", where=str(nodes_file)
                )
    return hreplay.run(cfg, read_events(events_file), node_objects=node_objects).document()


def breaker_status(cluster: Cluster, cfg: config.Config, reset: bool = False) -> dict[str, Any]:
    from shared.health import breaker

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


def node_rows(items: list[nodes.Node]) -> list[dict[str, Any]]:
    """Per node: what quarantine holds it for, cordoned, failing conditions, what a person must do."""
    return [node_row(node) for node in items]


def node_row(node: nodes.Node) -> dict[str, Any]:
    """One row of ``nvsentinel nodes``: the quarantine state a node's own object holds."""
    from shared.health import quarantine

    held = quarantine.causes(node)
    failing = [
        c["type"]
        for c in (node.get("status") or {}).get("conditions") or []
        if c.get("status") == "True" and c.get("type") not in ("Ready",)
    ]
    return {
        "node": node["metadata"]["name"],
        "quarantined": bool(held),
        "cordoned": nodes.is_cordoned(node),
        "causes": sorted({rs for c in held.values() for rs in c.get("ruleSets", [])}),
        "conditions": failing,
        "state": ((node["metadata"].get("labels") or {}).get(quarantine.STATE_LABEL, "")),
        "action": _action_required(node),
    }


def watch_node_table(cluster: Cluster, *, stop: threading.Event | None = None) -> Iterator[list[dict[str, Any]]]:
    """The node table once the nodes are listed, then again after each change to a node (rows
    by name; a deleted node leaves the table). Runs until ``stop`` or the caller stops iterating."""
    from shared.kube import follow, rest

    rows: dict[str, dict[str, Any]] = {}
    synced = False
    with _client(cluster) as lazy:
        for kind, node in follow.follow(lazy(), rest.core_path("nodes"), stop=stop):
            if kind == follow.SYNCED:
                synced = True
            elif kind == follow.DELETED:
                rows.pop(node["metadata"]["name"], None)
            else:
                rows[node["metadata"]["name"]] = node_row(node)
            if synced:
                yield [rows[name] for name in sorted(rows)]


def _action_required(node: nodes.Node) -> str:
    """What a person must do for the node (``quarantine.ANN_ACTION``'s action), empty when nothing."""
    import json

    from shared.health import quarantine

    text = ((node.get("metadata") or {}).get("annotations") or {}).get(quarantine.ANN_ACTION) or ""
    try:
        found = json.loads(text) if text else {}
    except ValueError:
        return "unreadable"
    return str(found.get("action", "")) if isinstance(found, dict) else ""


def release_node(cluster: Cluster, name: str, cfg: config.Config) -> bool:
    from shared.health import kevents, quarantine
    from shared.kube import events

    problem = grammars.node_name(name)
    if problem is not None:  # the name goes into an API path: ../x would address another resource
        raise errors.InvalidInput(problem, where="NODE")
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
