"""``nvcrectl workloadrun`` on the simulated cluster: your own image as a certification.

Covers: ``run --wait`` of a custom image whose command runs nccl-tests behind ``sh -c``, with a
regex metric rule: exit 1 and the measured value when the threshold is missed (the first node's
GPUs throttled: a WorkloadRun runs one pod per node and reads the first pod's log), exit 0 without
the fault; ``report`` (exit 1 for the failed run) and ``status``; ``cancel`` of a run
created without ``--wait`` records it as cancelled.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.sim import SimServer
from shared.sim.gpu import fabric

RUN = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata: {{name: {name}}}
spec:
  image: registry.example/me/nccl-bench:1
  command: [sh, -c, "all_reduce_perf -b 1G -e 8G -f 2 -g 1"]
  metric: {{name: busbw, regex: 'Avg bus bandwidth\\s*:\\s*([0-9.]+)'}}
  threshold: 'value >= 450'
  timeout: 30m
"""


def _file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(RUN.format(name=name), encoding="utf-8")
    return path


def _cluster(sim: SimServer, run_cli: Any, kubeconfig: Path, *faults: str) -> tuple[str, ...]:
    sim.add_gpu_nodes(4, racks=1)
    if faults:
        sim.fabric.inject(fabric.parse_all(list(faults)))
    sim.vclock.set_speed(3000)
    kube = ("--kubeconfig", str(kubeconfig))
    assert run_cli("nvcrectl", "crds", "install", *kube).code == 0
    return kube


def test_a_custom_image_below_its_threshold_fails_with_its_measured_value(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    kube = _cluster(gpu_sim, run_cli, sim_kubeconfig, "node-000:thermal")
    ran = run_cli("nvcrectl", "workloadrun", "run", "-f", str(_file(tmp_path, "slow")), "--wait", *kube)
    assert ran.code == 1, ran.stderr
    assert "Failed" in ran.stdout and "violated" in ran.stdout
    reported = run_cli("nvcrectl", "workloadrun", "report", "slow", *kube)
    assert reported.code == 1 and reported.stdout == ran.stdout
    value = float(reported.stdout.splitlines()[1].split()[2])
    assert value < 450
    assert run_cli("nvcrectl", "workloadrun", "status", "slow", *kube).stdout.startswith("slow  Failed  ")


def test_a_custom_image_meeting_its_threshold_passes(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    kube = _cluster(gpu_sim, run_cli, sim_kubeconfig)
    ran = run_cli("nvcrectl", "workloadrun", "run", "-f", str(_file(tmp_path, "fast")), "--wait", *kube)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert float(ran.stdout.splitlines()[1].split()[2]) >= 450


def test_cancel_deletes_the_job_and_records_the_run_as_cancelled(
    run_cli: Any, gpu_sim: SimServer, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    kube = _cluster(gpu_sim, run_cli, sim_kubeconfig)
    gpu_sim.vclock.set_speed(0)  # nothing finishes before the cancel
    assert (
        run_cli("nvcrectl", "workloadrun", "run", "-f", str(_file(tmp_path, "stopme")), *kube).stdout
        == "workloadrun.nvcre.nvidia.com/stopme created\n"
    )
    cancelled = run_cli("nvcrectl", "workloadrun", "cancel", "stopme", *kube)
    assert cancelled.code == 0
    assert (
        run_cli("nvcrectl", "workloadrun", "status", "stopme", *kube).stdout
        == "stopme  Failed  cancelled: the job was deleted\n"
    )
