"""nvsentinel's flags: the options every program shares (shared/cli_options.py), and its own.

Its own: ``--values/-f`` (a values file in NVSentinel's layout), whose namespace ``-n`` names, the
formats every command offers (``chosen_format`` checks a ``-o`` value against them), and
``cluster``, the connection record the health commands take.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from shared import cli_completion, cli_options
from shared.output import Format, parse_format

if TYPE_CHECKING:
    from shared.health.service import Cluster

Kubeconfig = cli_options.Kubeconfig
Context = cli_options.Context
html_report = cli_options.html_report
MetricsAddr = cli_options.MetricsAddr
Watch = cli_options.Watch
Strict = cli_options.Strict
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


def chosen_format(output: str) -> Format:
    """The ``-o/--output`` value checked against ``FORMATS``, before the command reads or asks anything."""
    return parse_format(output, allowed=FORMATS, flag="--output")


def cluster(kubeconfig: Path | None, context: str | None, namespace: str = "nvsentinel") -> Cluster:
    """Where the command's cluster is: a record of the flags; the services build their clients from it."""
    from shared.health.service import Cluster

    return Cluster(kubeconfig=kubeconfig, context=context, namespace=namespace)


def _nodes(_namespace: str | None) -> str:
    from shared.kube import rest

    return rest.core_path("nodes")


def _validation_requests(_namespace: str | None) -> str:
    from shared.lifecycle import resource

    return resource.RESOURCE.path()


NodeName = Annotated[
    str, typer.Argument(help="Node name.", shell_complete=cli_completion.objects(_nodes, namespaced=False))
]
"""A node's name; Tab offers the cluster's nodes."""
NodeNames = Annotated[
    list[str], typer.Argument(help="Node name(s).", shell_complete=cli_completion.objects(_nodes, namespaced=False))
]
ValidationRequestName = Annotated[
    str,
    typer.Argument(
        help="ValidationRequest name.", shell_complete=cli_completion.objects(_validation_requests, namespaced=False)
    ),
]
ValidationRequestNames = Annotated[
    list[str],
    typer.Argument(
        help="ValidationRequest name(s).",
        shell_complete=cli_completion.objects(_validation_requests, namespaced=False),
    ),
]
