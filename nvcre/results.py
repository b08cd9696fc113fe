"""``nvcrectl results parse``: read a pasted nccl-tests, dcgmi diag or training log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nvcre import _options as opt


def parse(
    file: Annotated[Path, typer.Argument(help="The log file.")],
    kind: Annotated[str, typer.Option("--kind", help="nccl, dcgm or training.")],
    fmt: opt.Output = "json",
) -> None:
    """Parse the log; exit 0 whenever it parsed, whatever its verdict (2 when it cannot be read)."""
    from shared import output
    from shared.certify import results, service

    chosen = output.parse_format(
        fmt, allowed=(output.Format.JSON, output.Format.YAML, output.Format.TABLE), flag="--output"
    )
    result = service.parse_results(kind, file)
    data = result.model_dump(mode="json")
    if chosen is output.Format.JSON:
        output.write_data(output.to_json(data))
    elif chosen is output.Format.YAML:
        output.write_data(output.to_yaml(data))
    else:
        measured = results.measurements(result)
        rows = [["verdict", data["verdict"]]] + [[k, f"{v:.2f}"] for k, v in measured.items()]
        rows += [["error", e] for e in data.get("errors", [])]
        output.print_table(["field", "value"], rows)


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Workload logs.", no_args_is_help=True)
    group.command("parse")(parse)
    app.add_typer(group, name="results")
