"""``nvcrectl results parse``: read a pasted nccl-tests, dcgmi diag or training log.

``-o table`` lists the verdict, each measurement and each error; ``-o wide`` adds what each row
means (a measurement's unit and source, as the threshold keys name them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared import cli_options
from shared import output as out


def _meaning(row: tuple[str, str]) -> str:
    """What a row is: a metric's unit and source (the threshold key registry), the verdict, an error."""
    from shared.certify import thresholds

    field = row[0]
    if field in thresholds.KEYS:
        return f"threshold key; {thresholds.KEYS[field]}"
    return {"verdict": "the log's own verdict, before any threshold", "error": "what the log reports"}.get(field, "")


COLUMNS = (
    out.Column("field", lambda row: row[0]),
    out.Column("value", lambda row: row[1]),
    out.Column("meaning", _meaning, wide=True),
)
FORMATS = (out.Format.JSON, out.Format.YAML, out.Format.TABLE, out.Format.WIDE)
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
