"""Flags shared by nvsentinel's commands, and the one way they print data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

Kubeconfig = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        "-k",
        help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).",
        show_default=False,
    ),
]
Context = Annotated[str | None, typer.Option("--context", help="Kubeconfig context.", show_default=False)]
Namespace = Annotated[str, typer.Option("--namespace", "-n", help="Namespace of the breaker ConfigMap and Lease.")]
Output = Annotated[str, typer.Option("--output", "-o", help="table, wide, yaml or json.")]
Values = Annotated[
    Path | None,
    typer.Option(
        "--values", "-f", help="values.yaml (NVSentinel's layout) over the embedded defaults.", show_default=False
    ),
]


def cluster(kubeconfig: Path | None, context: str | None, namespace: str = "nvsentinel") -> Any:
    from shared.health.service import Cluster

    return Cluster(kubeconfig=kubeconfig, context=context, namespace=namespace)


def emit(
    data: Any,
    fmt: str,
    *,
    headers: Sequence[str] = (),
    rows: Sequence[Sequence[Any]] = (),
    wide_headers: Sequence[str] = (),
    wide_rows: Sequence[Sequence[Any]] = (),
) -> None:
    """Print ``data`` as json/yaml, or the given rows as a (wide) table."""
    from shared import output as out

    chosen = out.parse_format(fmt, allowed=list(out.Format), flag="--output")
    if chosen is out.Format.JSON:
        out.write_data(out.to_json(data))
    elif chosen is out.Format.YAML:
        out.write_data(out.to_yaml(data))
    elif chosen is out.Format.WIDE and wide_headers:
        out.print_table(wide_headers, wide_rows)
    else:
        out.print_table(headers, rows)
