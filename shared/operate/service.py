"""The nvsentinel commands that read the values file or span health and the lifecycle.

Each loads the whole values file (``config.load``: a mistake in any section is invalid input,
whichever command reads it) and hands health's part to ``shared.health.service``; ``run`` and
``install_crds`` compose both packages. Plain arguments in, data out; nothing here prints.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from shared import clock, errors
from shared.health import service as hservice
from shared.operate import config


def install_crds(cluster: hservice.Cluster) -> list[str]:
    """Create or update the HealthEvent and ValidationRequest CRDs; their names."""
    from shared.health import resource
    from shared.kube import client
    from shared.lifecycle import resource as validation

    with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
        resource.install(lazy())
        validation.install(lazy())
    return [resource.RESOURCE.name, validation.RESOURCE.name]


def prune(cluster: hservice.Cluster, older_than: str | None, values_file: Path | None, dry_run: bool) -> list[str]:
    """HealthEvents older than ``older_than`` (default: the values' ``nvsentinel.retention``) deleted."""
    retention = older_than or config.load(values_file).health.settings.nvsentinel.retention
    return hservice.prune(cluster, retention, dry_run)


def check_rules(path: Path) -> list[str]:
    """Every problem in the values file, one line each; empty when it loads and every rule compiles."""
    from shared.health import rulecheck

    return [p.line() for p in rulecheck.check(path, sections=config.STRICT_SECTIONS, schema=config.Settings)]


def replay(values_file: Path, events_file: str, nodes_file: Path | None) -> dict[str, Any]:
    return hservice.replay(config.load(values_file).health, events_file, nodes_file)


def breaker_status(cluster: hservice.Cluster, values_file: Path | None, reset: bool = False) -> dict[str, Any]:
    return hservice.breaker_status(cluster, config.load(values_file).health, reset)


def release_node(cluster: hservice.Cluster, name: str, values_file: Path | None) -> bool:
    return hservice.release_node(cluster, name, config.load(values_file).health)


def run(
    cluster: hservice.Cluster,
    values_file: Path | None,
    enforce: bool | None,
    stop: threading.Event | None = None,
    install: bool = True,
) -> None:
    """Run the controllers until ``stop`` (SIGTERM or Ctrl-C when on the main thread): fault
    quarantine on this thread, the lifecycle (when enabled) on its own; ``install=False`` trusts the
    CRD and namespace exist (the chart's pods: their role may then neither write CRDs nor create
    namespaces). Both let go of their Leases before this returns; an error that ends either one
    (refused credentials) stops the other and is raised here.

    A values file with any problem ``rules check`` finds is refused first (InvalidInput carrying
    the same lines, exit 2): a rule that fails at every evaluation would otherwise run, never match,
    and leave only a counter behind."""
    from shared import stopping
    from shared.health import controller, notify, resource
    from shared.kube import client, informer, rest
    from shared.lifecycle import controller as lifecycle

    if values_file is not None:  # first, so a mistake reads as `rules check` words it; before any request
        problems = check_rules(values_file)
        if problems:
            raise errors.InvalidInput("\nerror: ".join(problems))
    cfg = config.load(values_file, enforce=enforce)
    notify.resolve_urls(cfg.health.settings.nvsentinel.notifications)  # an unset URL variable: exit 2 first
    stop = stop or threading.Event()
    # the node workers, plus the watches (HealthEvents, nodes), the leader loop and the lifecycle beside them
    connections = cfg.health.settings.nvsentinel.workers + 9
    with (
        client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context, connections=connections) as lazy,
        stopping.on_signals(stop),
    ):
        api = lazy()
        if install:
            resource.install(api)
            controller.ensure_namespace(api, cluster.namespace)
        # one node informer for both controllers: their passes read its indexes, not 10,000 nodes
        node_cache = informer.Informer(api, rest.core_path("nodes"))
        ctl = controller.Controller(
            api, cfg.health, namespace=cluster.namespace, clk=clock.for_api_client(api), node_cache=node_cache
        )
        lifecycle_run = lifecycle.start(
            api,
            cfg.lifecycle,
            namespace=cluster.namespace,
            clk=clock.for_api_client(api),
            label_prefix=cfg.health.fq.labelPrefix,
            source=cfg.source,
            stop=stop,
            install=install,
            notify=ctl.notifier.notify,
            node_cache=node_cache,
        )
        node_cache.start(stop)  # its indexes are in: listed once, then watched
        try:
            ctl.run(stop)
        finally:
            stop.set()
            if lifecycle_run is not None:
                lifecycle_run.join(timeout=30)
            node_cache.join(timeout=30)
        if lifecycle_run is not None and lifecycle_run.error is not None:
            raise lifecycle_run.error
