"""nvcrectl's flags: the options every program shares (shared/cli_options.py), with nvcrectl's help.

Nothing is declared here that another program also takes; only what is nvcrectl's own: whose
namespace ``-n`` names, and which formats each kind of command offers. Each ``*_FORMATS`` tuple is
both the help of its option and what the command checks (``shared.output.parse_format``), in the
order the error message lists them.
"""

from __future__ import annotations

from typing import Annotated

from shared import cli_options
from shared.output import Format

Kubeconfig = cli_options.Kubeconfig
Context = cli_options.Context
AllNamespaces = cli_options.AllNamespaces
MetricsAddr = cli_options.MetricsAddr
Namespace = Annotated[str, cli_options.namespace("the Certification")]
RunNamespace = Annotated[str, cli_options.namespace("the WorkloadRun")]

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
