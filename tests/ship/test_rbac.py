"""Least privilege, proven: each component runs under its own ServiceAccount token with the chart's
RBAC, and the simulated cluster's request audit must match its roles exactly.

Covers: ``nvsentinel run`` (enforcing, values from the chart's ConfigMap) takes an Xid 79 from the
node's kernel log through quarantine, an Immediate drain, a DeleteAfterTimeout drain, a RebootNode
that reboots the node and the validation lifecycle's post-remediation request (a Certification run
by the in-process certification engine), plus a TerminateNode, a GPUReset, a non-fatal event's
core Event, an analyzer-derived event, a ValidationRequest for the Job provider and a WorkloadRun,
and an hour later the collection of old HealthEvents;
the certification controller runs a Certification and a WorkloadRun to their verdicts; each
monitor (xid, dcgm, nic, csp) publishes through its command line with the DaemonSet's arguments.
For each: no request was denied, and every (verb, group, resource[/subresource]) the roles grant
was used, in the namespace a Role grants it. Also: every remediation kind in the default values is
granted to the controller; the comparison itself fails on a denial and on an unused grant.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from shared import clock, nodes, yamlio
from shared.certify import workload
from shared.chart import manifests
from shared.health import event as hevent
from shared.health import quarantine, resource, xid
from shared.kube import client, rest
from shared.lifecycle import models as vmodels
from shared.lifecycle import resource as vresource
from shared.sim import SimServer
from shared.sim.gpu import fabric

NS = "dsx"
PROVIDERS = "nvsentinel"
"""The lifecycle providers' namespace in the default values (not the release's here, on purpose)."""
REAL_SECONDS = 300.0
"""Real seconds a condition may take: generous, as on a machine shared with other work and two busy
loops the first quarantine of the scenario took over a minute (seconds when the machine is idle)."""
REBOOTS = rest.group_path("janitor.dgxc.nvidia.com", "v1alpha1", "rebootnodes")
TERMINATES = rest.group_path("janitor.dgxc.nvidia.com", "v1alpha1", "terminatenodes")
RESETS = rest.group_path("janitor.dgxc.nvidia.com", "v1alpha1", "gpuresets")
WORKLOADS = ("Deployment", "DaemonSet")
Grant = tuple[str, str, str, str]
"""(verb, group, resource[/subresource], namespace or "*" for cluster-wide)."""


# ------------------------------------------------------------------ roles and the audit
def grants(objects: list[dict[str, Any]], account: str) -> set[Grant]:
    """What the chart's bindings give ServiceAccount ``NS/account``, rule by rule, verb by verb."""
    roles = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
    }
    found: set[Grant] = set()
    for binding in (o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        if not any(
            s.get("kind") == "ServiceAccount" and s.get("name") == account and s.get("namespace") == NS
            for s in binding.get("subjects") or []
        ):
            continue
        ref = binding["roleRef"]
        scope = binding["metadata"].get("namespace", "") if binding["kind"] == "RoleBinding" else "*"
        role = roles[(ref["kind"], scope if ref["kind"] == "Role" else "", ref["name"])]
        for rule in role.get("rules") or []:
            assert not rule.get("resourceNames"), "the comparison below does not narrow by name"
            found |= {
                (verb, group, res, scope)
                for verb in rule["verbs"]
                for group in rule["apiGroups"]
                for res in rule["resources"]
            }
    return found


UNEXERCISED_EVENTS = {
    ("get", "", "events"): "read only when a create the server stored went unanswered "
    "(tests/health/test_api_survival_sim.py)",
}
UNEXERCISED_DRA = {
    **UNEXERCISED_EVENTS,
    ("create", "resource.nvidia.com", "computedomains"): "GB200 NVLink across nodes: no DRA driver here",
    (
        "delete",
        "trainer.kubeflow.org",
        "trainjobs",
    ): "only a stalled training run is deleted (tests/certify/test_stalls.py)",
}
"""Grants no scenario on the simulated cluster can use, with the reason (the comparison skips only these)."""
UNEXERCISED_LIFECYCLE = {
    **UNEXERCISED_DRA,
    (
        "get",
        "kubeflow.org",
        "mpijobs",
    ): "its validation runs on a cluster with Trainer (nvcre's scenario runs an MPIJob)",
    ("create", "kubeflow.org", "mpijobs"): "the same",
    ("list", "", "events"): "read only when a failing NCCL log names a pod already gone (nvcre's scenario does)",
}


def check_least_privilege(
    sim: SimServer,
    objects: list[dict[str, Any]],
    account: str,
    *,
    unexercised: dict[tuple[str, str, str], str] | None = None,
) -> None:
    """No request denied; every grant used (in its namespace, for a Role), but those ``unexercised``
    names with a reason."""
    who = f"system:serviceaccount:{NS}:{account}"
    records = sim.audit.records(identity=who)
    assert records, f"{who} made no request: the scenario did not run as that identity"
    denied = sorted({(r.verb, r.group, r.resource, r.namespace) for r in records if r.code == 403})
    assert denied == [], f"{who} was denied: {denied}"
    given = grants(objects, account)
    unused = sorted(
        g
        for g in given
        if g[:3] not in (unexercised or {})
        and not any((r.verb, r.group, r.resource) == g[:3] and g[3] in ("*", r.namespace) for r in records)
    )
    assert unused == [], f"{who} is granted what it never used: {unused}"


# ------------------------------------------------------------------ fixtures
@pytest.fixture()
def installed(gpu_sim: SimServer, api_client: Any, tmp_path: Path) -> Callable[..., list[dict[str, Any]]]:
    """``install(values_yaml="")``: the chart's objects except workloads, created as admin; returns all."""

    def install(values_yaml: str = "") -> list[dict[str, Any]]:
        files: tuple[Path, ...] = ()
        if values_yaml:
            path = tmp_path / "scenario-values.yaml"
            path.write_text(values_yaml)
            files = (path,)
        objects = manifests.render(manifests.Request(values_files=files, namespace=NS))
        for namespace in sorted({NS} | {o["metadata"].get("namespace") or NS for o in objects} - {"default"}):
            rest.create(
                api_client,
                rest.core_path("namespaces"),
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            )
        for obj in objects:
            if obj["kind"] not in WORKLOADS:
                rest.create(api_client, _collection(obj), obj)
        return objects

    return install


def _collection(obj: dict[str, Any]) -> str:
    group, _, version = obj["apiVersion"].rpartition("/")
    plural = {
        "ServiceAccount": "serviceaccounts",
        "ConfigMap": "configmaps",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Role": "roles",
        "RoleBinding": "rolebindings",
        "CustomResourceDefinition": "customresourcedefinitions",
        "Deployment": "deployments",
        "DaemonSet": "daemonsets",
    }[obj["kind"]]
    namespace = obj["metadata"].get("namespace")
    return rest.group_path(group, version, plural, namespace) if group else rest.core_path(plural, namespace)


def wait_for(what: str, predicate: Callable[[], bool], sim: SimServer | None = None) -> None:
    """Poll ``predicate``; on time-out say what was denied meanwhile (the usual cause)."""
    deadline = time.monotonic() + REAL_SECONDS
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    denied = (
        sorted({(r.identity, r.verb, r.group, r.resource, r.namespace) for r in sim.audit.records() if r.code == 403})
        if sim
        else []
    )
    raise AssertionError(f"not reached within {REAL_SECONDS:.0f} real seconds: {what}; denied: {denied}")


@pytest.fixture()
def threads() -> Iterator[Callable[[Callable[[], None]], threading.Thread]]:
    """Start ``body`` in a thread (returned); every one must have ended by teardown (the test sets its stop)."""
    started: list[threading.Thread] = []

    def start(body: Callable[[], None]) -> threading.Thread:
        thread = threading.Thread(target=body, daemon=True)
        thread.start()
        started.append(thread)
        return thread

    yield start
    for thread in started:
        thread.join(timeout=REAL_SECONDS)
    assert not [t for t in started if t.is_alive()], "a thread was left running"


# ------------------------------------------------------------------ nvsentinel run
SCENARIO_VALUES = """
global:
  dryRun: false
node-drainer:
  deleteAfterTimeoutMinutes: 1
  userNamespaces:
    - {name: batch, mode: DeleteAfterTimeout}
    - {name: "*", mode: Immediate}
nvsentinel:
  retention: 1h
  gcInterval: 1m
"""
WORKLOAD_RUN = """\
apiVersion: nvcre.nvidia.com/v1alpha1
kind: WorkloadRun
metadata: {name: bench}
spec:
  image: registry.example/me/nccl-bench:1
  command: [sh, -c, "all_reduce_perf -b 1G -e 8G -f 2 -g 1"]
  metric: {name: busbw, regex: 'Avg bus bandwidth\\s*:\\s*([0-9.]+)'}
  threshold: 'value >= 300'
  timeout: 30m
"""


def _pod(api: Any, namespace: str, name: str, node: str) -> None:
    with_ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    if not rest.list_items(api, rest.core_path("namespaces"), field_selector=f"metadata.name={namespace}"):
        rest.create(api, rest.core_path("namespaces"), with_ns)
    rest.create(
        api,
        rest.core_path("pods", namespace),
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "nodeName": node,
                "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "command": ["sleep", "100000"]}],
            },
        },
    )


def _event(
    node: str,
    *,
    action: str,
    fatal: bool = True,
    uuid: str = "GPU-1",
    check: str = "GpuXidError",
    stamp: str = "2026-01-01T00:00:00Z",
) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "gpu-health-monitor",
            "componentClass": "GPU",
            "checkName": check,
            "isFatal": fatal,
            "isHealthy": False,
            "recommendedAction": action,
            "errorCode": ["79"],
            "entitiesImpacted": [{"entityType": "GPU_UUID", "entityValue": uuid}],
            "nodeName": node,
            "generatedTimestamp": stamp,
            "message": "scenario",
        }
    )


def _pods_on(api: Any, node: str) -> list[str]:
    items = rest.list_items(api, rest.core_path("pods"), field_selector=f"spec.nodeName={node}")
    return sorted(f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in items)


def _ticked(sim: SimServer) -> bool:
    """Let the cluster run 15 virtual seconds (tests and lifecycle passes take minutes)."""
    sim.advance(15)
    return True


def _state(api: Any, node: str) -> str:
    return nodes.labels(nodes.get(api, node)).get(quarantine.STATE_LABEL, "")


def test_nvsentinel_run_enforcing_uses_exactly_its_role(
    installed: Callable[..., list[dict[str, Any]]],
    gpu_sim: SimServer,
    api_client: Any,
    sim_identity: Callable[[str, str], Path],
    threads: Callable[[Callable[[], None]], threading.Thread],
    tmp_path: Path,
) -> None:
    from shared.health import service
    from shared.operate import service as operate

    objects = installed(SCENARIO_VALUES)
    [config_map] = [o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "nvsentinel-values"]
    values_file = tmp_path / "values.yaml"  # what the pod mounts from the ConfigMap
    values_file.write_text(config_map["data"]["values.yaml"])
    sim = gpu_sim
    names = sim.add_gpu_nodes(10)  # the breaker allows 5 quarantines; 4 happen
    _pod(api_client, "team", "trainer", names[0])
    _pod(api_client, "batch", "job", names[0])
    sim.advance(3)
    sim.fabric.inject(fabric.parse_all([f"{names[0]}:xid=79"]))
    log = (sim.noderoot.root / names[0] / "kern.log").read_text()
    xids = xid.events_from_text(log, node=names[0], now=clock.WALL.now())
    assert [e.recommendedAction.name for e in xids] == ["RESTART_BM"]
    # The same Xid on one GPU of another node, a quarter of an hour apart (separate bursts): the
    # analyzer derives an event (and creates it).
    first = xids[0].generatedTimestamp
    assert first is not None
    repeated = [
        xids[0].model_copy(update={"generatedTimestamp": first - timedelta(minutes=15 * i), "nodeName": names[5]})
        for i in range(5)
    ]
    resource.publish(
        api_client,
        [
            *xids,
            *repeated,
            _event(names[1], action="REPLACE_VM"),
            _event(names[2], action="COMPONENT_RESET", uuid="GPU-3"),
            _event(names[3], action="NONE", fatal=False, check="GpuThermalWatch"),
        ],
        now=clock.WALL.now,
    )

    # The validation lifecycle: a request on a healthy node for the Job provider's test, and a
    # WorkloadRun in the Certification provider's namespace for the in-process certification engine.
    # The run is pinned to a node no event touches: a GPU pod packs onto the first fitting node by
    # name, so unpinned it could land on names[0] before its cordon (nvsentinel's own namespace is
    # never drained), and whether it did would depend on which thread ran first.
    vresource.create(api_client, "job-test", [names[4]], ["dcgm-diag-test"], source="scenario")
    run = workload.WorkloadRun.model_validate(yamlio.loads(WORKLOAD_RUN))
    run.spec.target.nodeNames = [names[6]]
    workload.create(api_client, run, PROVIDERS)

    stop = threading.Event()
    cluster = service.Cluster(kubeconfig=sim_identity(NS, "nvsentinel-controller"), namespace=NS)
    threads(lambda: operate.run(cluster, values_file, None, stop=stop, install=False))
    try:
        wait_for(
            "TerminateNode and GPUReset created, team/trainer evicted",
            lambda: (
                len(rest.list_items(api_client, TERMINATES)) == 1
                and len(rest.list_items(api_client, RESETS)) == 1
                and _pods_on(api_client, names[0]) == ["batch/job"]
            ),
            sim,
        )
        sim.advance(61)  # past deleteAfterTimeoutMinutes: batch/job is deleted, the drain ends, a reboot follows
        wait_for(
            "batch/job deleted and a RebootNode created",
            lambda: (
                _pods_on(api_client, names[0]) == []
                and names[0] in [r["spec"]["nodeName"] for r in rest.list_items(api_client, REBOOTS)]
            ),
            sim,
        )
        sim.advance(300)
        wait_for(
            f"{names[0]} rebooted and remediation-succeeded",
            lambda: _state(api_client, names[0]) == "remediation-succeeded",
            sim,
        )
        wait_for(
            "the analyzer's event processed",
            lambda: any(
                s.event.agent == "health-events-analyzer" and s.phase for s in resource.list_events(api_client)
            ),
            sim,
        )
        wait_for(
            "the non-fatal event's core Event",
            lambda: any(
                e["involvedObject"]["name"] == names[3]
                for e in rest.list_items(api_client, rest.core_path("events", "default"))
            ),
            sim,
        )
        # After the reboot the lifecycle validates names[0] (a Certification); every request and the
        # WorkloadRun reach a verdict while the cluster runs.
        wait_for(
            "every ValidationRequest and the WorkloadRun finished",
            lambda: (
                _ticked(sim)
                and (
                    len(vresource.list_all(api_client)) == 2
                    and all(v.status.phase in vmodels.TERMINAL for v in vresource.list_all(api_client))
                    and workload.finished(workload.get(api_client, PROVIDERS, "bench"))
                )
            ),
            sim,
        )
        # An hour on, the controller deletes the HealthEvents no quarantine holds (nvsentinel.retention).
        before = len(resource.list_events(api_client))
        sim.advance(3601)
        wait_for("old HealthEvents collected", lambda: len(resource.list_events(api_client)) < before, sim)
    finally:
        stop.set()
        sim.vclock.set_speed(600)  # the lifecycle sleeps in cluster time: let it wake up and stop
    wait_for(
        "the controller stopped", lambda: not [t for t in threading.enumerate() if t.name.startswith("nvsentinel-node")]
    )
    check_least_privilege(sim, objects, "nvsentinel-controller", unexercised=UNEXERCISED_LIFECYCLE)


def test_every_remediation_kind_of_the_default_values_is_granted_to_the_controller(tmp_path: Path) -> None:
    from shared.health import config

    objects = manifests.render(manifests.Request(namespace=NS))
    given = grants(objects, "nvsentinel-controller")
    cm = next(o for o in objects if o["metadata"]["name"] == "nvsentinel-values")
    path = tmp_path / "values.yaml"
    path.write_text(cm["data"]["values.yaml"])
    values = config.load(path).settings.fault_remediation.maintenance
    actions = [*values.actions.values(), *(a for by in values.componentActions.values() for a in by.values())]
    assert actions
    for action in actions:
        plural = action.kind.lower() + "s"
        assert {("create", action.apiGroup, plural, "*"), ("get", action.apiGroup, plural, "*")} <= given, action.kind


# ------------------------------------------------------------------ nvcrectl controller


def test_the_certification_controller_uses_exactly_its_role(
    installed: Callable[..., list[dict[str, Any]]],
    gpu_sim: SimServer,
    api_client: Any,
    sim_identity: Callable[[str, str], Path],
    threads: Callable[[Callable[[], None]], threading.Thread],
) -> None:
    from shared.certify import controller, models
    from shared.certify import resource as cresource
    from tests.certify import clusterkit as kit

    objects = installed()
    gpu_sim.add_gpu_nodes(4)
    gpu_sim.fabric.inject(fabric.parse_all(["node-003:gpu-dead[1]"]))  # a failing log names a pod already gone
    # default workload deadlines (an hour of cluster time): the cluster's clock waits for the loop
    # that starts the pods, so a busy machine cannot run a group into its deadline before the
    # failing log (and the path that reads the Scheduled Events of its gone pods) is reached
    gpu_sim.vclock.set_speed(600)
    limit = {"busBandwidthGBps": "value >= 300"}
    cresource.create(api_client, kit.certification("ship", thresholds=limit), NS)
    mpi = kit.certification("ship-mpi", backend="mpijob", target={"nodeNames": ["node-000", "node-001"]})
    cresource.create(api_client, mpi, NS)
    workload.create(api_client, workload.WorkloadRun.model_validate(yamlio.loads(WORKLOAD_RUN)), NS)
    own = client.new_client(kubeconfig=sim_identity(NS, "nvcre-controller"))
    stop = threading.Event()
    serving = threads(lambda: controller.serve(own, namespace=NS, stop=stop))
    try:
        wait_for(
            "the Certification's verdict",
            lambda: all(
                cresource.get(api_client, NS, name)[0].status.phase in (models.Phase.SUCCEEDED, models.Phase.FAILED)
                for name in ("ship", "ship-mpi")
            ),
            gpu_sim,
        )
        wait_for("the WorkloadRun's verdict", lambda: workload.finished(workload.get(api_client, NS, "bench")), gpu_sim)
    finally:
        stop.set()
    wait_for("the controller stopped", lambda: not serving.is_alive())  # its last requests are in the audit
    client.close(own)
    check_least_privilege(gpu_sim, objects, "nvcre-controller", unexercised=UNEXERCISED_DRA)


# ------------------------------------------------------------------ the monitors
@pytest.fixture()
def maintenance_endpoint() -> Iterator[str]:
    """A metadata endpoint announcing maintenance of node-000 in ten minutes."""
    start = datetime.now(UTC) + timedelta(minutes=10)
    body = json.dumps(
        {
            "events": [
                {
                    "eventId": "ev-1",
                    "nodeName": "node-000",
                    "resourceType": "gce_instance",
                    "resourceId": "i-1",
                    "status": "PENDING",
                    "maintenanceType": "SCHEDULED",
                    "recommendedAction": "RESTART_VM",
                    "scheduledStartTime": start.isoformat(),
                    "scheduledEndTime": (start + timedelta(hours=1)).isoformat(),
                }
            ]
        }
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maintenance"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _daemonset_args(objects: list[dict[str, Any]], kind: str) -> list[str]:
    [ds] = [o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == f"nvsentinel-monitor-{kind}"]
    container = ds["spec"]["template"]["spec"]["containers"][0]
    return [*container["command"][1:], *container["args"]]


def _on_node(args: list[str], node: str, root: Path, url: str) -> list[str]:
    """The DaemonSet's arguments with the host paths and node name of the simulated node."""
    out = []
    for arg in args:
        arg = arg.replace("$(NODE_NAME)", node)
        arg = arg.replace("/host/log/kern.log", str(root / node / "kern.log"))
        arg = arg.replace("/host/dcgm/dcgm-health.json", str(root / node / "dcgm-health.json"))
        arg = arg.replace("/host/sys", str(root / node / "sys"))
        arg = arg.replace("/var/lib/nvsentinel/", str(root.parent / "state") + "/")
        if arg.startswith("--url="):
            arg = f"--url={url}"
        out.append(arg)
    return out


@pytest.mark.parametrize(
    ("kind", "fault"),
    [("xid", "xid=79"), ("dcgm", "gpu-dead[2]"), ("nic", "nic[0]=0"), ("csp", None)],
    ids=["xid", "dcgm", "nic", "csp"],
)
def test_each_monitor_uses_exactly_its_role(
    kind: str,
    fault: str | None,
    installed: Callable[..., list[dict[str, Any]]],
    gpu_sim: SimServer,
    api_client: Any,
    sim_identity: Callable[[str, str], Path],
    maintenance_endpoint: str,
    run_cli: Any,
) -> None:
    objects = installed("monitors: {csp: {enabled: true}}")
    [node] = gpu_sim.add_gpu_nodes(1)
    if fault:
        gpu_sim.fabric.inject(fabric.parse_all([f"{node}:{fault}"]))
    (gpu_sim.noderoot.root.parent / "state").mkdir(exist_ok=True)
    args = _on_node(_daemonset_args(objects, kind), node, gpu_sim.noderoot.root, maintenance_endpoint)
    if "--follow" in args or "--interval" in " ".join(args):
        args = [a for a in args if not a.startswith("--interval")] + ["--interval=0.2s", "--for=0.5s"]
    config = sim_identity(NS, f"nvsentinel-monitor-{kind}")
    result = run_cli("nvsentinel", *args, "--kubeconfig", str(config))
    assert result.code == 0, result.stderr
    assert [s.event.nodeName for s in resource.list_events(api_client)] == [node]
    check_least_privilege(gpu_sim, objects, f"nvsentinel-monitor-{kind}")
    assert yamlio.loads(result.stdout.splitlines()[0])["nodeName"] == node


def test_the_comparison_fails_on_a_denial_and_on_a_grant_never_used(sim: SimServer) -> None:
    from shared.sim.apiserver import audit

    objects = manifests.render(manifests.Request(namespace=NS))
    who = f"system:serviceaccount:{NS}:nvsentinel-monitor-xid"
    sim.audit.add(audit.Record(who, "create", "nvsentinel.nvidia.com", "healthevents", "", "", 201))
    check_least_privilege(sim, objects, "nvsentinel-monitor-xid")  # exactly its role
    sim.audit.add(audit.Record(who, "list", "", "nodes", "", "", 403))
    with pytest.raises(AssertionError, match=r"was denied: \[\('list', '', 'nodes', ''\)\]"):
        check_least_privilege(sim, objects, "nvsentinel-monitor-xid")
    sim.audit.clear()
    sim.audit.add(audit.Record(who, "create", "nvsentinel.nvidia.com", "healthevents", "", "", 201))
    wider = [
        *objects,
        {
            "kind": "ClusterRole",
            "metadata": {"name": "extra"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "extra"},
            "roleRef": {"kind": "ClusterRole", "name": "extra"},
            "subjects": [{"kind": "ServiceAccount", "name": "nvsentinel-monitor-xid", "namespace": NS}],
        },
    ]
    with pytest.raises(AssertionError, match=r"never used: \[\('get', '', 'nodes', '\*'\)\]"):
        check_least_privilege(sim, wider, "nvsentinel-monitor-xid")
