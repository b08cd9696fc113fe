"""What a 1.34 API server refuses in built-in objects, and the defaults it writes into them.

Covers: ObjectMeta (names per kind, generateName, labels, annotation size, owner references,
finalizers); the immortal namespaces; ConfigMap and Secret keys, sizes, types and ``immutable``;
Pod containers, ports, restart policy, resources, the update restriction, and the defaults and
admission values a new Pod gets; Node taints; workload selectors and immutables (Deployment,
StatefulSet, Job); Service defaults and its fixed cluster IP; PodDisruptionBudget, Lease and
RBAC rules. Each case sends the request over HTTP with the official client and compares code,
reason, message and causes with the real server's; the source of each text is cited. Run
against a real cluster with ``--real-cluster``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

Cause = tuple[str, str, str]  # field, reason, message

RFC1123_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_LABEL = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
LABEL_KEY_NAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
POD_UPDATE = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
    "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
)


# ------------------------------------------------------------ helpers
def path(cluster: Cluster, plural: str, name: str = "", *, group: str = "", namespaced: bool = True) -> str:
    base = f"/apis/{group}/v1" if group else "/api/v1"
    if namespaced:
        base += f"/namespaces/{cluster.namespace}"
    return f"{base}/{plural}" + (f"/{name}" if name else "")


def post(cluster: Cluster, plural: str, body: dict[str, Any], *, group: str = "", namespaced: bool = True) -> Any:
    return objects.request(cluster.api, "POST", path(cluster, plural, group=group, namespaced=namespaced), body)[1]


def get(cluster: Cluster, plural: str, name: str, *, group: str = "", namespaced: bool = True) -> Any:
    return objects.request(cluster.api, "GET", path(cluster, plural, name, group=group, namespaced=namespaced))[1]


def put(cluster: Cluster, plural: str, body: dict[str, Any], *, group: str = "", namespaced: bool = True) -> Any:
    where = path(cluster, plural, body["metadata"]["name"], group=group, namespaced=namespaced)
    return objects.request(cluster.api, "PUT", where, body)[1]


def refused(call: Callable[[], Any]) -> dict[str, Any]:
    with pytest.raises(k8s.ApiException) as caught:
        call()
    body: dict[str, Any] = json.loads(caught.value.body)
    assert body["status"] == "Failure"
    return body


def assert_invalid(status: dict[str, Any], kind: str, name: str, causes: list[Cause], *, group: str = "") -> None:
    """The 422 of ``NewInvalid`` (apimachinery:pkg/api/errors/errors.go): one cause bare, several in
    ``[...]`` with repeats removed; every cause listed in ``details``."""
    texts = list(dict.fromkeys(f"{field}: {message}" for field, _, message in causes))
    joined = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    qualified = f"{kind}.{group}" if group else kind
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"] == f'{qualified} "{name}" is invalid: {joined}'
    details = status["details"]
    assert (details["name"], details.get("group", ""), details["kind"]) == (name, group, kind)
    assert [(c.get("field", ""), c.get("reason", ""), c.get("message", "")) for c in details["causes"]] == causes


def pod(name: str, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"containers": [{"name": "app", "image": "busybox:1.36"}]}
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": body}


def template(labels: dict[str, str], *, restart: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "app", "image": "busybox:1.36"}]}
    if restart:
        spec["restartPolicy"] = restart
    return {"metadata": {"labels": labels}, "spec": spec}


def deployment(name: str, *, selector: dict[str, Any] | None, labels: dict[str, str]) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": 0, "template": template(labels)}
    if selector is not None:
        spec["selector"] = selector
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


# ------------------------------------------------------------ ObjectMeta
def test_a_configmap_name_must_be_a_dns_subdomain(cluster: Cluster) -> None:
    # apimachinery:pkg/util/validation/validation.go IsDNS1123Subdomain, via NameIsDNSSubdomain
    status = refused(lambda: post(cluster, "configmaps", objects.configmap("Bad_Name")))
    assert_invalid(
        status,
        "ConfigMap",
        "Bad_Name",
        [("metadata.name", "FieldValueInvalid", f'Invalid value: "Bad_Name": {RFC1123_SUBDOMAIN}')],
    )


def test_a_namespace_name_is_a_dns_label_without_dots(cluster: Cluster) -> None:
    # apimachinery:pkg/util/validation/validation.go IsDNS1123Label ("must not contain dots")
    status = refused(lambda: post(cluster, "namespaces", {"metadata": {"name": "a.b"}}, namespaced=False))
    assert_invalid(
        status,
        "Namespace",
        "a.b",
        [("metadata.name", "FieldValueInvalid", 'Invalid value: "a.b": must not contain dots')],
    )


def test_a_service_name_is_a_dns_1035_label(cluster: Cluster) -> None:
    # k8s:pkg/apis/core/validation/validation.go ValidateServiceName = NameIsDNS1035Label
    body = {"metadata": {"name": "1abc"}, "spec": {"ports": [{"port": 80}]}}
    status = refused(lambda: post(cluster, "services", body))
    assert_invalid(
        status, "Service", "1abc", [("metadata.name", "FieldValueInvalid", f'Invalid value: "1abc": {DNS1035_LABEL}')]
    )


def test_a_bad_generate_name_is_reported_with_the_generated_name(cluster: Cluster) -> None:
    # apimachinery:pkg/api/validation/objectmeta.go ValidateObjectMetaAccessor: generateName judged as a prefix
    body = {"metadata": {"generateName": "Bad-"}, "data": {}}
    status = refused(lambda: post(cluster, "configmaps", body))
    generated = status["details"]["name"]
    assert generated.startswith("Bad-") and len(generated) == 9
    assert_invalid(
        status,
        "ConfigMap",
        generated,
        [
            ("metadata.generateName", "FieldValueInvalid", f'Invalid value: "Bad-": {RFC1123_SUBDOMAIN}'),
            ("metadata.name", "FieldValueInvalid", f'Invalid value: "{generated}": {RFC1123_SUBDOMAIN}'),
        ],
    )


def test_label_keys_and_values_are_checked_and_reported_on_the_map(cluster: Cluster) -> None:
    # apimachinery:pkg/apis/meta/v1/validation/validation.go ValidateLabels (errors on metadata.labels)
    key = refused(lambda: post(cluster, "configmaps", objects.configmap("k", labels={"bad key": "v"})))
    assert_invalid(
        key, "ConfigMap", "k", [("metadata.labels", "FieldValueInvalid", f'Invalid value: "bad key": {LABEL_KEY_NAME}')]
    )
    value = refused(lambda: post(cluster, "configmaps", objects.configmap("v", labels={"app": "bad value"})))
    assert_invalid(
        value,
        "ConfigMap",
        "v",
        [("metadata.labels", "FieldValueInvalid", f'Invalid value: "bad value": {LABEL_VALUE}')],
    )


@pytest.mark.parametrize(
    ("resource", "body"),
    [
        ("configmaps", objects.configmap("trailing", labels={"app": "v\n"})),
        ("configmaps", objects.configmap("name\n")),
    ],
    ids=["label-value", "name"],
)
def test_a_trailing_newline_is_no_part_of_a_valid_name_or_label(
    cluster: Cluster, resource: str, body: dict[str, Any]
) -> None:
    # Go's regexp anchors `$` at the end of the text only: "v\n" matches no validation pattern
    status = refused(lambda: post(cluster, resource, body))
    assert status["code"] == 422 and status["reason"] == "Invalid"


def test_annotations_above_256_kib_in_total_are_too_long(cluster: Cluster) -> None:
    # apimachinery:pkg/api/validation/objectmeta.go ValidateAnnotations (TotalAnnotationSizeLimitB)
    body = objects.configmap("annotated")
    body["metadata"]["annotations"] = {"example.com/a": "x" * (256 * 1024)}
    status = refused(lambda: post(cluster, "configmaps", body))
    assert_invalid(
        status,
        "ConfigMap",
        "annotated",
        [("metadata.annotations", "FieldValueTooLong", "Too long: may not be more than 262144 bytes")],
    )


def test_owner_references_need_a_uid_and_one_controller_at_most(cluster: Cluster) -> None:
    # apimachinery:pkg/api/validation/objectmeta.go validateOwnerReference, ValidateOwnerReferences
    body = objects.configmap("owned")
    body["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": ""}]
    missing = refused(lambda: post(cluster, "configmaps", body))
    assert_invalid(
        missing,
        "ConfigMap",
        "owned",
        [("metadata.ownerReferences.uid", "FieldValueInvalid", 'Invalid value: "": must not be empty')],
    )
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": True},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "2", "controller": True},
    ]
    body["metadata"]["ownerReferences"] = refs
    shown = ",".join(
        f'{{"apiVersion":"v1","kind":"ConfigMap","name":"{r["name"]}","uid":"{r["uid"]}","controller":true}}'
        for r in refs
    )
    two = refused(lambda: post(cluster, "configmaps", body))
    assert_invalid(
        two,
        "ConfigMap",
        "owned",
        [
            (
                "metadata.ownerReferences",
                "FieldValueInvalid",
                f"Invalid value: [{shown}]: Only one reference can have Controller set to true. "
                'Found "true" in references for ConfigMap/a and ConfigMap/b',
            )
        ],
    )


def test_an_unqualified_finalizer_must_be_a_standard_one(cluster: Cluster) -> None:
    # k8s:pkg/apis/core/validation/validation.go validateKubeFinalizerName (built-in kinds only)
    body = objects.configmap("final")
    body["metadata"]["finalizers"] = ["example.com/keep", "keep"]
    status = refused(lambda: post(cluster, "configmaps", body))
    assert_invalid(
        status,
        "ConfigMap",
        "final",
        [
            (
                "metadata.finalizers[1]",
                "FieldValueInvalid",
                'Invalid value: "keep": name is neither a standard finalizer name nor is it fully qualified',
            )
        ],
    )


def test_several_causes_are_listed_together(cluster: Cluster) -> None:
    # apimachinery:pkg/util/errors/errors.go aggregate: "[e1, e2]"
    body = pod("Bad_Pod")
    del body["spec"]["containers"][0]["image"]
    status = refused(lambda: post(cluster, "pods", body))
    assert_invalid(
        status,
        "Pod",
        "Bad_Pod",
        [
            ("metadata.name", "FieldValueInvalid", f'Invalid value: "Bad_Pod": {RFC1123_SUBDOMAIN}'),
            ("spec.containers[0].image", "FieldValueRequired", "Required value"),
        ],
    )


# ------------------------------------------------------------ Namespace
def test_the_default_namespace_may_not_be_deleted(cluster: Cluster) -> None:
    # apiserver:pkg/admission/plugin/namespace/lifecycle/admission.go (immortal namespaces); dry run so a
    # permissive cluster loses nothing
    for name in ("default", "kube-system", "kube-public"):
        where = f"/api/v1/namespaces/{name}"
        status = refused(partial(objects.request, cluster.api, "DELETE", where, query=[("dryRun", "All")]))
        assert (status["code"], status["reason"]) == (403, "Forbidden")
        assert status["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        assert (status["details"]["name"], status["details"]["kind"]) == (name, "namespaces")


# ------------------------------------------------------------ ConfigMap and Secret
def test_configmap_keys_must_be_config_keys_and_not_repeat_in_binary_data(cluster: Cluster) -> None:
    # apimachinery:pkg/util/validation/validation.go IsConfigMapKey; k8s:.../validation.go ValidateConfigMap
    bad = refused(lambda: post(cluster, "configmaps", objects.configmap("keys", {"a b": "1"})))
    assert_invalid(
        bad,
        "ConfigMap",
        "keys",
        [
            (
                "data[a b]",
                "FieldValueInvalid",
                "Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
                "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            )
        ],
    )
    both = objects.configmap("both", {"k": "1"})
    both["binaryData"] = {"k": base64.b64encode(b"1").decode()}
    status = refused(lambda: post(cluster, "configmaps", both))
    assert_invalid(
        status,
        "ConfigMap",
        "both",
        [("data[k]", "FieldValueInvalid", 'Invalid value: "k": duplicate of key present in binaryData')],
    )


def test_configmap_data_over_one_mib_is_reported_on_the_whole_object(cluster: Cluster) -> None:
    # k8s:.../validation.go ValidateConfigMap: TooLong(field.NewPath(""), ...) prints as "[]"
    status = refused(lambda: post(cluster, "configmaps", objects.configmap("big", {"blob": "x" * (1024 * 1024 + 1)})))
    assert_invalid(
        status, "ConfigMap", "big", [("[]", "FieldValueTooLong", "Too long: may not be more than 1048576 bytes")]
    )


def test_typed_secrets_need_their_keys(cluster: Cluster) -> None:
    # k8s:.../validation.go ValidateSecret (SecretTypeTLS, SecretTypeDockerConfigJSON)
    tls = {"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {}}
    status = refused(lambda: post(cluster, "secrets", tls))
    assert_invalid(
        status,
        "Secret",
        "tls",
        [
            ("data[tls.crt]", "FieldValueRequired", "Required value"),
            ("data[tls.key]", "FieldValueRequired", "Required value"),
        ],
    )
    docker = {
        "metadata": {"name": "pull"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(b"not json").decode()},
    }
    status = refused(lambda: post(cluster, "secrets", docker))
    assert_invalid(
        status,
        "Secret",
        "pull",
        [
            (
                "data[.dockerconfigjson]",
                "FieldValueInvalid",
                "Invalid value: \"<secret contents redacted>\": invalid character 'o' in literal null (expecting 'u')",
            )
        ],
    )


def test_a_secrets_type_defaults_to_opaque_and_cannot_change(cluster: Cluster) -> None:
    # k8s:pkg/apis/core/v1/defaults.go SetDefaults_Secret; .../validation.go ValidateSecretUpdate
    made = post(cluster, "secrets", {"metadata": {"name": "typed"}, "stringData": {"username": "u"}})
    assert made["type"] == "Opaque" and "stringData" not in made
    made["type"] = "kubernetes.io/basic-auth"
    status = refused(lambda: put(cluster, "secrets", made))
    assert_invalid(
        status,
        "Secret",
        "typed",
        [("type", "FieldValueInvalid", 'Invalid value: "kubernetes.io/basic-auth": field is immutable')],
    )


def test_an_immutable_configmap_keeps_its_data_and_its_flag(cluster: Cluster) -> None:
    # k8s:.../validation.go ValidateConfigMapUpdate
    body = objects.configmap("frozen", {"a": "1"})
    body["immutable"] = True
    made = post(cluster, "configmaps", body)
    made["data"] = {"a": "2"}
    made["immutable"] = False
    status = refused(lambda: put(cluster, "configmaps", made))
    assert_invalid(
        status,
        "ConfigMap",
        "frozen",
        [
            ("immutable", "FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set"),
            ("data", "FieldValueForbidden", "Forbidden: field is immutable when `immutable` is set"),
        ],
    )


# ------------------------------------------------------------ Pod
def test_pod_containers_need_an_image_and_unique_names(cluster: Cluster) -> None:
    # k8s:.../validation.go validateContainerCommon, validateContainers
    body = pod("twins", containers=[{"name": "app", "image": "busybox"}, {"name": "app", "image": "busybox"}])
    status = refused(lambda: post(cluster, "pods", body))
    assert_invalid(
        status, "Pod", "twins", [("spec.containers[1].name", "FieldValueDuplicate", 'Duplicate value: "app"')]
    )


def test_pod_ports_restart_policy_and_resources_are_checked(cluster: Cluster) -> None:
    # k8s:.../validation.go validateContainerPorts, validateRestartPolicy, validateResourceRequirements
    port = pod("port", containers=[{"name": "app", "image": "busybox", "ports": [{"containerPort": 70000}]}])
    assert_invalid(
        refused(lambda: post(cluster, "pods", port)),
        "Pod",
        "port",
        [
            (
                "spec.containers[0].ports[0].containerPort",
                "FieldValueInvalid",
                "Invalid value: 70000: must be between 1 and 65535, inclusive",
            )
        ],
    )
    restart = pod("restart", restartPolicy="Sometimes")
    assert_invalid(
        refused(lambda: post(cluster, "pods", restart)),
        "Pod",
        "restart",
        [
            (
                "spec.restartPolicy",
                "FieldValueNotSupported",
                'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
            )
        ],
    )
    resources = {"requests": {"cpu": "2000m"}, "limits": {"cpu": "1"}}
    greedy = pod("greedy", containers=[{"name": "app", "image": "busybox", "resources": resources}])
    assert_invalid(
        refused(lambda: post(cluster, "pods", greedy)),
        "Pod",
        "greedy",
        [
            (
                "spec.containers[0].resources.requests",
                "FieldValueInvalid",
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
    )


def test_an_extended_resource_request_needs_an_equal_limit(cluster: Cluster) -> None:
    # k8s:.../validation.go validateResourceRequirements (IsOvercommitAllowed is false for extended resources)
    resources = {"requests": {"example.com/gpu": "1"}}
    body = pod("gpu", containers=[{"name": "app", "image": "busybox", "resources": resources}])
    assert_invalid(
        refused(lambda: post(cluster, "pods", body)),
        "Pod",
        "gpu",
        [
            (
                "spec.containers[0].resources.limits",
                "FieldValueRequired",
                "Required value: Limit must be set for non overcommitable resources",
            )
        ],
    )


def test_a_new_pod_gets_the_servers_defaults(cluster: Cluster) -> None:
    # k8s:pkg/apis/core/v1/defaults.go SetDefaults_PodSpec/_Container/_Pod; admission plugins ServiceAccount,
    # Priority and DefaultTolerationSeconds; pod strategy PrepareForCreate (status, QoS)
    containers = [
        {"name": "latest", "image": "busybox", "resources": {"limits": {"cpu": "500m", "memory": "1024Mi"}}},
        {"name": "pinned", "image": "busybox:1.36", "ports": [{"containerPort": 8080}]},
    ]
    post(cluster, "pods", pod("defaults", containers=containers))
    made = get(cluster, "pods", "defaults")
    spec = made["spec"]
    assert {k: spec[k] for k in ("restartPolicy", "dnsPolicy", "schedulerName", "terminationGracePeriodSeconds")} == {
        "restartPolicy": "Always",
        "dnsPolicy": "ClusterFirst",
        "schedulerName": "default-scheduler",
        "terminationGracePeriodSeconds": 30,
    }
    assert spec["securityContext"] == {} and spec["enableServiceLinks"] is True
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert spec["serviceAccountName"] == "default"
    latest, pinned = spec["containers"]
    assert (latest["imagePullPolicy"], pinned["imagePullPolicy"]) == ("Always", "IfNotPresent")
    assert (latest["terminationMessagePath"], latest["terminationMessagePolicy"]) == ("/dev/termination-log", "File")
    assert latest["resources"] == {
        "limits": {"cpu": "500m", "memory": "1Gi"},
        "requests": {"cpu": "500m", "memory": "1Gi"},
    }
    assert pinned["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        assert {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300} in spec[
            "tolerations"
        ]
    assert made["status"]["qosClass"] == "Burstable"


def test_a_pod_update_may_change_images_but_not_commands_or_the_node(cluster: Cluster) -> None:
    # k8s:.../validation.go ValidatePodUpdate (updatablePodSpecFields, then a diff of the spec)
    post(cluster, "pods", pod("fixed"))
    current = get(cluster, "pods", "fixed")
    current["spec"]["containers"][0]["image"] = "busybox:1.37"
    current = put(cluster, "pods", current)
    assert current["spec"]["containers"][0]["image"] == "busybox:1.37"
    for change in ({"command": ["sleep", "1"]}, {"nodeName": "elsewhere"}):
        changed = json.loads(json.dumps(current))
        if "command" in change:
            changed["spec"]["containers"][0].update(change)
        else:
            changed["spec"].update(change)
        status = refused(partial(put, cluster, "pods", changed))
        assert (status["code"], status["reason"]) == (422, "Invalid")
        assert status["message"].startswith(f'Pod "fixed" is invalid: spec: {POD_UPDATE}')
        ((cause,),) = [status["details"]["causes"]]
        assert (cause["field"], cause["reason"]) == ("spec", "FieldValueForbidden")
        assert cause["message"].startswith(POD_UPDATE)


def test_a_pod_replaced_from_its_manifest_compares_after_defaulting(cluster: Cluster) -> None:
    # Defaults apply to every decoded body (k8s:pkg/apis/core/v1/defaults.go), Priority keeps its values on
    # update (k8s:plugin/pkg/admission/priority) and DefaultTolerationSeconds admits updates too; the
    # ServiceAccount plugin does not, so the manifest names the account.
    post(cluster, "pods", pod("manifest"))
    resource_version = get(cluster, "pods", "manifest")["metadata"]["resourceVersion"]
    body = pod("manifest", serviceAccountName="default")
    body["metadata"]["resourceVersion"] = resource_version
    body["spec"]["containers"][0]["image"] = "busybox:1.37"
    replaced = put(cluster, "pods", body)
    assert replaced["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert replaced["spec"]["priority"] == 0 and len(replaced["spec"]["tolerations"]) == 2


def test_an_unknown_priority_class_is_forbidden(cluster: Cluster) -> None:
    # k8s:plugin/pkg/admission/priority/admission.go
    status = refused(lambda: post(cluster, "pods", pod("urgent", priorityClassName="no-such-class")))
    assert (status["code"], status["reason"]) == (403, "Forbidden")
    assert status["message"] == 'pods "urgent" is forbidden: no PriorityClass with name no-such-class was found'


# ------------------------------------------------------------ Node
def test_node_taints_need_a_known_effect_and_are_reported_under_metadata(cluster: Cluster) -> None:
    # k8s:.../validation.go ValidateNode validates spec.taints with the path metadata.taints
    name = cluster.name("tainted")
    body = {"metadata": {"name": name}, "spec": {"taints": [{"key": "k", "effect": "Bad"}]}}
    status = refused(lambda: post(cluster, "nodes", body, namespaced=False))
    assert_invalid(
        status,
        "Node",
        name,
        [
            (
                "metadata.taints[0].effect",
                "FieldValueNotSupported",
                'Unsupported value: "Bad": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            )
        ],
    )
    twice = {"metadata": {"name": name}, "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}] * 2}}
    status = refused(lambda: post(cluster, "nodes", twice, namespaced=False))
    ((cause,),) = [status["details"]["causes"]]
    assert (cause["field"], cause["reason"]) == ("metadata.taints[1]", "FieldValueDuplicate")
    assert cause["message"].endswith(": taints must be unique by key and effect pair")


# ------------------------------------------------------------ workloads
def test_a_deployment_needs_a_selector_that_matches_its_template(cluster: Cluster) -> None:
    # k8s:pkg/apis/apps/validation/validation.go ValidateDeploymentSpec, ValidatePodTemplateSpecForReplicaSet
    status = refused(
        lambda: post(cluster, "deployments", deployment("nosel", selector=None, labels={"app": "web"}), group="apps")
    )
    assert_invalid(
        status,
        "Deployment",
        "nosel",
        [
            ("spec.selector", "FieldValueRequired", "Required value"),
            (
                "spec.template.metadata.labels",
                "FieldValueInvalid",
                'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
            ),
        ],
        group="apps",
    )
    body = deployment("mismatch", selector={"matchLabels": {"app": "api"}}, labels={"app": "web"})
    status = refused(lambda: post(cluster, "deployments", body, group="apps"))
    assert_invalid(
        status,
        "Deployment",
        "mismatch",
        [
            (
                "spec.template.metadata.labels",
                "FieldValueInvalid",
                'Invalid value: {"app":"web"}: `selector` does not match template `labels`',
            )
        ],
        group="apps",
    )


def test_a_deployments_selector_cannot_change_and_its_defaults_are_written(cluster: Cluster) -> None:
    # k8s:pkg/apis/apps/v1/defaults.go SetDefaults_Deployment; pkg/registry/apps/deployment/strategy.go ValidateUpdate
    labels = {"app": "web", "tier": "front"}
    made = post(
        cluster, "deployments", deployment("web", selector={"matchLabels": {"app": "web"}}, labels=labels), group="apps"
    )
    spec = made["spec"]
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    current = get(cluster, "deployments", "web", group="apps")
    current["spec"]["selector"] = {"matchLabels": labels}
    status = refused(lambda: put(cluster, "deployments", current, group="apps"))
    assert_invalid(
        status,
        "Deployment",
        "web",
        [
            (
                "spec.selector",
                "FieldValueInvalid",
                'Invalid value: {"matchLabels":{"app":"web","tier":"front"}}: field is immutable',
            )
        ],
        group="apps",
    )


def test_a_statefulset_spec_may_change_only_in_the_listed_fields(cluster: Cluster) -> None:
    # k8s:pkg/apis/apps/validation/validation.go ValidateStatefulSetUpdate (1.34 message)
    body = {
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "replicas": 0,
            "selector": {"matchLabels": {"app": "db"}},
            "template": template({"app": "db"}),
        },
    }
    made = post(cluster, "statefulsets", body, group="apps")
    assert made["spec"]["podManagementPolicy"] == "OrderedReady"
    assert made["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert made["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    current = get(cluster, "statefulsets", "db", group="apps")
    current["spec"]["serviceName"] = "other"
    status = refused(lambda: put(cluster, "statefulsets", current, group="apps"))
    assert_invalid(
        status,
        "StatefulSet",
        "db",
        [
            (
                "spec",
                "FieldValueForbidden",
                "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
                "'minReadySeconds' are forbidden",
            )
        ],
        group="apps",
    )


def test_a_daemonset_gets_its_update_strategy_defaults(cluster: Cluster) -> None:
    # k8s:pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet
    body = {
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template({"app": "agent"})},
    }
    made = post(cluster, "daemonsets", body, group="apps")
    assert made["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert made["spec"]["revisionHistoryLimit"] == 10


def test_a_job_must_not_restart_always_and_keeps_its_template(cluster: Cluster) -> None:
    # k8s:pkg/apis/batch/validation/validation.go validateJobSpec, ValidateJobSpecUpdate; batch/v1 SetDefaults_Job;
    # pkg/registry/batch/job/strategy.go generateSelector
    body = {"metadata": {"name": "always"}, "spec": {"template": template({"app": "job"})}}
    status = refused(lambda: post(cluster, "jobs", body, group="batch"))
    assert_invalid(
        status,
        "Job",
        "always",
        [
            (
                "spec.template.spec.restartPolicy",
                "FieldValueRequired",
                'Required value: valid values: "OnFailure", "Never"',
            )
        ],
        group="batch",
    )
    body = {
        "metadata": {"name": "once"},
        "spec": {"suspend": True, "template": template({"app": "job"}, restart="Never")},
    }
    made = post(cluster, "jobs", body, group="batch")
    uid = made["metadata"]["uid"]
    spec = made["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert (spec["completionMode"], spec["podReplacementPolicy"]) == ("NonIndexed", "TerminatingOrFailed")
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "app": "job",
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "once",
        "controller-uid": uid,
        "job-name": "once",
    }
    assert made["metadata"]["labels"] == {"app": "job"}
    current = get(cluster, "jobs", "once", group="batch")
    current["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:1.37"
    status = refused(lambda: put(cluster, "jobs", current, group="batch"))
    assert (status["code"], status["reason"]) == (422, "Invalid")
    ((cause,),) = [status["details"]["causes"]]
    assert (cause["field"], cause["reason"]) == ("spec.template", "FieldValueInvalid")
    assert cause["message"].startswith("Invalid value: ") and cause["message"].endswith(": field is immutable")


# ------------------------------------------------------------ Service
def test_a_service_gets_its_defaults_and_keeps_its_cluster_ip(cluster: Cluster) -> None:
    # k8s:pkg/apis/core/v1/defaults.go SetDefaults_Service; .../validation.go validateUpgradeDowngradeClusterIPs
    made = post(
        cluster,
        "services",
        {"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
    )
    spec = made["spec"]
    assert (spec["type"], spec["sessionAffinity"], spec["internalTrafficPolicy"]) == ("ClusterIP", "None", "Cluster")
    assert (spec["ipFamilies"], spec["ipFamilyPolicy"]) == (["IPv4"], "SingleStack")
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    assert spec["clusterIP"] and spec["clusterIPs"] == [spec["clusterIP"]]
    replaced = put(
        cluster,
        "services",
        {
            "metadata": {"name": "web", "resourceVersion": made["metadata"]["resourceVersion"]},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 8080}]},
        },
    )
    assert replaced["spec"]["clusterIPs"] == spec["clusterIPs"]  # kept when a replace omits it
    current = get(cluster, "services", "web")
    octets = current["spec"]["clusterIP"].split(".")
    moved = ".".join([*octets[:3], str((int(octets[3]) + 1) % 250 + 2)])
    current["spec"]["clusterIP"] = moved
    status = refused(lambda: put(cluster, "services", current))
    assert_invalid(
        status,
        "Service",
        "web",
        [("spec.clusterIPs[0]", "FieldValueInvalid", f'Invalid value: ["{moved}"]: may not change once set')],
    )


# ------------------------------------------------------------ PodDisruptionBudget, Lease, RBAC
def test_a_budget_sets_one_of_min_available_and_max_unavailable(cluster: Cluster) -> None:
    # k8s:pkg/apis/policy/validation/validation.go ValidatePodDisruptionBudgetSpec
    body = {
        "metadata": {"name": "both"},
        "spec": {"minAvailable": 1, "maxUnavailable": 1, "selector": {"matchLabels": {"a": "b"}}},
    }
    status = refused(lambda: post(cluster, "poddisruptionbudgets", body, group="policy"))
    ((cause,),) = [status["details"]["causes"]]
    assert (cause["field"], cause["reason"]) == ("spec", "FieldValueInvalid")
    assert cause["message"].endswith(": minAvailable and maxUnavailable cannot be both set")
    percent = {"metadata": {"name": "percent"}, "spec": {"minAvailable": "150%"}}
    status = refused(lambda: post(cluster, "poddisruptionbudgets", percent, group="policy"))
    assert_invalid(
        status,
        "PodDisruptionBudget",
        "percent",
        [("spec.minAvailable", "FieldValueInvalid", 'Invalid value: "150%": must not be greater than 100%')],
        group="policy",
    )


def test_a_lease_lasts_a_positive_time(cluster: Cluster) -> None:
    # k8s:pkg/apis/coordination/validation/validation.go ValidateLeaseSpec
    body = {"metadata": {"name": "lock"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 0}}
    status = refused(lambda: post(cluster, "leases", body, group="coordination.k8s.io"))
    assert_invalid(
        status,
        "Lease",
        "lock",
        [("spec.leaseDurationSeconds", "FieldValueInvalid", "Invalid value: 0: must be greater than 0")],
        group="coordination.k8s.io",
    )


def test_role_rules_need_verbs_and_bindings_keep_their_role(cluster: Cluster) -> None:
    # k8s:pkg/apis/rbac/validation/validation.go ValidatePolicyRule, ValidateRoleBindingUpdate
    rbac = "rbac.authorization.k8s.io"
    role = {"metadata": {"name": "reader"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": []}]}
    status = refused(lambda: post(cluster, "roles", role, group=rbac))
    assert_invalid(
        status,
        "Role",
        "reader",
        [("rules[0].verbs", "FieldValueRequired", "Required value: verbs must contain at least one value")],
        group=rbac,
    )
    binding = {
        "metadata": {"name": "readers"},
        "roleRef": {"kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "name": "alice"}],
    }
    made = post(cluster, "rolebindings", binding, group=rbac)
    assert made["roleRef"]["apiGroup"] == rbac and made["subjects"][0]["apiGroup"] == rbac
    made["roleRef"]["name"] = "writer"
    status = refused(lambda: put(cluster, "rolebindings", made, group=rbac))
    ((cause,),) = [status["details"]["causes"]]
    assert (cause["field"], cause["reason"]) == ("roleRef", "FieldValueInvalid")
    assert cause["message"].endswith(": cannot change roleRef")
