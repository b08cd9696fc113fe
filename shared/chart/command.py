"""The ``manifests`` command both controllers' programs carry; only the program and namespace differ."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from shared import cli_options
from shared.output import Format

ValuesFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--values",
        "-f",
        help="Chart values file over the chart's values.yaml (repeatable, later wins).",
        show_default=False,
    ),
]
SetValues = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="KEY=VALUE over the values, read as helm reads it (a.b=1,c[0]=x,d={p,q}; repeatable).",
        show_default=False,
    ),
]
SetStringValues = Annotated[
    list[str] | None,
    typer.Option(
        "--set-string",
        help="Like --set, every value a string; applied after every --set, as helm does (repeatable).",
        show_default=False,
    ),
]
Output = Annotated[str, cli_options.output_format(Format.YAML, Format.JSON, note="json is a v1 List.")]
Namespace = Annotated[str, cli_options.namespace("the release")]
CreateNamespace = Annotated[
    str,
    typer.Option(
        "--create-namespace",
        metavar="true|false",
        help="Emit the release's Namespace first, so the output applies to a fresh cluster; "
        "--create-namespace=false leaves it out.",
    ),
]


def manifests_command(program: str, default_namespace: str, doc: str) -> Callable[..., None]:
    """A typer command rendering ``program``'s part of the chart; imports stay lazy for ``--help``."""

    def manifests(
        values: ValuesFiles = None,
        set_values: SetValues = None,
        set_string_values: SetStringValues = None,
        namespace: Namespace = default_namespace,
        output: Output = "yaml",
        create_namespace: CreateNamespace = "true",
    ) -> None:
        from shared import output as out
        from shared.chart import manifests as chart

        out.write_data(
            chart.for_command(
                program,
                values_files=values,
                set_values=set_values,
                set_string_values=set_string_values,
                namespace=namespace,
                fmt=output,
                create_namespace=_boolean(create_namespace, "--create-namespace"),
            )
        )

    manifests.__doc__ = doc
    return manifests


def _boolean(text: str, flag: str) -> bool:
    """``true``/``false`` as kubectl and helm write a boolean flag's value (``--create-namespace=false``)."""
    from shared import errors

    value = text.strip().lower()
    if value in ("true", "1", "yes"):
        return True
    if value in ("false", "0", "no"):
        return False
    raise errors.InvalidInput(f"must be true or false, got {text!r}", where=flag)
