"""nvcrectl's flags: the options every program shares (shared/cli_options.py), with nvcrectl's help.

Nothing is declared here that another program also takes; only what is nvcrectl's own: whose
namespace ``-n`` names, and which formats each kind of command offers. Each ``*_FORMATS`` tuple is
both the help of its option and what the command checks (``shared.output.parse_format``), in the
order the error message lists them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared import cli_completion, cli_options
from shared.output import Format

Kubeconfig = cli_options.Kubeconfig
Context = cli_options.Context
html_report = cli_options.html_report
AllNamespaces = cli_options.AllNamespaces
Strict = cli_options.Strict
Watch = cli_options.Watch
MetricsAddr = cli_options.MetricsAddr
Namespace = Annotated[str | None, cli_options.namespace("the Certification", from_context=True)]
RunNamespace = Annotated[str | None, cli_options.namespace("the WorkloadRun", from_context=True)]


def namespace_or_context(namespace: str | None, kubeconfig: Path | None, context: str | None) -> str:
    """``-n``, else the kubeconfig context's namespace (kubectl's rule), else ``default``.

    A configuration that cannot be read gives ``default`` here: building the client reports it,
    at the point the command would have without ``-n`` (after its own input is checked)."""
    if namespace:
        return namespace
    from shared import errors
    from shared.kube import client

    try:
        return client.context_namespace(kubeconfig=kubeconfig, context=context)
    except errors.ToolError:
        return client.DEFAULT_NAMESPACE


TABLE_FORMATS = tuple(Format)
"""Commands that show a table; ``wide`` adds columns where the table has more."""
Output = Annotated[str, cli_options.output_format(*TABLE_FORMATS)]
RenderOutput = Annotated[
    str,
    cli_options.output_format(
        *TABLE_FORMATS,
        note="table and wide show the plan per category; yaml and json the first round's Jobs, as run creates them.",
    ),
]
DATA_FORMATS = (Format.YAML, Format.JSON)
"""Commands that print one object as it is stored."""
DataOutput = Annotated[str, cli_options.output_format(*DATA_FORMATS)]
RUN_FORMATS = (Format.TABLE, Format.JSON, Format.YAML)
"""WorkloadRun commands: one row, no wider view."""
RunOutput = Annotated[str, cli_options.output_format(*RUN_FORMATS)]


def _certifications(namespace: str | None) -> str:
    from shared.certify import resource

    return resource.RESOURCE.path(namespace)


def _workload_runs(namespace: str | None) -> str:
    from shared.certify import workload

    return workload.RESOURCE.path(namespace)


CertificationName = Annotated[
    str, typer.Argument(help="Certification name.", shell_complete=cli_completion.objects(_certifications))
]
"""A Certification's name; Tab offers those of the namespace (``-n``, else the context's)."""
WorkloadRunName = Annotated[
    str, typer.Argument(help="WorkloadRun name.", shell_complete=cli_completion.objects(_workload_runs))
]
