"""``aicr query``: read one value from the fully merged recipe (values included)."""

from __future__ import annotations

from typing import Annotated

import typer

from aicr import _options as opt
from shared.output import Format

FORMATS = (Format.YAML, Format.JSON)


def query(
    selector: Annotated[
        str, typer.Option("--selector", help="Dotted path, e.g. components.gpu-operator.values.driver.version.")
    ],
    service: opt.Service = None,
    accelerator: opt.Accelerator = None,
    intent: opt.Intent = None,
    os: opt.Os = None,
    platform: opt.Platform = None,
    nodes: opt.Nodes = None,
    criteria: opt.CriteriaFile = None,
    snapshot: opt.SnapshotFile = None,
    data: opt.DataDir = None,
    catalog: opt.CatalogDir = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
    fmt: Annotated[str, opt.format_option(*FORMATS)] = "yaml",
) -> None:
    """Print a value of the merged recipe: scalars plain, maps and lists as YAML (or JSON)."""
    from shared import output as out
    from shared.recipe import service as recipe_service

    chosen = out.parse_format(fmt, allowed=FORMATS, flag="--format")
    text = recipe_service.query_text(
        selector=selector,
        fmt=chosen,
        **opt.request_fields(locals()),
    )
    out.write_data(text)


def register(app: typer.Typer) -> None:
    app.command("query")(query)
