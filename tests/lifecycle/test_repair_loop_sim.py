"""The repair loop closes: the seed's rule set from a dead GPU to the node back in service, on the simulated cluster.

Covers: an Xid 79 read by the real monitors (the DCGM health report and the kernel log the simulated
node writes) under the seed's example rule set (cordon, taint ``nvidia.com/gpu-error=fatal:NoSchedule``)
is quarantined, drained, rebooted, handed to validation, validated with the quarantine taint
tolerated, and returned — schedulable, untainted, the fault conditions False (``ValidationPassed``,
the request named), no state label, ``uncordon-by`` written — with no hand step; at every pass
the labels tell the truth (``uncordon-by`` never on a cordoned node, the cordon labels never on a
schedulable one). The same walk through ``nvsentinel run``'s controllers on
their own threads (``shared.operate.service.run``), waited for in generous real time while the
test only moves the cluster's clock and runs the monitors. A taint someone else put on the
repaired node keeps the validation pod Pending,
as the scheduler would. A CONTACT_SUPPORT outcome beside a reboot in progress ends with a person:
the node stays cordoned, ``remediation-failed`` outranks the later reboot's success, an annotation
and a Warning Event say a person must act, no validation is started, and ``nvsentinel nodes``
shows it.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from shared import clock, nodes
from shared.health import conditions, quarantine, resource, xid
from shared.health import event as hevent
from shared.health.monitors import agent, memory
from shared.kube import rest
from shared.lifecycle import models, repaired, sessions
from shared.lifecycle import resource as vresource
from shared.sim.gpu import fabric
from tests.health.test_offline import SEED_VALUES
from tests.lifecycle import kit
from tests.lifecycle.test_events_sim import about

Phase = models.Phase
PREFIX = "k8saas.nvidia.com/"
GPU_ERROR = {"key": "nvidia.com/gpu-error", "value": "fatal", "effect": "NoSchedule"}
# the seed's rule set verbatim, the seed's lifecycle switches, and what this cluster adds: tenant
# pods evicted at once, a short post-repair test
VALUES = (
    SEED_VALUES.replace("fault-quarantine:\n", "fault-quarantine:\n  validation: {enabled: true}\n", 1)
    + """
global:
  lifecycleManager:
    enabled: true
node-drainer:
  userNamespaces: [{name: "*", mode: Immediate}]
lifecycle-manager:
  config:
    schedulingGate:
      cordon:
        remove: true
    defaultTests: ["dcgm-diag-test"]
    postRemediation: {tests: ["dcgm-diag-test"]}
"""
)


class Monitors:
    """The DCGM and Xid monitors over the simulated nodes' files, read once per pass."""

    def __init__(self, sim: Any, api: Any) -> None:
        self.sim, self.api = sim, api
        self.mem = memory.Memory()
        self.read: dict[str, int] = {}
        self.ticker = clock.for_api_client(api, max_age=0)

    def poll(self) -> None:
        root = self.sim.noderoot.root
        now = self.ticker.now()
        found = agent.targets(node=None, path=None, node_root=root, relative="dcgm-health.json", flag="--file")
        events = agent.dcgm_once(found, self.mem, now)
        for folder in sorted(p for p in root.iterdir() if (p / "kern.log").exists()):
            text = (folder / "kern.log").read_text()
            new, self.read[folder.name] = text[self.read.get(folder.name, 0) :], len(text)
            events += xid.events_from_text(new, node=folder.name, now=now)
        if events:
            resource.publish(self.api, events, now=self.ticker.now)


def labels(node: dict[str, Any]) -> dict[str, str]:
    return dict((node.get("metadata") or {}).get("labels") or {})


def condition(node: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(c for c in node["status"]["conditions"] if c["type"] == kind)


def truthful(node: dict[str, Any]) -> None:
    """What the labels say about the cordon matches the cordon."""
    held = labels(node)
    if nodes.is_cordoned(node):
        assert f"{PREFIX}uncordon-by" not in held, held
    else:
        assert f"{PREFIX}cordon-by" not in held, held


def test_the_seed_rule_set_brings_a_dead_gpu_node_back_into_service_with_no_hand_step(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES)
    fq = kit.health(api, tmp_path)
    watch = Monitors(sim, api)
    watch.poll()  # the baseline: every GPU healthy
    sim.fabric.inject(fabric.parse_all([f"{node}:xid[0]=79"]))
    seen: set[str] = set()
    request = ""
    for _ in range(160):
        watch.poll()
        fq.reconcile_once()
        life.reconcile_once()
        now = nodes.get(api, node)
        truthful(now)
        state = labels(now).get(quarantine.STATE_LABEL)
        if state:
            seen.add(state)
        if sessions.read(now)[1]:  # validating: the handed-over quarantine taint is validation's now
            request = sessions.read(now)[1] or request
            assert GPU_ERROR in now["spec"]["taints"] and repaired.tolerated(now) == [
                ("nvidia.com/gpu-error", "fatal", "NoSchedule")
            ]
            assert labels(now)[f"{PREFIX}cordon-by"] == quarantine.OWNER
        if request and not nodes.is_cordoned(now):
            break
        sim.advance(15)
    assert request, f"no validation started; states seen: {seen}; " + str(
        [(s.name, s.phase, s.status.drain, s.status.remediation) for s in resource.list_events(api, node=node)]
    )
    vr, _ = vresource.get(api, request)
    assert vr.status.phase is Phase.SUCCEEDED and vr.metadata.labels[models.SOURCE_LABEL] == "post-remediation"
    assert {"remediating", "remediation-succeeded"} <= seen  # quarantine, drain and reboot start in one pass
    back = nodes.get(api, node)
    assert not nodes.is_cordoned(back)
    assert not [t for t in back["spec"].get("taints") or [] if t["key"] == GPU_ERROR["key"]]
    anns = back["metadata"].get("annotations") or {}
    assert not {repaired.RECORD, nodes.TAINT_OWNERS, nodes.CORDON_OWNER, *quarantine.OWNED_ANNOTATIONS} & set(anns)
    now_labels = labels(back)
    assert quarantine.STATE_LABEL not in now_labels and sessions.STATE_LABEL not in now_labels
    assert now_labels[f"{PREFIX}uncordon-by"] == quarantine.OWNER
    assert not {f"{PREFIX}cordon-by", f"{PREFIX}cordon-reason", f"{PREFIX}cordon-timestamp"} & set(now_labels)
    syslog = condition(back, "SysLogsXIDError")  # the kernel-log monitor never reports an Xid healthy
    assert (syslog["status"], syslog["reason"]) == ("False", conditions.CLEARED_BY_VALIDATION)
    assert request in syslog["message"]
    assert condition(back, "GpuDriverWatch")["status"] == "False"
    assert not [c for c in back["status"]["conditions"] if c["type"] != "Ready" and c["status"] == "True"]
    verdicts = [e for e in about(api, "Node", node) if e[1] in ("ValidationPassed", "ValidationFailed")]
    assert len(verdicts) == 1 and verdicts[0][:2] == ("Normal", "ValidationPassed")
    assert request in verdicts[0][2] and "SysLogsXIDError" in verdicts[0][2]
    # a new Xid after the return is a new fault: the condition says that one, not the cleared message
    sim.fabric.inject(fabric.parse_all([f"{node}:xid[1]=79"]))
    watch.poll()
    fq.reconcile_once()
    again = condition(nodes.get(api, node), "SysLogsXIDError")
    assert again["status"] == "True" and request not in again["message"]


REAL_SECONDS = 180.0
"""How long the walk through ``nvsentinel run`` may take in real time: generous, the machine may be busy."""


def test_nvsentinel_run_closes_the_loop_on_its_own(
    gpu_sim: Any, api_client: Any, sim_kubeconfig: Path, tmp_path: Path
) -> None:
    from shared.health import service as hservice
    from shared.operate import service

    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    values = tmp_path / "values.yaml"
    values.write_text(VALUES)
    resource.install(api)  # what `nvsentinel crds install` (or the chart) did before the monitors started
    vresource.install(api)
    watch = Monitors(sim, api)
    watch.poll()
    stop = threading.Event()
    cluster = hservice.Cluster(kubeconfig=sim_kubeconfig, namespace="nvsentinel")
    runner = threading.Thread(target=lambda: service.run(cluster, values, True, stop=stop), daemon=True)
    runner.start()
    try:
        sim.fabric.inject(fabric.parse_all([f"{node}:xid[0]=79"]))
        deadline = time.monotonic() + REAL_SECONDS
        validated = False
        while time.monotonic() < deadline:
            watch.poll()
            now = nodes.get(api, node)
            truthful(now)
            validated = validated or sessions.read(now)[1] is not None
            done = [v for v in vresource.list_all(api) if v.status.phase is Phase.SUCCEEDED]
            if done and not nodes.is_cordoned(now) and labels(now).get(f"{PREFIX}uncordon-by"):
                break
            sim.advance(15)
            time.sleep(0.2)  # let the controllers' threads take their turn
        else:
            raise AssertionError(f"not back in service within {REAL_SECONDS:.0f} real seconds: {labels(now)}")
    finally:
        stop.set()
        sim.vclock.set_speed(600)  # the lifecycle sleeps in cluster time: let it wake up and stop
        runner.join(timeout=30)
    assert not runner.is_alive()
    assert validated
    back = nodes.get(api, node)
    assert not [t for t in back["spec"].get("taints") or [] if t["key"] == GPU_ERROR["key"]]
    assert condition(back, "SysLogsXIDError")["reason"] == conditions.CLEARED_BY_VALIDATION
    assert quarantine.STATE_LABEL not in labels(back)


def test_a_taint_someone_else_set_keeps_the_validation_pod_off_the_repaired_node(
    gpu_sim: Any, api_client: Any, tmp_path: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES)
    fq = kit.health(api, tmp_path)
    watch = Monitors(sim, api)
    watch.poll()
    sim.fabric.inject(fabric.parse_all([f"{node}:xid[0]=79"]))
    foreign = {"key": "example.com/maintenance", "value": "rack-7", "effect": "NoSchedule"}
    nodes.update(api, node, lambda n: not nodes.add_taint(n, foreign["key"], foreign["value"], foreign["effect"]))
    pending: list[dict[str, Any]] = []
    for _ in range(80):
        watch.poll()
        fq.reconcile_once()
        life.reconcile_once()
        pods = rest.list_items(api, rest.core_path("pods", "nvsentinel"))
        pending = [p for p in pods if (p.get("status") or {}).get("phase") == "Pending"]
        if pending and any(
            c.get("type") == "PodScheduled" and c.get("status") == "False"
            for c in (pending[0].get("status") or {}).get("conditions") or []
        ):
            break
        sim.advance(15)
    assert pending, "the validation pod never appeared"
    tolerated = {(t.get("key"), t.get("value")) for t in pending[0]["spec"].get("tolerations") or []}
    assert ("nvidia.com/gpu-error", "fatal") in tolerated and (foreign["key"], foreign["value"]) not in tolerated
    unscheduled = next(c for c in pending[0]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert "example.com/maintenance" in unscheduled["message"] and "gpu-error" not in unscheduled["message"]
    assert nodes.is_cordoned(nodes.get(api, node))


def failure(node: str, *, action: str, check: str, code: str, stamp: str) -> hevent.HealthEvent:
    return hevent.parse(
        {
            "agent": "gpu-health-monitor",
            "componentClass": "GPU",
            "checkName": check,
            "isFatal": True,
            "recommendedAction": action,
            "errorCode": [code],
            "entitiesImpacted": [{"entityType": "GPU", "entityValue": "4"}],
            "nodeName": node,
            "generatedTimestamp": stamp,
            "message": f"{check} on GPU 4",
        }
    )


def test_a_contact_support_outcome_ends_with_a_person_whatever_an_older_repair_reports(
    gpu_sim: Any, api_client: Any, tmp_path: Path, run_cli: Any, sim_kubeconfig: Path
) -> None:
    sim, api = gpu_sim, api_client
    [node] = sim.add_gpu_nodes(1)
    life = kit.make(api, tmp_path, VALUES)
    fq = kit.health(api, tmp_path)
    ticker = clock.for_api_client(api, max_age=0)
    reboot = failure(
        node, action="RESTART_BM", check="GpuDriverWatch", code="DCGM_FR_XID_ERROR", stamp="2026-01-01T00:00:00Z"
    )
    resource.publish(api, [reboot], now=ticker.now)
    fq.reconcile_once()  # quarantined, drained, RebootNode created
    assert labels(nodes.get(api, node))[quarantine.STATE_LABEL] == "remediating"
    support = failure(
        node,
        action="CONTACT_SUPPORT",
        check="GpuNvswitchFatalWatch",
        code="DCGM_FR_NVSWITCH_NVLINK_DOWN",
        stamp="2026-01-01T00:00:10Z",
    )
    resource.publish(api, [support], now=ticker.now)
    for _ in range(40):  # the reboot finishes after the CONTACT_SUPPORT outcome
        fq.reconcile_once()
        life.reconcile_once()
        sim.advance(15)
    remediations = {s.event.checkName: s.status.remediation for s in resource.list_events(api, node=node)}
    assert remediations["GpuDriverWatch"] is not None and remediations["GpuDriverWatch"].state == "Succeeded"
    assert remediations["GpuNvswitchFatalWatch"] is not None
    assert remediations["GpuNvswitchFatalWatch"].state == "Unsupported"
    held = nodes.get(api, node)
    assert nodes.is_cordoned(held) and nodes.cordon_owner(held) == quarantine.CORDON_OWNER
    assert labels(held)[quarantine.STATE_LABEL] == "remediation-failed"
    assert f"{PREFIX}uncordon-by" not in labels(held)
    asked = json.loads(held["metadata"]["annotations"][quarantine.ANN_ACTION])
    assert asked["action"] == "CONTACT_SUPPORT" and "GpuNvswitchFatalWatch" in asked["reason"]
    assert vresource.list_all(api) == []  # nothing to validate: a person has not acted yet
    warnings = [e for e in about(api, "Node", node) if e[0] == "Warning"]
    assert [e[1] for e in warnings] == ["RemediationFailed"]
    assert warnings[0][2].startswith("no automatic remediation for CONTACT_SUPPORT: GpuNvswitchFatalWatch")
    shown = run_cli("nvsentinel", "nodes", "-o", "json", f"--kubeconfig={sim_kubeconfig}")
    assert shown.code == 0, shown.stderr
    [row] = [r for r in json.loads(shown.stdout) if r["node"] == node]
    assert (row["cordoned"], row["state"], row["action"]) == (True, "remediation-failed", "CONTACT_SUPPORT")
    table = run_cli("nvsentinel", "nodes", f"--kubeconfig={sim_kubeconfig}")
    [header, line] = table.stdout.splitlines()
    assert header.split() == ["NODE", "QUARANTINED", "CORDONED", "ACTION", "CAUSES"]
    assert line.split()[:4] == [node, "True", "True", "CONTACT_SUPPORT"]
