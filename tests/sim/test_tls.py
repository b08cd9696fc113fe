"""The simulator's TLS identity, as the clients that verify it see it.

Covers: the certificate is a self-signed ECDSA P-256 CA for 127.0.0.1 and localhost that is valid
now and matches its key; Python's ``ssl`` (with X.509 strict checks, the default from Python 3.13)
verifies the running server by IP and by name and refuses another name; the pinned kubectl accepts
it by IP and by ``localhost`` through the kubeconfig's ``certificate-authority-data``, and refuses
the server when that CA is another certificate (so verification really happens); the Python
kubernetes client and helm 4 and helm 3 accept it.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from shared.sim import SimServer
from shared.sim.apiserver import discovery, kubeconfig, tls
from tests import simfixtures


def _handshake(sim: SimServer, *, server_hostname: str, ca_pem: str) -> dict[str, Any]:
    context = ssl.create_default_context(cadata=ca_pem)
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    port = urlsplit(sim.url).port
    assert port is not None
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=server_hostname) as conn,
    ):
        peer = conn.getpeercert()
    assert peer is not None
    return peer


def test_certificate_is_a_self_signed_p256_ca_for_loopback() -> None:
    ident = tls.identity()
    cert = x509.load_pem_x509_certificate(ident.cert_pem.encode())
    key = serialization.load_pem_private_key(ident.key_pem.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1)
    assert cert.public_key() == key.public_key()
    assert cert.issuer == cert.subject
    cert.verify_directly_issued_by(cert)
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.IPv4Address("127.0.0.1")]
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert cert.not_valid_before_utc < datetime.now(UTC) < cert.not_valid_after_utc


def test_python_ssl_verifies_the_server_by_ip_and_by_name(sim: SimServer) -> None:
    assert sim.tls is not None
    for name in ("127.0.0.1", "localhost"):
        peer = _handshake(sim, server_hostname=name, ca_pem=sim.tls.cert_pem)
        assert ("IP Address", "127.0.0.1") in peer["subjectAltName"]
    with pytest.raises(ssl.SSLCertVerificationError, match="mismatch"):
        _handshake(sim, server_hostname="example.com", ca_pem=sim.tls.cert_pem)


def test_kubectl_verifies_the_server_by_ip_and_by_localhost(sim: SimServer, tmp_path: Path) -> None:
    assert sim.tls is not None
    for host in ("127.0.0.1", "localhost"):
        config = tmp_path / f"kubeconfig-{host}"
        url = sim.url.replace("127.0.0.1", host)
        kubeconfig.write(config, url, sim.identities.admin_token, ca_pem=sim.tls.cert_pem)
        done = simfixtures.kubectl_runner(config)("get", "--raw", "/version")
        assert '"gitVersion"' in done.stdout


def test_kubectl_refuses_the_server_under_another_ca(sim: SimServer, tmp_path: Path) -> None:
    other = tls.identity.__wrapped__()
    config = tmp_path / "kubeconfig-other-ca"
    kubeconfig.write(config, sim.url, sim.identities.admin_token, ca_pem=other.cert_pem)
    done = simfixtures.kubectl_runner(config)("get", "--raw", "/version", check=False)
    assert done.returncode != 0
    assert "certificate signed by unknown authority" in done.stderr


def test_the_python_client_verifies_the_server(api_client: Any) -> None:
    from kubernetes import client as k8s

    assert api_client.configuration.verify_ssl
    assert k8s.VersionApi(api_client).get_code().git_version == discovery.VERSION["gitVersion"]


@pytest.mark.parametrize("which", ["helm", "helm3"])
def test_helm_verifies_the_server(request: pytest.FixtureRequest, which: str) -> None:
    helm = request.getfixturevalue(which)
    assert helm("list", "--all-namespaces", "--output", "json").stdout.strip() == "[]"
