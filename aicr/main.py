"""Entry point of ``aicr``: the program and its command registrations."""

from __future__ import annotations

import typer

from shared import cli, cli_completion


def _deployers() -> list[str]:
    from shared.bundle.deployers import Deployer

    return [d.value for d in Deployer]


PROGRAM = cli.Program(
    "aicr",
    help_text="Configure GPU Kubernetes clusters: resolve a version-pinned recipe for a target environment, "
    "render it for a deployer, and hold the live cluster to it.",
    env_prefix="AICR",
    completers={"--deployer": cli_completion.choices(_deployers)},
)


def build_app() -> typer.Typer:
    from aicr import bundle, diff, query, recipe, snapshot, validate, verify

    return PROGRAM.app(recipe, query, bundle, verify, snapshot, validate, diff)


def run() -> None:
    cli.entry(build_app, PROGRAM)


if __name__ == "__main__":
    run()
