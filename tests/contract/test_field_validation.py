"""Field validation (``fieldValidation=Strict|Warn|Ignore``) on built-in kinds, as 1.34 answers it.

Covers: the server default is Warn (unknown fields dropped, one ``Warning: 299`` header each);
Strict refuses an unknown or duplicate field on create and update with the decoder's 400, and
on a merge patch with the 422 ``patch`` cause; Ignore drops silently; a value outside the three
directives is a 422 on the options; a duplicate field under Warn keeps the last value and warns.
Sources: apiserver:pkg/endpoints/handlers/rest.go (``fieldValidation``, ``transformDecodeError``),
handlers/patch.go (the patch cause), apimachinery:pkg/runtime/error.go (``strict decoding error:``),
apimachinery:pkg/apis/meta/v1/validation/validation.go (the directive's 422),
apimachinery:pkg/util/net/http.go (the ``299 -`` header form).
"""

from __future__ import annotations

import json

import pytest
from kubernetes import client as k8s

from tests.contract import objects
from tests.contract.conftest import Cluster

MERGE = "application/merge-patch+json"

pytestmark = pytest.mark.warnings_expected


def _configmap_path(cluster: Cluster, name: str = "") -> str:
    base = f"/api/v1/namespaces/{cluster.namespace}/configmaps"
    return f"{base}/{name}" if name else base


def _status(exc: k8s.ApiException) -> dict[str, object]:
    body: dict[str, object] = json.loads(exc.body)
    return body


def test_unknown_field_under_the_default_directive_is_dropped_with_a_warning(cluster: Cluster) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warned"}, "dta": {"a": "b"}}
    status, created, headers = objects.request(cluster.api, "POST", _configmap_path(cluster), body)
    assert status == 201
    assert "dta" not in created
    assert headers.getlist("Warning") == ['299 - "unknown field \\"dta\\""']


def test_strict_create_refuses_each_unknown_field_with_the_decoders_400(cluster: Cluster) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "strict", "labelz": {"a": "b"}},
        "dta": {"a": "b"},
    }
    with pytest.raises(k8s.ApiException) as caught:
        objects.request(cluster.api, "POST", _configmap_path(cluster), body, query=[("fieldValidation", "Strict")])
    assert caught.value.status == 400
    status = _status(caught.value)
    assert status["reason"] == "BadRequest"
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'unknown field "dta", unknown field "metadata.labelz"'
    )


def test_strict_create_reports_a_duplicate_field_by_its_path(cluster: Cluster) -> None:
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"1","a":"2"}}'
    status, body, _ = objects.raw_request(
        cluster.api,
        "POST",
        _configmap_path(cluster),
        raw,
        content_type="application/json",
        query="fieldValidation=Strict",
    )
    assert status == 400
    assert body["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data.a"'
    )


def test_duplicate_field_under_warn_keeps_the_last_value_and_warns(cluster: Cluster) -> None:
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dupwarn"},"data":{"a":"1","a":"2"}}'
    status, body, headers = objects.raw_request(
        cluster.api, "POST", _configmap_path(cluster), raw, content_type="application/json"
    )
    assert status == 201
    assert body["data"] == {"a": "2"}
    assert headers.getlist("Warning") == ['299 - "duplicate field \\"data.a\\""']


def test_ignore_drops_unknown_fields_silently(cluster: Cluster) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}, "dta": {"a": "b"}}
    status, created, headers = objects.request(
        cluster.api, "POST", _configmap_path(cluster), body, query=[("fieldValidation", "Ignore")]
    )
    assert status == 201 and "dta" not in created
    assert not headers.getlist("Warning")


def test_strict_update_refuses_an_unknown_field(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("upd", {"a": "1"}))
    current = objects.request(cluster.api, "GET", _configmap_path(cluster, "upd"))[1]
    current["immutible"] = True
    with pytest.raises(k8s.ApiException) as caught:
        objects.request(
            cluster.api, "PUT", _configmap_path(cluster, "upd"), current, query=[("fieldValidation", "Strict")]
        )
    assert caught.value.status == 400
    assert _status(caught.value)["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "immutible"'
    )


def test_strict_merge_patch_refuses_with_the_patch_cause(cluster: Cluster) -> None:
    core = k8s.CoreV1Api(cluster.api)
    core.create_namespaced_config_map(cluster.namespace, objects.configmap("patched", {"a": "1"}))
    with pytest.raises(k8s.ApiException) as caught:
        objects.request(
            cluster.api,
            "PATCH",
            _configmap_path(cluster, "patched"),
            {"dta": {"b": "2"}},
            content_type=MERGE,
            query=[("fieldValidation", "Strict")],
        )
    assert caught.value.status == 422
    status = _status(caught.value)
    assert status["reason"] == "Invalid"
    details = status["details"]
    assert isinstance(details, dict)
    (cause,) = details["causes"]
    assert cause["field"] == "patch"
    assert cause["reason"] == "FieldValueInvalid"
    assert cause["message"].endswith('strict decoding error: unknown field "dta"')
    assert str(status["message"]).startswith(' "" is invalid: patch: Invalid value: "{')


def test_a_directive_outside_the_three_is_refused_on_the_options(cluster: Cluster) -> None:
    body = objects.configmap("badopt")
    with pytest.raises(k8s.ApiException) as caught:
        objects.request(cluster.api, "POST", _configmap_path(cluster), body, query=[("fieldValidation", "Loud")])
    assert caught.value.status == 422
    assert _status(caught.value)["message"] == (
        'CreateOptions "" is invalid: fieldValidation: Unsupported value: "Loud": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )


def test_the_warning_is_in_the_simulators_audit_record(cluster: Cluster) -> None:
    sim = cluster.require_sim("the audit record is the simulator's")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "audited"}, "dta": {}}
    objects.request(cluster.api, "POST", _configmap_path(cluster), body)
    # The record is written before the answer goes out, so it is there when the client has it.
    (record,) = [r for r in sim.audit.records() if r.resource == "configmaps" and r.verb == "create"]
    assert record.warnings == ('unknown field "dta"',)
