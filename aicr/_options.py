"""aicr's flags: the criteria, where the catalog comes from, and the options every program shares.

Cluster access (``--kubeconfig/-k``, ``--context``) is declared once in shared/cli_options.py and
re-exported here. aicr keeps upstream AICR's spelling for output: ``-o`` names the destination
file and ``--format/-t`` the format (``format_option``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shared import cli_completion, cli_options
from shared.output import Format
from shared.recipe.vocabulary import allowed_values

Kubeconfig = cli_options.Kubeconfig
Context = cli_options.Context
html_report = cli_options.html_report


def _help(field: str, text: str) -> str:
    return f"{text} One of: {', '.join(allowed_values(field))}."


def _values(field: str) -> cli_completion.Completer:
    """Tab completion from the same closed list the help names and the resolver checks."""
    return cli_completion.choices(lambda: allowed_values(field))


def format_option(*allowed: Format, note: str = "") -> Any:
    """aicr's ``--format/-t``, its help listing ``allowed`` (what the command checks)."""
    return cli_options.output_format(*allowed, flags=cli_options.FORMAT_FLAGS, note=note)


Service = Annotated[
    str | None,
    typer.Option(
        "--service", help=_help("service", "Kubernetes service."), shell_complete=_values("service"), show_default=False
    ),
]
Accelerator = Annotated[
    str | None,
    typer.Option(
        "--accelerator",
        "--gpu",
        help=_help("accelerator", "GPU type."),
        shell_complete=_values("accelerator"),
        show_default=False,
    ),
]
Intent = Annotated[
    str | None,
    typer.Option(
        "--intent", help=_help("intent", "Workload intent."), shell_complete=_values("intent"), show_default=False
    ),
]
Os = Annotated[
    str | None,
    typer.Option("--os", help=_help("os", "Node operating system."), shell_complete=_values("os"), show_default=False),
]
Platform = Annotated[
    str | None,
    typer.Option(
        "--platform",
        help=_help("platform", "Serving or training platform."),
        shell_complete=_values("platform"),
        show_default=False,
    ),
]
Nodes = Annotated[int | None, typer.Option("--nodes", help="GPU node count (0 = any).", show_default=False)]
CriteriaFile = Annotated[
    str | None,
    typer.Option(
        "--criteria",
        "-c",
        help="RecipeCriteria file (YAML/JSON), http(s):// URL or cm://NAMESPACE/NAME; flags override it.",
        show_default=False,
    ),
]
SnapshotFile = Annotated[
    str | None,
    typer.Option(
        "--snapshot",
        "-s",
        help="Snapshot file, http(s):// URL or cm://NAMESPACE/NAME: "
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


REQUEST_FIELDS = {
    "service": "service",
    "accelerator": "accelerator",
    "intent": "intent",
    "os": "os",
    "platform": "platform",
    "nodes": "nodes",
    "criteria": "criteria_file",
    "snapshot": "snapshot_file",
    "catalog": "catalog_dir",
    "data": "data_dir",
    "kubeconfig": "kubeconfig",
    "context": "context",
}
"""The flags a recipe request is built from: a command's parameter name → RecipeRequest's field."""


def request_fields(parameters: dict[str, Any]) -> dict[str, Any]:
    """The recipe request a command was given, from its parameters (``locals()``).

    typer needs each flag spelled out in the command's signature; this keeps ``recipe`` and ``query``
    from each spelling out the same request a second time."""
    return {field: parameters[name] for name, field in REQUEST_FIELDS.items()}
