"""A real OCI registry for the tests: Debian's ``docker-registry`` (the distribution registry 2.8).

``make setup`` takes the pinned binary out of its .deb into ``.venv/bin`` (tests/clients.py). Each
registry runs on a free loopback port with its own storage folder and configuration, over plain
HTTP, and is stopped by the fixture that started it. ``htpasswd`` makes one that asks for
credentials (HTTP basic): no account's password is ever known to the tests, so every request is
refused with 401. ``TokenServer`` is the other scheme registries such as ghcr.io use: the registry
answers 401 with a bearer challenge naming a realm, a scope and a service; the client asks the
realm for a token and sends it. The token server here grants exactly the scope asked for, as an
ES256 JWT the registry checks against the certificate it was configured with, and records every
scope it was asked for.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
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


SERVICE = "aicr-test-registry"
ISSUER = "aicr-test-issuer"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass
class TokenServer:
    """A bearer-token realm: grants the scope asked for, signed with a key the registry trusts."""

    root: Path
    scopes: list[str] = field(default_factory=list)
    """Every ``scope`` parameter a token was asked for, in order."""

    def __post_init__(self) -> None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.KeyUsage(True, False, False, False, False, True, False, False, False), critical=True)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.cert_der = cert.public_bytes(serialization.Encoding.DER)
        self.cert_path = self.root / "token-root.pem"
        self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    def token(self, scope: str) -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        access = []
        for item in scope.split(" ") if scope else []:
            kind, _, rest = item.partition(":")
            name, _, actions = rest.rpartition(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        header = {"typ": "JWT", "alg": "ES256", "x5c": [base64.b64encode(self.cert_der).decode("ascii")]}
        claims = {
            "iss": ISSUER,
            "sub": "tester",
            "aud": SERVICE,
            "exp": now + 600,
            "nbf": now - 60,
            "iat": now,
            "jti": uuid.uuid4().hex,
            "access": access,
        }
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        r, s = decode_dss_signature(self.key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    @contextlib.contextmanager
    def serving(self) -> Iterator[str]:
        """Serve on a free loopback port; yields the realm URL. Stopped, its thread joined, on exit."""
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                scope = " ".join(query.get("scope", []))
                owner.scopes.append(scope)
                body = json.dumps({"token": owner.token(scope)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=server.serve_forever, name="token-server")
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/token"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=30)


def _config(storage: Path, port: int, htpasswd: Path | None, token: tuple[str, Path] | None = None) -> str:
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
    if token is not None:
        realm, root_cert = token
        lines += ["auth:", "  token:", f"    realm: {realm}", f"    service: {SERVICE}", f"    issuer: {ISSUER}"]
        lines += [f"    rootcertbundle: {root_cert}"]
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
def running(root: Path, *, htpasswd: bool = False, token: tuple[str, Path] | None = None) -> Iterator[Registry]:
    """A registry on a free port, storing under ``root``; stopped (and waited for) on exit.

    ``token`` is (realm URL, root certificate) of a ``TokenServer``: the registry wants bearer tokens."""
    root.mkdir(parents=True, exist_ok=True)
    password_file = None
    if htpasswd:
        password_file = root / "htpasswd"
        # A bcrypt hash of a password nobody knows: the registry asks for credentials and refuses any.
        password_file.write_text("someone:$2y$05$abcdefghijklmnopqrstuuKxS0lf2yG8qkEbbsgTH5UZ4qbR5Q0iK\n")
    for _attempt in range(3):
        port = free_port()
        config = root / "config.yml"
        config.write_text(_config(root / "storage", port, password_file, token))
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
