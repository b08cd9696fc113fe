"""The nvsentinel commands that read the values file or span health and the lifecycle.

Each loads the whole values file (``config.load``: a mistake in any section is invalid input,
whichever command reads it) and hands health's part to ``shared.health.service``; ``run`` and
``install_crds`` compose both packages. Plain arguments in, data out; nothing here prints.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from shared import clock
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
    """Run the controllers until ``stop`` (or Ctrl-C): fault quarantine on this thread, the lifecycle
    (when enabled) on its own; ``install=False`` trusts the CRD and namespace exist (the chart's
    pods: their role may then neither write CRDs nor create namespaces)."""
    from shared.health import controller, notify, resource
    from shared.kube import client
    from shared.lifecycle import controller as lifecycle

    cfg = config.load(values_file, enforce=enforce)
    notify.resolve_urls(cfg.health.settings.nvsentinel.notifications)  # an unset URL variable: exit 2 first
    stop = stop or threading.Event()
    with client.LazyClient(kubeconfig=cluster.kubeconfig, context=cluster.context) as lazy:
        api = lazy()
        if install:
            resource.install(api)
            controller.ensure_namespace(api, cluster.namespace)
        ctl = controller.Controller(api, cfg.health, namespace=cluster.namespace, clk=clock.for_api_client(api))
        lifecycle_thread = lifecycle.start(
            api,
            cfg.lifecycle,
            namespace=cluster.namespace,
            clk=clock.for_api_client(api),
            label_prefix=cfg.health.fq.labelPrefix,
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
