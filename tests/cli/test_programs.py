"""The three programs' shared edge: --version, --help, usage errors, --log-json."""

from __future__ import annotations

import json

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
