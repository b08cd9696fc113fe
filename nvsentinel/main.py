"""Entry point of ``nvsentinel``: the program and its command registrations."""

from __future__ import annotations

import typer

from shared import cli

PROGRAM = cli.Program(
    "nvsentinel",
    help_text="Operate GPU Kubernetes clusters: health events, CEL fault-quarantine rule sets, cordon/taint "
    "with a circuit breaker, drain, remediation and re-validation.",
    env_prefix="NVSENTINEL",
)


def build_app() -> typer.Typer:
    from nvsentinel import breaker, crds, events, manifests, monitor, nodes, rules, run, validation

    return PROGRAM.app(crds, events, rules, nodes, breaker, run, monitor, validation, manifests)


def run() -> None:
    cli.entry(build_app, PROGRAM)


if __name__ == "__main__":
    run()
