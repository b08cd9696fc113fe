"""The ``aicr`` program: its root app and command registrations (``aicr.main`` runs it)."""

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


EXAMPLES = {
    "recipe": cli.examples(
        "# a recipe for H100 training nodes on EKS, for review and commit",
        "aicr recipe --service eks --accelerator h100 --intent training --os ubuntu -o recipe.yaml",
        "# the same as a table, with the overlay that set each field",
        "aicr recipe --service eks --gpu h100 --intent training -t table --explain",
        "# criteria measured from a live cluster",
        "aicr recipe --snapshot cm://aicr/golden --intent training -o recipe.yaml",
    ),
    "bundle": cli.examples(
        "aicr bundle -r recipe.yaml -o bundle",
        "aicr bundle -r recipe.yaml -d argocd --repo https://git.example.com/gitops.git -o bundle-argocd",
        "aicr bundle -r recipe.yaml -o bundle --set gpu-operator:driver.version=580.82.07 --force",
    ),
    "validate": cli.examples(
        "aicr validate -r recipe.yaml",
        "aicr validate -r recipe.yaml --wait --timeout 10m -t json -o report.json",
    ),
    "diff": cli.examples(
        "# a CI gate: exit 1 when the live cluster drifted from the golden snapshot",
        "aicr diff --baseline cm://aicr/golden --fail-on-drift --ignore 'NodeTopology.*'",
        "# only what the recipe pins",
        "aicr diff --baseline recipe.yaml -t table",
    ),
}
"""The Examples section of the commands users run first, set here on the commands' registrations."""


def build_app() -> typer.Typer:
    from aicr import bundle, diff, query, recipe, snapshot, validate, verify

    app = PROGRAM.app(recipe, query, bundle, verify, snapshot, validate, diff)
    for info in app.registered_commands:
        if info.name in EXAMPLES:
            info.epilog = EXAMPLES[info.name]
    return app
