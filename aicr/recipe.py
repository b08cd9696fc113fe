"""``aicr recipe``: resolve a version-pinned recipe for a target environment."""

from __future__ import annotations

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
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Write to this file (atomic) or to cm://NAMESPACE/NAME (key recipe.yaml, server-side apply) "
            "instead of stdout.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str | None, opt.format_option(*FORMATS, note="Default: yaml; table with --explain and no -o.")
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Print which overlay set each field: to stdout, or with -o to stderr as a table "
            "(the recipe goes to -o).",
        ),
    ] = False,
) -> None:
    """Resolve a recipe: every component pinned, ordered, with its health asserts."""
    from shared import output as out
    from shared.recipe import service as recipe_service

    to_stdout = output is None or output == "-"
    chosen = out.parse_format(fmt or ("table" if explain and to_stdout else "yaml"), allowed=FORMATS, flag="--format")
    if not to_stdout:
        recipe_service.check_destination(str(output), chosen)
    text, explanation = recipe_service.recipe_text(
        fmt=chosen,
        explain=explain,
        explain_fmt=chosen if to_stdout else Format.TABLE,
        **opt.request_fields(locals()),
    )
    if not to_stdout:
        recipe_service.write(text, destination=str(output), fmt=chosen, kubeconfig=kubeconfig, context=context)
        if explanation is not None:
            out.message(explanation.rstrip("\n"))
    else:
        out.write_data(explanation if explanation is not None else text)


def register(app: typer.Typer) -> None:
    app.command("recipe")(recipe)
