"""``nvcrectl catalog list``: the certification tests this build knows."""

from __future__ import annotations

import typer

from nvcre import _options as opt


def list_entries(fmt: opt.Output = "table") -> None:
    """Every category (domain/variant), how it runs and what it measures."""
    from shared import output
    from shared.certify import service

    chosen = output.parse_format(fmt, allowed=list(output.Format), flag="--output")
    entries = service.catalog_entries()
    if chosen in (output.Format.JSON, output.Format.YAML):
        data = [e.model_dump(mode="json") for e in entries]
        output.write_data(output.to_json(data) if chosen is output.Format.JSON else output.to_yaml(data))
        return
    rows = [
        [e.domain, e.variant, e.scope.value, ",".join(e.metrics) or "pass/fail"]
        + ([e.description] if chosen is output.Format.WIDE else [])
        for e in entries
    ]
    output.print_table(
        ["domain", "variant", "scope", "metrics"] + (["description"] if chosen is output.Format.WIDE else []), rows
    )


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The test catalog.", no_args_is_help=True)
    group.command("list")(list_entries)
    app.add_typer(group, name="catalog")
