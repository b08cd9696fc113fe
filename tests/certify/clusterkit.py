"""Helpers for certification tests on the simulated cluster: install, create, drive in virtual time."""

from __future__ import annotations

from typing import Any

from shared import clock
from shared.certify import models, resource, runner
from shared.kube import crds
from shared.sim import SimServer


def certification(
    name: str,
    *,
    thresholds: dict[str, str] | None = None,
    variant: str = "nccl-all-reduce",
    domain: str = "communication",
    **options: Any,
) -> models.Certification:
    return models.Certification.model_validate(
        {
            "metadata": {"name": name},
            "kind": "Certification",
            "spec": {
                "categories": [{"domain": domain, "variant": variant}],
                "thresholds": thresholds,
                "maxBytes": "1G",
                **options,
            },
        }
    )


def create(api: Any, cert: models.Certification, namespace: str = "default") -> None:
    crds.install(api, resource.RESOURCE)
    resource.create(api, cert, namespace)


def drive(
    sim: SimServer,
    api: Any,
    name: str,
    *,
    namespace: str = "default",
    strategy: str | None = None,
    steps: int = 200,
    seconds: float = 20.0,
) -> models.Certification:
    """Step the runner, letting the cluster run ``seconds`` of virtual time between steps, to the end."""
    ticker = clock.for_api_client(api)
    for _ in range(steps):
        progress = runner.step(api, namespace=namespace, name=name, clock=ticker, strategy=strategy)
        if progress.done:
            break
        sim.advance(seconds)
        ticker.refresh()  # the cluster's clock moved: read it now, not a quarter of a real second later
    cert, _ = resource.get(api, namespace, name)
    return cert
