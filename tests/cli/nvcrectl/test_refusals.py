"""``nvcrectl`` refusals and endings a user must be able to act on, through the real commands.

Covers: a threshold key the category does not measure (busBandwidthGBps on dcgm-l1, goodputRatio on
an NCCL test, a global key no inheriting category measures) is exit 2 before the cluster is
contacted, naming the key and the category, while a global key that one of the categories measures
is accepted; a target nodeSelector key or value, expression key, node name, taint effect or image
outside its grammar is exit 2 naming the field (in a Certification and a WorkloadRun), while valid
ones (a prefixed key, a digest image) load; a WorkloadRun regex that does not compile is exit 2
naming ``spec.metric.regex``; ``results parse -o wide`` adds what each row means; a cluster without
our CRDs is one line naming the CRD and ``nvcrectl crds install`` (exit 3) for Certifications and
WorkloadRuns; ``run --wait --timeout`` that runs out says the run stays and how to ``--resume`` it,
and ``--resume`` then finishes it; ``nvcrectl controller`` (a subprocess) on SIGTERM gives its
leader Lease up (holderIdentity cleared) and exits 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shared import errors
from shared.certify import resource
from shared.kube import rest
from shared.sim import SimServer
from tests.conftest import TEAM_SHARED

CERT = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: Certification
metadata: {{name: {name}}}
spec:
  maxBytes: 1G
{spec}
"""
ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
REAL_SECONDS = 60.0
"""Generous real-time deadline of a subprocess wait; only a hang reaches it."""


def _cert(tmp_path: Path, spec: str, name: str = "rack-7") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(CERT.format(name=name, spec=spec), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("spec", "where", "message"),
    [
        (
            "  categories:\n"
            "    - {domain: diagnostics, variant: dcgm-l1, options: {thresholds: {busBandwidthGBps: 'value > 1'}}}",
            "spec.categories[0].options.thresholds",
            "threshold key(s) ['busBandwidthGBps'] not measured by category diagnostics/dcgm-l1; "
            "measured: nothing (pass/fail only)",
        ),
        (
            "  categories:\n    - {domain: communication, variant: nccl-all-reduce,\n"
            "       options: {thresholds: {goodputRatio: 'value > 0.9'}}}",
            "spec.categories[0].options.thresholds",
            "threshold key(s) ['goodputRatio'] not measured by category communication/nccl-all-reduce; "
            "measured: busBandwidthGBps, algBandwidthGBps",
        ),
        (
            "  thresholds: {busBandwidthGBps: 'value >= 300'}\n"
            "  categories:\n"
            "    - {domain: diagnostics, variant: dcgm-l1}\n"
            "    - {domain: training, variant: nemotron5-8b}",
            "spec.thresholds",
            "threshold key(s) ['busBandwidthGBps'] not measured by categories diagnostics/dcgm-l1, "
            "training/nemotron5-8b",
        ),
    ],
    ids=["bus-bandwidth-on-dcgm", "goodput-on-nccl", "global-key-nobody-measures"],
)
def test_a_threshold_key_the_category_does_not_measure_exits_2_before_the_cluster(
    run_cli: Any, tmp_path: Path, spec: str, where: str, message: str
) -> None:
    path = _cert(tmp_path, spec)
    result = run_cli("nvcrectl", "certification", "run", "-f", str(path), "--kubeconfig", str(tmp_path / "missing"))
    assert result.code == 2, result.stderr
    assert result.stderr.startswith(f"error: {path}: {where}: {message}") and result.stderr.count("\n") == 1


TARGETS = [
    (
        "selector-key",
        "  target: {nodeSelector: {'bad key': x}}",
        "spec.target.nodeSelector: invalid label key 'bad key'",
    ),
    (
        "selector-value",
        "  target: {nodeSelector: {pool: 'a;b'}}",
        "spec.target.nodeSelector[pool]: invalid label value",
    ),
    (
        "expression-key",
        "  target: {matchExpressions: [{key: '-x', operator: Exists}]}",
        "spec.target.matchExpressions[0].key: invalid label key '-x'",
    ),
    ("node-name", "  target: {nodeNames: ['../../x']}", "spec.target.nodeNames[0]: invalid node name '../../x'"),
    (
        "taint-effect",
        "  target: {taintSelectors: [{key: gate, effect: Sometimes}]}",
        "spec.target.taintSelectors[0].effect: invalid taint effect 'Sometimes'",
    ),
    ("image", "  image: 'busybox; touch x'", "spec.image: invalid image reference 'busybox; touch x'"),
    ("image-upper", "  image: Busybox:1", "spec.image: invalid image reference 'Busybox:1'"),
]


@pytest.mark.parametrize(("spec", "message"), [t[1:] for t in TARGETS], ids=[t[0] for t in TARGETS])
def test_a_target_name_or_image_outside_its_grammar_exits_2_naming_the_field(
    run_cli: Any, tmp_path: Path, spec: str, message: str
) -> None:
    """Refused while the file is read: not "no node matches spec.target" (exit 3) after the cluster."""
    path = _cert(tmp_path, spec + "\n  categories:\n    - {domain: diagnostics, variant: dcgm-l1}")
    result = run_cli("nvcrectl", "certification", "run", "-f", str(path), "--kubeconfig", str(tmp_path / "missing"))
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {path}: {message}"), result.stderr


def test_a_valid_target_and_digest_image_load(tmp_path: Path) -> None:
    spec = (
        "  image: nvcr.io/nvidia/pytorch:25.01-py3@sha256:" + "a" * 64 + "\n"
        "  target: {nodeSelector: {example.com/pool: gpu_a-1.x}, nodeNames: [node-001.rack-7],\n"
        "           taintSelectors: [{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}]}\n"
        "  categories:\n    - {domain: diagnostics, variant: dcgm-l1}"
    )
    cert = resource.load_file(_cert(tmp_path, spec))
    assert cert.spec.target.nodeNames == ["node-001.rack-7"]


def test_a_workloadrun_image_or_target_outside_its_grammar_exits_2(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: WorkloadRun\nmetadata: {name: bad}\n"
        "spec: {image: 'busybox$(reboot)', command: [echo], metric: {regex: 'x=([0-9]+)'}}\n",
        encoding="utf-8",
    )
    result = run_cli("nvcrectl", "workloadrun", "run", "-f", str(path), "--kubeconfig", str(tmp_path / "missing"))
    assert result.code == 2, result.stderr
    assert (
        result.stderr
        == f"error: {path}: spec.image: invalid image reference 'busybox$(reboot)'"
        + (result.stderr.split("'busybox$(reboot)'", 1)[1])
    )
    assert result.stderr.count("\n") == 1


def test_a_global_threshold_binds_the_categories_that_measure_it(tmp_path: Path) -> None:
    spec = (
        "  thresholds: {busBandwidthGBps: 'value >= 300'}\n"
        "  categories:\n"
        "    - {domain: communication, variant: nccl-all-reduce}\n"
        "    - {domain: diagnostics, variant: dcgm-l1}"
    )
    assert resource.load_file(_cert(tmp_path, spec)).spec.thresholds == {"busBandwidthGBps": "value >= 300"}


def test_a_workloadrun_regex_that_does_not_compile_exits_2_naming_the_field(run_cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: nvcre.nvidia.com/v1alpha1\nkind: WorkloadRun\nmetadata: {name: bad}\n"
        "spec: {image: busybox, command: [echo], metric: {regex: 'busbw=([0-9.]+'}}\n",
        encoding="utf-8",
    )
    result = run_cli("nvcrectl", "workloadrun", "run", "-f", str(path), "--kubeconfig", str(tmp_path / "missing"))
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {path}: spec.metric")
    assert "regex" in result.stderr and "busbw=([0-9.]+" in result.stderr and "missing )" in result.stderr


def test_results_parse_wide_adds_what_each_row_means(run_cli: Any) -> None:
    sample = TEAM_SHARED / "reference/samples/nccl/gcp-a3mega-h100-2node-allreduce.txt"
    if not sample.is_file():
        pytest.skip("reference samples absent")
    result = run_cli("nvcrectl", "results", "parse", "--kind", "nccl", str(sample), "-o", "wide")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["FIELD", "VALUE", "MEANING"]
    assert lines[2].split()[0] == "busBandwidthGBps" and "GB/s, peak out-of-place bus bandwidth" in lines[2]
    table = run_cli("nvcrectl", "results", "parse", "--kind", "nccl", str(sample), "-o", "table").stdout
    assert [line.split()[:2] for line in table.splitlines()] == [line.split()[:2] for line in lines]


@pytest.mark.parametrize(
    ("argv", "crd"),
    [
        (("certification", "list"), "certifications.nvcre.nvidia.com"),
        (("certification", "report", "rack-7"), "certifications.nvcre.nvidia.com"),
        (("workloadrun", "status", "mine"), "workloadruns.nvcre.nvidia.com"),
        (("certification", "delete", "rack-7"), "certifications.nvcre.nvidia.com"),
    ],
    ids=["certification-list", "certification-report", "workloadrun-status", "certification-delete"],
)
def test_a_missing_crd_is_one_line_naming_it_and_the_install_command(
    run_cli: Any, sim: SimServer, sim_kubeconfig: Path, argv: tuple[str, ...], crd: str
) -> None:
    result = run_cli("nvcrectl", *argv, "--kubeconfig", str(sim_kubeconfig))
    assert (result.code, result.stderr) == (
        3,
        f"error: the CRD {crd} is not installed in this cluster; install it with: nvcrectl crds install\n",
    )


def test_a_missing_crd_on_run_names_it_too(run_cli: Any, sim: SimServer, sim_kubeconfig: Path, tmp_path: Path) -> None:
    path = _cert(tmp_path, "  categories:\n    - {domain: diagnostics, variant: dcgm-l1}")
    result = run_cli("nvcrectl", "certification", "run", "-f", str(path), "--kubeconfig", str(sim_kubeconfig))
    assert result.code == 3 and "nvcrectl crds install" in result.stderr and result.stderr.count("\n") == 1


def test_a_timed_out_run_stays_and_says_how_to_resume_it(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    gpu_sim.add_gpu_nodes(4, racks=1)
    gpu_sim.vclock.set_speed(3000)
    kube = ("--kubeconfig", str(sim_kubeconfig))
    assert run_cli("nvcrectl", "crds", "install", *kube).code == 0
    path = _cert(tmp_path, "  categories:\n    - {domain: communication, variant: nccl-all-reduce}")
    ran = run_cli("nvcrectl", "certification", "run", "-f", str(path), "--wait", "--timeout", "1s", *kube)
    assert ran.code == 5, ran.stderr
    last = ran.stderr.splitlines()[-1]
    assert last.startswith("error: certification rack-7 did not complete within 1s; it stays in the cluster")
    assert "`nvcrectl certification run --resume rack-7`" in last
    assert "`nvcrectl certification delete rack-7`" in last
    assert run_cli("nvcrectl", "certification", "get", "rack-7", *kube).code == 0
    resumed = run_cli("nvcrectl", "certification", "run", "--resume", "rack-7", *kube)
    assert resumed.code == 0, resumed.stderr
    assert "Succeeded" in run_cli("nvcrectl", "certification", "list", *kube).stdout


def _lease_holder(api: Any, name: str) -> str | None:
    try:
        lease = rest.get(api, rest.group_path("coordination.k8s.io", "v1", "leases", "default", name))
    except errors.NotFound:
        return None
    holder = (lease.get("spec") or {}).get("holderIdentity")
    return str(holder) if holder else None


def test_the_controller_releases_its_lease_on_sigterm_and_exits_0(
    run_cli: Any, sim: SimServer, sim_kubeconfig: Path, api_client: Any
) -> None:
    from shared.certify import controller

    assert run_cli("nvcrectl", "crds", "install", "--kubeconfig", str(sim_kubeconfig)).code == 0
    process = subprocess.Popen(
        [str(BIN / "nvcrectl"), "controller", "--kubeconfig", str(sim_kubeconfig)],
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + REAL_SECONDS
        while _lease_holder(api_client, controller.LEADER_LEASE) is None:
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "the controller never took its leader Lease"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=REAL_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert _lease_holder(api_client, controller.LEADER_LEASE) is None
    assert stderr.splitlines()[-1] == "controller stopped; leases released"
