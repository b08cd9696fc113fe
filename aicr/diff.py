"""``aicr diff``: drift between a baseline (snapshot or recipe) and a target (default: the live cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aicr import _options as opt
from shared.output import Format

FORMATS = (Format.YAML, Format.JSON, Format.TABLE)


def diff(
    baseline: Annotated[str, typer.Option("--baseline", "-b", help="Snapshot or recipe: file or cm://NS/NAME.")],
    target: Annotated[
        str | None,
        typer.Option("--target", help="Snapshot file or cm:// (default: the live cluster).", show_default=False),
    ] = None,
    fail_on_drift: Annotated[bool, typer.Option("--fail-on-drift", help="Exit 1 when any change is counted.")] = False,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            help="Glob over dotted paths; matching changes are listed as ignored (repeatable).",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[str | None, opt.format_option(*FORMATS, note="Default: yaml.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file.", show_default=False)
    ] = None,
    data: opt.DataDir = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Field-level changes sorted by path, with the nodes concerned, and a summary."""
    from shared import output as out
    from shared.snapshot import report, service

    chosen = out.parse_format(fmt or "yaml", allowed=FORMATS, flag="--format")
    out.check_destination(output)
    with service.ClusterAccess(kubeconfig=kubeconfig, context=context) as access:
        drift = service.drift(baseline=baseline, target=target, ignore=list(ignore or []), access=access, data_dir=data)
    out.write_data(report.drift_text(drift, chosen), destination=output)
    return 1 if fail_on_drift and drift.drifted else 0


def register(app: typer.Typer) -> None:
    app.command("diff")(diff)
