"""The kubelet's mpirun launcher, driven over HTTP with objects built by hand as the operators build them.

Covers (research/workloads.md §1.2, §2.2, §3.2, "How a wrong setup fails"): a launcher whose
hostfile (a ConfigMap volume at /etc/mpi, found through OMPI_MCA_orte_default_hostfile) names four
sshd workers behind a headless Service runs one all-reduce over exactly their nodes — at EFA speed
on EKS when the workers request vpc.amazonaws.com/efa and mpirun exports FI_PROVIDER=efa, at socket
speed without; the same choice on GKE (TCPXO), AKS (IB) and OKE (RoCE); a node with ``nic=0.4``
lowers the run; no hostfile is a single-node run on the launcher's node; an unresolvable host or a
worker not serving ssh fails mpirun with ssh's 255; more processes than slots fail; a worker
killed mid-run fails the launcher; a missing hostfile ConfigMap keeps the launcher in
ContainerCreating with a FailedMount Event; an MPIJob-style fully qualified hostfile resolves;
``dcgmi diag --host`` works only when the Service exists, and reports the pod's own node. Every
log is read with the product's nccl-tests parser.
"""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client as k8s

from shared.certify.parsers import dcgm_diag, nccl_log
from shared.sim import SimServer
from shared.sim.gpu import fabric, stages

JOB = "tj"
NS = "default"
EFA = {"vpc.amazonaws.com/efa": "32"}
EFA_ENV = {"FI_PROVIDER": "efa", "FI_EFA_USE_DEVICE_RDMA": "1", "NCCL_SOCKET_IFNAME": "eth0"}
H100 = stages.profile("h100")


def _worker(
    i: int,
    node: str,
    *,
    resources: dict[str, str],
    annotations: dict[str, str],
    sshd: bool,
    gpus: int = 8,
    claims: bool = False,
) -> dict[str, Any]:
    name = f"{JOB}-node-0-{i}"
    command = ["/usr/sbin/sshd", "-De"] if sshd else ["sleep", "100000"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {"jobset.sigs.k8s.io/jobset-name": JOB},
            "annotations": annotations,
        },
        "spec": {
            "hostname": name,
            "subdomain": JOB,
            "restartPolicy": "OnFailure",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [
                {
                    "name": "node",
                    "image": "nvcr.io/nvidia/pytorch:26.01-py3",
                    "command": command,
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus), **resources}},
                }
            ],
            **(
                {"resourceClaims": [{"name": "compute-domain-channel", "resourceClaimTemplateName": f"{JOB}-channel"}]}
                if claims
                else {}
            ),
        },
    }


def _launcher(
    node: str,
    *,
    env: dict[str, str],
    hostfile: bool = True,
    slots: int = 8,
    extra: tuple[str, ...] = (),
    timeout: str = "3600",
) -> dict[str, Any]:
    exported = [a for k, v in {"NCCL_DEBUG": "INFO", **env}.items() for a in ("-x", f"{k}={v}")]
    args = ["-N", str(slots), "--allow-run-as-root", "--mca", "plm_rsh_args", "-o StrictHostKeyChecking=no", *exported]
    args += [*extra, "/usr/local/bin/all_reduce_perf_mpi", "-b", "8", "-e", "8G", "-f", "2", "-g", "1"]
    container: dict[str, Any] = {
        "name": "node",
        "image": "nvcr.io/nvidia/pytorch:26.01-py3",
        "command": ["timeout", timeout, "/usr/local/mpi/bin/mpirun"],
        "args": args,
        "resources": {"limits": {"cpu": "2", "memory": "1Gi"}},
    }
    spec: dict[str, Any] = {
        "hostname": f"{JOB}-launcher-0-0",
        "subdomain": JOB,
        "restartPolicy": "Never",
        "nodeSelector": {"kubernetes.io/hostname": node},
        "containers": [container],
    }
    if hostfile:
        container["env"] = [
            {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
            {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
            {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
        ]
        container["volumeMounts"] = [{"name": "mpi-hostfile", "mountPath": "/etc/mpi"}]
        spec["volumes"] = [
            {
                "name": "mpi-hostfile",
                "configMap": {
                    "name": f"{JOB}-mpi-hostfile",
                    "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}],
                },
            }
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{JOB}-launcher-0-0"}, "spec": spec}


def _service(*, publish_not_ready: bool = True) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": JOB},
        "spec": {
            "clusterIP": "None",
            "selector": {"jobset.sigs.k8s.io/jobset-name": JOB},
            "publishNotReadyAddresses": publish_not_ready,
        },
    }


def _hostfile(lines: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{JOB}-mpi-hostfile"},
        "data": {"hostfile": "".join(f"{line}\n" for line in lines)},
    }


def _setup(
    api_client: Any,
    nodes: list[str],
    *,
    resources: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    sshd: bool = True,
    lines: list[str] | None = None,
    gpus: int = 8,
    claims: bool = False,
) -> None:
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_service(NS, _service())
    default = [f"{JOB}-node-0-{i}.{JOB} slots={gpus}" for i in range(len(nodes))]
    core.create_namespaced_config_map(NS, _hostfile(lines if lines is not None else default))
    for i, node in enumerate(nodes):
        body = _worker(
            i, node, resources=resources or {}, annotations=annotations or {}, sshd=sshd, gpus=gpus, claims=claims
        )
        core.create_namespaced_pod(NS, body)


def _launch(sim: SimServer, api_client: Any, launcher: dict[str, Any], seconds: float = 3600) -> tuple[Any, str]:
    core = k8s.CoreV1Api(api_client)
    sim.advance(10)  # workers Running (sshd listening) before the launcher starts, as dependsOn Ready gives
    core.create_namespaced_pod(NS, launcher)
    sim.advance(seconds)
    pod = core.read_namespaced_pod(launcher["metadata"]["name"], NS)
    log = core.read_namespaced_pod_log(pod.metadata.name, NS, _preload_content=False).data.decode()
    return pod, log


def _exit_code(pod: Any) -> int | None:
    state = pod.status.container_statuses[0].state
    return state.terminated.exit_code if state.terminated else None


def _eks(sim: SimServer, count: int = 5) -> list[str]:
    return sim.add_gpu_nodes(count, gpu="eks/h100")


def test_a_launcher_runs_one_all_reduce_over_its_hostfile_at_efa_speed_with_the_override(
    gpu_sim: SimServer, api_client: Any
) -> None:
    names = _eks(gpu_sim)
    _setup(api_client, names[:4], resources=EFA)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV))
    result = nccl_log.parse(log)
    assert pod.status.phase == "Succeeded" and _exit_code(pod) == 0, log[:600]
    assert result.verdict == "pass" and result.ranks == 32
    hosts = {line.split(" on ")[1].split()[0] for line in log.splitlines() if line.startswith("#  Rank")}
    assert hosts == {f"{JOB}-node-0-{i}" for i in range(4)}
    assert result.largest_busbw_gbps == pytest.approx(H100.bandwidth.networkBusGBps, abs=0.01)
    assert "Using network AWS Libfabric" in log
    workers = k8s.CoreV1Api(api_client).list_namespaced_pod(NS, label_selector="jobset.sigs.k8s.io/jobset-name").items
    assert {w.status.phase for w in workers} == {"Running"}  # sshd serves until the controllers stop it


@pytest.mark.parametrize(
    ("resources", "env"),
    [({}, EFA_ENV), (EFA, {"NCCL_SOCKET_IFNAME": "eth0"}), ({}, {})],
    ids=["no-efa-devices", "no-fi-provider", "neither"],
)
def test_without_the_efa_override_the_run_crosses_nodes_at_socket_speed(
    gpu_sim: SimServer, api_client: Any, resources: dict[str, str], env: dict[str, str]
) -> None:
    """AICR issue 2683: a generic run measured ~3 GB/s over TCP where the EFA one measured 489 GB/s."""
    names = _eks(gpu_sim)
    _setup(api_client, names[:4], resources=resources)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=env))
    result = nccl_log.parse(log)
    assert pod.status.phase == "Succeeded" and result.verdict == "pass"
    socket = stages.profile("eks/h100").machine
    assert socket is not None
    assert result.largest_busbw_gbps == pytest.approx(socket.network.socketBusGBps, abs=0.01)
    assert result.peak_busbw_gbps is not None and result.peak_busbw_gbps < 10
    assert "Using network Socket" in log


@pytest.mark.parametrize("override", [True, False], ids=["override", "generic"])
@pytest.mark.parametrize(
    ("service", "resources", "annotations", "env", "network"),
    [
        ("gke", {}, {"networking.gke.io/interfaces": "[]"}, {"NCCL_FASTRAK_IFNAME": "eth1,eth2"}, "FasTrak"),
        ("aks", {"nvidia.com/mlnxnics": "8"}, {}, {"NCCL_IB_PCI_RELAXED_ORDERING": "1"}, "IB"),
        ("oke", {"nvidia.com/mlnxnics": "8"}, {}, {"NCCL_IB_GID_INDEX": "3"}, "IB"),
    ],
)
def test_each_services_fabric_needs_what_its_override_requests(
    gpu_sim: SimServer,
    api_client: Any,
    service: str,
    resources: dict[str, str],
    annotations: dict[str, str],
    env: dict[str, str],
    network: str,
    override: bool,
) -> None:
    """NVCRE's gcp+h100 (TCPXO), azure (IB) and oci (RoCE) overrides, research/workloads.md §4.6."""
    names = gpu_sim.add_gpu_nodes(3, gpu=f"{service}/h100")
    if override:
        _setup(api_client, names[:2], resources=resources, annotations=annotations)
    else:
        _setup(api_client, names[:2])
    _, log = _launch(gpu_sim, api_client, _launcher(names[2], env=env if override else {}))
    busbw = nccl_log.parse(log).largest_busbw_gbps
    assert busbw is not None
    if override:
        assert busbw == pytest.approx(H100.bandwidth.networkBusGBps, abs=0.01)
        assert f"Using network {network}" in log
    else:
        assert busbw < 10 and "Using network Socket" in log


@pytest.mark.parametrize("claims", [True, False], ids=["compute-domain", "no-claim"])
def test_gb200_nodes_of_one_rack_share_nvlink_only_through_a_compute_domain(
    gpu_sim: SimServer, api_client: Any, claims: bool
) -> None:
    """research/nvcre.md §7: GB200 all-reduce 882.51 GB/s with MNNVL, 191.40 GB/s without."""
    names = gpu_sim.add_gpu_nodes(3, gpu="eks/gb200")
    gb200 = stages.profile("gb200")
    _setup(api_client, names[:2], resources={"vpc.amazonaws.com/efa": "4"}, gpus=4, claims=claims)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[2], env={**EFA_ENV, "NCCL_MNNVL_ENABLE": "1"}, slots=4))
    result = nccl_log.parse(log)
    assert pod.status.phase == "Succeeded" and result.ranks == 8
    expected = gb200.bandwidth.nvlinkBusGBps if claims else gb200.bandwidth.networkBusGBps
    assert result.largest_busbw_gbps == pytest.approx(expected, abs=0.01)


def test_a_run_past_its_timeout_is_killed_with_the_rows_printed_so_far(gpu_sim: SimServer, api_client: Any) -> None:
    """coreutils timeout exits 124; the log then lacks the largest sizes and the summary, which is
    why NVCRE reads the complete log only once the Job ends (research/nvcre.md, NCCL output parsing)."""
    names = _eks(gpu_sim)
    _setup(api_client, names[:4])  # socket speed: minutes for the 8 GiB rows
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env={}, timeout="2m"))
    result = nccl_log.parse(log)
    assert pod.status.phase == "Failed" and _exit_code(pod) == 124
    assert result.verdict == "error" and result.rows and result.largest_size_bytes is not None
    assert result.largest_size_bytes < 8 << 30
    started = pod.status.container_statuses[0].state.terminated
    assert (started.finished_at - started.started_at).total_seconds() == pytest.approx(120, abs=1)


def test_a_slow_nic_on_one_host_lowers_the_whole_run(gpu_sim: SimServer, api_client: Any) -> None:
    names = _eks(gpu_sim)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[2]}:nic=0.4"]))
    _setup(api_client, names[:4], resources=EFA)
    _, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV))
    result = nccl_log.parse(log)
    assert result.verdict == "pass"
    assert result.largest_busbw_gbps == pytest.approx(H100.bandwidth.networkBusGBps * 0.4, abs=0.01)


def test_without_a_hostfile_every_rank_runs_on_the_launchers_own_node(gpu_sim: SimServer, api_client: Any) -> None:
    """research/workloads.md: mpirun without a hostfile runs all ranks on the launcher host, and a
    CUDA image with NVIDIA_VISIBLE_DEVICES=all sees the node's GPUs without requesting any."""
    names = _eks(gpu_sim)
    _setup(api_client, names[:4], resources=EFA)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV, hostfile=False))
    result = nccl_log.parse(log)
    assert pod.status.phase == "Succeeded" and result.verdict == "pass" and result.ranks == 8
    assert {line.split(" on ")[1].split()[0] for line in log.splitlines() if line.startswith("#  Rank")} == {
        f"{JOB}-launcher-0-0"
    }
    assert result.largest_busbw_gbps == pytest.approx(H100.bandwidth.nvlinkBusGBps, abs=0.01)


def test_a_host_that_does_not_resolve_fails_mpirun_as_ssh_does(gpu_sim: SimServer, api_client: Any) -> None:
    names = _eks(gpu_sim)
    lines = [f"{JOB}-node-0-{i}.{JOB} slots=8" for i in range(3)] + [f"{JOB}-node-0-9.{JOB} slots=8"]
    _setup(api_client, names[:3], resources=EFA, lines=lines)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV))
    assert pod.status.phase == "Failed" and _exit_code(pod) == 255
    assert f"ssh: Could not resolve hostname {JOB}-node-0-9.{JOB}: Name or service not known" in log
    assert "ORTE was unable to reliably start one or more daemons." in log
    assert nccl_log.parse(log).verdict == "error"


def test_a_worker_that_serves_no_ssh_refuses_the_connection(gpu_sim: SimServer, api_client: Any) -> None:
    names = _eks(gpu_sim)
    _setup(api_client, names[:2], resources=EFA, sshd=False)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV))
    assert pod.status.phase == "Failed" and _exit_code(pod) == 255
    assert f"ssh: connect to host {JOB}-node-0-0.{JOB} port 22: Connection refused" in log


def test_a_pending_worker_has_no_dns_record(gpu_sim: SimServer, api_client: Any) -> None:
    """A pod without an IP is no endpoint address, published or not (EndpointSlice controller)."""
    names = _eks(gpu_sim, 2)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_service(NS, _service(publish_not_ready=False))
    core.create_namespaced_config_map(NS, _hostfile([f"{JOB}-node-0-0.{JOB} slots=8"]))
    worker = _worker(0, "no-such-node", resources=EFA, annotations={}, sshd=True)
    core.create_namespaced_pod(NS, worker)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[1], env=EFA_ENV))
    assert _exit_code(pod) == 255 and "Could not resolve hostname" in log


def test_more_processes_than_slots_fail_before_any_starts(gpu_sim: SimServer, api_client: Any) -> None:
    names = _eks(gpu_sim)
    _setup(api_client, names[:2], resources=EFA, lines=[f"{JOB}-node-0-{i}.{JOB} slots=4" for i in range(2)])
    pod, log = _launch(gpu_sim, api_client, _launcher(names[4], env=EFA_ENV))
    assert _exit_code(pod) == 1 and "There are not enough slots available in the system to satisfy the 16" in log


def test_a_worker_killed_mid_run_fails_the_launcher(gpu_sim: SimServer, api_client: Any) -> None:
    names = _eks(gpu_sim)
    _setup(api_client, names[:2], resources={})  # socket speed: a long run
    core = k8s.CoreV1Api(api_client)
    gpu_sim.advance(10)
    core.create_namespaced_pod(NS, _launcher(names[4], env={}))
    gpu_sim.advance(30)
    assert core.read_namespaced_pod(f"{JOB}-launcher-0-0", NS).status.phase == "Running"
    core.delete_namespaced_pod(f"{JOB}-node-0-1", NS, grace_period_seconds=0)
    gpu_sim.advance(5)
    pod = core.read_namespaced_pod(f"{JOB}-launcher-0-0", NS)
    log = core.read_namespaced_pod_log(pod.metadata.name, NS, _preload_content=False).data.decode()
    assert pod.status.phase == "Failed" and _exit_code(pod) == 1
    assert f"Remote daemon: [[43015,0],1] on node {JOB}-node-0-1" in log


def test_a_missing_hostfile_configmap_keeps_the_launcher_in_container_creating(
    gpu_sim: SimServer, api_client: Any
) -> None:
    """kubelet: a non-optional ConfigMap volume whose ConfigMap is absent fails MountVolume.SetUp
    (``pkg/volume/configmap/configmap.go``) and the container is not started until it appears."""
    names = _eks(gpu_sim, 2)
    core = k8s.CoreV1Api(api_client)
    core.create_namespaced_pod(NS, _launcher(names[1], env={}, hostfile=True))
    gpu_sim.advance(60)
    pod = core.read_namespaced_pod(f"{JOB}-launcher-0-0", NS)
    assert pod.status.phase == "Pending"
    assert pod.status.container_statuses[0].state.waiting.reason == "ContainerCreating"
    events = core.list_namespaced_event(NS, field_selector=f"involvedObject.name={JOB}-launcher-0-0").items
    assert any(e.reason == "FailedMount" and f'configmap "{JOB}-mpi-hostfile" not found' in e.message for e in events)
    core.create_namespaced_config_map(NS, _hostfile([f"{JOB}-launcher-0-0 slots=8"]))
    gpu_sim.advance(3600)
    pod = core.read_namespaced_pod(f"{JOB}-launcher-0-0", NS)
    assert pod.status.phase == "Succeeded"


def test_an_mpijob_style_hostfile_of_fully_qualified_names_resolves(gpu_sim: SimServer, api_client: Any) -> None:
    """MPI Operator v0.8.0: ``<job>-worker-<i>.<job>.<ns>.svc slots=N``, workers with hostname = pod name."""
    names = _eks(gpu_sim, 3)
    lines = [f"{JOB}-node-0-{i}.{JOB}.{NS}.svc slots=8" for i in range(2)]
    _setup(api_client, names[:2], resources=EFA, lines=lines)
    pod, log = _launch(gpu_sim, api_client, _launcher(names[2], env=EFA_ENV))
    assert pod.status.phase == "Succeeded" and nccl_log.parse(log).ranks == 16


def _dcgm_pod(node: str, host: str | None) -> dict[str, Any]:
    args = ["diag", "-r", "1", "-j"] + (["--host", host] if host else [])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dcgm"},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [
                {
                    "name": "node",
                    "image": "nvcr.io/nvidia/cloud-native/dcgm:4.5.2-1-ubuntu22.04",
                    "command": ["dcgmi"],
                    "args": args,
                    "resources": {"limits": {"nvidia.com/gpu": "8"}},
                }
            ],
        },
    }


def test_dcgmi_reaches_the_hostengine_service_only_when_it_exists(gpu_sim: SimServer, api_client: Any) -> None:
    """NVCRE runs ``dcgmi diag --host nvidia-dcgm.gpu-operator.svc:5555``; the Service has
    internalTrafficPolicy Local, so each pod gets its own node's result (research/workloads.md §4.4)."""
    names = gpu_sim.add_gpu_nodes(2)
    gpu_sim.fabric.inject(fabric.parse_all([f"{names[1]}:gpu-dead[3]"]))
    core = k8s.CoreV1Api(api_client)
    core.delete_namespaced_service("nvidia-dcgm", "gpu-operator")  # the GPU cluster fixture has one
    host = "nvidia-dcgm.gpu-operator.svc:5555"
    core.create_namespaced_pod(NS, _dcgm_pod(names[1], host))
    gpu_sim.advance(60)
    pod = core.read_namespaced_pod("dcgm", NS)
    log = core.read_namespaced_pod_log("dcgm", NS, _preload_content=False).data.decode()
    assert _exit_code(pod) == 255 and f"unable to establish a connection to the specified host: {host}" in log
    core.delete_namespaced_pod("dcgm", NS, grace_period_seconds=0)
    service = {
        "metadata": {"name": "nvidia-dcgm"},
        "spec": {
            "selector": {"app": "nvidia-dcgm"},
            "internalTrafficPolicy": "Local",
            "ports": [{"name": "dcgm", "port": 5555, "targetPort": 5555}],
        },
    }
    core.create_namespaced_service("gpu-operator", service)
    gpu_sim.advance(5)
    core.create_namespaced_pod(NS, _dcgm_pod(names[1], host))
    gpu_sim.advance(60)
    log = core.read_namespaced_pod_log("dcgm", NS, _preload_content=False).data.decode()
    result = dcgm_diag.parse(log)
    assert result.verdict == "fail" and _exit_code(core.read_namespaced_pod("dcgm", NS)) != 0
    assert 3 in result.failed_gpus
