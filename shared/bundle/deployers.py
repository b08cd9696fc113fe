"""The one table from deployer name to the module that renders it.

Modules are imported only when chosen, so ``aicr bundle --help`` and a bundle for one deployer never
load the others (or jinja2 before it is needed). Every module exposes
``render(plan, out_dir) -> BundleResult``: it writes its own files (README included) below
``out_dir``; the common ones (recipe copy, checksums) are written by ``service``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from shared import errors

if TYPE_CHECKING:
    from shared.bundle.plan import BundlePlan
    from shared.bundle.result import BundleResult


class Deployer(StrEnum):
    HELM = "helm"
    ARGOCD = "argocd"
    ARGOCD_HELM = "argocd-helm"
    FLUX = "flux"
    HELMFILE = "helmfile"


DEPLOYERS: dict[Deployer, str] = {
    Deployer.HELM: "shared.bundle.helm.deployer",
    Deployer.ARGOCD: "shared.bundle.argocd.deployer",
    Deployer.ARGOCD_HELM: "shared.bundle.argocd_helm.deployer",
    Deployer.FLUX: "shared.bundle.flux.deployer",
    Deployer.HELMFILE: "shared.bundle.helmfile.deployer",
}

Render = Callable[["BundlePlan", Path], "BundleResult"]


def parse(name: str) -> Deployer:
    """A deployer from its (case-insensitive) name; InvalidInput listing the allowed ones."""
    try:
        return Deployer(name.lower())
    except ValueError:
        allowed = ", ".join(d.value for d in Deployer)
        raise errors.InvalidInput(
            f"invalid deployer {name!r}: allowed values are {allowed}", where="--deployer"
        ) from None


def renderer(deployer: Deployer) -> Render:
    module = importlib.import_module(DEPLOYERS[deployer])
    render: Render = module.render
    return render
