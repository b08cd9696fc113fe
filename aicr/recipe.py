"""``aicr recipe``: resolve a version-pinned recipe for a target environment."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aicr import _options as opt
from shared.output import Format

FORMATS = (Format.YAML, Format.JSON, Format.TABLE)


def recipe(
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
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write to this file (atomic) instead of stdout.", show_default=False),
    ] = None,
    fmt: Annotated[str | None, opt.format_option(*FORMATS, note="Default: yaml; table with --explain.")] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain", help="Print which overlay set each field (to stdout; the recipe still goes to -o when given)."
        ),
    ] = False,
) -> None:
    """Resolve a recipe: every component pinned, ordered, with its health asserts."""
    from shared import output as out
    from shared.recipe import service as recipe_service

    default = "table" if explain else "yaml"
    chosen = out.parse_format(fmt or default, allowed=FORMATS, flag="--format")
    text, explanation = recipe_service.recipe_text(
        fmt=chosen,
        explain=explain,
        service=service,
        accelerator=accelerator,
        intent=intent,
        os=os,
        platform=platform,
        nodes=nodes,
        criteria_file=criteria,
        snapshot_file=snapshot,
        catalog_dir=catalog,
        data_dir=data,
        kubeconfig=kubeconfig,
        context=context,
    )
    if explanation is None or output is not None:
        out.write_data(text, destination=output)
    if explanation is not None:
        out.write_data(explanation)


def register(app: typer.Typer) -> None:
    app.command("recipe")(recipe)
