"""Outputs that cannot be written: one line naming the path, exit 2, nothing written, and no work done first.

Covers: ``aicr recipe -o`` and ``aicr bundle --output`` into a folder nothing can be created in, a
file where the folder should be, and a directory where the file should be; ``aicr snapshot``,
``aicr validate`` and ``aicr diff`` with ``-o`` in a missing folder, and ``nvcrectl certification
report --results-file`` the same, and ``snapshot -o`` and ``monitor --state`` in an unwritable
one, each refused before the cluster is asked anything; ``nvsentinel monitor --state`` in a
missing folder (not created); ``aicr recipe -o`` a FIFO writes through it and leaves it a FIFO.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from shared.sim import SimServer
from tests.test_output_layer import read_fifo

RECIPE = ("recipe", "--service", "eks", "--accelerator", "h100")


def _one_line(result: Any, line: str) -> None:
    assert (result.code, result.stdout, result.stderr) == (2, "", f"{line}\n")


def test_recipe_and_bundle_into_a_folder_that_cannot_be_written(
    run_cli: Any, readonly_dir: Path, tmp_path: Path
) -> None:
    before = sorted(os.listdir(readonly_dir))
    result = run_cli("aicr", *RECIPE, "-o", str(readonly_dir / "r.yaml"))
    assert result.code == 2 and result.stderr.startswith(f"error: {readonly_dir / 'r.yaml'}: cannot write: ")
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", *RECIPE, "-o", str(recipe)).code == 0
    bundled = run_cli("aicr", "bundle", "--recipe", str(recipe), "--output", str(readonly_dir / "b"))
    assert bundled.code == 2 and bundled.stderr.startswith(f"error: {readonly_dir / 'b'}: cannot write: ")
    assert bundled.stderr.count("\n") == 1
    assert sorted(os.listdir(readonly_dir)) == before


def test_a_file_where_a_folder_is_expected_and_a_folder_where_a_file_is(run_cli: Any, tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", *RECIPE, "-o", str(recipe)).code == 0
    _one_line(
        run_cli("aicr", "bundle", "--recipe", str(recipe), "--output", str(recipe / "b")),
        f"error: {recipe}: is a file, expected an output folder",
    )
    _one_line(run_cli("aicr", *RECIPE, "-o", str(tmp_path)), f"error: {tmp_path}: is a directory, expected a file")
    assert os.listdir(tmp_path) == ["recipe.yaml"]


@pytest.mark.parametrize(
    "args",
    [
        ("aicr", "snapshot"),
        ("aicr", "validate", "--recipe", "{recipe}"),
        ("aicr", "diff", "--baseline", "{recipe}"),
        ("nvcrectl", "certification", "report", "rack-7", "--results-file"),
    ],
    ids=["snapshot", "validate", "diff", "report"],
)
def test_an_output_in_a_missing_folder_is_refused_before_the_cluster_is_asked(
    run_cli: Any, sim: SimServer, sim_kubeconfig: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    recipe = tmp_path / "recipe.yaml"
    assert run_cli("aicr", *RECIPE, "-o", str(recipe)).code == 0
    sim.audit.clear()
    missing = tmp_path / "missing"
    flag = () if args[-1] == "--results-file" else ("-o",)
    command = [a.format(recipe=recipe) for a in args]
    result = run_cli(*command, *flag, str(missing / "out"), "--kubeconfig", str(sim_kubeconfig))
    _one_line(result, f"error: {missing}: output folder does not exist")
    assert sim.audit.records() == []
    assert not missing.exists()


def test_a_state_file_in_a_missing_folder_is_refused_and_no_folder_made(run_cli: Any, tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    (sysfs / "class" / "infiniband").mkdir(parents=True)
    state = tmp_path / "var" / "lib" / "state.json"
    result = run_cli("nvsentinel", "monitor", "nic", "--sysfs", str(sysfs), "--node", "n1", "--state", str(state))
    _one_line(result, f"error: {state.parent}: output folder does not exist")
    assert sorted(os.listdir(tmp_path)) == ["sys"]


def test_recipe_into_a_fifo_writes_through_it(run_cli: Any, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader, got = read_fifo(fifo)
    assert run_cli("aicr", *RECIPE, "-o", str(fifo)).code == 0
    reader.join(timeout=60)
    assert got[0].startswith(b"kind: RecipeResult\n") and fifo.is_fifo() and os.listdir(tmp_path) == ["pipe"]


@pytest.mark.parametrize(
    "args",
    [("aicr", "snapshot", "-o"), ("nvsentinel", "monitor", "nic", "--node", "n1", "--sysfs", "{sysfs}", "--state")],
    ids=["snapshot", "state"],
)
def test_an_output_in_an_unwritable_folder_is_refused_before_the_cluster_is_asked(
    run_cli: Any, sim: SimServer, sim_kubeconfig: Path, readonly_dir: Path, tmp_path: Path, args: tuple[str, ...]
) -> None:
    sysfs = tmp_path / "sys"
    (sysfs / "class" / "infiniband").mkdir(parents=True)
    before = sorted(os.listdir(readonly_dir))
    sim.audit.clear()
    target = readonly_dir / "out.json"
    command = [a.format(sysfs=sysfs) for a in args]
    result = run_cli(*command, str(target), "--kubeconfig", str(sim_kubeconfig))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {target}: cannot write: ") and result.stderr.count("\n") == 1
    assert (sim.audit.records(), sorted(os.listdir(readonly_dir))) == ([], before)
