"""The options the three programs spell alike: cluster access, namespace, output format, metrics.

kubectl's habits, declared once so ``--kubeconfig/-k``, ``--context``, ``-n/--namespace``,
``-A/--all-namespaces`` and ``-o/--output`` read the same in aicr, nvcrectl and nvsentinel, with the
same help; so does ``--metrics-addr`` of the two controllers and the monitors. A program's ``_options.py``
re-exports these and keeps only what is its own (aicr's criteria, nvsentinel's ``--values``).
``--html FILE`` of the three reports reads the same too. The help of a format option is built
from the formats the command accepts (``shared.output.Format``), so the help and the check cannot
disagree.

aicr keeps ``-o`` for the destination file, as upstream AICR does, and names its format
``--format/-t`` (``FORMAT_FLAGS``). What the options mean stays with the commands: this module
imports only typer and the format vocabulary, so ``--help`` stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from shared import cli_completion
from shared.output import Format

OUTPUT_FLAGS = ("--output", "-o")
"""kubectl's spelling of the format flag (nvcrectl, nvsentinel)."""
FORMAT_FLAGS = ("--format", "-t")
"""aicr's spelling: upstream AICR uses ``-o`` for the destination."""

Kubeconfig = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        "-k",
        help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).",
        show_default=False,
    ),
]
Context = Annotated[str | None, typer.Option("--context", help="Kubeconfig context.", show_default=False)]
AllNamespaces = Annotated[
    bool, typer.Option("--all-namespaces", "-A", help="List the objects of every namespace (-n is ignored).")
]
Strict = Annotated[
    bool,
    typer.Option(
        "--strict", help="Exit 1 when an object cannot be read; either way it is skipped with a warning naming it."
    ),
]
"""A listing's choice, as kubectl's: an object that does not parse is skipped and named, not fatal."""
Watch = Annotated[
    bool,
    typer.Option(
        "--watch",
        "-w",
        help="Keep the table up to date: redrawn in place on a terminal, a line per change otherwise; "
        "Ctrl-C stops (exit 0).",
    ),
]
"""kubectl's ``get -w``: the live view of a command that shows objects."""
MetricsAddr = Annotated[
    str | None,
    typer.Option(
        "--metrics-addr",
        help="Serve Prometheus metrics on HOST:PORT (':PORT' is loopback; docs/metrics.md).",
        show_default=False,
    ),
]
"""The metrics endpoint of the controllers (``nvcrectl controller``, ``nvsentinel run``) and the monitors."""


def html_report(what: str) -> Any:
    """``--html FILE``: the command's result also as one self-contained page (``shared.htmlpage``).

    Use as ``Annotated[Path | None, cli_options.html_report("the fleet by rack")] = None``; the
    three reports (certification, validation, fleet) take the same flag with the same promise.
    """
    return typer.Option(
        "--html",
        help=f"Also write {what} as a self-contained HTML page here (no network needed to view it).",
        show_default=False,
    )


def namespace(of: str, *, from_context: bool = False) -> Any:
    """``-n/--namespace``; ``of`` names what lives in it, for the help (``"the Certification"``).

    Use as ``Annotated[str, cli_options.namespace("the Certification")]`` with the default in the
    signature, so the reference shows it. ``from_context``: the default is kubectl's, the
    kubeconfig context's namespace (else ``default``), which the command resolves; the signature's
    default is then ``None``.
    """
    if from_context:
        return typer.Option(
            "--namespace",
            "-n",
            help=f"Namespace of {of} (default: the kubeconfig context's namespace, else default).",
            show_default=False,
        )
    return typer.Option("--namespace", "-n", help=f"Namespace of {of}.")


def output_format(*allowed: Format, flags: tuple[str, ...] = OUTPUT_FLAGS, note: str = "") -> Any:
    """The format option of a data-printing command, its help listing exactly ``allowed``.

    ``note`` follows the list (a default the signature cannot show, what a format means here).
    The command still checks the value with ``shared.output.parse_format`` against the same list.
    """
    names = [f.value for f in allowed]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return typer.Option(
        *flags,
        help=f"Output format: {listed}.{f' {note}' if note else ''}",
        shell_complete=cli_completion.choices(names),
    )
