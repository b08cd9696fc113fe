"""Entry point of ``aicr`` (the console script): a memoised recipe first, else the whole program.

Only the standard library is imported here: ``aicr recipe`` in a CI loop is answered from the
recipe memo by ``aicr.fast``, and a plain ``aicr bundle`` rendered by ``aicr.fast_bundle``, before
the command line framework loads; everything else, and any request the fast paths do not
recognise, runs the program built in ``aicr.app``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer


def build_app() -> typer.Typer:
    """The root app (the name docs, tests and ``shared.cli_reference`` know it by)."""
    from aicr import app

    return app.build_app()


def run() -> None:
    from aicr import fast, fast_bundle

    status = fast.recipe(sys.argv[1:])
    if status is None:
        status = fast_bundle.bundle(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    import functools

    from aicr import app
    from shared import cli

    cli.entry(functools.partial(app.build_app, app.command_of(sys.argv[1:])), app.PROGRAM)


if __name__ == "__main__":
    run()
