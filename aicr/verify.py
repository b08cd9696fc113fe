"""``aicr verify``: recompute a bundle's checksums; exit 1 naming every changed, missing or extra file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from shared.errors import EXIT_OK, EXIT_VERDICT_FAILED


def verify(
    directory: Annotated[Path, typer.Argument(help="The bundle directory.", show_default=False)],
) -> int:
    """Check every file of a bundle against its checksums.txt."""
    from shared import output as out
    from shared.bundle import service

    verification = service.verify(directory)
    out.write_data(verification.text())
    return EXIT_OK if verification.passed else EXIT_VERDICT_FAILED


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
