"""Simulated-cluster fixtures for every test: one emulator per session, a fresh cluster per test.

- ``sim_server`` (session): a :class:`shared.sim.SimServer` on 127.0.0.1 in a daemon thread,
  stopped (connections closed, threads joined) when the session ends;
- ``sim``: the same server reset to a fresh cluster for this test (default namespaces, no faults,
  no extra tokens, empty audit);
- ``sim_kubeconfig``: a kubeconfig file for it (admin identity), in the test's tmp dir;
- ``api_client``: a real ``kubernetes`` ApiClient built through ``shared.kube.client``, closed after;
- ``kubectl``: runs kubectl against ``sim_kubeconfig`` (skips the test when kubectl is absent);
- ``sim_identity``: a kubeconfig for a ServiceAccount, whose requests RBAC checks;
- ``gpu_sim``: the same server as a GPU cluster for part 2: virtual clock paused (tests move it
  with ``gpu_sim.advance(seconds)``), kubelet running, janitor CRDs registered, node files under
  ``tmp_path/nodes``; add nodes with ``gpu_sim.add_gpu_nodes(n, racks=r, gpu="h100")`` and faults
  with ``gpu_sim.fabric.inject(fabric.parse_all([...]))``.

Registered for the whole suite by ``pytest_plugins = ["tests.simfixtures"]`` in tests/conftest.py;
until then the conftests under tests/sim, tests/contract and tests/kube register it themselves.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.sim import SimServer
from shared.sim.apiserver import kubeconfig

KUBECTL_TIMEOUT = 30.0


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    server = SimServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def sim(sim_server: SimServer) -> Iterator[SimServer]:
    sim_server.reset()
    yield sim_server
    sim_server.faults.clear()
    sim_server.faults.drop_watches()


@pytest.fixture()
def sim_kubeconfig(sim: SimServer, tmp_path: Path) -> Path:
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture()
def api_client(sim_kubeconfig: Path) -> Iterator[Any]:
    from shared.kube import client

    api = client.new_client(kubeconfig=sim_kubeconfig)
    try:
        yield api
    finally:
        client.close(api)


Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def kubectl_runner(config: Path) -> Kubectl:
    """``run(*args, check=True, input=None)`` → CompletedProcess; fails the test on a non-zero exit."""
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not installed on this machine")

    def run(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [binary, f"--kubeconfig={config}", *args],
            capture_output=True,
            text=True,
            input=input,
            timeout=KUBECTL_TIMEOUT,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
        return done

    return run


@pytest.fixture()
def kubectl(sim_kubeconfig: Path) -> Kubectl:
    return kubectl_runner(sim_kubeconfig)


@pytest.fixture()
def sim_identity(sim: SimServer, tmp_path: Path) -> Callable[[str, str], Path]:
    """``make(namespace, name)`` → kubeconfig of that ServiceAccount (created if missing)."""

    def make(namespace: str, name: str) -> Path:
        accounts = sim.table.lookup("", "v1", "serviceaccounts")
        assert accounts is not None
        if sim.store.get(accounts.group_resource, namespace, name) is None:
            sim.api.create(accounts, namespace, {"metadata": {"name": name}})
        token = sim.identities.for_service_account(namespace, name)
        path = tmp_path / f"kubeconfig-{namespace}-{name}"
        assert sim.tls is not None
        kubeconfig.write(
            path,
            sim.url,
            token,
            user=f"system:serviceaccount:{namespace}:{name}",
            namespace=namespace,
            ca_pem=sim.tls.cert_pem,
        )
        return path

    return make


@pytest.fixture()
def gpu_sim(sim: SimServer, tmp_path: Path) -> Iterator[SimServer]:
    sim.vclock.set_speed(0)
    sim.noderoot.root = tmp_path / "nodes"
    sim.repair.install_crds()
    sim.kubelet.start()
    try:
        yield sim
    finally:
        sim.kubelet.stop()
