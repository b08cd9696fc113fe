"""Quantities and the defaults the emulator writes into built-in objects, checked without a server.

Covers: canonical quantities (table from apimachinery's quantity tests; property: canonical text
is a fixed point and keeps the value); unparsable quantities; the image pull policy rule; QoS
classes; cluster IPs inside the service range and stable per object; the DefaultTolerationSeconds
tolerations are not added twice; the semantic equality that ignores empty and absent fields.
"""

from __future__ import annotations

import ipaddress
import re
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.sim.apiserver.validation import defaulting, meta, quantity


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2000m", "2"),
        ("1000", "1k"),
        ("0.5", "500m"),
        ("1.5", "1500m"),
        ("100m", "100m"),
        ("0.1m", "100u"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("1000Ki", "1000Ki"),
        ("1e3", "1e3"),
        ("0", "0"),
        ("0.0000000001", "1n"),
        (2, "2"),
        (0.25, "250m"),
    ],
)
def test_quantities_are_stored_canonical(text: object, canonical: str) -> None:
    assert quantity.normalize(text) == canonical


@pytest.mark.parametrize(
    ("text", "error"), [("abc", quantity.FORMAT_ERROR), ("1Gb", quantity.FORMAT_ERROR), ("1kk", quantity.SUFFIX_ERROR)]
)
def test_a_string_that_is_not_a_quantity_is_refused(text: str, error: str) -> None:
    with pytest.raises(quantity.QuantityError, match=f"^{re.escape(error)}$"):
        quantity.parse(text)


@given(
    st.integers(min_value=0, max_value=10**9),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "u", "n"]),
)
def test_the_canonical_text_is_a_fixed_point_and_keeps_the_value(mantissa: int, suffix: str) -> None:
    text = f"{mantissa}{suffix}"
    once = quantity.normalize(text)
    assert quantity.normalize(once) == once
    assert quantity.parse(once).value == quantity.parse(text).value


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("busybox", "Always"),
        ("busybox:latest", "Always"),
        ("busybox:1.36", "IfNotPresent"),
        ("registry.local:5000/team/app", "Always"),
        ("registry.local:5000/team/app:v2", "IfNotPresent"),
        ("app@sha256:" + "a" * 64, "IfNotPresent"),
        ("app:latest@sha256:" + "a" * 64, "Always"),
        ("", "IfNotPresent"),
    ],
)
def test_the_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"containers": [{"name": "c", "image": image}]},
    }
    defaulting.on_create("Pod", pod, version="v1")
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ({}, "BestEffort"),
        ({"requests": {"cpu": "100m"}}, "Burstable"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m"}}, "Burstable"),
        ({"limits": {"example.com/gpu": "1"}}, "BestEffort"),
    ],
)
def test_a_new_pod_gets_its_qos_class(resources: dict[str, Any], qos: str) -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}]},
    }
    defaulting.on_create("Pod", pod, version="v1")
    assert pod["status"] == {"phase": "Pending", "qosClass": qos}


def test_cluster_ips_are_in_the_service_range_and_stable() -> None:
    network = ipaddress.ip_network("10.96.0.0/12")
    ips = {defaulting.cluster_ip(f"uid-{n}") for n in range(200)}
    assert len(ips) > 190
    assert all(ipaddress.ip_address(ip) in network and ip not in ("10.96.0.0", "10.96.0.1") for ip in ips)
    assert defaulting.cluster_ip("same") == defaulting.cluster_ip("same")


def test_a_pod_that_tolerates_everything_gets_no_default_tolerations() -> None:
    pod: dict[str, Any] = {
        "metadata": {"name": "p", "uid": "u"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": [{"operator": "Exists"}]},
    }
    defaulting.on_create("Pod", pod, version="v1")
    assert pod["spec"]["tolerations"] == [{"operator": "Exists"}]


def test_semantic_equality_ignores_empty_and_absent_fields_but_not_values() -> None:
    assert meta.semantic({"a": [], "b": {}, "c": "", "d": None, "hostNetwork": False}) == {}
    assert meta.semantic({"enableServiceLinks": False}) == {"enableServiceLinks": False}
    assert meta.semantic({"x": [{"y": {}}]}) == {"x": [{}]}


def test_quantity_parse_rounds_up_below_a_nano() -> None:
    assert quantity.parse("1.0000000001").value == Fraction(1000000001, 10**9)
