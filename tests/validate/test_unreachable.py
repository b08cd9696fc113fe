"""A cluster that cannot be reached: one clean error line, whatever the client retried below it.

Covers: ``validate``, ``snapshot`` and ``diff`` against a kubeconfig whose server refuses
connections exit 6 with exactly one stderr line naming the server, and none of urllib3's
"Retrying (Retry(...))" warnings nor our own per-retry notes; ``--debug`` still shows the retries.
With no cluster configured at all, a bad ``--snapshot`` or ``--target`` file is named (exit 2)
before the missing configuration is.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.badinput.cases import BASES
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


@pytest.fixture()
def no_cluster(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No cluster configured at all: no KUBECONFIG, an empty home, not inside a cluster."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.mark.usefixtures("no_cluster")
@pytest.mark.parametrize(
    ("command", "content"),
    [
        (["validate", "--recipe", "RECIPE", "--snapshot", "SNAPSHOT"], None),
        (["validate", "--recipe", "RECIPE", "--snapshot", "SNAPSHOT"], "nodes: [\n"),
        (["validate", "--recipe", "RECIPE", "--snapshot", "SNAPSHOT", "--phase", "all"], None),
        (["diff", "--baseline", "RECIPE", "--target", "SNAPSHOT"], None),
    ],
    ids=["validate-missing", "validate-malformed", "validate-all-phases", "diff-missing"],
)
def test_a_bad_snapshot_file_is_named_before_the_cluster_configuration(
    run_cli: Any, recipe: Path, tmp_path: Path, command: list[str], content: str | None
) -> None:
    """The deployment phase also reads the live cluster (the components' asserts), but the file
    given on the command line is read first: its fault is reported, not the missing kubeconfig."""
    snapshot = tmp_path / "snapshot.yaml"
    if content is not None:
        snapshot.write_text(content, encoding="utf-8")
    args = [str(recipe) if a == "RECIPE" else str(snapshot) if a == "SNAPSHOT" else a for a in command]
    result = run_cli("aicr", *args)
    assert result.code == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "snapshot.yaml" in lines[0] and "cluster configuration" not in lines[0], lines


@pytest.mark.usefixtures("no_cluster")
def test_a_good_snapshot_without_a_cluster_names_the_missing_configuration(
    run_cli: Any, recipe: Path, tmp_path: Path
) -> None:
    """Reading the file first changes only the order: the asserts still need the cluster."""
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(BASES["snapshot"], encoding="utf-8")
    result = run_cli("aicr", "validate", "--recipe", str(recipe), "--snapshot", str(snapshot))
    assert result.code == 2, result.stderr
    assert "no cluster configuration" in result.stderr
