"""nvsentinel's flags: the options every program shares (shared/cli_options.py), and its own.

Its own: ``--values/-f`` (a values file in NVSentinel's layout), whose namespace ``-n`` names, and
``cluster``, the connection record the health commands take.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shared import cli_options
from shared.output import Format

Kubeconfig = cli_options.Kubeconfig
Context = cli_options.Context
Namespace = Annotated[str, cli_options.namespace("the breaker ConfigMap and Lease")]
FORMATS = tuple(Format)
"""Every command offers every format; ``wide`` adds columns where a table has more."""
Output = Annotated[str, cli_options.output_format(*FORMATS)]
MonitorOutput = Annotated[
    str, cli_options.output_format(*FORMATS, note="json prints one event per line (NDJSON) as it is found.")
]
Values = Annotated[
    Path | None,
    typer.Option(
        "--values", "-f", help="values.yaml (NVSentinel's layout) over the embedded defaults.", show_default=False
    ),
]


def cluster(kubeconfig: Path | None, context: str | None, namespace: str = "nvsentinel") -> Any:
    from shared.health.service import Cluster

    return Cluster(kubeconfig=kubeconfig, context=context, namespace=namespace)
