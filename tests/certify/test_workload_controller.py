"""WorkloadRuns on the simulated cluster: run by ``nvcrectl controller``, the Lease, report formats.

Covers: a WorkloadRun created without ``--wait`` is run to its verdict by the controller in a
thread (a throttled GPU on the first node: Failed with the measured value below the threshold);
the controller takes over a run whose Lease holder stopped renewing; while a runner holds the run's Lease the controller
leaves the run alone; ``workloadrun run`` without ``--wait`` then the controller, and ``report`` /
``status`` with ``-o json``, ``-o yaml`` and ``-o table``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared import clock
from shared.certify import controller, models, workload
from shared.kube import client, crds, leases
from shared.sim import SimServer
from shared.sim.gpu import fabric

REAL_SECONDS = 60.0
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


@pytest.fixture()
def throttled(gpu_sim: SimServer, api_client: Any) -> SimServer:
    """Four nodes in one rack, node-000's GPUs throttled, virtual time 3000x; only the WorkloadRun CRD is
    installed, so the controller also copes with a cluster without the Certification CRD."""
    gpu_sim.add_gpu_nodes(4, racks=1)
    gpu_sim.fabric.inject(fabric.parse_all(["node-000:thermal"]))
    gpu_sim.vclock.set_speed(3000)
    crds.install(api_client, workload.RESOURCE)
    return gpu_sim


@pytest.fixture()
def controller_thread(sim_kubeconfig: Path) -> Iterator[Callable[[], None]]:
    """Start a controller replica in a thread; at teardown stop it and check it ended."""
    stop = threading.Event()
    started: list[tuple[threading.Thread, Any]] = []

    def start() -> None:
        own = client.new_client(kubeconfig=sim_kubeconfig)
        thread = threading.Thread(
            target=controller.serve, args=(own,), kwargs={"namespace": "default", "stop": stop}, daemon=True
        )
        thread.start()
        started.append((thread, own))

    yield start
    stop.set()
    for thread, own in started:
        thread.join(timeout=REAL_SECONDS)
        client.close(own)
    assert not [t for t, _ in started if t.is_alive()], "a controller thread was left running"


def _file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(RUN.format(name=name), encoding="utf-8")
    return path


def _finished(api: Any, name: str) -> workload.WorkloadRun:
    deadline = time.monotonic() + REAL_SECONDS
    while time.monotonic() < deadline:
        found = workload.get(api, "default", name)
        if workload.finished(found):
            return found
        time.sleep(0.05)
    raise AssertionError(f"workloadrun {name} did not finish within {REAL_SECONDS} real seconds")


def test_a_workloadrun_created_without_wait_is_run_to_its_verdict_by_the_controller(
    throttled: SimServer, api_client: Any, tmp_path: Path, controller_thread: Callable[[], None]
) -> None:
    workload.create(api_client, workload.load_file(_file(tmp_path, "no-wait")), "default")
    controller_thread()
    done = _finished(api_client, "no-wait")
    assert done.status.phase is models.Phase.FAILED
    assert done.status.value is not None and done.status.value < 450
    assert done.status.nodes == ["node-000", "node-001", "node-002", "node-003"]


def test_the_controller_takes_over_a_workloadrun_whose_holder_stopped_renewing(
    throttled: SimServer, api_client: Any, tmp_path: Path, controller_thread: Callable[[], None]
) -> None:
    workload.create(api_client, workload.load_file(_file(tmp_path, "orphan")), "default")
    ticker = clock.for_api_client(api_client)
    assert leases.try_acquire(
        api_client, "default", workload.lease_name("orphan"), identity="dead-runner", duration=60, now=ticker.now
    )
    controller_thread()
    assert _finished(api_client, "orphan").status.phase is models.Phase.FAILED


def test_the_controller_leaves_a_workloadrun_alone_while_a_runner_holds_its_lease(
    throttled: SimServer, api_client: Any, tmp_path: Path
) -> None:
    workload.create(api_client, workload.load_file(_file(tmp_path, "held")), "default")
    ticker = clock.for_api_client(api_client)
    # a day of cluster time: at 3000x a minute's Lease would expire in 20 real milliseconds
    assert leases.try_acquire(
        api_client, "default", workload.lease_name("held"), identity="cli-runner", duration=86400, now=ticker.now
    )
    replica = controller.Controller(api_client, "default", "replica-a", ticker)
    assert replica.reconcile() == []
    assert workload.get(api_client, "default", "held").status.phase is None
    leases.release(api_client, "default", workload.lease_name("held"), identity="cli-runner")
    assert replica.reconcile() == ["workloadrun held: Running: running on 4 node(s)"]


def test_run_without_wait_then_the_controller_then_report_and_status_in_every_format(
    run_cli: Any,
    throttled: SimServer,
    sim_kubeconfig: Path,
    tmp_path: Path,
    controller_thread: Callable[[], None],
    api_client: Any,
) -> None:
    kube = ("--kubeconfig", str(sim_kubeconfig))
    created = run_cli("nvcrectl", "workloadrun", "run", "-f", str(_file(tmp_path, "later")), *kube)
    assert (created.code, created.stdout) == (0, "workloadrun.nvcre.nvidia.com/later created\n")
    controller_thread()
    done = _finished(api_client, "later")
    as_json = run_cli("nvcrectl", "workloadrun", "report", "later", "-o", "json", *kube)
    assert as_json.code == 1
    data = json.loads(as_json.stdout)
    assert (data["name"], data["phase"], data["passed"], data["metric"]) == ("later", "Failed", False, "busbw")
    assert data["value"] == done.status.value and data["threshold"] == "value >= 450"
    assert data["nodes"] == ["node-000", "node-001", "node-002", "node-003"]
    as_yaml = run_cli("nvcrectl", "workloadrun", "status", "later", "-o", "yaml", *kube)
    assert as_yaml.code == 0 and yaml.safe_load(as_yaml.stdout) == data
    table = run_cli("nvcrectl", "workloadrun", "report", "later", "-o", "table", *kube)
    assert table.stdout.splitlines()[0].split() == ["NAME", "PHASE", "BUSBW", "NODES", "MESSAGE"]
    assert run_cli("nvcrectl", "workloadrun", "status", "later", *kube).stdout.startswith("later  Failed  ")
    wide = run_cli("nvcrectl", "workloadrun", "status", "later", "-o", "wide", *kube)
    assert wide.code == 2 and "valid formats are: table, json, yaml" in wide.stderr
