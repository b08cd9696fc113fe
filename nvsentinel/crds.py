"""``nvsentinel crds install``: the HealthEvent CustomResourceDefinition."""

from __future__ import annotations

import typer

from nvsentinel import _options as opt
from shared import output as out

app = typer.Typer(help="CustomResourceDefinitions nvsentinel serves.", no_args_is_help=True)


@app.command("install")
def install(kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Create or update the HealthEvent CRD and wait until it is Established."""
    from shared.operate import service

    names = service.install_crds(opt.cluster(kubeconfig, context))
    out.acted("customresourcedefinition", names, "established", to_stderr=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="crds")
