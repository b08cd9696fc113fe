"""Flags shared by the cluster-connected commands of ``nvcrectl`` (kubectl's habits)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Kubeconfig = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig", help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).", show_default=False
    ),
]
Context = Annotated[str | None, typer.Option("--context", help="Kubeconfig context.", show_default=False)]
Namespace = Annotated[str, typer.Option("--namespace", "-n", help="Namespace of the Certification.")]
Output = Annotated[str, typer.Option("--output", "-o", help="Format: table, wide, yaml or json.")]
