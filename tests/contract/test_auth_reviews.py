"""Access reviews: ``kubectl auth can-i``, ``can-i --list``, ``auth whoami`` and the review APIs.

Covers: a SelfSubjectAccessReview answers from the same RBAC as real requests, with the reason
RBAC gives (RoleBinding and ClusterRoleBinding forms, empty on a plain deny), and — a property
over identities, verbs, resources, subresources, names and namespaces — ``allowed`` is true
exactly when the real request is not a 403; the exact response shape (spec echoed, no name or
resourceVersion, the create's managedFields entry); the rules review (the namespace's rules plus
the bootstrap rules every authenticated user holds, a missing role reported, 400 without a
namespace); SelfSubjectReview; SubjectAccessReview (needs RBAC itself, asks about exactly the
groups given, system:masters short-circuits); LocalSubjectAccessReview (namespace must match,
no non-resource attributes); TokenReview; every validation error with its real code, reason,
message and causes; create-only discovery and 405 for other verbs; the audit; and kubectl.

Identities are ServiceAccounts with tokens from the TokenRequest API, so everything but the
audit also runs with ``--real-cluster``. Real-server sources: k/k
``pkg/registry/authorization/*/rest.go``, ``pkg/registry/authentication/*/rest.go``,
``pkg/apis/authorization/validation/validation.go``, ``plugin/pkg/auth/authorizer/rbac/rbac.go``,
``pkg/registry/rbac/validation/rule.go`` and ``.../rbac/bootstrappolicy/policy.go``;
kubectl ``pkg/cmd/auth/cani.go`` and ``whoami.go``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kubernetes import client as k8s

from shared.kube import client
from shared.sim.apiserver import kubeconfig
from tests import simfixtures
from tests.contract.conftest import Cluster

RBAC = "rbac.authorization.k8s.io"
AUTHZ = "authorization.k8s.io"
AUTHN = "authentication.k8s.io"
TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


@dataclass
class Account:
    """A ServiceAccount identity: its username, a kubeconfig holding its token, and a client."""

    name: str
    namespace: str
    user: str
    kubeconfig: Path
    api: Any

    @property
    def groups(self) -> list[str]:
        return ["system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated"]


@pytest.fixture()
def account(cluster: Cluster, tmp_path: Path) -> Callable[[str], Account]:
    """``make(name)``: a ServiceAccount in the test's namespace and a token for it (TokenRequest)."""

    def make(name: str) -> Account:
        core = k8s.CoreV1Api(cluster.api)
        core.create_namespaced_service_account(cluster.namespace, {"metadata": {"name": name}})
        request = {"spec": {"expirationSeconds": 3600}}
        token = core.create_namespaced_service_account_token(name, cluster.namespace, request).status.token
        target = kubeconfig.read(cluster.kubeconfig)
        user = f"system:serviceaccount:{cluster.namespace}:{name}"
        path = tmp_path / f"kubeconfig-{name}"
        kubeconfig.write(path, target.server, token, user=user, namespace=cluster.namespace, ca_pem=target.ca_pem)
        api = client.new_client(kubeconfig=path)
        cluster.cleanup.append(lambda: client.close(api))
        return Account(name, cluster.namespace, user, path, api)

    return make


def _role(cluster: Cluster, name: str, rules: list[dict[str, Any]], subject: Account) -> None:
    """A Role and a RoleBinding of the same name in the test's namespace."""
    rbac = k8s.RbacAuthorizationV1Api(cluster.api)
    rbac.create_namespaced_role(cluster.namespace, {"metadata": {"name": name}, "rules": rules})
    _bind(cluster, name, "Role", name, subject)


def _bind(cluster: Cluster, name: str, kind: str, role: str, subject: Account) -> None:
    k8s.RbacAuthorizationV1Api(cluster.api).create_namespaced_role_binding(
        cluster.namespace,
        {
            "metadata": {"name": name},
            "subjects": [{"kind": "ServiceAccount", "name": subject.name, "namespace": subject.namespace}],
            "roleRef": {"apiGroup": RBAC, "kind": kind, "name": role},
        },
    )


def _cluster_role(cluster: Cluster, rules: list[dict[str, Any]], subject: Account) -> str:
    """A ClusterRole bound cluster-wide to ``subject``; both are deleted after the test."""
    rbac = k8s.RbacAuthorizationV1Api(cluster.api)
    name = cluster.name("reviews")
    rbac.create_cluster_role({"metadata": {"name": name}, "rules": rules})
    cluster.cleanup.append(lambda: rbac.delete_cluster_role(name))
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "subjects": [{"kind": "ServiceAccount", "name": subject.name, "namespace": subject.namespace}],
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
        }
    )
    cluster.cleanup.append(lambda: rbac.delete_cluster_role_binding(name))
    return name


def _can(api: Any, **attributes: Any) -> Any:
    """``status`` of a SelfSubjectAccessReview for ``attributes``, asked by ``api``'s identity."""
    review = {"spec": {"resourceAttributes": attributes}}
    return k8s.AuthorizationV1Api(api).create_self_subject_access_review(review).status


def _raw(api: Any, method: str, path: str, body: Any = None, query: list[tuple[str, str]] | None = None) -> Any:
    """(status code, decoded JSON) of one request, errors included."""
    try:
        response = api.call_api(
            path,
            method,
            query_params=query or [],
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
        )[0]
    except k8s.ApiException as exc:
        return exc.status, json.loads(exc.body)
    try:
        return response.status, json.loads(response.data)
    finally:
        response.release_conn()


def _failure(exc: k8s.ApiException) -> dict[str, Any]:
    body = json.loads(exc.body)
    assert body["kind"] == "Status" and body["status"] == "Failure"
    return {k: body.get(k) for k in ("code", "reason", "message", "details")}


def _invalid(text: str, causes: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A 422 from an access review: the registry builds it with an empty kind."""
    return {
        "code": 422,
        "reason": "Invalid",
        "message": f'.authorization.k8s.io "" is invalid: {text}',
        "details": {
            "group": AUTHZ,
            "causes": [{"reason": r, "message": m, "field": f} for r, f, m in causes],
        },
    }


# ---------------------------------------------------------------- SelfSubjectAccessReview


def test_can_i_answers_with_the_binding_that_allows(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    _role(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}], reader)
    allowed = _can(reader.api, verb="list", resource="configmaps", namespace=cluster.namespace)
    assert allowed.allowed is True and not allowed.denied
    assert allowed.reason == (
        f'RBAC: allowed by RoleBinding "cm-reader/{cluster.namespace}" of Role "cm-reader" '
        f'to ServiceAccount "reader/{cluster.namespace}"'
    )
    denied = _can(reader.api, verb="delete", resource="configmaps", namespace=cluster.namespace)
    assert (denied.allowed, denied.denied, denied.reason, denied.evaluation_error) == (False, None, None, None)
    elsewhere = _can(reader.api, verb="list", resource="configmaps", namespace="default")
    assert elsewhere.allowed is False


def test_a_cluster_role_binding_is_named_in_the_reason(cluster: Cluster, account: Callable[[str], Account]) -> None:
    viewer = account("viewer")
    name = _cluster_role(cluster, [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}], viewer)
    status = _can(viewer.api, verb="list", resource="nodes")
    assert status.allowed is True
    assert status.reason == (
        f'RBAC: allowed by ClusterRoleBinding "{name}" of ClusterRole "{name}" '
        f'to ServiceAccount "viewer/{cluster.namespace}"'
    )


def test_every_identity_may_ask_about_itself(cluster: Cluster, account: Callable[[str], Account]) -> None:
    nobody = account("nobody")
    status = _can(nobody.api, verb="create", group=AUTHZ, resource="selfsubjectaccessreviews")
    assert status.allowed is True
    assert status.reason == (
        'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" '
        'to Group "system:authenticated"'
    )
    status = (
        k8s.AuthorizationV1Api(nobody.api)
        .create_self_subject_access_review({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}})
        .status
    )
    assert status.allowed is True
    assert (
        k8s.AuthorizationV1Api(nobody.api)
        .create_self_subject_access_review({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/metrics"}}})
        .status.allowed
        is False
    )


def test_the_answer_is_the_spec_echoed_with_a_status(cluster: Cluster, account: Callable[[str], Account]) -> None:
    nobody = account("nobody")
    body = {
        "apiVersion": f"{AUTHZ}/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": cluster.namespace, "name": ""}},
    }
    code, answer = _raw(nobody.api, "POST", f"/apis/{AUTHZ}/v1/selfsubjectaccessreviews", body)
    assert code == 201
    manager = nobody.api.user_agent.split("/")[0]
    (entry,) = answer["metadata"].pop("managedFields")
    assert re.fullmatch(TIME, entry.pop("time"))
    assert entry == {
        "manager": manager,
        "operation": "Update",
        "apiVersion": f"{AUTHZ}/v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:resourceAttributes": {".": {}, "f:namespace": {}, "f:resource": {}, "f:verb": {}}}},
    }
    assert answer == {
        "kind": "SelfSubjectAccessReview",
        "apiVersion": f"{AUTHZ}/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": {"namespace": cluster.namespace, "verb": "get", "resource": "pods"}},
        "status": {"allowed": False},
    }


_NAMESPACED = (("", "configmaps"), ("", "secrets"), ("", "pods"), ("apps", "deployments"), ("batch", "jobs"))
_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_NAMED = {"get", "update", "patch", "delete"}


def _cases(namespace: str) -> list[dict[str, str]]:
    """Every request the property draws from: namespaced kinds in two namespaces, subresources
    with names, and cluster-scoped nodes and namespaces (read verbs only for the latter)."""
    out: list[dict[str, str]] = []
    for ns in (namespace, "default"):
        for group, resource in _NAMESPACED:
            for verb in _VERBS:
                for name in ("allowed", "other") if verb in _NAMED else ("",):
                    out.append({"group": group, "resource": resource, "verb": verb, "namespace": ns, "name": name})
        for sub in ("log", "status"):
            for verb in ("get", "create", "update", "patch"):
                out.append({"resource": "pods", "subresource": sub, "verb": verb, "namespace": ns, "name": "allowed"})
    for verb in ("get", "list", "watch", "create", "update", "patch", "delete"):
        out.append({"resource": "nodes", "verb": verb, "name": "allowed" if verb in _NAMED else ""})
    out += [{"resource": "namespaces", "verb": verb} for verb in ("list", "watch")]
    return out


def _real_request(api: Any, case: dict[str, str]) -> int:
    """The status of the request ``case`` describes (bodies are empty: an allowed write is
    refused later, by validation or a 404, never by RBAC)."""
    group, verb = case.get("group", ""), case["verb"]
    path = f"/apis/{group}/v1" if group else "/api/v1"
    if case.get("namespace"):
        path += f"/namespaces/{case['namespace']}"
    path += f"/{case['resource']}"
    if case.get("name"):
        path += f"/{case['name']}"
    if case.get("subresource"):
        path += f"/{case['subresource']}"
    method = {"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT", "patch": "PATCH"}
    query = [("watch", "true"), ("timeoutSeconds", "1")] if verb == "watch" else []
    headers = {"Content-Type": "application/merge-patch+json" if verb == "patch" else "application/json"}
    body: dict[str, Any] | None = {} if verb in ("create", "update", "patch") else None
    try:
        response = api.call_api(
            path,
            method.get(verb, "DELETE"),
            query_params=query,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
            _preload_content=False,
        )[0]
    except k8s.ApiException as exc:
        return int(exc.status)
    if verb == "watch":
        response.close()  # the stream would run for a second more; its connection is not reused
    else:
        response.read()
    response.release_conn()
    return int(response.status)


def test_can_i_agrees_with_real_requests(cluster: Cluster, account: Callable[[str], Account]) -> None:
    """For each identity and request, ``allowed`` is true exactly when the request is not a 403."""
    reader, viewer, nobody = account("reader"), account("viewer"), account("nobody")
    _role(
        cluster,
        "reader",
        [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["allowed"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "patch"]},
            {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list"]},
            {"apiGroups": ["batch"], "resources": ["*"], "verbs": ["*"]},
        ],
        reader,
    )
    _cluster_role(
        cluster,
        [
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]},
            {"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["get"]},
        ],
        viewer,
    )
    seen: set[bool] = set()

    @settings(max_examples=120, deadline=None, derandomize=True, database=None)
    @given(who=st.sampled_from((reader, viewer, nobody)), case=st.sampled_from(_cases(cluster.namespace)))
    def agree(who: Account, case: dict[str, str]) -> None:
        allowed = bool(_can(who.api, **case).allowed)
        assert allowed == (_real_request(who.api, case) != 403), (who.name, case)
        seen.add(allowed)

    agree()
    assert seen == {True, False}


# ---------------------------------------------------------------- SelfSubjectRulesReview


def _rules(api: Any, namespace: str) -> Any:
    review = {"spec": {"namespace": namespace}}
    return k8s.AuthorizationV1Api(api).create_self_subject_rules_review(review).status


_BASIC_USER = {
    (("create",), (AUTHZ,), ("selfsubjectaccessreviews", "selfsubjectrulesreviews"), ()),
    (("create",), (AUTHN,), ("selfsubjectreviews",), ()),
}
_PUBLIC_URLS = ("/livez", "/readyz", "/healthz", "/version", "/version/")
_SERVICE_ACCOUNT_URLS = {
    (("get",), (*_PUBLIC_URLS, "/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")),
    (("get",), _PUBLIC_URLS),
    (
        ("get",),
        (
            "/.well-known/openid-configuration",
            "/.well-known/openid-configuration/",
            "/openid/v1/jwks",
            "/openid/v1/jwks/",
        ),
    ),
}


def _resource_rules(status: Any) -> set[tuple[tuple[str, ...], ...]]:
    return {
        (tuple(r.verbs), tuple(r.api_groups or ()), tuple(r.resources or ()), tuple(r.resource_names or ()))
        for r in status.resource_rules
    }


def test_the_rules_review_lists_what_applies_in_the_namespace(
    cluster: Cluster, account: Callable[[str], Account]
) -> None:
    reader = account("reader")
    rule = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"], "resourceNames": ["a"]}
    _role(cluster, "cm-reader", [rule], reader)
    here = _rules(reader.api, cluster.namespace)
    assert _resource_rules(here) == {*_BASIC_USER, (("get", "list"), ("",), ("configmaps",), ("a",))}
    assert {(tuple(r.verbs), tuple(r.non_resource_ur_ls)) for r in here.non_resource_rules} == _SERVICE_ACCOUNT_URLS
    assert (here.incomplete, here.evaluation_error) == (False, None)
    assert _resource_rules(_rules(reader.api, "default")) == _BASIC_USER


def test_the_rules_review_has_an_empty_spec_and_needs_a_namespace(
    cluster: Cluster, account: Callable[[str], Account]
) -> None:
    nobody = account("nobody")
    path = f"/apis/{AUTHZ}/v1/selfsubjectrulesreviews"
    code, answer = _raw(nobody.api, "POST", path, {"spec": {"namespace": cluster.namespace}})
    assert code == 201
    assert (answer["metadata"], answer["spec"], answer["status"]["incomplete"]) == (
        {"creationTimestamp": None},
        {},
        False,
    )
    code, answer = _raw(nobody.api, "POST", path, {"spec": {}})
    assert (code, answer["reason"], answer["message"]) == (400, "BadRequest", "no namespace on request")


def test_a_binding_to_a_missing_role_is_reported(cluster: Cluster, account: Callable[[str], Account]) -> None:
    lost = account("lost")
    _bind(cluster, "dangling", "Role", "ghost", lost)
    missing = f'role.{RBAC} "ghost" not found'
    assert _rules(lost.api, cluster.namespace).evaluation_error == missing
    status = _can(lost.api, verb="get", resource="pods", namespace=cluster.namespace)
    assert (status.allowed, status.reason) == (False, f"RBAC: {missing}")


# ---------------------------------------------------------------- who am I


def test_a_self_subject_review_says_who_the_token_is(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    uid = k8s.CoreV1Api(cluster.api).read_namespaced_service_account("reader", cluster.namespace).metadata.uid
    review = k8s.AuthenticationV1Api(reader.api).create_self_subject_review({})
    assert review.kind == "SelfSubjectReview" and review.metadata.creation_timestamp is not None
    info = review.status.user_info
    assert (info.username, info.uid, info.groups) == (reader.user, uid, reader.groups)
    (credential,) = info.extra["authentication.kubernetes.io/credential-id"]
    assert credential.startswith("JTI=")


def test_a_token_review_authenticates_tokens(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    token = kubeconfig.read(reader.kubeconfig).token
    auth = k8s.AuthenticationV1Api(cluster.api)
    status = auth.create_token_review({"spec": {"token": token}}).status
    assert status.authenticated is True
    assert (status.user.username, status.user.groups) == (reader.user, reader.groups)
    assert status.audiences
    stranger = auth.create_token_review({"spec": {"token": "not-a-token"}}).status
    assert not stranger.authenticated and stranger.user.username is None
    with pytest.raises(k8s.ApiException) as caught:
        auth.create_token_review({"spec": {}})
    assert _failure(caught.value) == {
        "code": 400,
        "reason": "BadRequest",
        "message": "token is required for TokenReview in authentication",
        "details": None,
    }
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AuthenticationV1Api(reader.api).create_token_review({"spec": {"token": token}})
    assert caught.value.status == 403


# ---------------------------------------------------------------- reviews about someone else


def test_a_subject_access_review_needs_rbac_and_asks_about_exactly_the_groups_given(
    cluster: Cluster, account: Callable[[str], Account]
) -> None:
    reader = account("reader")
    _role(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}], reader)
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AuthorizationV1Api(reader.api).create_subject_access_review(
            {"spec": {"user": reader.user, "resourceAttributes": {"verb": "get", "resource": "pods"}}}
        )
    assert _failure(caught.value)["message"] == (
        f'subjectaccessreviews.{AUTHZ} is forbidden: User "{reader.user}" cannot create resource '
        f'"subjectaccessreviews" in API group "{AUTHZ}" at the cluster scope'
    )
    admin = k8s.AuthorizationV1Api(cluster.api)

    def ask(**spec: Any) -> Any:
        return admin.create_subject_access_review({"spec": spec}).status

    get_cm = {"verb": "get", "resource": "configmaps", "namespace": cluster.namespace}
    assert ask(user=reader.user, resourceAttributes=get_cm).allowed is True
    self_review = {"verb": "create", "group": AUTHZ, "resource": "selfsubjectaccessreviews"}
    assert ask(user=reader.user, resourceAttributes=self_review).allowed is False
    assert ask(user=reader.user, groups=reader.groups, resourceAttributes=self_review).allowed is True
    masters = ask(user="someone", groups=["system:masters"], resourceAttributes={"verb": "delete", "resource": "nodes"})
    assert (masters.allowed, masters.reason) == (True, None)


def test_a_local_subject_access_review_stays_in_its_namespace(cluster: Cluster) -> None:
    authz = k8s.AuthorizationV1Api(cluster.api)
    ns = cluster.namespace
    review = {"spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": ns}}}
    answer = authz.create_namespaced_local_subject_access_review(ns, review)
    assert (answer.metadata.namespace, answer.status.allowed) == (ns, False)
    elsewhere = {"spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods"}}}
    with pytest.raises(k8s.ApiException) as caught:
        authz.create_namespaced_local_subject_access_review(ns, elsewhere)
    text = 'Invalid value: "": must match metadata.namespace'
    assert _failure(caught.value) == _invalid(
        f"spec.resourceAttributes.namespace: {text}",
        [("FieldValueInvalid", "spec.resourceAttributes.namespace", text)],
    )
    url = {"spec": {"user": "bob", "nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}
    with pytest.raises(k8s.ApiException) as caught:
        authz.create_namespaced_local_subject_access_review(ns, url)
    text = 'Invalid value: {"Path":"/healthz","Verb":"get"}: disallowed on this kind of request'
    assert _failure(caught.value) == _invalid(
        f"spec.nonResourceAttributes: {text}", [("FieldValueInvalid", "spec.nonResourceAttributes", text)]
    )
    with pytest.raises(k8s.ApiException) as caught:
        authz.create_namespaced_local_subject_access_review(ns, {**review, "metadata": {"namespace": "default"}})
    assert _failure(caught.value) == {
        "code": 400,
        "reason": "BadRequest",
        "message": "the namespace of the provided object does not match the namespace sent on the request",
        "details": None,
    }


# ---------------------------------------------------------------- validation


def test_exactly_one_attribute_block_is_accepted(cluster: Cluster) -> None:
    authz = k8s.AuthorizationV1Api(cluster.api)
    with pytest.raises(k8s.ApiException) as caught:
        authz.create_self_subject_access_review({"spec": {}})
    text = "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
    assert _failure(caught.value) == _invalid(
        f"spec.resourceAttributes: {text}", [("FieldValueInvalid", "spec.resourceAttributes", text)]
    )
    both = {"resourceAttributes": {"verb": "get", "resource": "pods"}, "nonResourceAttributes": {"verb": "get"}}
    with pytest.raises(k8s.ApiException) as caught:
        authz.create_self_subject_access_review({"spec": both})
    text = 'Invalid value: {"Path":"","Verb":"get"}: cannot be specified in combination with resourceAttributes'
    assert _failure(caught.value) == _invalid(
        f"spec.nonResourceAttributes: {text}", [("FieldValueInvalid", "spec.nonResourceAttributes", text)]
    )


def test_a_subject_access_review_needs_a_user_or_groups(cluster: Cluster) -> None:
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AuthorizationV1Api(cluster.api).create_subject_access_review({"spec": {}})
    first = "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
    second = 'Invalid value: "": at least one of user or group must be specified'
    assert _failure(caught.value) == _invalid(
        f"[spec.resourceAttributes: {first}, spec.user: {second}]",
        [("FieldValueInvalid", "spec.resourceAttributes", first), ("FieldValueInvalid", "spec.user", second)],
    )


def test_metadata_must_be_empty(cluster: Cluster) -> None:
    body = {"metadata": {"name": "probe"}, "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AuthorizationV1Api(cluster.api).create_self_subject_access_review(body)
    failure = _failure(caught.value)
    manager = cluster.api.user_agent.split("/")[0]
    meta = (
        r'\{"name":"probe","creationTimestamp":null,"managedFields":\[\{"manager":"' + re.escape(manager) + '",'
        r'"operation":"Update","apiVersion":"authorization\.k8s\.io/v1","time":"' + TIME + '",'
        r'"fieldsType":"FieldsV1","fieldsV1":\{"f:spec":\{"f:resourceAttributes":\{"\.":\{\},"f:resource":\{\},'
        r'"f:verb":\{\}\}\}\}\}\]\}'
    )
    assert re.fullmatch(
        r'\.authorization\.k8s\.io "" is invalid: metadata: Invalid value: ' + meta + ": must be empty",
        failure["message"],
    )
    (cause,) = failure["details"]["causes"]
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "metadata")


def test_selector_attributes_need_exactly_one_form(cluster: Cluster) -> None:
    attributes = {"verb": "list", "resource": "pods", "fieldSelector": {}, "labelSelector": {"rawSelector": "a=b"}}
    with pytest.raises(k8s.ApiException) as caught:
        k8s.AuthorizationV1Api(cluster.api).create_self_subject_access_review(
            {"spec": {"resourceAttributes": attributes}}
        )
    field = "spec.resourceAttributes.fieldSelector.requirements"
    text = (
        "Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector "
        "is required"
    )
    assert _failure(caught.value) == _invalid(f"{field}: {text}", [("FieldValueRequired", field, text)])
    attributes["fieldSelector"] = {"rawSelector": "spec.nodeName==n1"}
    status = _can(cluster.api, **attributes)
    assert status.allowed is True


def test_a_body_of_the_wrong_type_is_the_decoders_400(cluster: Cluster) -> None:
    code, answer = _raw(
        cluster.api, "POST", f"/apis/{AUTHZ}/v1/selfsubjectaccessreviews", {"spec": {"resourceAttributes": {"verb": 1}}}
    )
    assert (code, answer["reason"], answer["message"]) == (
        400,
        "BadRequest",
        'SelfSubjectAccessReview in version "v1" cannot be handled as a SelfSubjectAccessReview: json: cannot '
        "unmarshal number into Go struct field ResourceAttributes.spec.resourceAttributes.verb of type string",
    )


# ---------------------------------------------------------------- discovery, verbs, audit


def test_reviews_are_create_only_in_discovery(cluster: Cluster) -> None:
    def listed(found: Any) -> dict[str, tuple[bool, str, list[str]]]:
        return {r.name: (r.namespaced, r.kind, r.verbs) for r in found.resources}

    assert listed(k8s.AuthorizationV1Api(cluster.api).get_api_resources()) == {
        "localsubjectaccessreviews": (True, "LocalSubjectAccessReview", ["create"]),
        "selfsubjectaccessreviews": (False, "SelfSubjectAccessReview", ["create"]),
        "selfsubjectrulesreviews": (False, "SelfSubjectRulesReview", ["create"]),
        "subjectaccessreviews": (False, "SubjectAccessReview", ["create"]),
    }
    assert listed(k8s.AuthenticationV1Api(cluster.api).get_api_resources()) == {
        "selfsubjectreviews": (False, "SelfSubjectReview", ["create"]),
        "tokenreviews": (False, "TokenReview", ["create"]),
    }


def test_only_post_is_served(cluster: Cluster) -> None:
    code, answer = _raw(cluster.api, "GET", f"/apis/{AUTHZ}/v1/selfsubjectaccessreviews")
    assert (code, answer["reason"]) == (405, "MethodNotAllowed")


def test_reviews_appear_in_the_audit(cluster: Cluster, account: Callable[[str], Account]) -> None:
    sim = cluster.require_sim("reads the emulator's audit")
    nobody = account("nobody")
    _can(nobody.api, verb="get", resource="pods", namespace=cluster.namespace)
    with pytest.raises(k8s.ApiException):
        k8s.AuthorizationV1Api(nobody.api).create_subject_access_review({"spec": {"user": "x"}})
    assert [(r.verb, r.group, r.resource, r.code) for r in sim.audit.records(identity=nobody.user)] == [
        ("create", AUTHZ, "selfsubjectaccessreviews", 201),
        ("create", AUTHZ, "subjectaccessreviews", 403),
    ]


# ---------------------------------------------------------------- kubectl


def _rows(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_kubectl_can_i(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    _role(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}], reader)
    kubectl = simfixtures.kubectl_runner(reader.kubeconfig)
    yes = kubectl("auth", "can-i", "get", "configmaps")
    assert (yes.returncode, yes.stdout) == (0, "yes\n")
    no = kubectl("auth", "can-i", "delete", "configmaps", check=False)
    assert (no.returncode, no.stdout) == (1, "no\n")
    nodes = kubectl("auth", "can-i", "list", "nodes", check=False)
    assert nodes.stdout == "no\n" and "resource 'nodes' is not namespace scoped" in nodes.stderr


def test_kubectl_can_i_list(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    _role(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}], reader)
    rows = _rows(simfixtures.kubectl_runner(reader.kubeconfig)("auth", "can-i", "--list").stdout)
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    for row in (
        ["configmaps", "[]", "[]", "[get", "list]"],
        ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"],
        ["selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"],
        ["[/healthz]", "[]", "[get]"],
        ["[/apis/*]", "[]", "[get]"],
    ):
        assert row in rows


def test_kubectl_auth_whoami(cluster: Cluster, account: Callable[[str], Account]) -> None:
    reader = account("reader")
    kubectl = simfixtures.kubectl_runner(reader.kubeconfig)
    rows = _rows(kubectl("auth", "whoami").stdout)
    assert rows[0] == ["ATTRIBUTE", "VALUE"]
    assert ["Username", reader.user] in rows
    assert ["Groups", f"[{reader.groups[0]}", reader.groups[1], f"{reader.groups[2]}]"] in rows
    review = json.loads(kubectl("auth", "whoami", "-o", "json").stdout)
    assert (review["kind"], review["status"]["userInfo"]["username"]) == ("SelfSubjectReview", reader.user)


def test_kubectl_can_i_as_another_identity(
    cluster: Cluster, cluster_kubectl: Any, account: Callable[[str], Account]
) -> None:
    reader = account("reader")
    _role(cluster, "cm-reader", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}], reader)
    assert cluster_kubectl("auth", "can-i", "get", "configmaps", f"--as={reader.user}").stdout == "yes\n"
    no = cluster_kubectl("auth", "can-i", "create", "nodes", f"--as={reader.user}", check=False)
    assert (no.returncode, no.stdout) == (1, "no\n")
