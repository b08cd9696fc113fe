"""``nvcrectl crds install``: install or upgrade the Certification CRD."""

from __future__ import annotations

import typer

from nvcre import _options as opt
from shared import output as out


def install(kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Create or update the CRDs and wait until they are Established."""
    from shared.certify import service
    from shared.kube.client import LazyClient

    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        names = service.install_crds(api)
    out.acted("customresourcedefinition", names, "installed")


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Custom resource definitions.", no_args_is_help=True)
    group.command("install")(install)
    app.add_typer(group, name="crds")
