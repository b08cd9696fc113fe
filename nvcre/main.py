"""Entry point of ``nvcrectl``: the program and its command registrations."""

from __future__ import annotations

import typer

from shared import cli

PROGRAM = cli.Program(
    "nvcrectl",
    help_text="Certify GPU Kubernetes clusters with NCCL, DCGM and training workloads, thresholds and "
    "failure-group isolation.",
    env_prefix="NVCRE",
)


def build_app() -> typer.Typer:
    from nvcre import catalog, certification, controller, crds, manifests, results, setup, workloadrun

    return PROGRAM.app(crds, catalog, certification, results, controller, workloadrun, manifests, setup)


def run() -> None:
    cli.entry(build_app, PROGRAM)


if __name__ == "__main__":
    run()
