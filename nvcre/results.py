"""``nvcrectl results parse``: read a pasted nccl-tests, dcgmi diag or training log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared import cli_options
from shared import output as out

COLUMNS = (out.Column("field", lambda row: row[0]), out.Column("value", lambda row: row[1]))
FORMATS = (out.Format.JSON, out.Format.YAML, out.Format.TABLE)
Output = Annotated[str, cli_options.output_format(*FORMATS)]


def parse(
    file: Annotated[Path, typer.Argument(help="The log file.")],
    kind: Annotated[str, typer.Option("--kind", help="nccl, dcgm or training.")],
    fmt: Output = "json",
) -> None:
    """Parse the log; exit 0 whenever it parsed, whatever its verdict (2 when it cannot be read)."""
    from shared.certify import results, service

    chosen = out.parse_format(fmt, allowed=FORMATS, flag="--output")
    result = service.parse_results(kind, file)
    out.emit(result, chosen, table=out.Table(results.summary(result), COLUMNS))


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Workload logs.", no_args_is_help=True)
    group.command("parse")(parse)
    app.add_typer(group, name="results")
