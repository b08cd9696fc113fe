"""Entry point of ``nvsentinel``; its commands arrive with their issues."""

from __future__ import annotations

import typer

from shared import cli

HELP = (
    "Operate GPU Kubernetes clusters: health events, CEL fault-quarantine rule sets, cordon/taint "
    "with a circuit breaker, drain, remediation and re-validation."
)


def build_app() -> typer.Typer:
    app = cli.make_app("nvsentinel", HELP)
    cli.add_global_options(app, "nvsentinel", "NVSENTINEL")
    return app


def run() -> None:
    cli.entry(build_app, "nvsentinel")


if __name__ == "__main__":
    run()
