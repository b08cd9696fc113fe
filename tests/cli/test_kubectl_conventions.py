"""kubectl's habits in the three programs, as a kubectl user would try them.

Covers: ``--version`` and the ``version`` command print the same line in every program, and
``-v`` is no version flag (``nvsentinel -v events list`` does not print the version); a
mistyped command gets click's suggestion once; without
``-n``, nvcrectl uses the kubeconfig context's namespace (after ``kubectl config set-context
--current --namespace=X`` it finds what ``kubectl get`` finds there), ``-n`` still wins, and a
context without a namespace means ``default``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shared import __version__


@pytest.mark.parametrize("program", ["aicr", "nvcrectl", "nvsentinel"])
def test_version_command_and_flag_print_the_same_line(run_cli: Any, program: str) -> None:
    by_command = run_cli(program, "version")
    by_flag = run_cli(program, "--version")
    assert (by_command.code, by_command.stderr) == (0, "")
    assert by_command.stdout == by_flag.stdout == f"{program} version {__version__}\n"


def test_v_is_not_the_version_flag(run_cli: Any) -> None:
    result = run_cli("nvsentinel", "-v", "events", "list")
    assert result.code == 2
    assert "version" not in result.stdout
    assert result.stderr == "error: No such option '-v'. (see 'nvsentinel --help')\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("aicr", "verison"), "error: No such command 'verison'. (Did you mean one of: 'verify', 'version'?)"),
        (("nvcrectl", "certification", "lst"), "error: No such command 'lst'. Did you mean 'list'?"),
    ],
    ids=["aicr", "nvcrectl"],
)
def test_a_mistyped_command_gets_one_suggestion(run_cli: Any, argv: tuple[str, ...], line: str) -> None:
    result = run_cli(*argv)
    assert result.code == 2
    assert result.stderr.startswith(line + " (see "), result.stderr
    assert result.stderr.count("Did you mean") == 1


CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {name: c, namespace: nvcre}
spec:
  categories:
    - {domain: communication, variant: nccl-all-reduce}
"""


def test_nvcrectl_looks_in_the_contexts_namespace(
    run_cli: Any, kubectl: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    assert run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    kubectl("create", "namespace", "nvcre")
    kubectl("apply", "-f", "-", input=CERT)
    before = run_cli("nvcrectl", "certification", "get", "c", "-k", str(sim_kubeconfig))
    assert before.code == 3, before.stderr  # the context names no namespace: default, where c is not
    kubectl("config", "set-context", "--current", "--namespace=nvcre")
    assert kubectl("get", "certifications", "-o", "name").stdout == "certification.nvcre.nvidia.com/c\n"
    found = run_cli("nvcrectl", "certification", "get", "c", "-k", str(sim_kubeconfig), "-o", "json")
    assert found.code == 0, found.stderr
    assert '"namespace": "nvcre"' in found.stdout
    listed = run_cli("nvcrectl", "certification", "list", "-k", str(sim_kubeconfig), "-o", "json")
    assert '"name": "c"' in listed.stdout
    elsewhere = run_cli("nvcrectl", "certification", "get", "c", "-n", "default", "-k", str(sim_kubeconfig))
    assert elsewhere.code == 3
