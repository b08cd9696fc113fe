"""A throw-away TLS identity for the emulator, made with the standard library alone.

kubectl (client-go) sends bearer tokens only over TLS, so an emulator that checks identities
must speak HTTPS. There is no certificate library in the stack, so this module makes a
self-signed ECDSA P-256 certificate for 127.0.0.1/localhost itself: the curve arithmetic and the
DER encoding are a few dozen lines. The key lives in memory (and for an instant in a private
temporary file, because ``ssl`` only loads keys from files); the certificate goes into the
kubeconfig as the cluster's CA, so clients verify the server normally. Not for production use:
the point is to exercise the real client code paths, not to protect anything.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

# NIST P-256 (secp256r1)
_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
_A = _P - 3
_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_G = (
    0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
    0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
)

Point = tuple[int, int] | None


def _add(p: Point, q: Point) -> Point:
    if p is None:
        return q
    if q is None:
        return p
    if p[0] == q[0] and (p[1] + q[1]) % _P == 0:
        return None
    if p == q:
        slope = (3 * p[0] * p[0] + _A) * pow(2 * p[1], -1, _P) % _P
    else:
        slope = (q[1] - p[1]) * pow(q[0] - p[0], -1, _P) % _P
    x = (slope * slope - p[0] - q[0]) % _P
    return x, (slope * (p[0] - x) - p[1]) % _P


def _mul(k: int, point: Point) -> Point:
    result: Point = None
    while k:
        if k & 1:
            result = _add(result, point)
        point = _add(point, point)
        k >>= 1
    return result


# ---------------------------------------------------------------- DER
def _der(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def _seq(*parts: bytes) -> bytes:
    return _der(0x30, b"".join(parts))


def _int(value: int) -> bytes:
    return _der(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _oid(dotted: str) -> bytes:
    nums = [int(x) for x in dotted.split(".")]
    out = bytearray([40 * nums[0] + nums[1]])
    for num in nums[2:]:
        chunk = [num & 0x7F]
        num >>= 7
        while num:
            chunk.append(0x80 | (num & 0x7F))
            num >>= 7
        out.extend(reversed(chunk))
    return _der(0x06, bytes(out))


def _bits(data: bytes) -> bytes:
    return _der(0x03, b"\x00" + data)


def _time(moment: datetime) -> bytes:
    return _der(0x18, moment.strftime("%Y%m%d%H%M%SZ").encode())


def _name(common_name: str) -> bytes:
    return _seq(_der(0x31, _seq(_oid("2.5.4.3"), _der(0x0C, common_name.encode()))))


def _pem(label: str, der: bytes) -> str:
    text = base64.b64encode(der).decode()
    lines = [text[i : i + 64] for i in range(0, len(text), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"


@dataclass(frozen=True)
class Identity:
    """A certificate (PEM, public) and its private key (PEM, keep it private)."""

    cert_pem: str
    key_pem: str


@functools.lru_cache(maxsize=1)
def identity() -> Identity:
    """One self-signed certificate per process (making one costs a few milliseconds)."""
    secret = secrets.randbelow(_N - 1) + 1
    public = _mul(secret, _G)
    assert public is not None
    point = b"\x04" + public[0].to_bytes(32, "big") + public[1].to_bytes(32, "big")
    ec_alg = _seq(_oid("1.2.840.10045.2.1"), _oid("1.2.840.10045.3.1.7"))
    sig_alg = _seq(_oid("1.2.840.10045.4.3.2"))
    now = datetime.now(UTC)
    key_id = hashlib.sha1(point).digest()  # RFC 5280 key identifier: not a security use of SHA-1
    extensions = _seq(
        _seq(_oid("2.5.29.19"), _der(0x01, b"\xff"), _der(0x04, _seq(_der(0x01, b"\xff")))),
        _seq(_oid("2.5.29.15"), _der(0x01, b"\xff"), _der(0x04, _der(0x03, b"\x02\x84"))),
        _seq(_oid("2.5.29.37"), _der(0x04, _seq(_oid("1.3.6.1.5.5.7.3.1")))),
        _seq(_oid("2.5.29.14"), _der(0x04, _der(0x04, key_id))),
        _seq(_oid("2.5.29.17"), _der(0x04, _seq(_der(0x87, bytes([127, 0, 0, 1])), _der(0x82, b"localhost")))),
    )
    tbs = _seq(
        _der(0xA0, _int(2)),
        _int(secrets.randbits(63)),
        sig_alg,
        _name("sim-apiserver"),
        _seq(_time(now - timedelta(hours=1)), _time(now + timedelta(days=3650))),
        _name("sim-apiserver"),
        _seq(ec_alg, _bits(point)),
        _der(0xA3, extensions),
    )
    digest = int.from_bytes(hashlib.sha256(tbs).digest(), "big")
    while True:
        nonce = secrets.randbelow(_N - 1) + 1
        r_point = _mul(nonce, _G)
        assert r_point is not None
        r = r_point[0] % _N
        s = pow(nonce, -1, _N) * (digest + r * secret) % _N
        if r and s:
            break
    cert = _seq(tbs, sig_alg, _bits(_seq(_int(r), _int(s))))
    key = _seq(
        _int(1),
        _der(0x04, secret.to_bytes(32, "big")),
        _der(0xA0, _oid("1.2.840.10045.3.1.7")),
        _der(0xA1, _bits(point)),
    )
    return Identity(cert_pem=_pem("CERTIFICATE", cert), key_pem=_pem("EC PRIVATE KEY", key))


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
