"""The target of the contract suite: the emulator by default, a real cluster with --real-cluster.

Every test gets a ``cluster``: a kubeconfig, a real ``kubernetes`` ApiClient built through
``shared.kube``, and a namespace of its own (``contract-XXXXXX``) that is deleted afterwards.
Tests that need something only the emulator can do (inject faults, set pod status without a
kubelet fighting back, compact history, read the audit) call ``cluster.require_sim()``, which
skips them on a real cluster and says why.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from shared.sim import SimServer
from tests import waiting

T = TypeVar("T")


@dataclass
class Cluster:
    kubeconfig: Path
    api: Any
    namespace: str
    sim: SimServer | None
    cleanup: list[Callable[[], None]] = field(default_factory=list)

    def require_sim(self, why: str) -> SimServer:
        if self.sim is None:
            pytest.skip(f"emulator only: {why}")
        return self.sim

    def name(self, prefix: str) -> str:
        """A name unique to this run, for cluster-scoped objects on a shared real cluster."""
        return f"{prefix}-{secrets.token_hex(3)}"


def eventually(check: Callable[[], T], *, timeout: float = waiting.REAL_SECONDS, interval: float = 0.02) -> T:
    """Poll ``check`` until it returns a truthy value or ``timeout`` real seconds pass (then fail):
    generous, the same on the emulator and on a real cluster, so a busy machine never reaches it."""
    return waiting.until(check, what="the condition", seconds=timeout, interval=interval)


@pytest.fixture()
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    from kubernetes import client as k8s

    from shared.kube import client

    real = bool(request.config.getoption("--real-cluster"))
    sim: SimServer | None = None
    if real:
        if not os.environ.get("KUBECONFIG"):
            pytest.skip("--real-cluster needs KUBECONFIG naming the cluster to test")
        config = Path(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    else:
        sim = request.getfixturevalue("sim")
        config = sim.write_kubeconfig(tmp_path / "kubeconfig")
    api = client.new_client(kubeconfig=config)
    namespace = f"contract-{secrets.token_hex(3)}"
    core = k8s.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": namespace}})
    target = Cluster(config, api, namespace, sim)
    try:
        yield target
    finally:
        for undo in reversed(target.cleanup):
            try:
                undo()
            except k8s.ApiException as exc:
                if exc.status != 404:
                    raise
        if real:
            core.delete_namespace(namespace)
        client.close(api)


@pytest.fixture()
def cluster_kubectl(cluster: Cluster) -> Callable[..., Any]:
    """kubectl on the contract target, with ``-n`` defaulting to the test's namespace."""
    from tests import simfixtures

    run = simfixtures.kubectl_runner(cluster.kubeconfig)

    def in_namespace(*args: str, check: bool = True, input: str | None = None) -> Any:
        return run(f"--namespace={cluster.namespace}", *args, check=check, input=input)

    return in_namespace
