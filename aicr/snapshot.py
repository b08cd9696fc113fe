"""``aicr snapshot``: measure the live cluster into a Snapshot document."""

from __future__ import annotations

from typing import Annotated

import typer

from aicr import _options as opt
from shared.output import Format

FORMATS = (Format.YAML, Format.JSON)


def snapshot(
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="File or cm://NAMESPACE/NAME (default: stdout).", show_default=False),
    ] = None,
    fmt: Annotated[str, opt.format_option(*FORMATS)] = "yaml",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> None:
    """Measure the cluster: versions, node pools, GPUs, drivers, Helm releases, images, CRDs, labels."""
    from shared import output as out
    from shared import refs
    from shared.snapshot import service

    chosen = out.parse_format(fmt, allowed=FORMATS, flag="--format")
    if output is not None and output != "-":
        refs.check_writable(output)
    with service.ClusterAccess(kubeconfig=kubeconfig, context=context) as access:
        service.write_snapshot(service.take(access), destination=output, fmt=chosen, access=access)


def register(app: typer.Typer) -> None:
    app.command("snapshot")(snapshot)
