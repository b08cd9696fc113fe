"""Shell completion of the three programs, asked through the real bash and the generated script.

Covers: ``PROGRAM completion bash`` prints a script bash accepts, and sourcing it makes Tab (its
completion function, given ``COMP_WORDS``/``COMP_CWORD`` as bash sets them) offer the commands,
the sub-commands, the flags, the values of closed options (aicr's criteria and deployers, the
formats) and the names of objects in the simulated cluster: Certifications of the ``-n``
namespace or else the context's, ValidationRequests and nodes; an unreachable cluster offers no
names and prints nothing; the zsh and fish scripts name the program's variable and the same
request answers in their formats; an unknown shell is refused with exit 2.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent
BASH_TIMEOUT = 60.0


def _environment(kubeconfig: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("KUBECONFIG", None)
    if kubeconfig is not None:
        env["KUBECONFIG"] = str(kubeconfig)
    return env


def tab(*words: str, kubeconfig: Path | None = None) -> list[str]:
    """What bash offers after ``words`` (the last one is being typed), through the sourced script."""
    program = words[0]
    function = f"_{program}_completion"
    script = (
        f'eval "$({program} completion bash)"\n'
        f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        f"COMPREPLY=()\n"
        f"{function} {program}\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        env=_environment(kubeconfig),
        timeout=BASH_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.parametrize("program", ["aicr", "nvcrectl", "nvsentinel"])
def test_the_bash_script_parses_and_names_the_programs_completion_variable(program: str) -> None:
    source = subprocess.run(
        [BIN / program, "completion", "bash"], capture_output=True, text=True, timeout=BASH_TIMEOUT, check=True
    ).stdout
    assert f"_{program.upper()}_COMPLETE=bash_complete" in source
    syntax = subprocess.run(["bash", "-n"], input=source, capture_output=True, text=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("aicr", ""), {"recipe", "bundle", "validate", "diff", "completion", "version"}),
        (("aicr", "re"), {"recipe"}),
        (("nvcrectl", "certification", ""), {"run", "report", "list", "get", "delete", "render"}),
        (("nvsentinel", "ev"), {"events"}),
        (("nvsentinel", "events", "list", "--"), {"--output", "--kubeconfig", "--context", "--help"}),
        (("aicr", "recipe", "--serv"), {"--service"}),
        (("aicr", "recipe", "--service", ""), {"aks", "eks", "gke", "kind", "oke"}),
        (("aicr", "recipe", "--accelerator", "h"), {"h100"}),
        (("aicr", "recipe", "--intent", ""), {"inference", "training"}),
        (("aicr", "recipe", "--os", "u"), {"ubuntu"}),
        (("aicr", "recipe", "--platform", ""), {"dynamo", "kubeflow"}),
        (("aicr", "bundle", "--deployer", "argo"), {"argocd", "argocd-helm"}),
        (("aicr", "query", "-t", ""), {"yaml", "json"}),
        (("nvcrectl", "certification", "list", "-o", ""), {"table", "wide", "yaml", "json"}),
        (("nvsentinel", "completion", ""), {"bash", "zsh", "fish"}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else "",
)
def test_tab_offers_commands_flags_and_closed_values(words: tuple[str, ...], expected: set[str]) -> None:
    offered = tab(*words)
    assert set(offered) >= expected, offered
    assert all(o.startswith(words[-1]) for o in offered), offered


def test_the_enum_candidates_are_exactly_the_closed_list() -> None:
    assert tab("aicr", "recipe", "--intent", "") == ["inference", "training"]


CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  categories:
    - {{domain: communication, variant: nccl-all-reduce}}
"""


def _certifications(kubectl: Any, tmp_path: Path, **names: str) -> None:
    """Create Certification NAME in NAMESPACE for each ``NAME=NAMESPACE``."""
    for name, namespace in names.items():
        kubectl("create", "namespace", namespace, check=False)
        path = tmp_path / f"{name}.yaml"
        path.write_text(CERT.format(name=name.replace("_", "-"), namespace=namespace), encoding="utf-8")
        kubectl("apply", "-f", str(path))


def test_tab_offers_the_certifications_of_the_namespace_given_or_the_contexts(
    run_cli: Any, kubectl: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    assert run_cli("nvcrectl", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    _certifications(kubectl, tmp_path, rack_1="default", rack_2="default", gpu_a="nvcre")
    assert tab("nvcrectl", "certification", "get", "", kubeconfig=sim_kubeconfig) == ["rack-1", "rack-2"]
    assert tab("nvcrectl", "certification", "report", "-n", "nvcre", "", kubeconfig=sim_kubeconfig) == ["gpu-a"]
    kubectl("config", "set-context", "--current", "--namespace=nvcre")
    assert tab("nvcrectl", "certification", "delete", "g", kubeconfig=sim_kubeconfig) == ["gpu-a"]
    explicit = tab("nvcrectl", "certification", "get", "-k", str(sim_kubeconfig), "-n", "default", "rack-")
    assert explicit == ["rack-1", "rack-2"]


def test_tab_offers_the_clusters_nodes_and_validation_requests(
    run_cli: Any, kubectl: Any, sim_kubeconfig: Path
) -> None:
    for node in ("gpu-node-1", "gpu-node-2"):
        kubectl("apply", "-f", "-", input=f"{{apiVersion: v1, kind: Node, metadata: {{name: {node}}}}}")
    assert run_cli("nvsentinel", "crds", "install", "-k", str(sim_kubeconfig)).code == 0
    kubectl(
        "apply",
        "-f",
        "-",
        input="{apiVersion: nvsentinel.nvidia.com/v1alpha1, kind: ValidationRequest, metadata: {name: vr-1},"
        " spec: {nodes: [{name: gpu-node-1}]}}",
    )
    assert set(tab("nvsentinel", "nodes", "release", "gpu-", kubeconfig=sim_kubeconfig)) == {
        "gpu-node-1",
        "gpu-node-2",
    }
    assert tab("nvsentinel", "validation", "get", "", kubeconfig=sim_kubeconfig) == ["vr-1"]


def test_an_unreachable_cluster_offers_no_names_and_prints_nothing(sim: Any, tmp_path: Path) -> None:
    config = sim.write_kubeconfig(tmp_path / "kubeconfig")
    text = config.read_text(encoding="utf-8")
    port = sim.url.rsplit(":", 1)[1]
    # a port nothing listens on: connection refused at once
    config.write_text(text.replace(f":{port}", ":9"), encoding="utf-8")
    assert tab("nvcrectl", "certification", "get", "", kubeconfig=config) == []
    assert tab("nvcrectl", "certification", "get", "", kubeconfig=tmp_path / "absent") == []


@pytest.mark.parametrize(
    ("shell", "cword", "line"),
    [("zsh", "1", "plain\nrecipe\n"), ("fish", "rec", "plain,recipe\t")],  # fish sends the word itself
    ids=["zsh", "fish"],
)
def test_zsh_and_fish_get_their_script_and_their_answer_format(shell: str, cword: str, line: str) -> None:
    env = _environment()
    source = subprocess.run(
        [BIN / "aicr", "completion", shell], capture_output=True, text=True, env=env, timeout=BASH_TIMEOUT, check=True
    ).stdout
    assert f"_AICR_COMPLETE={shell}_complete" in source
    asked = {**env, "_AICR_COMPLETE": f"{shell}_complete", "COMP_WORDS": "aicr rec", "COMP_CWORD": cword}
    answer = subprocess.run([BIN / "aicr"], capture_output=True, text=True, env=asked, timeout=BASH_TIMEOUT, check=True)
    assert answer.stdout.startswith(line), answer.stdout


def test_an_unknown_shell_is_refused(run_cli: Any) -> None:
    refused = run_cli("aicr", "completion", "tcsh")
    assert refused.code == 2
    assert refused.stderr == "error: unknown shell 'tcsh'; valid shells are: bash, zsh, fish\n"
