"""``aicr validate``: hold the live cluster to its recipe, phase by phase (deployment, performance, conformance)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aicr import _options as opt
from shared.output import Format

FORMATS = (Format.TABLE, Format.JSON)


def validate(
    recipe: Annotated[str, typer.Option("--recipe", "-r", help="Recipe file or cm://NAMESPACE/NAME.")],
    snapshot: Annotated[
        str | None,
        typer.Option(
            "--snapshot", "-s", help="Snapshot file or cm:// (default: measure the live cluster).", show_default=False
        ),
    ] = None,
    phase: Annotated[
        list[str] | None,
        typer.Option(
            "--phase",
            help="deployment, performance, conformance or all (repeatable; default: deployment).",
            show_default=False,
        ),
    ] = None,
    no_cluster: Annotated[
        bool, typer.Option("--no-cluster", help="Print what each phase would check; read nothing from the cluster.")
    ] = False,
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="Where the performance phase creates its Certification.")
    ] = "default",
    fmt: Annotated[str | None, opt.format_option(*FORMATS, note="json is CTRF; default: table.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file.", show_default=False)
    ] = None,
    html: Annotated[Path | None, opt.html_report("the report")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Deployment: re-check until healthy or the timeout.")] = False,
    timeout: Annotated[
        str | None,
        typer.Option(
            "--timeout",
            help="With --wait: how long, e.g. 10m (default: the longest component timeout).",
            show_default=False,
        ),
    ] = None,
    data: opt.DataDir = None,
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Check the driver the recipe pins and every constraint (node by node, naming the nodes), then
    every component's health asserts; --phase performance|conformance|all runs the recipe's
    validation block too. Exit 1 when any check fails."""
    from shared import output as out
    from shared.validate import phases, report, run, service

    chosen = out.parse_format(fmt or "table", allowed=FORMATS, flag="--format")
    wanted = phases.parse(list(phase or []))
    seconds = run.parse_duration(timeout) if timeout else None
    out.check_destination(output)
    out.check_destination(html)
    with service.ClusterAccess(kubeconfig=kubeconfig, context=context) as access:
        result = service.validate(
            recipe=recipe,
            snapshot=snapshot,
            wait=wait,
            timeout=seconds,
            access=access,
            data_dir=data,
            phases=wanted,
            no_cluster=no_cluster,
            namespace=namespace,
        )
    document = report.ctrf(result)
    if html is not None:
        service.html_report(html, document, recipe=recipe)
    out.emit(document, chosen, table=report.table(result), destination=output)
    if result.timed_out:
        out.error_line(f"error: timed out after {result.seconds:.0f}s with {len(result.failures)} check(s) failing")
        return 5
    return 0 if result.passed else 1


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
