"""Building a client the way kubectl finds its cluster.

Covers: an explicit kubeconfig (and a context in it); KUBECONFIG read at call time, with several
files; ~/.kube/config; the in-cluster service account; one clear error for a missing file, an
unknown context, or no configuration at all. Each client is proved by a real request to the
emulator.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kubernetes import client as k8s

from shared import errors, yamlio
from shared.kube import client
from shared.sim import SimServer


def _namespaces(api: object) -> set[str]:
    try:
        return {n.metadata.name for n in k8s.CoreV1Api(api).list_namespace().items}
    finally:
        api.close()  # type: ignore[attr-defined]


def test_an_explicit_kubeconfig_reaches_the_cluster(sim_kubeconfig: Path) -> None:
    assert "default" in _namespaces(client.new_client(kubeconfig=sim_kubeconfig))


def test_kubeconfig_is_read_from_the_environment_at_call_time(sim_kubeconfig: Path, tmp_path: Path) -> None:
    other = tmp_path / "empty.yaml"
    other.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    env = {"KUBECONFIG": f"{tmp_path / 'absent'}:{sim_kubeconfig}:{other}", "HOME": str(tmp_path)}
    assert "default" in _namespaces(client.new_client(environ=env))


def test_home_kube_config_is_the_fallback(sim_kubeconfig: Path, tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(sim_kubeconfig.read_text(encoding="utf-8"), encoding="utf-8")
    assert "default" in _namespaces(client.new_client(environ={}, home=tmp_path))


def test_a_named_context_is_used_and_an_unknown_one_is_not_found(sim_kubeconfig: Path, tmp_path: Path) -> None:
    data = yamlio.load_file(sim_kubeconfig)
    data["contexts"].append({"name": "broken", "context": {"cluster": "nowhere", "user": "sim-admin"}})
    data["current-context"] = "broken"
    path = tmp_path / "two-contexts"
    path.write_text(yamlio.dumps(data), encoding="utf-8")
    assert "default" in _namespaces(client.new_client(kubeconfig=path, context="sim"))
    with pytest.raises(errors.NotFound, match="context 'nope' not found"):
        client.new_client(kubeconfig=path, context="nope")


def test_in_cluster_configuration_uses_the_mounted_service_account(sim: SimServer, tmp_path: Path) -> None:
    assert sim.tls is not None
    (tmp_path / "token").write_text(sim.identities.admin_token, encoding="utf-8")
    (tmp_path / "ca.crt").write_text(sim.tls.cert_pem, encoding="utf-8")
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(sim.port)}
    api = client.new_client(environ=env, home=tmp_path, service_account_dir=tmp_path)
    assert "kube-system" in _namespaces(api)


def test_missing_configuration_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput, match="does not exist"):
        client.new_client(kubeconfig=tmp_path / "nope")
    with pytest.raises(errors.InvalidInput, match="no cluster configuration"):
        client.new_client(environ={}, home=tmp_path, service_account_dir=tmp_path)
    with pytest.raises(errors.InvalidInput, match="KUBECONFIG"):
        client.new_client(environ={"KUBECONFIG": str(tmp_path / "gone")}, home=tmp_path)


@pytest.mark.parametrize("text", [":", "a: b: c\n", "[unclosed\n"])
def test_a_kubeconfig_the_client_cannot_parse_is_one_input_error(tmp_path: Path, text: str) -> None:
    """The client reads YAML with its own parser, which refuses some documents ours accepts (":")."""
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    with pytest.raises(errors.InvalidInput) as caught:
        client.new_client(kubeconfig=path, environ={})
    assert caught.value.where is not None and str(path) in caught.value.where


def test_errors_never_show_the_token(sim_kubeconfig: Path, tmp_path: Path) -> None:
    data = yamlio.load_file(sim_kubeconfig)
    token = data["users"][0]["user"]["token"]
    data["current-context"] = "absent"
    data["users"][0]["user"]["exec"] = {"command": token}  # a credential in an odd place
    path = tmp_path / "bad"
    path.write_text(yamlio.dumps(data), encoding="utf-8")
    with pytest.raises(errors.ToolError) as caught:
        client.new_client(kubeconfig=path)
    assert token not in caught.value.line()


def test_the_http_pool_holds_as_many_connections_as_the_caller_has_workers(sim_kubeconfig: Path) -> None:
    """``nvsentinel run`` sizes it to its workers: a smaller pool discards connections ("pool is full")."""
    wanted = (os.cpu_count() or 1) * 5 + 7  # above the kubernetes client's default on any machine
    api = client.new_client(kubeconfig=sim_kubeconfig, connections=wanted)
    try:
        assert api.rest_client.pool_manager.connection_pool_kw["maxsize"] == wanted  # type: ignore[attr-defined]
    finally:
        client.close(api)
