"""``nvsentinel crds install``: the HealthEvent CustomResourceDefinition."""

from __future__ import annotations

import typer

from nvsentinel import _options as opt

app = typer.Typer(help="CustomResourceDefinitions nvsentinel serves.", no_args_is_help=True)


@app.command("install")
def install(kubeconfig: opt.Kubeconfig = None, context: opt.Context = None) -> None:
    """Create or update the HealthEvent CRD and wait until it is Established."""
    from shared import output as out
    from shared.health import service

    for name in service.install_crds(opt.cluster(kubeconfig, context)):
        out.message(f"customresourcedefinition/{name} established")


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="crds")
