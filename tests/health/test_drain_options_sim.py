"""Drain options as upstream's node-drainer has them, on the simulated cluster in virtual time.

Covers: pods not Ready for longer than ``notReadyTimeoutMinutes`` neither get moved nor hold the
drain up; ``drainGPUPods`` moves only pods requesting GPUs; ``podDrainPolicies`` choose the mode
per pod (first match wins, unmatched pods are left alone); a partial drain also moves a pod that
requests GPUs but carries no device annotation; bad drain values are refused naming the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from shared import clock, errors
from shared.health import config, controller, resource
from shared.health import event as hevent
from shared.kube import rest
from tests.health.test_drain_remediation_sim import event, make, pod, pods_on, publish, status_of

NO_REMEDIATION = "fault-remediation: {enabled: false}\n"


@pytest.fixture()
def cluster(gpu_sim: Any, api_client: Any) -> Iterator[tuple[Any, Any, list[str]]]:
    names = gpu_sim.add_gpu_nodes(2)
    resource.install(api_client)
    controller.ensure_namespace(api_client, "nvsentinel")
    controller.ensure_namespace(api_client, "team")
    controller.ensure_namespace(api_client, "other")
    yield gpu_sim, api_client, names


def gpu_pod(api: Any, namespace: str, name: str, node: str, *, labels: dict[str, str] | None = None) -> None:
    """A pod with an nvidia.com/gpu limit and no device annotation."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {"app": name}},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": "cuda",
                    "command": ["sleep", "100000"],
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            ],
        },
    }
    rest.create(api, rest.core_path("pods", namespace), body)


def not_ready_since(api: Any, namespace: str, name: str, minutes: float) -> None:
    """Mark a running pod not Ready since ``minutes`` ago, in cluster time."""
    path = rest.core_path("pods", namespace, name)
    current = rest.get(api, path)
    since = hevent.format_time(clock.for_api_client(api, max_age=0).now() - timedelta(minutes=minutes))
    conditions = [c for c in (current.get("status") or {}).get("conditions") or [] if c.get("type") != "Ready"]
    conditions.append({"type": "Ready", "status": "False", "reason": "ContainersNotReady", "lastTransitionTime": since})
    current.setdefault("status", {})["conditions"] = conditions
    rest.replace(api, path + "/status", current)


def test_pods_not_ready_past_the_timeout_neither_move_nor_hold_the_drain(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "stuck", names[0])
    pod(api, "team", "recent", names[0])
    sim.advance(3)
    not_ready_since(api, "team", "stuck", 10)
    not_ready_since(api, "team", "recent", 1)
    publish(api, event(names[0]))
    result = make(api, tmp_path, NO_REMEDIATION).reconcile_once()  # AllowCompletion for every namespace
    assert result.followups == {"drain:InProgress": 1}
    drain = status_of(api, names[0])[0].drain
    assert drain is not None and drain.pending == ["team/recent"]
    assert pods_on(api, names[0]) == ["team/recent", "team/stuck"]


def test_a_longer_not_ready_timeout_keeps_waiting_for_the_pod(cluster: Any, tmp_path: Path) -> None:
    sim, api, names = cluster
    pod(api, "team", "stuck", names[0])
    sim.advance(3)
    not_ready_since(api, "team", "stuck", 10)
    publish(api, event(names[0]))
    make(api, tmp_path, NO_REMEDIATION + "node-drainer: {notReadyTimeoutMinutes: 30}\n").reconcile_once()
    drain = status_of(api, names[0])[0].drain
    assert drain is not None and (drain.state, drain.pending) == ("InProgress", ["team/stuck"])


def test_drain_gpu_pods_moves_only_pods_requesting_gpus(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    gpu_pod(api, "team", "trainer", names[0])
    pod(api, "team", "sidecar", names[0])
    publish(api, event(names[0]))
    values = NO_REMEDIATION + 'node-drainer:\n  drainGPUPods: true\n  userNamespaces: [{name: "*", mode: Immediate}]\n'
    assert make(api, tmp_path, values).reconcile_once().followups == {"drain:Succeeded": 1}
    assert pods_on(api, names[0]) == ["team/sidecar"]


def test_pod_drain_policies_choose_the_mode_per_pod(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    pod(api, "team", "replaceable", names[0], labels={"drain": "now"})
    pod(api, "team", "checkpointing", names[0], labels={"drain": "finish", "app": "x"})
    pod(api, "team", "unlisted", names[0], labels={"app": "y"})
    pod(api, "other", "elsewhere", names[0], labels={"drain": "finish"})
    publish(api, event(names[0]))
    values = (
        NO_REMEDIATION
        + """node-drainer:
  userNamespaces: []
  podDrainPolicies:
    - {name: replace, podSelector: "drain=now", mode: Immediate}
    - {name: finish, namespace: "te*", podSelector: "drain in (finish),app", mode: AllowCompletion}
"""
    )
    assert make(api, tmp_path, values).reconcile_once().followups == {"drain:InProgress": 1}
    drain = status_of(api, names[0])[0].drain
    assert drain is not None and drain.pending == ["team/checkpointing"]
    assert pods_on(api, names[0]) == ["other/elsewhere", "team/checkpointing", "team/unlisted"]


def test_a_partial_drain_also_moves_a_gpu_pod_without_a_device_annotation(cluster: Any, tmp_path: Path) -> None:
    _, api, names = cluster
    pod(api, "team", "on-gpu-3", names[0], gpu="GPU-3")
    pod(api, "team", "on-gpu-4", names[0], gpu="GPU-4")
    gpu_pod(api, "team", "unannotated", names[0])
    pod(api, "team", "cpu-only", names[0])
    publish(api, event(names[0], action="COMPONENT_RESET", uuid="GPU-3"))
    values = NO_REMEDIATION + 'node-drainer:\n  userNamespaces: [{name: "*", mode: Immediate}]\n'
    make(api, tmp_path, values).reconcile_once()
    assert pods_on(api, names[0]) == ["team/cpu-only", "team/on-gpu-4"]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("node-drainer:\n  podDrainPolicies: [{name: a, podSelector: x=y, mode: Immediate}]\n", "node-drainer"),
        (
            "node-drainer:\n  userNamespaces: []\n"
            "  podDrainPolicies: [{name: a, podSelector: 'x in y', mode: Immediate}]\n",
            "node-drainer.podDrainPolicies.0.podSelector",
        ),
        (
            "node-drainer:\n  userNamespaces: []\n  podDrainPolicies: [{name: a, podSelector: x, mode: Immediate},"
            " {name: a, podSelector: y, mode: Immediate}]\n",
            "podDrainPolicies[1].name",
        ),
        ("node-drainer: {notReadyTimeoutMinutes: -1}\n", "node-drainer.notReadyTimeoutMinutes"),
    ],
    ids=["with-user-namespaces", "bad-selector", "duplicate-name", "negative-timeout"],
)
def test_bad_drain_values_are_refused_naming_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "values.yaml"
    path.write_text(text)
    with pytest.raises(errors.InvalidInput) as caught:
        config.load(path)
    assert field in caught.value.line()


def test_rules_check_reports_what_only_the_whole_model_sees(tmp_path: Path) -> None:
    from shared.health import rulecheck

    path = tmp_path / "values.yaml"
    path.write_text(
        "node-drainer:\n  userNamespaces: []\n  podDrainPolicies:\n"
        "    - {name: a, podSelector: 'x in y', mode: Immediate}\n"
    )
    (problem,) = rulecheck.check(path)
    where = f"{path}:4:30: node-drainer.podDrainPolicies[0].podSelector"
    assert problem.line().startswith(f"{where}: label selector 'x in y'")
