"""``nvcrectl setup check``: what the cluster runs for certification, and which categories can run."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer

from nvcre import _options as opt
from shared import output as out


def _text(report: Any, *, wide: bool) -> str:
    parts = [f"Platform: {report.platform} ({report.gpu}), {report.gpu_nodes} GPU node(s)\n\n"]
    parts.append(
        out.render_table(
            ["component", "installed", "detail"],
            [[c.name, "yes" if c.installed else "no", c.detail] for c in report.components],
        )
    )
    headers = ["category", "ready", "backend", "message"] + (["needs"] if wide else [])
    rows = [
        [c.category, "yes" if c.ready else "no", c.backend or "-", c.message] + ([c.needs] if wide else [])
        for c in report.categories
    ]
    parts += ["\n", out.render_table(headers, rows)]
    return "".join(parts)


def check(
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            "-c",
            help="A category to check (domain/variant), repeatable; exit 1 unless every one can run. "
            "Default: every catalog category, reported only.",
            show_default=False,
        ),
    ] = None,
    fmt: opt.Output = "table",
    kubeconfig: opt.Kubeconfig = None,
    context: opt.Context = None,
) -> int:
    """Which operators are installed (Trainer, JobSet, MPI Operator, GPU Operator, DCGM, ComputeDomain)
    and what each certification category needs; exit 1 when a category asked for cannot run.

    Examples:

      nvcrectl setup check

      nvcrectl setup check -c communication/nccl-all-reduce -c diagnostics/dcgm-l2
    """
    from shared.certify import setup
    from shared.kube.client import LazyClient

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    with LazyClient(kubeconfig=kubeconfig, context=context) as api:
        report = setup.check(api(), categories=category or None)
    data = {
        "platform": report.platform,
        "gpu": report.gpu,
        "gpuNodes": report.gpu_nodes,
        "components": [asdict(c) for c in report.components],
        "categories": [asdict(c) for c in report.categories],
        "ready": report.ready,
    }
    out.emit(data, chosen, table=_text(report, wide=False), wide=_text(report, wide=True))
    return 0 if category is None or report.ready else 1


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="What the cluster must run for certification.", no_args_is_help=True)
    group.command("check")(check)
    app.add_typer(group, name="setup")
