"""A cluster that cannot be reached: one clean error line, whatever the client retried below it.

Covers: ``validate``, ``snapshot`` and ``diff`` against a kubeconfig whose server refuses
connections exit 6 with exactly one stderr line naming the server, and none of urllib3's
"Retrying (Retry(...))" warnings nor our own per-retry notes; ``--debug`` still shows the retries.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.validate.install import recipe_document


@pytest.fixture()
def refused(tmp_path: Path) -> Iterator[Path]:
    """A kubeconfig for a port on 127.0.0.1 that is bound and never listened on: connections are refused."""
    from shared.sim.apiserver import kubeconfig

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        config = tmp_path / "kc"
        kubeconfig.write(
            config,
            f"https://127.0.0.1:{held.getsockname()[1]}",
            "token",
            user="nobody",
            namespace="default",
            ca_pem=None,
        )
        yield config


@pytest.fixture()
def recipe(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps(recipe_document()), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "command",
    [["validate", "--recipe", "RECIPE"], ["snapshot"], ["diff", "--baseline", "RECIPE"]],
    ids=["validate", "snapshot", "diff"],
)
def test_an_unreachable_cluster_is_one_error_line_and_exit_6(
    run_cli: Any, refused: Path, recipe: Path, command: list[str]
) -> None:
    args = [str(recipe) if a == "RECIPE" else a for a in command]
    result = run_cli("aicr", *args, "--kubeconfig", str(refused))
    assert result.code == 6
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ") and "cannot reach the API server" in lines[0] and "127.0.0.1" in lines[0]


def test_debug_still_shows_the_retries(run_cli: Any, refused: Path) -> None:
    result = run_cli("aicr", "--debug", "snapshot", "--kubeconfig", str(refused))
    assert result.code == 6
    assert "Retrying (Retry(" in result.stderr and "retrying after ConnectionFailed" in result.stderr
