"""Entry point of ``aicr``: the root app and its command registrations."""

from __future__ import annotations

import typer

from shared import cli

HELP = (
    "Configure GPU Kubernetes clusters: resolve a version-pinned recipe for a target environment, "
    "render it for a deployer, and hold the live cluster to it."
)


def build_app() -> typer.Typer:
    from aicr import bundle, diff, query, recipe, snapshot, validate, verify

    app = cli.make_app("aicr", HELP)
    cli.add_global_options(app, "aicr", "AICR")
    recipe.register(app)
    query.register(app)
    bundle.register(app)
    verify.register(app)
    snapshot.register(app)
    validate.register(app)
    diff.register(app)
    return app


def run() -> None:
    cli.entry(build_app, "aicr")


if __name__ == "__main__":
    run()
