"""An mpirun launcher container, run as Open MPI runs it: hostfile, ssh to each host, ranks, NCCL.

The kubelet knows only the pod (the operators' controllers are elsewhere and may be wrong): the
command line (:mod:`.mpirun`), the hostfile read through the pod's volumes (:mod:`.podfiles`),
each host resolved as cluster DNS would (:mod:`.clusterdns`) to a pod and so to a node. Then, as
on real hardware (research/workloads.md "How a wrong setup fails"):

- a host that does not resolve: ``ssh: Could not resolve hostname …``, ORTE cannot start its
  daemons, mpirun exits with ssh's status 255 (``orte/mca/plm/rsh/plm_rsh_module.c``
  ``rsh_wait_daemon``); a host whose pod serves no sshd: ``Connection refused``, the same;
- more processes than slots (``-N`` over ``slots=``): Open MPI's "not enough slots", exit 1;
- more GPUs asked of a host than its pod sees: the ranks there fail CUDA init, exit 1;
- no hostfile: every rank on the launcher's own node (a single-node run);
- a ``timeout N`` wrapper kills a run still going after N seconds: the rows printed so far, 124;
- otherwise an nccl-tests run over exactly the hosts' nodes, at the bandwidth the fabric gives
  the transport the ranks' pods asked for (:func:`.providers.shortfall`: without EFA devices and
  ``FI_PROVIDER=efa`` on EKS, NCCL crosses nodes over sockets); on a service's GB200 NVLink
  joins the nodes of a rack only for pods holding a ComputeDomain channel claim.

Ranks started over ssh inherit only what mpirun exports (``-x``); ranks on the launcher's own node
also inherit its environment. The workers' pods are returned so the kubelet can fail the run
("ORTE has lost communication with a remote daemon") when one of them dies mid-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shared.sim.apiserver import scheduler, store
from shared.sim.gpu import clusterdns, fabric, mpirun, nccl_output, podfiles, providers, stages, workloads

_RULE = "-" * 74


@dataclass(frozen=True)
class Host:
    """One host mpirun starts processes on."""

    name: str
    pod: dict[str, Any]
    node: str
    procs: int


@dataclass(frozen=True)
class Outcome:
    result: workloads.Result
    workers: dict[str, str] = field(default_factory=dict)
    """The other pods its ranks run in: uid -> hostname."""


def hostname(pod: dict[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("hostname") or pod["metadata"]["name"])


def visible_gpus(pod: dict[str, Any], node_gpus: int) -> int:
    """GPUs a container of ``pod`` sees: those it requested, else every GPU of the node when its
    env (or its image's) says ``NVIDIA_VISIBLE_DEVICES=all``, else none."""
    wanted = scheduler.gpu_request(pod)
    if wanted:
        return wanted
    container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
    env = workloads.container_env(container)
    value = env.get("NVIDIA_VISIBLE_DEVICES")
    if value is None:
        image = str(container.get("image", ""))
        value = "all" if image.startswith(tuple(stages.workloads().mpi.allGpuImages)) else ""
    return node_gpus if value == "all" else 0


def _fail(text: str, seconds: float, code: int) -> Outcome:
    return Outcome(workloads.Result(text, seconds, code))


def _daemons_failed(errors: list[str], seconds: float) -> Outcome:
    body = [
        *errors,
        _RULE,
        "ORTE was unable to reliably start one or more daemons.",
        "This usually is caused by:",
        "",
        "* not finding the required libraries and/or binaries on",
        "  one or more nodes. Please check your PATH and LD_LIBRARY_PATH",
        "  settings, or configure OMPI with --enable-orterun-prefix-by-default",
        "",
        "* lack of authority to execute on one or more specified nodes.",
        "  Please verify your allocation and authorities.",
        "",
        "* an inability to create a connection back to mpirun due to a",
        "  lack of common network interfaces and/or no route found between",
        "  them. Please check network connectivity (including firewalls",
        "  and network routing requirements).",
        _RULE,
    ]
    return _fail("\n".join(body) + "\n", seconds, 255)


def lost_daemon(launcher: str, host: str) -> str:
    """The launcher's log when a worker dies mid-run (kubeflow/mpi-operator#152)."""
    return "\n".join(
        [
            _RULE,
            "ORTE has lost communication with a remote daemon.",
            "",
            f"  HNP daemon   : [[43015,0],0] on node {launcher}",
            f"  Remote daemon: [[43015,0],1] on node {host}",
            "",
            "This is usually due to either a failure of the TCP network",
            "connection to the node, or possibly an internal failure of",
            "the daemon itself. We cannot recover from this failure, and",
            "therefore will terminate the job.",
            _RULE,
            "",
        ]
    )


def _ssh(launch: mpirun.Launch) -> tuple[int, int]:
    """(port, connection attempts) ssh uses, from ``plm_rsh_args``."""
    words = launch.mca.get("plm_rsh_args", "").replace("=", " ").split()
    port, attempts = 22, 1
    for i, word in enumerate(words[:-1]):
        if word == "-p" and words[i + 1].isdigit():
            port = int(words[i + 1])
        if word == "ConnectionAttempts" and words[i + 1].isdigit():
            attempts = int(words[i + 1])
    return port, attempts


def _serves_ssh(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running":
        return False
    running = any("running" in (c.get("state") or {}) for c in status.get("containerStatuses") or [])
    container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
    return running and workloads.classify(container).kind is workloads.Kind.SSHD


def _cores(model: fabric.Fabric, node: str) -> int:
    hw = model.node(node)
    cpus = int((hw.profile.capacity.get("cpu", "2") if hw else "2").rstrip("m") or 2)
    return max(1, cpus // 2)


def _entries(
    objects: store.Store, pod: dict[str, Any], launch: mpirun.Launch
) -> list[tuple[str, int | None]] | Outcome:
    """(host, slots) mpirun was given, or the failure of reading its hostfile."""
    if launch.hosts:
        return [(h, s if s is not None else 1) for h, s in launch.hosts]
    if launch.hostfile is None:
        return [(hostname(pod), None)]
    container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
    text = podfiles.read(objects, pod, container, launch.hostfile)
    if text is None:
        message = [_RULE, "Open RTE was unable to open the hostfile:", f"    {launch.hostfile}"]
        message += ["Check to make sure the path and filename are correct.", _RULE, ""]
        return _fail("\n".join(message), 1.0, 1)
    lines = mpirun.hostfile_lines(text)
    return [(line.host, line.slots) for line in lines] or [(hostname(pod), None)]


def _place(slots: list[int], launch: mpirun.Launch, program: str) -> list[int] | Outcome:
    if launch.per_node is not None:
        procs = [launch.per_node] * len(slots)
    elif launch.total is not None:
        left, procs = launch.total, []
        for have in slots:
            procs.append(min(have, left))
            left -= procs[-1]
        if left > 0 and launch.oversubscribe:
            for i in range(left):
                procs[i % len(procs)] += 1
            left = 0
        if left > 0:
            return _not_enough(launch.total, program)
    else:
        procs = list(slots)
    if not launch.oversubscribe and any(p > s for p, s in zip(procs, slots, strict=True)):
        return _not_enough(sum(procs), program)
    return procs


def _not_enough(wanted: int, program: str) -> Outcome:
    text = [
        _RULE,
        f"There are not enough slots available in the system to satisfy the {wanted}",
        "slots that were requested by the application:",
        "",
        f"  {program}",
        "",
        "Either request fewer slots for your application, or make more slots",
        "available for use.",
        "",
        "Alternatively, you can use the --oversubscribe option to ignore the",
        "number of available slots when deciding the number of processes to",
        "launch.",
        _RULE,
        "",
    ]
    return _fail("\n".join(text), 1.0, 1)


def _resolve(
    objects: store.Store, model: fabric.Fabric, pod: dict[str, Any], launch: mpirun.Launch, node: str
) -> list[tuple[str, int, dict[str, Any]]] | Outcome:
    entries = _entries(objects, pod, launch)
    if isinstance(entries, Outcome):
        return entries
    mpi = stages.workloads().mpi
    port, attempts = _ssh(launch)
    found, unknown, refused = [], [], []
    for host, slots in entries:
        target = clusterdns.resolve(objects, pod, host)
        if target is None:
            unknown.append(f"ssh: Could not resolve hostname {host}: Name or service not known")
            continue
        if target is not pod and target["metadata"]["uid"] != pod["metadata"]["uid"] and not _serves_ssh(target):
            refused.append(f"ssh: connect to host {host} port {port}: Connection refused")
            continue
        where = str((target.get("spec") or {}).get("nodeName") or node)
        found.append((host, slots if slots is not None else launch.default_slots or _cores(model, where), target))
    if unknown:
        return _daemons_failed(unknown + refused, mpi.resolveFailSeconds)
    if refused:
        return _daemons_failed(refused, mpi.connectAttemptSeconds * attempts)
    return found


def plan(
    objects: store.Store, model: fabric.Fabric, pod: dict[str, Any], node: str, workload: workloads.Workload
) -> list[Host] | Outcome:
    """Where mpirun puts its processes, or how it fails before any starts."""
    launch = workload.launch
    if launch is None:
        return _fail(f"mpirun: {workload.problem}\n", 1.0, 1)
    resolved = _resolve(objects, model, pod, launch, node)
    if isinstance(resolved, Outcome):
        return resolved
    program = launch.program[0] if launch.program else workload.binary
    procs = _place([slots for _, slots, _ in resolved], launch, program)
    if isinstance(procs, Outcome):
        return procs
    return [
        Host(host, target, str((target.get("spec") or {}).get("nodeName") or node), count)
        for (host, _, target), count in zip(resolved, procs, strict=True)
        if count > 0
    ]


def _cuda_failure(host: Host, reason: str) -> Outcome:
    name = hostname(host.pod)
    text = [
        f"{name}: Test CUDA failure common.cu:892 '{reason}'",
        f" .. {name} pid 6000: Test failure common.cu:1105",
        _RULE,
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        _RULE,
        "",
    ]
    return _fail("\n".join(text), stages.workloads().nccl.setupSeconds / 2, 1)


def _preamble(transport: str, env: dict[str, str], ip: str, nics: list[str]) -> tuple[str, ...]:
    """What NCCL_DEBUG=INFO prints about the network NCCL chose."""
    if env.get("NCCL_DEBUG", "").upper() not in ("INFO", "TRACE"):
        return ()
    if transport == "efa":
        return (f"NET/OFI Selected Provider is efa (found {len(nics)} nics)", "Using network AWS Libfabric")
    if transport in ("ib", "roce"):
        kind = "IB" if transport == "ib" else "RoCE"
        devices = " ".join(f"[{i}]{nic}:1/{kind}" for i, nic in enumerate(nics))
        return (f"NET/IB : Using {devices} ; OOB eth0:{ip}<0>", "Using network IB")
    if transport == "tcpxo":
        return ("Using network FasTrak",)
    return (f"NET/Socket : Using [0]eth0:{ip}<0>", "Using network Socket")


def run(
    objects: store.Store, model: fabric.Fabric, pod: dict[str, Any], node: str, workload: workloads.Workload
) -> Outcome:
    """The launcher's log, duration and exit code for one start of its container."""
    placed = plan(objects, model, pod, node, workload)
    if isinstance(placed, Outcome):
        return placed
    try:
        args = nccl_output.parse_args(workload.binary, list(workload.argv))
    except ValueError as exc:
        return _fail(f"{exc}\n", 1.0, 2)
    by_node: dict[str, list[Host]] = {}
    for host in placed:
        by_node.setdefault(host.node, []).append(host)
    for host in placed:
        hw = model.node(host.node)
        seen = visible_gpus(host.pod, hw.profile.gpu.count) if hw is not None else 0
        if seen == 0:
            return _cuda_failure(host, "no CUDA-capable device is detected")
        if host.procs * args.gpus_per_proc > seen:
            return _cuda_failure(host, "invalid device ordinal")
    names = list(by_node)
    own = pod["metadata"]["uid"]
    remote = any(h.pod["metadata"]["uid"] != own for h in placed)
    env = workload.launch.exported if remote and workload.launch else workload.env
    nodes = [model.nodes[n] for n in names]
    gpus = [sum(h.procs for h in by_node[n]) * args.gpus_per_proc for n in names]
    through_nics = env.get("NCCL_P2P_DISABLE") == "1" and env.get("NCCL_SHM_DISABLE") == "1"
    if len(names) > 1 and not _mnnvl(nodes[0], [h.pod for h in placed], env):
        through_nics = True  # NVLink between nodes needs an IMEX channel: without one, the NICs
    crosses = through_nics or model.spans_domains(names)
    machine = nodes[0].profile.machine
    transport = machine.network.transport if machine is not None else _link_transport(nodes[0])
    if machine is not None and providers.shortfall(machine.network, [h.pod for h in placed], env):
        transport = "socket"
    peak = model.busbw(
        names,
        workload.binary,
        through_nics=through_nics,
        socket=transport == "socket",
        rails=min(g / n.profile.gpu.count for g, n in zip(gpus, nodes, strict=True)),
    )
    half = stages.workloads().nccl.halfSaturationBytes["network" if crosses else "nvlink"]
    first = by_node[names[0]][0]
    ip = str((first.pod.get("status") or {}).get("podIP") or "10.244.0.2")
    text = nccl_output.render(
        args,
        nodes,
        peak=peak,
        crash=model.crash(names),
        half_bytes=half,
        hosts=[(hostname(by_node[n][0].pod), g) for n, g in zip(names, gpus, strict=True)],
        preamble=_preamble(transport, env, ip, nodes[0].nic_names()),
    )
    if workload.deadline is not None:
        text = nccl_output.cut_at(text, args, workload.deadline)
    workers = {h.pod["metadata"]["uid"]: hostname(h.pod) for h in placed if h.pod["metadata"]["uid"] != own}
    return Outcome(workloads.Result(text.text, text.seconds, text.exit_code), workers)


def _mnnvl(node: fabric.Node, pods: list[dict[str, Any]], env: dict[str, str]) -> bool:
    """Whether NVLink spans the nodes of one clique for these ranks. On a service's GB200 (not in
    the generic model) only when every rank's pod holds a DRA claim (the ComputeDomain's IMEX
    channel) and NCCL_MNNVL_ENABLE is not 0: research/nvcre.md §7 measured 882.51 GB/s with MNNVL
    and 191.40 GB/s without."""
    if node.profile.provider is None or not node.profile.cliquePerRack:
        return True
    claimed = all((p.get("spec") or {}).get("resourceClaims") for p in pods)
    return claimed and env.get("NCCL_MNNVL_ENABLE", "1") != "0"


def _link_transport(node: fabric.Node) -> str:
    return "roce" if node.profile.nic.linkLayer.lower() == "ethernet" else "ib"
