"""Entry point of ``nvcrectl``: the root app and its command registrations."""

from __future__ import annotations

import typer

from shared import cli

HELP = "Certify GPU Kubernetes clusters with NCCL, DCGM and training workloads, thresholds and failure-group isolation."


def build_app() -> typer.Typer:
    from nvcre import catalog, certification, controller, crds, manifests, results, workloadrun

    app = cli.make_app("nvcrectl", HELP)
    cli.add_global_options(app, "nvcrectl", "NVCRE")
    crds.register(app)
    catalog.register(app)
    certification.register(app)
    results.register(app)
    controller.register(app)
    workloadrun.register(app)
    manifests.register(app)
    return app


def run() -> None:
    cli.entry(build_app, "nvcrectl")


if __name__ == "__main__":
    run()
