"""A throw-away TLS identity for the emulator: one self-signed certificate, made with ``cryptography``.

kubectl (client-go) sends bearer tokens only over TLS, so an emulator that checks identities
must speak HTTPS. This module makes a self-signed ECDSA P-256 certificate for 127.0.0.1 and
localhost that is its own CA: the kubeconfig embeds it as ``certificate-authority-data``, so
kubectl, helm and the Python kubernetes client verify the server the normal way. The key lives in
memory (and for an instant in a private temporary file, because ``ssl`` only loads keys from
files). Not for production use: the point is to exercise the real client code paths, not to
protect anything. It leaves out client certificates (identities are bearer tokens, see
``identities``) and rotation (one certificate per process).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

COMMON_NAME = "sim-apiserver"
LOOPBACK = ipaddress.IPv4Address("127.0.0.1")
VALID_FOR = timedelta(days=3650)
CLOCK_SKEW = timedelta(hours=1)


@dataclass(frozen=True)
class Identity:
    """A certificate (PEM, public) and its private key (PEM, keep it private)."""

    cert_pem: str
    key_pem: str


@functools.lru_cache(maxsize=1)
def identity() -> Identity:
    """One self-signed certificate per process (making one costs about a millisecond)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.now(UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(LOOPBACK), x509.DNSName("localhost")]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return Identity(
        cert_pem=cert.public_bytes(serialization.Encoding.PEM).decode("ascii"), key_pem=key_pem.decode("ascii")
    )


def server_context(ident: Identity) -> ssl.SSLContext:
    """A server-side context holding ``ident``; the key file exists only while it loads."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="sim-tls-") as folder:
        cert, key = Path(folder) / "tls.crt", Path(folder) / "tls.key"
        cert.write_text(ident.cert_pem, encoding="ascii")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(ident.key_pem)
        context.load_cert_chain(cert, key)
    return context


def ssh_key_pair() -> tuple[str, str]:
    """A new ECDSA P-521 SSH key pair: the SEC1 PEM (``EC PRIVATE KEY``) and the authorized_keys line.

    What Kubeflow Trainer's MPI plugin and the MPI Operator put in their ``kubernetes.io/ssh-auth``
    Secrets; made here because this module is the simulator's one user of ``cryptography``.
    """
    key = ec.generate_private_key(ec.SECP521R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()
    ).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private, public.decode() + "\n"
