"""Entry point of ``nvsentinel``: the root app and its command registrations."""

from __future__ import annotations

import typer

from shared import cli

HELP = (
    "Operate GPU Kubernetes clusters: health events, CEL fault-quarantine rule sets, cordon/taint "
    "with a circuit breaker, drain, remediation and re-validation."
)


def build_app() -> typer.Typer:
    from nvsentinel import breaker, crds, events, manifests, monitor, nodes, rules, run, validation

    app = cli.make_app("nvsentinel", HELP)
    cli.add_global_options(app, "nvsentinel", "NVSENTINEL")
    crds.register(app)
    events.register(app)
    rules.register(app)
    nodes.register(app)
    breaker.register(app)
    run.register(app)
    monitor.register(app)
    validation.register(app)
    manifests.register(app)
    return app


def run() -> None:
    cli.entry(build_app, "nvsentinel")


if __name__ == "__main__":
    run()
