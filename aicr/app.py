"""The ``aicr`` program: its root app and command registrations (``aicr.main`` runs it)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

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


COMMANDS = ("recipe", "query", "bundle", "verify", "snapshot", "validate", "diff")
"""The command groups, in the order ``--help`` lists them."""


def _group(name: str) -> cli.CommandGroup:  # noqa: PLR0911 - one return per command
    """The module of one command, imported only when asked for (one static import each, so the
    import contracts see them)."""
    match name:
        case "recipe":
            from aicr import recipe

            return recipe
        case "query":
            from aicr import query

            return query
        case "bundle":
            from aicr import bundle

            return bundle
        case "verify":
            from aicr import verify

            return verify
        case "snapshot":
            from aicr import snapshot

            return snapshot
        case "validate":
            from aicr import validate

            return validate
        case "diff":
            from aicr import diff

            return diff
    raise ValueError(f"no command {name!r}")


def command_of(argv: Sequence[str], environ: Mapping[str, str] = os.environ) -> str | None:
    """The command ``aicr ARGV`` runs when it is the first word, else None (root options first,
    ``--help``, a misspelt name, or the shell asking for completions: those need every command)."""
    if argv and argv[0] in COMMANDS and cli_completion.complete_var("aicr") not in environ:
        return argv[0]
    return None


def build_app(command: str | None = None) -> typer.Typer:
    """The root app; with ``command``, holding only that one of the command groups.

    What ``aicr COMMAND …`` prints and does depends only on that command and the root options, so
    the console script builds the app with that command alone: the other modules are not imported
    and typer does not turn their signatures into click commands (tests/cli/aicr/test_fast.py
    compares the two apps' output)."""
    app = PROGRAM.app(*(_group(name) for name in ([command] if command else COMMANDS)))
    for info in app.registered_commands:
        if info.name in EXAMPLES:
            info.epilog = EXAMPLES[info.name]
    return app
