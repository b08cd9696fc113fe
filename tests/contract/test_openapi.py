"""OpenAPI v3 as kube-apiserver 1.34 serves it, and the kubectl features that read it.

Sources: kube-openapi ``pkg/handler3/handler.go`` (discovery document, SHA-512 hashes as Etag and
``hash``, ``Cache-Control: public, immutable`` and ``Expires`` for a hashed URL, 301 for a stale
hash, 406 for an unknown media type), kube-aggregator ``pkg/controllers/openapiv3/aggregator``
(404 for an unknown group-version), the published documents under ``api/openapi-spec/v3`` (paths,
operation extensions, parameters, ``components.schemas`` names), apiextensions-apiserver
``pkg/controller/openapi/builder`` (custom resources), kubectl ``pkg/explain/v2`` (explain output)
and cli-runtime ``pkg/resource/query_param_verifier_v3.go`` (kubectl leaves validation to a server
whose PATCH operations declare ``fieldValidation``); summarised in the team's research notes,
section 7.

Covers: the discovery document and its hashes; caching headers, 301, 304, 404, 406; PATCH
operations declaring fieldValidation and their GVK; kind schemas with resolvable references; a
CRD's document (reversed-group names, metadata as ObjectMeta) and its new hash after the CRD
changes; ``kubectl explain`` on built-in kinds and on our Certification CRD; ``kubectl apply
--validate=strict|warn`` answered by the server.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
from typing import Any

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster, eventually

KEYS = ("api/v1", "apis/apps/v1", "apis/batch/v1", "apis/coordination.k8s.io/v1")


def get(cluster: Cluster, path: str, headers: dict[str, str] | None = None) -> Any:
    """GET without following redirects; the urllib3 response (status, headers, data)."""
    api = cluster.api
    sent = {"Accept": "application/json", **(headers or {})}
    auth = api.configuration.auth_settings().get("BearerToken")
    if auth:
        sent[auth["key"]] = auth["value"]
    return api.rest_client.pool_manager.request(
        "GET", api.configuration.host + path, headers=sent, redirect=False, retries=False
    )


def index(cluster: Cluster) -> dict[str, str]:
    """key → serverRelativeURL of ``/openapi/v3``."""
    answer = get(cluster, "/openapi/v3")
    assert answer.status == 200
    return {key: entry["serverRelativeURL"] for key, entry in json.loads(answer.data)["paths"].items()}


def document(cluster: Cluster, key: str) -> dict[str, Any]:
    answer = get(cluster, index(cluster)[key])
    assert answer.status == 200
    found: dict[str, Any] = json.loads(answer.data)
    return found


# ---------------------------------------------------------------- documents and caching


def test_discovery_lists_each_group_version_with_the_sha512_of_its_document(cluster: Cluster) -> None:
    answer = get(cluster, "/openapi/v3")
    assert answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Etag"] == f'"{hashlib.sha512(answer.data).hexdigest().upper()}"'
    urls = index(cluster)
    assert {"api", "apis", "version", *KEYS} <= set(urls)
    for key in KEYS:
        path, _, query = urls[key].partition("?")
        assert path == f"/openapi/v3/{key}"
        assert query.startswith("hash=")
        doc = get(cluster, urls[key])
        assert doc.status == 200
        digest = hashlib.sha512(doc.data).hexdigest().upper()
        assert query == f"hash={digest}"
        assert doc.headers["Etag"] == f'"{digest}"'


def test_a_document_asked_for_by_its_hash_is_immutable_for_a_year(cluster: Cluster) -> None:
    url = index(cluster)["apis/apps/v1"]
    answer = get(cluster, url)
    assert answer.headers["Cache-Control"] == "public, immutable"
    assert "Accept" in answer.headers.getlist("Vary")
    sent, expires = (email.utils.parsedate_to_datetime(answer.headers[h]) for h in ("Date", "Expires"))
    assert (expires.year, expires.month) == (sent.year + 1, sent.month)
    plain = get(cluster, url.partition("?")[0])
    assert plain.status == 200
    assert "no-cache" in plain.headers["Cache-Control"]
    assert plain.data == answer.data


def test_a_stale_hash_is_redirected_to_the_current_document(cluster: Cluster) -> None:
    url = index(cluster)["apis/apps/v1"]
    answer = get(cluster, url.partition("?")[0] + "?hash=0123ABCD")
    assert answer.status == 301
    assert answer.headers["Location"] == url


def test_a_document_the_client_already_has_is_not_sent_again(cluster: Cluster) -> None:
    url = index(cluster)["api/v1"]
    etag = get(cluster, url).headers["Etag"]
    answer = get(cluster, url, {"If-None-Match": etag})
    assert answer.status == 304
    assert answer.data == b""


def test_an_unknown_group_version_is_not_found(cluster: Cluster) -> None:
    assert get(cluster, "/openapi/v3/apis/nothing.example.com/v9").status == 404


def test_a_media_type_other_than_json_or_protobuf_is_not_acceptable(cluster: Cluster) -> None:
    assert get(cluster, index(cluster)["api/v1"], {"Accept": "text/html"}).status == 406


# ---------------------------------------------------------------- content


def test_every_patch_operation_declares_field_validation_and_its_group_version_kind(cluster: Cluster) -> None:
    for key in KEYS:
        patches = [(path, item["patch"]) for path, item in document(cluster, key)["paths"].items() if "patch" in item]
        assert patches, key
        for path, op in patches:
            names = {p["name"] for p in op["parameters"] if p["in"] == "query"}
            assert {"fieldValidation", "dryRun", "fieldManager", "force"} <= names, path
            assert op["x-kubernetes-action"] == "patch"
            assert set(op["x-kubernetes-group-version-kind"]) == {"group", "version", "kind"}
    paths = document(cluster, "apis/apps/v1")["paths"]
    op = paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert op["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"][
        "x-kubernetes-group-version-kind"
    ] == {"group": "autoscaling", "kind": "Scale", "version": "v1"}
    assert paths["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]["x-kubernetes-action"] == "list"


def test_kind_schemas_carry_their_gvk_and_every_reference_resolves(cluster: Cluster) -> None:
    doc = document(cluster, "apis/apps/v1")
    schemas = doc["components"]["schemas"]
    deployment = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deployment["properties"]["spec"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}
    ]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    text = json.dumps(doc)
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in schemas, ref


def crd_with_schema(plural: str, kind: str, spec_properties: dict[str, Any]) -> dict[str, Any]:
    crd = objects.crd(plural, kind)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": spec_properties}},
    }
    return crd


def test_a_crd_gets_a_document_named_by_its_reversed_group(cluster: Cluster) -> None:
    ext = k8s.ApiextensionsV1Api(cluster.api)
    plural = cluster.name("gizmos").replace("-", "")
    crd = crd_with_schema(plural, "Gizmo", {"size": {"type": "integer", "description": "How big."}})
    ext.create_custom_resource_definition(crd)
    cluster.cleanup.append(lambda: ext.delete_custom_resource_definition(crd["metadata"]["name"]))
    key = f"apis/{objects.CRD_GROUP}/v1"
    eventually(lambda: key in index(cluster))
    doc = document(cluster, key)
    name = "com.example.contract.v1.Gizmo"
    gizmo = doc["components"]["schemas"][name]
    assert gizmo["x-kubernetes-group-version-kind"] == [{"group": objects.CRD_GROUP, "kind": "Gizmo", "version": "v1"}]
    assert gizmo["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    assert gizmo["properties"]["spec"]["properties"]["size"]["type"] == "integer"
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]
    op = doc["paths"][f"/apis/{objects.CRD_GROUP}/v1/namespaces/{{namespace}}/{plural}/{{name}}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in op["parameters"]}

    old = index(cluster)[key]
    current = ext.read_custom_resource_definition(crd["metadata"]["name"])
    props = current.spec.versions[0].schema.open_apiv3_schema.properties["spec"].properties
    props["colour"] = k8s.V1JSONSchemaProps(type="string")
    ext.replace_custom_resource_definition(crd["metadata"]["name"], current)
    eventually(lambda: index(cluster)[key] != old)
    new = index(cluster)[key]
    assert "colour" in document(cluster, key)["components"]["schemas"][name]["properties"]["spec"]["properties"]
    stale = get(cluster, old)
    assert (stale.status, stale.headers["Location"]) == (301, new)


# ---------------------------------------------------------------- kubectl


def test_kubectl_explain_prints_a_field_of_a_built_in_kind(cluster_kubectl: Any) -> None:
    out = cluster_kubectl("explain", "node.spec.taints").stdout
    assert out.startswith("KIND:       Node\nVERSION:    v1\n\nFIELD: taints <[]Taint>\n")
    assert "DESCRIPTION:\n    If specified, the node's taints." in out
    assert "  effect\t<string> -required-\n" in out
    assert "  key\t<string> -required-\n" in out


def test_kubectl_explain_recursive_follows_references(cluster_kubectl: Any) -> None:
    out = cluster_kubectl("explain", "deployment.spec.strategy", "--recursive").stdout
    assert out.startswith(
        "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\nFIELD: strategy <DeploymentStrategy>\n"
    )
    assert (
        "  rollingUpdate\t<RollingUpdateDeployment>\n    maxSurge\t<IntOrString>\n    maxUnavailable\t<IntOrString>\n"
        "  type\t<string>\n"
    ) in out


def test_kubectl_explain_reads_our_certification_crd(cluster: Cluster, cluster_kubectl: Any) -> None:
    cluster.require_sim("installs the product's Certification CRD")
    from shared.certify import resource as certifications
    from shared.kube import crds

    crds.install(cluster.api, certifications.RESOURCE)
    out = cluster_kubectl("explain", "certifications.spec.target").stdout
    assert out.startswith(
        "GROUP:      nvcre.nvidia.com\nKIND:       Certification\nVERSION:    v1alpha1\n\nFIELD: target <"
    )
    assert "FIELDS:\n" in out


def test_kubectl_leaves_strict_validation_to_the_server(cluster_kubectl: Any) -> None:
    manifest = json.dumps(objects.configmap("strict-cm", {"a": "b"}) | {"dta": {"x": "y"}})
    done = cluster_kubectl("apply", "--validate=strict", "-f", "-", input=manifest, check=False)
    assert done.returncode != 0
    # A client-side refusal would read "error validating data"; this is the server's decoder.
    assert "Error from server (BadRequest)" in done.stderr
    assert 'strict decoding error: unknown field "dta"' in done.stderr


@pytest.mark.warnings_expected
def test_kubectl_warn_validation_prints_the_servers_warning(cluster: Cluster, cluster_kubectl: Any) -> None:
    manifest = json.dumps(objects.configmap("warned-cm", {"a": "b"}) | {"dta": {"x": "y"}})
    done = cluster_kubectl("apply", "--validate=warn", "-f", "-", input=manifest)
    assert 'Warning: unknown field "dta"' in done.stderr
    stored = k8s.CoreV1Api(cluster.api).read_namespaced_config_map("warned-cm", cluster.namespace)
    assert stored.data == {"a": "b"}


@pytest.mark.parametrize("key", ["api", "apis", "version"])
def test_discovery_endpoints_have_documents(cluster: Cluster, key: str) -> None:
    doc = document(cluster, key)
    assert doc["openapi"].startswith("3.")
    assert doc["paths"]
