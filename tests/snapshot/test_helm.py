"""Helm 3 release Secrets: the real encoding round-trips; the newest revision wins; junk is ignored."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shared.snapshot import helm


def secret(name: str, namespace: str, revision: int, version: str, status: str = "deployed") -> dict[str, Any]:
    release = {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": name, "version": version, "appVersion": version}},
        "manifest": "---\n",
    }
    return {
        "type": helm.SECRET_TYPE,
        "metadata": {
            "name": f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": namespace,
            "labels": {"owner": "helm"},
        },
        "data": {"release": helm.encode(release)},
    }


@given(
    name=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
    revision=st.integers(1, 500),
    version=st.from_regex(r"v?[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
)
def test_a_release_survives_helms_double_base64_gzip_encoding(name: str, revision: int, version: str) -> None:
    decoded = helm.decode(secret(name, "ns", revision, version))
    assert decoded == helm.Release(name, "ns", revision, "deployed", name, version, version)


def test_only_the_newest_revision_of_each_release_counts() -> None:
    secrets = [
        secret("gpu-operator", "gpu-operator", 1, "v25.3.0"),
        secret("gpu-operator", "gpu-operator", 3, "v25.10.1"),
        secret("gpu-operator", "gpu-operator", 2, "v25.9.0"),
        secret("cert-manager", "cert-manager", 1, "v1.17.2"),
    ]
    assert [(r.name, r.version) for r in helm.current(secrets)] == [
        ("cert-manager", "v1.17.2"),
        ("gpu-operator", "v25.10.1"),
    ]


def test_secrets_that_are_not_readable_releases_are_skipped() -> None:
    broken = secret("x", "ns", 1, "1.0.0")
    broken["data"]["release"] = "bm90IGd6aXA="
    other = {"type": "Opaque", "data": {"release": "eA=="}}
    assert helm.current([broken, other, {"type": helm.SECRET_TYPE, "data": {}}]) == []
