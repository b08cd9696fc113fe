"""Flags shared by ``recipe`` and ``query``: the criteria and where the catalog comes from."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared.recipe.vocabulary import allowed_values


def _help(field: str, text: str) -> str:
    return f"{text} One of: {', '.join(allowed_values(field))}."


Service = Annotated[
    str | None, typer.Option("--service", help=_help("service", "Kubernetes service."), show_default=False)
]
Accelerator = Annotated[
    str | None, typer.Option("--accelerator", "--gpu", help=_help("accelerator", "GPU type."), show_default=False)
]
Intent = Annotated[str | None, typer.Option("--intent", help=_help("intent", "Workload intent."), show_default=False)]
Os = Annotated[str | None, typer.Option("--os", help=_help("os", "Node operating system."), show_default=False)]
Platform = Annotated[
    str | None, typer.Option("--platform", help=_help("platform", "Serving or training platform."), show_default=False)
]
Nodes = Annotated[int | None, typer.Option("--nodes", help="GPU node count (0 = any).", show_default=False)]
CriteriaFile = Annotated[
    Path | None,
    typer.Option("--criteria", "-c", help="RecipeCriteria file (YAML/JSON); flags override it.", show_default=False),
]
SnapshotFile = Annotated[
    str | None,
    typer.Option(
        "--snapshot",
        "-s",
        help="Snapshot file or cm://NAMESPACE/NAME: "
        "detect criteria from it and drop overlays the cluster does not "
        "meet.",
        show_default=False,
    ),
]
DataDir = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Catalog folder layered over the embedded one (ours or upstream AICR's format).",
        show_default=False,
    ),
]
CatalogDir = Annotated[
    Path | None, typer.Option("--catalog", help="Catalog folder used instead of the embedded one.", show_default=False)
]
Format = Annotated[str, typer.Option("--format", "-t", help="yaml, json or table.")]
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
