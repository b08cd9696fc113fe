"""The kubectl contract matrix: what operators type, each passing or refusing as a real 1.34 server.

Every row is one kubectl operation with the pinned kubectl 1.34 (``.venv/bin/kubectl``): its exit
status and the line it must print (stdout or stderr). Rows run in scenarios, in order, because
later rows use what earlier ones made. The same rows run against a real cluster with
``--real-cluster`` (nodes are made as API objects, and only those are cordoned or tainted). The
table in docs/sim.md lists every row; the expected answers cite where the real server words them:

- apimachinery:pkg/api/errors/errors.go — NotFound, AlreadyExists, Forbidden texts;
- apimachinery:pkg/util/validation/validation.go and k/k pkg/apis/core/validation — 422 causes;
- apiserver:pkg/endpoints/handlers/rest.go — the strict decoding 400 and ``Warning`` headers;
- apimachinery:pkg/util/managedfields/internal/conflict.go — server-side apply conflicts;
- kubectl:pkg/polymorphichelpers/rollout_status.go — what ``rollout status`` waits for;
- k/k plugin/pkg/admission/namespace/lifecycle — the immortal namespaces' 403.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client as k8s

from tests import simfixtures
from tests.contract import objects
from tests.contract.conftest import Cluster

ROLLOUT = "--timeout=90s"


@dataclass
class Kubectl:
    """Runs one row: the command, the exit status it must end with, and what it must print."""

    run: Callable[..., subprocess.CompletedProcess[str]]
    namespace: str
    rows: int = 0

    def __call__(
        self,
        *args: str,
        code: int = 0,
        out: str | None = None,
        err: str | None = None,
        stdin: str | None = None,
        namespaced: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        argv = ([f"--namespace={self.namespace}"] if namespaced else []) + list(args)
        done = self.run(*argv, check=False, input=stdin)
        self.rows += 1
        shown = f"kubectl {' '.join(args)} → exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
        if os.environ.get("MATRIX_SOFT"):  # while writing rows: show every mismatch, stop at none
            ok = done.returncode == code and (out is None or re.search(out, done.stdout, re.MULTILINE))
            ok = ok and (err is None or re.search(err, done.stderr, re.MULTILINE))
            if not ok:
                print(f"MISMATCH want {code} {out!r} {err!r}\n{shown}")
            return done
        assert done.returncode == code, shown
        if out is not None:
            assert re.search(out, done.stdout, re.MULTILINE), shown
        if err is not None:
            assert re.search(err, done.stderr, re.MULTILINE), shown
        return done


@pytest.fixture()
def kubectl(cluster: Cluster) -> Kubectl:
    return Kubectl(simfixtures.kubectl_runner(cluster.kubeconfig), cluster.namespace)


@pytest.fixture()
def running(cluster: Cluster) -> Iterator[None]:
    """A cluster whose controllers and kubelets run (on the simulator: start them, on nodes of its own)."""
    if cluster.sim is None:
        yield
        return
    sim = cluster.sim
    sim.vclock.set_speed(20)
    sim.add_nodes(2)
    sim.kubelet.start()
    try:
        yield
    finally:
        sim.kubelet.stop()
        sim.vclock.set_speed(1)


def _yaml_stream(*docs: dict[str, Any]) -> str:
    return "\n---\n".join(json.dumps(d) for d in docs)


def test_namespaces_configmaps_and_secrets(kubectl: Kubectl, cluster: Cluster) -> None:
    ns = cluster.name("matrix")
    kubectl("create", "namespace", ns, out=f"^namespace/{ns} created$", namespaced=False)
    kubectl(
        "create",
        "namespace",
        ns,
        code=1,
        err=rf'Error from server \(AlreadyExists\): namespaces "{ns}" already exists',
        namespaced=False,
    )
    kubectl(
        "create",
        "namespace",
        "Bad_Name",
        code=1,
        err=r'The Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        r"a lowercase RFC 1123 label",
        namespaced=False,
    )
    kubectl("get", "namespace", ns, out=rf"^{ns}\s+Active\s", namespaced=False)
    kubectl("delete", "namespace", ns, out=f'^namespace "{ns}" deleted', namespaced=False)
    kubectl(
        "delete",
        "namespace",
        "default",
        "--dry-run=server",
        code=1,
        err=r'Error from server \(Forbidden\): namespaces "default" is forbidden: this namespace may not be deleted',
        namespaced=False,
    )
    kubectl("create", "configmap", "settings", "--from-literal=mode=fast", out="^configmap/settings created$")
    kubectl(
        "create",
        "configmap",
        "settings",
        "--from-literal=mode=slow",
        code=1,
        err=r'^error: failed to create configmap: configmaps "settings" already exists$',
    )
    kubectl("get", "configmap", "settings", "-o", "jsonpath={.data.mode}", out="^fast$")
    kubectl("patch", "configmap", "settings", "-p", '{"data":{"mode":"safe"}}', out="^configmap/settings patched$")
    kubectl("label", "configmap", "settings", "tier=gold", out="^configmap/settings labeled$")
    kubectl("annotate", "configmap", "settings", "example.com/owner=sre", out="^configmap/settings annotated$")
    kubectl("get", "configmaps", "-l", "tier=gold", "-o", "name", out="^configmap/settings$")
    kubectl(
        "patch",
        "configmap",
        "settings",
        "-p",
        '{"metadata":{"labels":{"tier":"not valid"}}}',
        code=1,
        err=r'The ConfigMap "settings" is invalid: metadata.labels: Invalid value: "not valid": '
        r"a valid label must be an empty string or consist of",
    )
    bad_key = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "badkey"}, "data": {"a b": "c"}}
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(bad_key),
        code=1,
        err=r'The ConfigMap "badkey" is invalid: data\[a b\]: Invalid value: "a b": a valid config key must consist of',
    )
    kubectl("create", "secret", "generic", "creds", "--from-literal=token=s3cr3t", out="^secret/creds created$")
    kubectl("get", "secret", "creds", "-o", "jsonpath={.data.token}", out="^czNjcjN0$")
    kubectl(
        "create",
        "secret",
        "docker-registry",
        "pull",
        "--docker-server=registry.example.com",
        "--docker-username=u",
        "--docker-password=p",
        out="^secret/pull created$",
    )
    kubectl("get", "secret", "pull", out=r"^pull\s+kubernetes.io/dockerconfigjson\s+1\s")
    kubectl("delete", "configmap", "settings", out='^configmap "settings" deleted')
    kubectl(
        "get", "configmap", "settings", code=1, err=r'Error from server \(NotFound\): configmaps "settings" not found'
    )
    assert kubectl.rows == 21


@pytest.mark.warnings_expected  # --validate=warn is one of the rows
def test_field_validation_and_server_side_apply(kubectl: Kubectl) -> None:
    misspelt = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo"}, "dta": {"a": "b"}}
    kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(misspelt),
        code=1,
        err=r'Error from server \(BadRequest\).*ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        r'strict decoding error: unknown field "dta"',
    )
    kubectl(
        "create",
        "-f",
        "-",
        "--validate=warn",
        stdin=json.dumps(misspelt),
        out="^configmap/typo created$",
        err=r'^Warning: unknown field "dta"$',
    )
    kubectl("delete", "configmap", "typo", out='^configmap "typo" deleted')
    kubectl("create", "-f", "-", "--validate=false", stdin=json.dumps(misspelt), out="^configmap/typo created$")
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"size": "1"}}
    kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(applied), out="^configmap/ssa serverside-applied$")
    kubectl("patch", "configmap", "ssa", "--type=merge", "-p", '{"data":{"size":"2"}}', out="patched")
    kubectl(
        "apply",
        "--server-side",
        "-f",
        "-",
        stdin=json.dumps(applied),
        code=1,
        err=r'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: \.data\.size',
    )
    kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "-f",
        "-",
        stdin=json.dumps(applied),
        out="^configmap/ssa serverside-applied$",
    )
    kubectl(
        "get",
        "configmap",
        "ssa",
        "--show-managed-fields",
        "-o",
        "jsonpath={.metadata.managedFields[*].manager}",
        out="kubectl",
    )
    kubectl("apply", "--dry-run=server", "-f", "-", stdin=json.dumps(applied), out=r"\(server dry run\)")
    assert kubectl.rows == 10


def test_rbac_tokens_and_auth(kubectl: Kubectl, cluster: Cluster) -> None:
    ns = cluster.namespace
    kubectl("create", "serviceaccount", "robot", out="^serviceaccount/robot created$")
    kubectl("create", "token", "robot", out=r"^\S{20,}$")
    kubectl(
        "create",
        "role",
        "pod-reader",
        "--verb=get,list",
        "--resource=pods",
        out="^role.rbac.authorization.k8s.io/pod-reader created$",
    )
    kubectl(
        "create",
        "rolebinding",
        "robot-reads",
        "--role=pod-reader",
        f"--serviceaccount={ns}:robot",
        out="^rolebinding.rbac.authorization.k8s.io/robot-reads created$",
    )
    robot = f"--as=system:serviceaccount:{ns}:robot"
    kubectl("auth", "can-i", "list", "pods", robot, out="^yes$")
    kubectl("auth", "can-i", "delete", "pods", robot, code=1, out="^no$")
    kubectl("auth", "can-i", "--list", robot, out=r"^pods\s+\[\]\s+\[\]\s+\[get list\]$")
    kubectl("get", "pods", robot, out="")
    kubectl(
        "get",
        "configmaps",
        robot,
        code=1,
        err=rf'Error from server \(Forbidden\): configmaps is forbidden: User "system:serviceaccount:{ns}:robot" '
        rf'cannot list resource "configmaps" in API group "" in the namespace "{ns}"',
    )
    kubectl("auth", "whoami", out=r"^Username\s+\S+")
    kubectl("auth", "whoami", robot, out=rf"^Username\s+system:serviceaccount:{ns}:robot$")
    kubectl("auth", "can-i", "create", "nodes", out="^yes$")
    assert kubectl.rows == 12


def test_workloads_roll_out(kubectl: Kubectl, running: None) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", out="^deployment.apps/web created$")
    kubectl("rollout", "status", "deployment/web", ROLLOUT, out='^deployment "web" successfully rolled out$')
    kubectl("wait", "--for=condition=Available", "deployment/web", ROLLOUT, out="^deployment.apps/web condition met$")
    kubectl("get", "deployment", "web", out=r"^web\s+2/2\s+2\s+2\s")
    kubectl("get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o", "name", out="^pod/web-")
    kubectl("scale", "deployment", "web", "--replicas=3", out="^deployment.apps/web scaled$")
    kubectl("rollout", "status", "deployment/web", ROLLOUT, out="successfully rolled out$")
    kubectl("set", "image", "deployment/web", "nginx=nginx:1.28", out="^deployment.apps/web image updated$")
    kubectl("rollout", "status", "deployment/web", ROLLOUT, out="successfully rolled out$")
    kubectl("rollout", "history", "deployment/web", out=r"^2\s+<none>$")
    kubectl("get", "replicasets", "-l", "app=web", out=r"^web-\w+\s+3\s+3\s+3\s")
    kubectl(
        "patch",
        "deployment",
        "web",
        "-p",
        '{"spec":{"selector":{"matchLabels":{"app":"other"}}}}',
        code=1,
        err=r'(?s)The Deployment "web" is invalid: .*^\* spec\.selector: Invalid value: .*: field is immutable$',
    )
    daemon = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}]},
            },
        },
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(daemon), out="^daemonset.apps/agent created$")
    kubectl("rollout", "status", "daemonset/agent", ROLLOUT, out='^daemon set "agent" successfully rolled out$')
    stateful = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "replicas": 2,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
            },
        },
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(stateful), out="^statefulset.apps/db created$")
    kubectl(
        "rollout",
        "status",
        "statefulset/db",
        ROLLOUT,
        out="^partitioned roll out complete: 2 new pods have been updated...$",
    )
    kubectl("get", "pods", "db-0", "db-1", "-o", "name", out="^pod/db-0\npod/db-1$")
    kubectl("create", "job", "once", "--image=busybox:1.36", out="^job.batch/once created$")
    kubectl("wait", "--for=condition=Complete", "job/once", ROLLOUT, out="^job.batch/once condition met$")
    kubectl(
        "create",
        "cronjob",
        "nightly",
        "--image=busybox:1.36",
        "--schedule=0 3 * * *",
        out="^cronjob.batch/nightly created$",
    )
    kubectl(
        "create",
        "pdb",
        "web",
        "--selector=app=web",
        "--min-available=1",
        out="^poddisruptionbudget.policy/web created$",
    )
    kubectl("create", "service", "clusterip", "web", "--tcp=80:8080", out="^service/web created$")
    kubectl("get", "service", "web", "-o", "jsonpath={.spec.ports[0].targetPort}", out="^8080$")
    kubectl("get", "events", "--field-selector=involvedObject.kind=Deployment", out=r"ScalingReplicaSet")
    kubectl("events", "--for=deployment/web", out=r"Scaled up replica set web-")
    kubectl("describe", "deployment", "web", out=r"^Events:")
    kubectl("delete", "deployment", "web", out='^deployment.apps "web" deleted')
    kubectl("wait", "--for=delete", "pod", "-l", "app=web", ROLLOUT)
    assert kubectl.rows == 28


def test_discovery_openapi_and_cluster_scoped_kinds(kubectl: Kubectl, cluster: Cluster) -> None:
    kubectl(
        "api-resources",
        "--api-group=apps",
        out=r"^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$",
        namespaced=False,
    )
    kubectl("api-versions", out=r"^authorization.k8s.io/v1$", namespaced=False)
    kubectl("version", out=r"^Server Version: v1\.34\.", namespaced=False)
    kubectl("get", "--raw", "/healthz", out="^ok$", namespaced=False)
    kubectl("explain", "node.spec.taints", out=r"^FIELD: taints <\[\]Taint>$", namespaced=False)
    kubectl("explain", "deployment.spec.strategy", out=r"^GROUP:\s+apps$", namespaced=False)
    pc = cluster.name("priority")
    kubectl(
        "create",
        "priorityclass",
        pc,
        "--value=1000",
        out=f"^priorityclass.scheduling.k8s.io/{pc} created$",
        namespaced=False,
    )
    cluster.cleanup.append(lambda: k8s.SchedulingV1Api(cluster.api).delete_priority_class(pc))
    kubectl("create", "quota", "pods", "--hard=pods=10", out="^resourcequota/pods created$")
    assert kubectl.rows == 8


def test_nodes(kubectl: Kubectl, cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    node = cluster.name("matrix-node")
    core.create_node(objects.node(node, labels={"kubernetes.io/hostname": node}))
    cluster.cleanup.append(lambda: core.delete_node(node))
    kubectl("get", "node", node, out=rf"^{node}\s", namespaced=False)
    kubectl("label", "node", node, "pool=a", out=f"^node/{node} labeled$", namespaced=False)
    kubectl("cordon", node, out=f"^node/{node} cordoned$", namespaced=False)
    kubectl("taint", "node", node, "gpu=bad:NoSchedule", out=f"^node/{node} tainted$", namespaced=False)
    kubectl(
        "patch",
        "node",
        node,
        "-p",
        '{"spec":{"taints":[{"key":"gpu","value":"bad","effect":"Sometimes"}]}}',
        code=1,
        err=r'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        namespaced=False,
    )
    kubectl("taint", "node", node, "gpu-", out=f"^node/{node} untainted$", namespaced=False)
    kubectl("uncordon", node, out=f"^node/{node} uncordoned$", namespaced=False)
    kubectl("describe", "node", node, out=rf"^Name:\s+{node}$", namespaced=False)
    assert kubectl.rows == 8
