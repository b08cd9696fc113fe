"""A full disk is exit 9 with one line naming what could not be written, and nothing half-written.

Covers, for real (each program in a subprocess whose file-size limit, ``RLIMIT_FSIZE``, is 100
bytes, with SIGXFSZ ignored so a write past it fails with EFBIG instead of killing the process):
``aicr recipe -o`` (no file, no temporary file), ``aicr bundle --force`` over an existing bundle
(the old bundle is left whole, no staging folder), ``nvcrectl catalog list -o json`` into a
redirected stdout (with and without ``PYTHONUNBUFFERED``), and ``nvsentinel monitor nic --state``
(no state file). A full disk is never exit 1, which CI gates read as a failed verdict.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tests.health.test_monitors import make_port

BIN = Path(sys.executable).parent
LIMIT = 100
EXIT_DISK_FULL = 9
RUN_TIMEOUT = 120.0
CRITERIA = ("--service", "eks", "--accelerator", "h100", "--intent", "training")
"""Criteria that each choose an overlay, so no warning joins the one error line asserted."""


def _small_files() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _run(
    program: str, *args: str, stdout: IO[Any] | int = subprocess.PIPE, unbuffered: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if unbuffered is not None:
        env.pop("PYTHONUNBUFFERED", None)
        if unbuffered:
            env["PYTHONUNBUFFERED"] = unbuffered
    return subprocess.run(
        [str(BIN / program), *args],
        preexec_fn=_small_files,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=RUN_TIMEOUT,
        check=False,
    )


def _full(result: subprocess.CompletedProcess[str], where: str, *, whole: bool = True) -> None:
    tail = " (nothing was written)" if whole else ""
    assert (result.returncode, result.stderr) == (
        EXIT_DISK_FULL,
        f"error: {where}: cannot write: File too large{tail}\n",
    )


def test_aicr_recipe_into_a_full_disk_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "out" / "recipe.yaml"
    out.parent.mkdir()
    _full(_run("aicr", "recipe", *CRITERIA, "-o", str(out)), str(out))
    assert os.listdir(out.parent) == []


def test_aicr_bundle_into_a_full_disk_keeps_the_old_bundle(run_cli: Any, tmp_path: Path) -> None:
    recipe, bundle = tmp_path / "recipe.yaml", tmp_path / "bundle"
    assert run_cli("aicr", "recipe", "--service", "eks", "--accelerator", "h100", "-o", str(recipe)).code == 0
    bundle.mkdir()
    (bundle / "old.txt").write_text("old\n")
    _full(_run("aicr", "bundle", "--recipe", str(recipe), "-o", str(bundle), "--force"), str(bundle))
    assert (sorted(os.listdir(tmp_path)), os.listdir(bundle)) == (["bundle", "recipe.yaml"], ["old.txt"])


@pytest.mark.parametrize("unbuffered", ["1", ""], ids=["PYTHONUNBUFFERED=1", "buffered"])
def test_nvcrectl_into_a_full_stdout_file_is_exit_9(tmp_path: Path, unbuffered: str) -> None:
    """Unbuffered (as in the image), the short write at the limit used to drop the rest and exit 0."""
    with (tmp_path / "catalog.json").open("w") as stdout:
        result = _run("nvcrectl", "catalog", "list", "-o", "json", stdout=stdout, unbuffered=unbuffered)
    _full(result, "<stdout>", whole=False)


def test_nvsentinel_state_into_a_full_disk_leaves_no_state(tmp_path: Path) -> None:
    sysfs, state = tmp_path / "sys", tmp_path / "state" / "nic.json"
    make_port(sysfs, "mlx5_0")
    state.parent.mkdir()
    _full(
        _run("nvsentinel", "monitor", "nic", "--sysfs", str(sysfs), "--node", "n1", "--state", str(state)), str(state)
    )
    assert os.listdir(state.parent) == []
