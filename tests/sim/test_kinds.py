"""Built-in objects decoded as kube-apiserver 1.34's typed JSON decoder decodes them.

Expected texts come from the real server's code: the strict decoder's unknown-field paths
(sigs.k8s.io/json ``internal/golang/encoding/json/decode.go``: field names joined with dots, list
items as ``[i]``, map keys as ``.key``), Go's ``UnmarshalTypeError.Error`` (``json: cannot unmarshal
string into Go struct field DeploymentSpec.spec.replicas of type int32``: the innermost struct and
the JSON field names from the root, no indexes), ``apimachinery:pkg/api/resource/quantity.go``
(``ParseQuantity``), ``pkg/util/intstr/intstr.go`` and ``pkg/apis/meta/v1/time.go`` /
``micro_time.go`` (their ``UnmarshalJSON``), Go's ``time.Parse`` and ``encoding/base64``;
summarised in the team's research notes, sections 2.2 and 3.

Covers: pruned paths (nested, lists, maps of structs, metadata) and what is kept (map keys,
RawExtension, FieldsV1, apiextensions JSON); decode errors (type errors with their Go context, the
first one winning, parser errors stopping the decoder, null accepted everywhere); the objects our
programs, fixtures and the simulator itself write produce neither. Properties: the Go parsers never
raise, accept what their formatters produce, and base64 agrees with Python's strict decoder.
"""

from __future__ import annotations

import base64
import copy
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim import SimServer
from shared.sim.apiserver import goparse, kinds
from tests.contract import objects
from tests.sim import jobkit


def schema(group: str, version: str, kind: str) -> kinds.BuiltinSchema:
    found = kinds.schema_for(group, version, kind)
    assert found is not None, f"{group}/{version} {kind} has no schema"
    return found


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx",
                            "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "500m", "memory": 1073741824}},
                        }
                    ]
                },
            },
        },
    }


def clean(group: str, version: str, kind: str, obj: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(decode errors, unknown fields) of ``obj``, leaving it untouched."""
    s = schema(group, version, kind)
    return s.decode_errors(obj), s.prune(copy.deepcopy(obj))


# ---------------------------------------------------------------- pruning


def test_unknown_fields_are_removed_and_named_by_their_full_path() -> None:
    obj = deployment()
    obj["metadata"]["foo"] = 1
    obj["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    obj["spec"]["Replicas"] = 3  # field names are case-sensitive
    found = schema("apps", "v1", "Deployment").prune(obj)
    assert found == ["metadata.foo", "spec.Replicas", "spec.template.spec.containers[0].imagePullPolicyy"]
    assert obj == deployment()


def test_unknown_top_level_fields_have_bare_names() -> None:
    obj = objects.configmap("c", {"a": "b"}) | {"dta": {"x": "y"}}
    assert schema("", "v1", "ConfigMap").prune(obj) == ["dta"]
    assert "dta" not in obj


def test_map_keys_are_kept_and_map_values_are_pruned_with_a_dotted_key() -> None:
    crd: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"n": {"type": "integer", "const": 3}, "free": {"default": {"any": 1}}},
                        }
                    },
                }
            ],
        },
    }
    found = schema("apiextensions.k8s.io", "v1", "CustomResourceDefinition").prune(crd)
    assert found == ["spec.versions[0].schema.openAPIV3Schema.properties.n.const"]
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    assert props == {"n": {"type": "integer"}, "free": {"default": {"any": 1}}}


def test_raw_extensions_and_managed_fields_keep_everything_below_them() -> None:
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": "web-1",
            "managedFields": [
                {"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {".": {}}}}
            ],
        },
        "data": {"spec": {"template": {"anything": True}}},
        "revision": 1,
    }
    assert clean("apps", "v1", "ControllerRevision", revision) == ([], [])


def test_a_kind_the_data_does_not_hold_has_no_schema() -> None:
    assert kinds.schema_for("example.com", "v1", "Widget") is None
    assert kinds.schema_for("apps", "v1", "Widget") is None


def test_every_kind_the_generator_lists_has_a_schema() -> None:
    from shared.sim.apiserver import schemagen

    for group, version, kind in schemagen.KINDS:
        schema(group, version, kind)


# ---------------------------------------------------------------- decode errors


def test_a_string_for_an_integer_is_the_decoders_type_error() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "3"
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda o: o["spec"].update(replicas=1.5),
            "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            lambda o: o["spec"].update(replicas=2**31),
            "json: cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32",
        ),
        (
            lambda o: o["spec"]["template"]["spec"].update(containers="web"),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers"
            " of type []v1.Container",
        ),
        (
            lambda o: o["spec"]["template"]["spec"].update(containers=["web"]),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers"
            " of type v1.Container",
        ),
        (
            lambda o: o["metadata"]["labels"].update(tier=3),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            lambda o: o["spec"]["template"]["spec"]["containers"][0]["ports"][0].update(containerPort="80"),
            "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports"
            ".containerPort of type int32",
        ),
        (
            lambda o: o["spec"].update(paused="yes"),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type bool",
        ),
        (
            lambda o: o.update(spec=[]),
            "json: cannot unmarshal array into Go struct field Deployment.spec of type v1.DeploymentSpec",
        ),
        (
            lambda o: o["spec"]["template"]["spec"]["containers"][0]["resources"].update(limits=["cpu"]),
            "json: cannot unmarshal array into Go struct field ResourceRequirements.spec.template.spec.containers"
            ".resources.limits of type v1.ResourceList",
        ),
    ],
)
def test_type_errors_name_the_innermost_struct_and_the_path_from_the_root(change: Any, expected: str) -> None:
    obj = deployment()
    change(obj)
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [expected]


def test_only_the_first_type_error_is_reported() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "3"
    obj["spec"]["paused"] = "yes"
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    ]


def test_a_field_types_own_parser_stops_the_decoder_and_wins_over_earlier_type_errors() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "3"
    obj["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = True
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [
        "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy.rollingUpdate"
        ".maxSurge of type int32"
    ]


@pytest.mark.parametrize("value", ["2 cores", "", "1.2.3", True, {"cpu": 1}])
def test_a_quantity_that_does_not_parse_fails_with_the_regular_expression(value: Any) -> None:
    obj = deployment()
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = value
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [goparse.QUANTITY_FORMAT]
    assert goparse.QUANTITY_FORMAT == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize("value", ["10Mm", "1e", "5Ki2"])
def test_a_quantity_with_an_unknown_suffix_names_the_suffix(value: str) -> None:
    assert goparse.quantity_error(value) == "unable to parse quantity's suffix"


@pytest.mark.parametrize("value", ["0", "1", "-1", "+1", "1.5", ".5", "500m", "1Gi", "2Ti", "1e3", "1E", "1e-3", "-"])
def test_quantities_go_accepts(value: str) -> None:
    assert goparse.quantity_error(value) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            "yesterday",
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
        (
            "2024-01-02 03:04:05Z",
            'parsing time "2024-01-02 03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 03:04:05Z" as "T"',
        ),
        ("2024-13-02T03:04:05Z", 'parsing time "2024-13-02T03:04:05Z": month out of range'),
        ("2023-02-29T03:04:05Z", 'parsing time "2023-02-29T03:04:05Z": day out of range'),
        (
            "2024-01-02T03:04:05",
            'parsing time "2024-01-02T03:04:05" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        ),
        ("2024-01-02T03:04:05Zjunk", 'parsing time "2024-01-02T03:04:05Zjunk": extra text: "junk"'),
    ],
)
def test_a_timestamp_that_does_not_parse_fails_with_gos_parse_error(value: str, expected: str) -> None:
    obj = deployment()
    obj["metadata"]["creationTimestamp"] = value
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == [expected]


def test_a_micro_time_needs_six_fractional_digits() -> None:
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a", "renewTime": "2024-01-02T03:04:05Z"}}
    assert schema("coordination.k8s.io", "v1", "Lease").decode_errors(lease) == [
        'parsing time "2024-01-02T03:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
    ]
    lease["spec"]["renewTime"] = "2024-01-02T03:04:05.123456Z"
    assert schema("coordination.k8s.io", "v1", "Lease").decode_errors(lease) == []


def test_a_timestamp_given_a_number_is_a_string_type_error() -> None:
    obj = {"metadata": {"name": "x", "creationTimestamp": 5}}
    assert schema("", "v1", "ConfigMap").decode_errors(obj) == [
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"
    ]


def test_secret_data_must_be_base64() -> None:
    secret = {"metadata": {"name": "s"}, "data": {"ok": "YWJj", "bad": "not base64!"}}
    assert schema("", "v1", "Secret").decode_errors(secret) == ["illegal base64 data at input byte 3"]


def test_null_is_accepted_for_any_field() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = None
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = None
    obj["metadata"]["labels"]["tier"] = None
    obj["metadata"]["creationTimestamp"] = None
    assert schema("apps", "v1", "Deployment").decode_errors(obj) == []


def test_int_or_string_and_quantity_accept_both_forms() -> None:
    obj = deployment()
    obj["spec"]["strategy"]["rollingUpdate"] = {"maxSurge": 1, "maxUnavailable": "10%"}
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"cpu": 0.5, "memory": "1Gi"}
    assert clean("apps", "v1", "Deployment", obj) == ([], [])


# ---------------------------------------------------------------- what our code writes


def test_contract_fixture_objects_are_clean() -> None:
    assert clean("", "v1", "Pod", objects.pod("p", node="n", labels={"a": "b"}, containers=("a", "b"))) == ([], [])
    assert clean("", "v1", "Node", objects.node("n", labels={"a": "b"})) == ([], [])
    assert clean("", "v1", "ConfigMap", objects.configmap("c", {"k": "v"}, labels={"a": "b"})) == ([], [])
    crd = objects.crd("things", "Thing", columns=[{"name": "Phase", "type": "string", "jsonPath": ".status.phase"}])
    assert clean("apiextensions.k8s.io", "v1", "CustomResourceDefinition", crd) == ([], [])
    assert clean("batch", "v1", "Job", jobkit.allreduce("j", ["node-0", "node-1"], env={"A": "b"})) == ([], [])


def test_the_chart_crds_are_clean() -> None:
    from shared.chart import crds as chart_crds

    for spec in chart_crds.TEMPLATES:
        crd = chart_crds.expected(spec)
        assert clean("apiextensions.k8s.io", "v1", "CustomResourceDefinition", crd) == ([], []), spec.file


def test_events_and_leases_our_programs_create_are_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    from shared import errors
    from shared.health import conditions as health_conditions
    from shared.health import event as hevent
    from shared.kube import leases, rest

    sent: list[dict[str, Any]] = []

    def absent(*args: Any, **kwargs: Any) -> Any:
        raise errors.NotFound("absent")

    def create(api: Any, path: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        sent.append(body)
        return body

    monkeypatch.setattr(rest, "create", create)
    monkeypatch.setattr(rest, "get", absent)
    now = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    event = hevent.HealthEvent(agent="gpu-health", checkName="GpuXid", nodeName="node-0", message="m")
    health_conditions.publish_event(None, event, now=now)
    leases.try_acquire(None, "default", "leader", identity="me", duration=15, now=lambda: now)
    assert [body["kind"] for body in sent] == ["Event", "Lease"]
    for body in sent:
        group, _, version = body["apiVersion"].rpartition("/")
        assert clean(group, version, body["kind"], body) == ([], []), body


def test_an_event_as_client_gos_recorder_writes_it_is_clean() -> None:
    """client-go:tools/record/event.go ``makeEvent``: eventTime null, series absent."""
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "node-0.17f0a1b2c3d4e5f6", "namespace": "default"},
        "involvedObject": {"kind": "Node", "name": "node-0", "uid": "u", "apiVersion": "v1"},
        "reason": "Cordoned",
        "message": "cordoned by nvsentinel",
        "source": {"component": "nvsentinel", "host": "pod-1"},
        "firstTimestamp": "2025-01-02T03:04:05Z",
        "lastTimestamp": "2025-01-02T03:04:05Z",
        "count": 1,
        "type": "Normal",
        "eventTime": None,
        "reportingComponent": "nvsentinel",
        "reportingInstance": "pod-1",
    }
    assert clean("", "v1", "Event", event) == ([], [])


def test_plain_nodes_and_gpu_nodes_and_their_leases_are_clean(sim: SimServer) -> None:
    sim.add_nodes(2)
    sim.add_gpu_nodes(2, racks=1, gpu="h100")
    checked = assert_store_clean(sim)
    assert {"Node", "Lease", "Namespace"} <= checked


def test_everything_a_gpu_cluster_stores_while_running_a_job_is_clean(gpu_sim: SimServer, api_client: Any) -> None:
    nodes = gpu_sim.add_gpu_nodes(2, racks=1, gpu="h100")
    job, _ = jobkit.run(gpu_sim, api_client, jobkit.allreduce("nccl", nodes), seconds=900)
    assert jobkit.condition(job, "Complete") == "True"
    checked = assert_store_clean(gpu_sim)
    assert {"Job", "Pod", "Node", "Lease", "CustomResourceDefinition"} <= checked


def assert_store_clean(sim: SimServer) -> set[str]:
    """Every stored built-in object decodes cleanly; returns the kinds seen."""
    seen = set()
    for gr in sim.store.group_resources():
        r = sim.table.by_group_resource(*gr)
        if r is None or r.crd:
            continue
        for entry in sim.store.scan(gr, None):
            obj = entry.object()
            assert clean(r.group, r.version, r.kind, obj) == ([], []), obj
            seen.add(r.kind)
    return seen


# ---------------------------------------------------------------- properties


@given(st.text(alphabet="0123456789.+-eEinumkKMGTPx ", max_size=12))
def test_quantity_parser_never_raises_and_answers_one_of_gos_errors(text: str) -> None:
    assert goparse.quantity_error(text) in (None, goparse.QUANTITY_FORMAT, goparse.QUANTITY_SUFFIX)


@given(
    st.decimals(min_value=-(10**12), max_value=10**12, allow_nan=False, places=3),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "e3", "E-2"]),
)
def test_quantities_written_as_number_and_suffix_parse(number: Any, suffix: str) -> None:
    assert goparse.quantity_error(f"{number}{suffix}") is None


@given(
    st.datetimes(min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31)),
    st.sampled_from(["Z", "+05:30", "-08:00"]),
)
def test_times_in_rfc3339_and_micro_form_parse(moment: datetime, zone: str) -> None:
    assert goparse.time_error(moment.strftime("%Y-%m-%dT%H:%M:%S") + zone) is None
    assert goparse.time_error(moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + zone) is None
    assert goparse.time_error(moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + zone, goparse.RFC3339_MICRO) is None


@given(st.text(max_size=30))
def test_time_parser_never_raises(text: str) -> None:
    for layout in (goparse.RFC3339, goparse.RFC3339_MICRO):
        problem = goparse.time_error(text, layout)
        assert problem is None or problem.startswith(f"parsing time {goparse.go_quote(text)}")


@given(st.binary(max_size=40))
def test_base64_of_any_bytes_decodes(data: bytes) -> None:
    assert goparse.base64_error(base64.b64encode(data).decode()) is None


_CANONICAL_BASE64 = re.compile(r"([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


@given(st.text(alphabet="ABCab01+/=\r\n!", max_size=16))
def test_base64_accepts_exactly_padded_quanta_with_line_breaks_anywhere(text: str) -> None:
    """Go's StdEncoding: padding required, CR/LF ignored, trailing bits not checked."""
    stripped = text.replace("\r", "").replace("\n", "")
    assert (goparse.base64_error(text) is None) == bool(_CANONICAL_BASE64.fullmatch(stripped))
