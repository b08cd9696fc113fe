"""A real OCI registry for the tests: Debian's ``docker-registry`` (the distribution registry 2.8).

``make setup`` takes the pinned binary out of its .deb into ``.venv/bin`` (tests/clients.py). Each
registry runs on a free loopback port with its own storage folder and configuration, over plain
HTTP, and is stopped by the fixture that started it. ``htpasswd`` makes one that asks for
credentials (HTTP basic): no account's password is ever known to the tests, so every request is
refused with 401.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import clients

READY_DEADLINE = 60.0
"""Generous real time for the registry to answer /v2/ on a loaded machine (it is ready in ~0.1 s)."""
MANIFEST_ACCEPT = "application/vnd.oci.image.manifest.v1+json"


def binary() -> Path:
    """The pinned registry; fails the test, never skips, when ``make setup`` has not installed it."""
    tool = clients.DOCKER_REGISTRY
    path = clients.tool_binary(tool)
    if not os.access(path, os.X_OK) or path.stat().st_size != tool.size:
        pytest.fail(f"{path} is missing: run make setup (it installs the pinned {tool.name} {tool.version})")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Registry:
    host: str
    """``127.0.0.1:PORT``."""
    storage: Path

    def ref(self, repository: str, tag: str | None = None) -> str:
        return f"oci://{self.host}/{repository}" + (f":{tag}" if tag else "")

    def get(self, path: str, *, accept: str = MANIFEST_ACCEPT) -> tuple[bytes, dict[str, str]]:
        """GET ``/v2/...`` from the registry's HTTP API: the body and the headers."""
        request = urllib.request.Request(f"http://{self.host}/v2/{path}", headers={"Accept": accept})
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read(), dict(answer.headers.items())

    def manifest(self, repository: str, reference: str) -> tuple[dict[str, object], str]:
        body, headers = self.get(f"{repository}/manifests/{reference}")
        return json.loads(body), headers["Docker-Content-Digest"]

    def blob_file(self, digest: str) -> Path:
        """Where the filesystem storage driver keeps a blob's bytes."""
        hexdigest = digest.removeprefix("sha256:")
        return self.storage / "docker/registry/v2/blobs/sha256" / hexdigest[:2] / hexdigest / "data"


def _config(storage: Path, port: int, htpasswd: Path | None) -> str:
    lines = [
        "version: 0.1",
        "log:",
        "  level: error",
        "  accesslog:",
        "    disabled: true",
        "storage:",
        "  filesystem:",
        f"    rootdirectory: {storage}",
        "  delete:",
        "    enabled: true",
        "http:",
        f"  addr: 127.0.0.1:{port}",
    ]
    if htpasswd is not None:
        lines += ["auth:", "  htpasswd:", "    realm: aicr-tests", f"    path: {htpasswd}"]
    return "\n".join(lines) + "\n"


def _ready(host: str, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + READY_DEADLINE
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://{host}/v2/", timeout=5):
                return True
        except urllib.error.HTTPError as exc:
            return exc.code == 401
        except OSError:
            time.sleep(0.05)
    return False


@contextlib.contextmanager
def running(root: Path, *, htpasswd: bool = False) -> Iterator[Registry]:
    """A registry on a free port, storing under ``root``; stopped (and waited for) on exit."""
    root.mkdir(parents=True, exist_ok=True)
    password_file = None
    if htpasswd:
        password_file = root / "htpasswd"
        # A bcrypt hash of a password nobody knows: the registry asks for credentials and refuses any.
        password_file.write_text("someone:$2y$05$abcdefghijklmnopqrstuuKxS0lf2yG8qkEbbsgTH5UZ4qbR5Q0iK\n")
    for _attempt in range(3):
        port = free_port()
        config = root / "config.yml"
        config.write_text(_config(root / "storage", port, password_file))
        log = (root / "registry.log").open("wb")
        process = subprocess.Popen([str(binary()), "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
        host = f"127.0.0.1:{port}"
        try:
            if _ready(host, process):
                yield Registry(host=host, storage=root / "storage")
                return
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
            log.close()
    pytest.fail(f"the registry did not start: {(root / 'registry.log').read_text(errors='replace')[-2000:]}")
