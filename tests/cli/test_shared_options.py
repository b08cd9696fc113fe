"""The options the three programs share (shared/cli_options.py), read from their command trees.

Covers: wherever a command takes ``--kubeconfig``, ``--context``, ``--namespace``,
``--all-namespaces`` or kubectl's ``--output``, it spells it the same (``-k``, ``-n``, ``-A``,
``-o``) in all three programs, and ``--kubeconfig``/``--context`` (and the controllers'
``--metrics-addr``) carry the same help; every option of every command has help text; a format
option's help names exactly the formats the command accepts (an unknown value is refused listing
the same ones); ``nvcrectl -k`` reaches the cluster like ``--kubeconfig``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
import typer

from shared import cli_options, cli_reference

PROGRAMS = sorted(cli_reference.PROGRAMS)
SHORT = {"--kubeconfig": "-k", "--namespace": "-n", "--all-namespaces": "-A"}


def _commands(program: str) -> Iterator[tuple[str, Any]]:
    """(path, click command) of every command of ``program``, groups included."""
    root = typer.main.get_command(cli_reference.load_app(program))
    stack = [(program, root)]
    while stack:
        path, command = stack.pop()
        yield path, command
        for name, child in sorted(getattr(command, "commands", {}).items()):
            stack.append((f"{path} {name}", child))


def _options(program: str) -> Iterator[tuple[str, Any]]:
    for path, command in _commands(program):
        for param in command.params:
            yield path, param


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_shared_options_have_the_same_short_flag_everywhere(program: str) -> None:
    seen = set()
    for path, param in _options(program):
        for long, short in SHORT.items():
            if long in param.opts:
                assert short in param.opts, f"{path}: {long} without {short}"
                seen.add(long)
    assert "--kubeconfig" in seen


@pytest.mark.parametrize("program", PROGRAMS)
def test_cluster_access_and_metrics_options_carry_one_help_text(program: str) -> None:
    declared = {
        flag: get_args(option)[1].help
        for flag, option in (
            ("--kubeconfig", cli_options.Kubeconfig),
            ("--context", cli_options.Context),
            ("--metrics-addr", cli_options.MetricsAddr),
        )
    }
    for path, param in _options(program):
        for flag, help_text in declared.items():
            if flag in param.opts:
                assert param.help == help_text, f"{path} {flag}"


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_option_has_help(program: str) -> None:
    missing = [
        f"{path} {param.opts[0]}"
        for path, param in _options(program)
        if param.param_type_name == "option" and not param.help
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("command", "args", "flag"),
    [
        ("nvcrectl certification get", ["c"], "--output"),
        ("nvcrectl certification render", ["-f", "c.yaml"], "--output"),
        ("nvcrectl workloadrun status", ["w"], "--output"),
        ("nvcrectl results parse", ["log.txt", "--kind", "nccl"], "--output"),
        ("nvcrectl catalog list", [], "--output"),
        ("nvsentinel events list", [], "--output"),
        ("nvsentinel monitor dcgm", [], "--output"),
        ("aicr query", ["--selector", "x"], "--format"),
        ("aicr validate", ["-r", "r.yaml"], "--format"),
        ("aicr snapshot", [], "--format"),
    ],
    ids=lambda v: v if isinstance(v, str) and " " in v else "",
)
def test_a_format_options_help_names_the_formats_its_command_accepts(
    run_cli: Any, command: str, args: list[str], flag: str
) -> None:
    program = command.split()[0]
    (param,) = [p for p in dict(_commands(program))[command].params if flag in p.opts]
    helped = re.match(r"Output format: ([a-z, ]+?)(?: or ([a-z]+))?\.", param.help)
    assert helped is not None, param.help
    listed = helped.group(1).split(", ") + ([helped.group(2)] if helped.group(2) else [])
    refused = run_cli(*command.split(), *args, flag, "xml")
    assert refused.code == 2
    assert refused.stderr.endswith(f"valid formats are: {', '.join(listed)}\n"), refused.stderr


def test_nvcrectl_takes_k_for_the_kubeconfig(run_cli: Any, sim_kubeconfig: Path) -> None:
    installed = run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig))
    assert installed.code == 0, installed.stderr
    assert installed.stdout.startswith("customresourcedefinition/certifications.nvcre.nvidia.com installed\n")
