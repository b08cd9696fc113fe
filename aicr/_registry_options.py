"""Flags of the commands that talk to an OCI registry (``bundle -o oci://``, ``verify oci://``), upstream's names."""

from __future__ import annotations

from typing import Annotated

import typer

PlainHttp = Annotated[
    bool,
    typer.Option("--plain-http", help="Talk to the OCI registry over plain HTTP (a local registry, oci:// only)."),
]
InsecureTls = Annotated[
    bool,
    typer.Option("--insecure-tls", help="Accept the OCI registry's TLS certificate without checking it (oci:// only)."),
]
