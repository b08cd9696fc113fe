"""Entry point of ``nvcrectl``; its commands arrive with their issues."""

from __future__ import annotations

import typer

from shared import cli

HELP = "Certify GPU Kubernetes clusters with NCCL, DCGM and training workloads, thresholds and failure-group isolation."


def build_app() -> typer.Typer:
    app = cli.make_app("nvcrectl", HELP)
    cli.add_global_options(app, "nvcrectl", "NVCRE")
    return app


def run() -> None:
    cli.entry(build_app, "nvcrectl")


if __name__ == "__main__":
    run()
