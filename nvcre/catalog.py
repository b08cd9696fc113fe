"""``nvcrectl catalog list``: the certification tests this build knows."""

from __future__ import annotations

import typer

from nvcre import _options as opt
from shared import output as out

COLUMNS = (
    out.Column("domain", lambda e: e.domain),
    out.Column("variant", lambda e: e.variant),
    out.Column("scope", lambda e: e.scope.value),
    out.Column("metrics", lambda e: ",".join(e.metrics) or "pass/fail"),
    out.Column("description", lambda e: e.description, wide=True),
)


def list_entries(fmt: opt.Output = "table") -> None:
    """Every category (domain/variant), how it runs and what it measures."""
    from shared.certify import service

    chosen = out.parse_format(fmt, allowed=opt.TABLE_FORMATS, flag="--output")
    entries = service.catalog_entries()
    out.emit(entries, chosen, table=out.Table(entries, COLUMNS))


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The test catalog.", no_args_is_help=True)
    group.command("list")(list_entries)
    app.add_typer(group, name="catalog")
