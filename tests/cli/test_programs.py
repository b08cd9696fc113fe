"""The three programs' shared edge: --version, --help, usage errors, --log-json, the debug variable.

Covers: each console script (``aicr.main:run`` and its siblings) reads the debug variable its
``--debug`` option names (``NVCRE_DEBUG`` for nvcrectl, as docs/troubleshooting.md says), so an
error comes with its traceback.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

PROGRAMS = ["aicr", "nvcrectl", "nvsentinel"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_version_prints_one_line(run_cli, program: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(program, "--version")
    assert result.code == 0
    assert result.stdout == f"{program} version 0.1.0\n"


@pytest.mark.parametrize("program", PROGRAMS)
def test_help_lists_the_global_flags(run_cli, program: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(program, "--help")
    assert result.code == 0
    assert "--debug" in result.stdout and "--log-json" in result.stdout


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_unknown_flag_is_one_line_and_exit_2(run_cli, program: str) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(program, "--bogus")
    assert result.code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--bogus" in lines[0]


def test_log_json_turns_logs_into_json_lines(run_cli, team_shared) -> None:  # type: ignore[no-untyped-def]
    result = run_cli(
        "aicr",
        "--log-json",
        "recipe",
        "--snapshot",
        str(team_shared / "research/aicr-golden/inputs/snapshot-old-k8s-gb200.yaml"),
        "--intent",
        "training",
        "-o",
        "/dev/null",
    )
    assert result.code == 0
    records = [json.loads(line) for line in result.stderr.splitlines()]
    assert any(r["level"] == "warning" and "gb200-eks-training" in r["msg"] for r in records)


@pytest.mark.parametrize(
    ("program", "module", "variable", "command"),
    [
        ("aicr", "aicr.main", "AICR_DEBUG", ["snapshot"]),
        ("nvcrectl", "nvcre.main", "NVCRE_DEBUG", ["certification", "get", "c"]),
        ("nvsentinel", "nvsentinel.main", "NVSENTINEL_DEBUG", ["breaker", "status"]),
    ],
)
def test_the_debug_variable_of_each_program_adds_the_traceback(
    program: str,
    module: str,
    variable: str,
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setattr(sys, "argv", [program, *command, "--kubeconfig", f"{tmp_path}/missing"])
    with pytest.raises(SystemExit) as plain:
        importlib.import_module(module).run()
    quiet = capsys.readouterr().err
    monkeypatch.setenv(variable, "1")
    with pytest.raises(SystemExit) as debugged:
        importlib.import_module(module).run()
    loud = capsys.readouterr().err
    assert plain.value.code == debugged.value.code == 2
    assert "Traceback" not in quiet and quiet.endswith("kubeconfig file does not exist\n")
    assert "Traceback (most recent call last)" in loud and loud.endswith(quiet.splitlines()[-1] + "\n")
