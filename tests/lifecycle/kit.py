"""Helpers for lifecycle tests on the simulated cluster: a controller from values, driven in virtual time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared import clock, nodes
from shared.certify import service as cservice
from shared.health import config, controller, resource
from shared.kube import informer
from shared.lifecycle import controller as lifecycle
from shared.lifecycle import models, sessions
from shared.lifecycle import resource as vresource
from shared.operate import config as whole

FAST = """
lifecycle-manager:
  config:
    defaultTests: ["dcgm-diag-test"]
"""


def make(
    api: Any,
    tmp_path: Path,
    extra: str = FAST,
    *,
    name: str = "values.yaml",
    certification_crds: bool = True,
    node_cache: informer.Informer | None = None,
) -> lifecycle.Controller:
    """A lifecycle controller over ``extra`` values; ``certification_crds=False`` leaves out
    ``nvcrectl crds install``, as on a cluster where nvcrectl was never set up."""
    path = tmp_path / name
    path.write_text(extra)
    cfg = whole.load(path, enforce=True)
    resource.install(api)
    vresource.install(api)
    if certification_crds:
        cservice.install_crds(lambda: api)
    controller.ensure_namespace(api, "nvsentinel")
    return lifecycle.Controller(
        api,
        cfg.lifecycle,
        namespace="nvsentinel",
        clk=clock.for_api_client(api, max_age=0),
        label_prefix=cfg.health.fq.labelPrefix,
        source=str(path),
        node_cache=node_cache,
    )


def drive(
    sim: Any,
    ctl: lifecycle.Controller,
    request: str,
    *,
    seconds: float = 15.0,
    passes: int = 200,
    until: tuple[models.Phase, ...] = tuple(models.TERMINAL),
) -> models.ValidationRequest:
    """Pass and advance virtual time until the request reaches one of ``until``."""
    for _ in range(passes):
        ctl.reconcile_once()
        vr, _ = vresource.get(ctl.api, request)
        if vr.status.phase in until:
            ctl.reconcile_once()  # settle what the verdict means for the nodes
            return vresource.get(ctl.api, request)[0]
        sim.advance(seconds)
    raise AssertionError(f"{request} did not reach {until}: {vr.status.message}")


def state(api: Any, node: str) -> tuple[str | None, bool, str | None, list[str]]:
    """(validation-state label, cordoned, cordon owner, session request names) of a node."""
    n = nodes.get(api, node)
    entries, _ = sessions.read(n)
    return (
        ((n.get("metadata") or {}).get("labels") or {}).get(sessions.STATE_LABEL),
        nodes.is_cordoned(n),
        nodes.cordon_owner(n),
        [e.name for e in entries],
    )


def fresh(ctl: lifecycle.Controller) -> lifecycle.Controller:
    """A new replica with the same configuration and no memory: what a restarted process builds."""
    return lifecycle.Controller(
        ctl.api,
        ctl.lm,
        namespace=ctl.namespace,
        clk=clock.for_api_client(ctl.api, max_age=0),
        label_prefix=ctl.label_prefix,
    )


def health(api: Any, tmp_path: Path, name: str = "values.yaml") -> controller.Controller:
    """The fault-quarantine controller (enforcing) on the same values file as ``make``."""
    return controller.Controller(
        api,
        config.load(tmp_path / name, enforce=True),
        namespace="nvsentinel",
        clk=clock.for_api_client(api, max_age=0),
    )
