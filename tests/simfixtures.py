"""Simulated-cluster fixtures for every test: one emulator per session, a fresh cluster per test.

- ``sim_server`` (session): a :class:`shared.sim.SimServer` on 127.0.0.1 in a daemon thread,
  stopped (connections closed, threads joined) when the session ends;
- ``sim``: the same server reset to a fresh cluster for this test (default namespaces, no faults,
  no extra tokens, empty audit);
- ``sim_kubeconfig``: a kubeconfig file for it (admin identity), in the test's tmp dir;
- ``api_client``: a real ``kubernetes`` ApiClient built through ``shared.kube.client``, closed after;
- ``kubectl``: runs the pinned kubectl (``.venv/bin/kubectl``, 1.34 like the simulator) against
  ``sim_kubeconfig``; ``helm`` and ``helm3`` run the pinned helm 4 and helm 3 the same way, with
  HOME, XDG and HELM_* homes and TMPDIR in the test's tmp dir so helm writes nowhere else. The
  binaries come from ``make setup`` (tests/clients.py), never from PATH: a missing one fails the
  test with "run make setup", and each one's version is checked once per session;
  ``promtool_binary`` is the pinned promtool from Debian's prometheus package, checked the same way;
- ``sim_identity``: a kubeconfig for a ServiceAccount, whose requests RBAC checks;
- ``gpu_sim``: the same server as a GPU cluster for part 2: virtual clock paused (tests move it
  with ``gpu_sim.advance(seconds)``), kubelet running, janitor CRDs registered, node files under
  ``tmp_path/nodes``; add nodes with ``gpu_sim.add_gpu_nodes(n, racks=r, gpu="h100")`` and faults
  with ``gpu_sim.fabric.inject(fabric.parse_all([...]))``.

Registered for the whole suite by ``pytest_plugins = ["tests.simfixtures"]`` in tests/conftest.py;
until then the conftests under tests/sim, tests/contract and tests/kube register it themselves.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.sim import SimServer
from shared.sim.apiserver import discovery, kubeconfig
from tests import clients

KUBECTL_TIMEOUT = 30.0
HELM_TIMEOUT = 60.0


@pytest.fixture(scope="session")
def sim_server() -> Iterator[SimServer]:
    server = SimServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture()
def sim(sim_server: SimServer, request: pytest.FixtureRequest) -> Iterator[SimServer]:
    """A fresh cluster per test. A test during which any client — our programs above all — got a
    ``Warning`` header fails: a field the real server would drop is a bug in whoever sent it.
    Tests that send such fields on purpose say so with ``@pytest.mark.warnings_expected``."""
    sim_server.reset()
    yield sim_server
    sim_server.faults.clear()
    sim_server.faults.drop_watches()
    if request.node.get_closest_marker("warnings_expected") is None:
        warned = [r for r in sim_server.audit.records() if r.warnings]
        if warned:
            shown = "; ".join(
                f"{r.verb} {r.resource} {r.namespace}/{r.name} by {r.identity}: {', '.join(r.warnings)}"
                for r in warned[:5]
            )
            pytest.fail(f"the server warned {len(warned)} time(s) during the test: {shown}")


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
Helm = Callable[..., subprocess.CompletedProcess[str]]


def reported_version(client: clients.Client, path: Path) -> str:
    """The version the binary itself reports: kubectl's ``clientVersion.gitVersion``, helm's ``.Version``."""
    if client.name == "kubectl":
        argv = [str(path), "version", "--client", "-o", "json"]
    else:
        argv = [str(path), "version", "--template", "{{.Version}}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=KUBECTL_TIMEOUT, check=False)
    if done.returncode != 0:
        pytest.fail(f"{path} version exited {done.returncode}: {done.stderr.strip()}", pytrace=False)
    if client.name == "kubectl":
        return str(json.loads(done.stdout)["clientVersion"]["gitVersion"])
    return done.stdout.strip()


@functools.cache
def _checked(client: clients.Client) -> Path:
    path = clients.binary(client)
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"{path} is missing: run make setup (it installs the pinned {client.name} {client.version})", pytrace=False
        )
    version = reported_version(client, path)
    if version != client.version:
        pytest.fail(f"{path} reports {version}, the pin is {client.version}: run make setup", pytrace=False)
    return path


def pinned(client: clients.Client) -> Path:
    """The pinned binary in ``.venv/bin``; fails the test (never skips) when absent or of another version.

    The version is asked once per session (a failed check is asked again, and fails again, per test).
    """
    path = _checked(client)
    if client is clients.KUBECTL:
        minor = client.version.removeprefix("v").split(".")[1]
        assert minor == discovery.VERSION["minor"], f"kubectl {client.version} is not the simulator's minor version"
    return path


def kubectl_runner(config: Path) -> Kubectl:
    """``run(*args, check=True, input=None)`` → CompletedProcess; fails the test on a non-zero exit."""
    binary = pinned(clients.KUBECTL)

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


def helm_environment(config: Path, home: Path) -> dict[str, str]:
    """This process's environment with every place helm reads or writes moved under ``home``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("HELM_", "XDG_")) and name not in ("KUBECONFIG", "HOME", "TMPDIR")
    }
    places = {
        "HOME": home,
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "HELM_CACHE_HOME": home / ".cache" / "helm",
        "HELM_CONFIG_HOME": home / ".config" / "helm",
        "HELM_DATA_HOME": home / ".local" / "share" / "helm",
        "TMPDIR": home / "tmp",
    }
    for place in places.values():
        place.mkdir(parents=True, exist_ok=True)
    env.update({name: str(place) for name, place in places.items()})
    env["KUBECONFIG"] = str(config)
    return env


def helm_runner(config: Path, home: Path, *, client: clients.Client = clients.HELM) -> Helm:
    """``run(*args, check=True, input=None)`` with the pinned helm (``clients.HELM`` or ``clients.HELM3``)."""
    binary = pinned(client)
    env = helm_environment(config, home)

    def run(*args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [binary, *args],
            capture_output=True,
            text=True,
            input=input,
            env=env,
            cwd=home,
            timeout=HELM_TIMEOUT,
            check=False,
        )
        if check and done.returncode != 0:
            pytest.fail(f"{client.name} {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
        return done

    return run


@pytest.fixture(scope="session")
def kubectl_binary() -> Path:
    return pinned(clients.KUBECTL)


@pytest.fixture(scope="session")
def helm_binary() -> Path:
    return pinned(clients.HELM)


@pytest.fixture(scope="session")
def helm3_binary() -> Path:
    return pinned(clients.HELM3)


def pinned_tool(tool: clients.DebTool) -> Path:
    """A tool ``make setup`` took out of a Debian package (promtool); fails the test, never skips, when
    absent or not the pinned build."""
    path = clients.tool_binary(tool)
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"{path} is missing: run make setup (it installs the pinned {tool.name} {tool.version})", pytrace=False
        )
    done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60, check=False)
    if f"version {tool.version} " not in done.stdout + done.stderr:
        pytest.fail(f"{path} is not {tool.name} {tool.version}: run make setup", pytrace=False)
    return path


@pytest.fixture(scope="session")
def promtool_binary() -> Path:
    return pinned_tool(clients.PROMTOOL)


@pytest.fixture()
def kubectl(sim_kubeconfig: Path) -> Kubectl:
    return kubectl_runner(sim_kubeconfig)


@pytest.fixture()
def helm(sim_kubeconfig: Path, tmp_path: Path) -> Helm:
    """helm 4 against the simulator, its homes under ``tmp_path/helm``."""
    return helm_runner(sim_kubeconfig, tmp_path / "helm", client=clients.HELM)


@pytest.fixture()
def helm3(sim_kubeconfig: Path, tmp_path: Path) -> Helm:
    """helm 3 against the simulator, its homes under ``tmp_path/helm3``."""
    return helm_runner(sim_kubeconfig, tmp_path / "helm3", client=clients.HELM3)


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
    """A GPU cluster as certification meets one: the workload operators (Trainer, JobSet, MPI
    Operator) and the GPU Operator's DCGM Service installed, the kubelet running in virtual time.
    Tests of a cluster without them delete their CRDs."""
    from shared.sim import operators
    from shared.sim.gpu import helmseed

    sim.vclock.set_speed(0)
    sim.noderoot.root = tmp_path / "nodes"
    sim.repair.install_crds()
    sim.operators.install(operators.DEFAULT)
    helmseed.dcgm_service(sim)
    sim.kubelet.start()
    try:
        yield sim
    finally:
        sim.kubelet.stop()
