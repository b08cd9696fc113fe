"""The namespace a command uses without ``-n``: kubectl's rule (``shared.kube.client.context_namespace``).

Covers: the current context's namespace; a named context's own namespace; a context without one
is ``default``; an unknown context is NotFound; with KUBECONFIG naming two files, the merged
current context is used; in a pod, the service account's namespace file; no configuration at
all is InvalidInput, as building a client is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shared import errors, yamlio
from shared.kube import client


def _kubeconfig(path: Path, *, current: str | None, contexts: dict[str, str | None]) -> Path:
    data = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [
            {"name": name, "context": {"cluster": "c", "user": "u", **({"namespace": ns} if ns else {})}}
            for name, ns in contexts.items()
        ],
        **({"current-context": current} if current else {}),
    }
    path.write_text(yamlio.dumps(data), encoding="utf-8")
    return path


def test_the_current_and_a_named_context_give_their_namespace(tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path / "kc", current="lab", contexts={"lab": "nvcre", "prod": "certs", "bare": None})
    assert client.context_namespace(kubeconfig=config) == "nvcre"
    assert client.context_namespace(kubeconfig=config, context="prod") == "certs"
    assert client.context_namespace(kubeconfig=config, context="bare") == "default"
    with pytest.raises(errors.NotFound, match="context 'nope' not found"):
        client.context_namespace(kubeconfig=config, context="nope")


def test_kubeconfig_files_listed_in_the_environment_are_merged(tmp_path: Path) -> None:
    first = _kubeconfig(tmp_path / "a", current="lab", contexts={"lab": "nvcre"})
    second = _kubeconfig(tmp_path / "b", current=None, contexts={"other": "elsewhere"})
    env = {"KUBECONFIG": f"{first}:{second}"}
    assert client.context_namespace(environ=env, home=tmp_path) == "nvcre"
    assert client.context_namespace(environ=env, home=tmp_path, context="other") == "elsewhere"  # from the second


def test_in_a_pod_the_service_accounts_namespace_is_used(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t", encoding="utf-8")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}
    assert client.context_namespace(environ=env, home=tmp_path, service_account_dir=tmp_path) == "default"
    (tmp_path / "namespace").write_text("gpu-ops\n", encoding="utf-8")
    assert client.context_namespace(environ=env, home=tmp_path, service_account_dir=tmp_path) == "gpu-ops"


def test_no_configuration_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(errors.InvalidInput, match="no cluster configuration"):
        client.context_namespace(environ={}, home=tmp_path, service_account_dir=tmp_path)
