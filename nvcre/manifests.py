"""``nvcrectl manifests``: the chart's certification objects as plain YAML, for ``kubectl apply -f -``."""

from __future__ import annotations

import typer

from shared.chart.command import manifests_command

manifests = manifests_command(
    "nvcrectl", "nvcre", "Render the certification controller, its RBAC and the CRDs (what the chart installs)."
)


def register(root: typer.Typer) -> None:
    root.command("manifests")(manifests)
