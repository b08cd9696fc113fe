"""``aicr verify``: recompute a bundle's checksums; exit 1 naming every changed, missing or extra file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from aicr import _registry_options as registry_opt
from shared.errors import EXIT_OK, EXIT_VERDICT_FAILED


def verify(
    directory: Annotated[
        str,
        typer.Argument(
            help="The bundle directory, or oci://REGISTRY/REPOSITORY[:TAG|@DIGEST] to pull and check a pushed bundle.",
            show_default=False,
        ),
    ],
    plain_http: registry_opt.PlainHttp = False,
    insecure_tls: registry_opt.InsecureTls = False,
) -> int:
    """Check every file of a bundle against its checksums.txt (a pushed bundle also against its manifest)."""
    from shared import output as out
    from shared.bundle import oci

    if oci.is_reference(directory):
        from shared.bundle import publish

        pulled = publish.verify(directory, plain_http=plain_http, insecure_tls=insecure_tls)
        out.write_data(pulled.text())
        return EXIT_OK if pulled.passed else EXIT_VERDICT_FAILED
    from shared.bundle import service

    verification = service.verify(Path(directory))
    out.write_data(verification.text())
    return EXIT_OK if verification.passed else EXIT_VERDICT_FAILED


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
