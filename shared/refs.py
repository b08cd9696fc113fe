"""Where documents (criteria, snapshots, recipes) are read from and written to.

Base layer beside ``yamlio`` and ``files``. A reference is a file path, ``cm://NAMESPACE/NAME``
(a ConfigMap, reached through ``shared.kube`` only then, and only through the client factory the
caller passes) or an ``http(s)://`` URL (read only, standard library). Every byte still passes the
input layer's checks: the size limit (``files.max_input_bytes``), UTF-8 without NUL bytes
(``files.decode``) and, when parsed, yamlio's nesting and alias limits.

A ConfigMap holds a document under ``<kind>.yaml`` (``recipe.yaml``, ``snapshot.yaml``); a reader
also takes upstream AICR's ``snapshot.<format>`` (with its ``format`` key), which upstream writes
for recipes too, so both tools read each other's. Writes are server-side apply with field manager
``aicr`` and ``force``, as ``kubectl apply --server-side --force-conflicts`` and upstream do: create
or update in one request, no read-modify-write race, and keys other managers own are kept.

An HTTP read has one deadline for the whole response (``AICR_HTTP_TIMEOUT``, seconds; each socket
read waits at most as long), so a server that trickles bytes cannot hold a pipeline for long. A URL
is shown without its user info and query (a presigned URL's signature is a credential); user info
is sent as Basic authentication, never to a redirect's target. Left out: ``cm://`` and URLs as
outputs other than ConfigMaps (a URL cannot be written to).
"""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from shared import __version__, errors, files, yamlio
from shared.kube.api import ApiFactory

CM_SCHEME = "cm://"
HTTP_SCHEMES = ("http://", "https://")
_OTHER_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
"""A URL-like reference (``oci://``, ``s3://``…) that is neither a ConfigMap nor HTTP(S)."""
_CM = re.compile(r"^cm://([a-z0-9]([-a-z0-9]*[a-z0-9])?)/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$")
DATA_KEY = "snapshot.yaml"
"""Upstream AICR's key, for snapshots and recipes alike; ours is ``<kind>.yaml``."""
FIELD_MANAGER = "aicr"
CONFIGMAP_MAX_BYTES = 1024 * 1024
"""What a real API server lets a ConfigMap hold (data and binaryData together)."""
HTTP_TIMEOUT_ENV = "AICR_HTTP_TIMEOUT"
"""The environment variable that sets the deadline of one HTTP read, in seconds."""
DEFAULT_HTTP_TIMEOUT = 30.0
"""Seconds for a whole HTTP response: a recipe or snapshot is at most a few MB, which any link a
cluster is managed over moves in well under that; the Kubernetes client's own timeout is also 30."""
_ACCEPT = "application/yaml, application/json;q=0.9, text/plain;q=0.5, */*;q=0.1"

Kind = Literal["recipe", "snapshot", "criteria"]


@dataclass(frozen=True)
class ConfigMapRef:
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{CM_SCHEME}{self.namespace}/{self.name}"


@dataclass(frozen=True)
class UrlRef:
    url: str

    def __str__(self) -> str:
        """The URL as messages show it: no user info, no query (either may hold a credential)."""
        parts = urllib.parse.urlsplit(self.url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))


def parse(reference: str) -> Path | ConfigMapRef | UrlRef:
    """A path, a ConfigMap reference (``cm://``) or an HTTP(S) URL."""
    if reference.lower().startswith(HTTP_SCHEMES):
        return _url(reference)
    if not reference.startswith(CM_SCHEME):
        return Path(reference)
    match = _CM.match(reference)
    if not match:
        raise errors.InvalidInput("expected cm://NAMESPACE/NAME with Kubernetes names", where=reference)
    return ConfigMapRef(match.group(1), match.group(3))


def _url(reference: str) -> UrlRef:
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in reference):
        raise errors.InvalidInput("a URL may not hold spaces or control characters", where=_shown(reference))
    try:
        parts = urllib.parse.urlsplit(reference)
        _ = parts.port  # raises ValueError for a port out of range or not a number
    except ValueError as exc:
        raise errors.InvalidInput(f"not a valid URL: {exc}", where=_shown(reference)) from None
    if not parts.hostname:
        raise errors.InvalidInput("expected http(s)://HOST/PATH", where=_shown(reference))
    return UrlRef(reference)


def _shown(reference: str) -> str:
    """A URL that may not even parse, as a message may show it (user info and query cut)."""
    try:
        return str(UrlRef("".join(reference.split())))
    except ValueError:
        return reference.split("//", 1)[0] + "//…"


def is_remote(reference: str | os.PathLike[str] | None) -> bool:
    """True for a ConfigMap or URL: its content cannot be hashed (memoised) without reading it."""
    text = str(reference or "")
    return text.startswith(CM_SCHEME) or text.lower().startswith(HTTP_SCHEMES)


def read_document(reference: str, *, api: ApiFactory, kind: Kind = "recipe") -> tuple[Any, str]:
    """(parsed document, where it came from) for a file, ConfigMap or URL."""
    text, where = read_text(reference, api=api, kind=kind)
    return yamlio.loads(text, source=where), where


def read_text(reference: str, *, api: ApiFactory, kind: Kind = "recipe") -> tuple[str, str]:
    """(document text, where it came from) for a file, a ConfigMap or a URL.

    ``kind`` picks the ConfigMap key (``<kind>.yaml``, then ``<kind>.json``, then upstream's
    ``snapshot.<format>``). Everything refused is one line naming the reference: InvalidInput for
    a missing file or key, an HTTP 4xx or a body past the size limit; Timeout when the HTTP
    deadline passes; Unavailable when the server cannot be reached or answers 5xx.
    """
    target = parse(reference)
    if isinstance(target, Path):
        return yamlio.read_text(target), str(target)
    if isinstance(target, UrlRef):
        return _fetch(target), str(target)
    from shared.kube import rest

    cm = rest.get(api(), rest.core_path("configmaps", target.namespace, target.name), what=str(target))
    data = cm.get("data") or {}
    key = _key_of(data, kind)
    if key is None:
        raise errors.InvalidInput(f"ConfigMap holds no {kind}.yaml or snapshot.yaml key", where=str(target))
    return str(data[key]), f"{target} {key}"


def _key_of(data: dict[str, Any], kind: Kind) -> str | None:
    for key in (f"{kind}.yaml", f"{kind}.json"):
        if key in data:
            return key
    upstream = f"snapshot.{data.get('format', 'yaml')}"
    if upstream in data:
        return upstream
    return next((k for k in sorted(data) if k.startswith("snapshot.")), None)


def http_timeout() -> float:
    """The HTTP deadline: ``$AICR_HTTP_TIMEOUT`` seconds when set, else ``DEFAULT_HTTP_TIMEOUT``."""
    raw = os.environ.get(HTTP_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_HTTP_TIMEOUT
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise errors.InvalidInput(f"expected a positive number of seconds, got {raw!r}", where=HTTP_TIMEOUT_ENV)
    return seconds


class _Deadline:
    """A response body read a socket read at a time, refused once the deadline for the whole has
    passed: a trickling server ends at most one socket timeout after it."""

    def __init__(self, response: Any, *, deadline: float, timeout: float, where: str) -> None:
        self._response, self._deadline, self._timeout, self._where = response, deadline, timeout, where

    def read(self, size: int) -> bytes:
        if time.monotonic() >= self._deadline:
            raise _timed_out(self._timeout, self._where)
        try:
            return cast(bytes, self._response.read1(size))
        except TimeoutError:
            raise _timed_out(self._timeout, self._where) from None


def _timed_out(timeout: float, where: str) -> errors.Timeout:
    return errors.Timeout(
        f"no complete answer within {timeout:g} s (set {HTTP_TIMEOUT_ENV} to wait longer)", where=where
    )


def _request(target: UrlRef, urllib_request: Any) -> Any:
    """The GET; user info in the URL becomes Basic authentication, never sent on to a redirect."""
    parts = urllib.parse.urlsplit(target.url)
    if parts.username is None and parts.password is None:
        request = urllib_request.Request(target.url)
    else:
        import base64

        netloc = parts.netloc.rsplit("@", 1)[1]
        request = urllib_request.Request(urllib.parse.urlunsplit(parts._replace(netloc=netloc)))
        user = urllib.parse.unquote(parts.username or "")
        password = urllib.parse.unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        request.add_unredirected_header("Authorization", f"Basic {token}")
    request.add_header("Accept", _ACCEPT)
    request.add_header("User-Agent", f"aicr/{__version__}")
    return request


def _fetch(target: UrlRef) -> str:
    """GET the URL, following redirects, within the deadline and the input size limit."""
    import urllib.error  # with urllib.request (http.client, ssl): only when a URL is read
    import urllib.request

    where = str(target)
    timeout = http_timeout()
    limit = files.max_input_bytes()
    deadline = time.monotonic() + timeout
    request = _request(target, urllib.request)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise errors.InvalidInput(
                    f"input is {int(length)} bytes, more than the limit of {limit} bytes "
                    f"(raise it with {files.MAX_INPUT_BYTES_ENV})",
                    where=where,
                )
            body = files.read_stream(
                cast(Any, _Deadline(response, deadline=deadline, timeout=timeout, where=where)),
                where=where,
                network=True,
            )
    except urllib.error.HTTPError as exc:
        status = f"HTTP {exc.code} {exc.reason}".rstrip()
        if exc.code >= 500:
            raise errors.Unavailable(f"the server answered {status}", where=where) from None
        raise errors.InvalidInput(f"the server answered {status}", where=where) from None
    except TimeoutError:
        raise _timed_out(timeout, where) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _timed_out(timeout, where) from None
        reason = exc.reason.strerror if isinstance(exc.reason, OSError) and exc.reason.strerror else exc.reason
        raise errors.Unavailable(f"cannot fetch: {reason}", where=where) from None
    except OSError as exc:  # a reset or a TLS failure outside urllib's wrapping
        raise errors.Unavailable(f"cannot fetch: {exc.strerror or exc}", where=where) from None
    return files.decode(body, where=where)


def check_writable(reference: str) -> None:
    """Refuse, before any work, a reference ``write_text`` would refuse (a ConfigMap is checked when written)."""
    target = parse(reference)
    if isinstance(target, UrlRef):
        raise errors.InvalidInput("cannot write to a URL: give a file or cm://NAMESPACE/NAME", where=str(target))
    scheme = None if isinstance(target, ConfigMapRef) else _OTHER_SCHEME.match(reference)
    if scheme:  # a path would turn 'oci://r/x' into the folders 'oci:/r'
        hint = "; only aicr bundle -o pushes to oci://" if scheme.group(1).lower() == "oci" else ""
        raise errors.InvalidInput(
            f"cannot write to {scheme.group(1)}://: give a file, '-' or cm://NAMESPACE/NAME{hint}", where=reference
        )
    if isinstance(target, Path):
        files.check_output(target, probe=True)


def write_text(
    reference: str,
    text: str,
    *,
    api: ApiFactory,
    component: Literal["recipe", "snapshot"],
    fmt: Literal["yaml", "json"] = "yaml",
) -> None:
    """Write a document to a file (atomically) or apply it to a ConfigMap under ``<component>.<fmt>``.

    The ConfigMap is created or updated by one server-side apply (field manager ``aicr``, forced):
    idempotent, and the keys and labels other managers set on it stay.
    """
    check_writable(reference)
    target = parse(reference)
    if isinstance(target, Path):
        files.atomic_write_text(target, text)
        return
    assert isinstance(target, ConfigMapRef)
    size = len(text.encode()) + len(fmt)
    if size > CONFIGMAP_MAX_BYTES:  # the API server refuses it whole (422); say why before asking
        raise errors.InvalidInput(
            f"a {component} of {size:,} bytes does not fit a ConfigMap (at most {CONFIGMAP_MAX_BYTES:,} bytes "
            "of data); write it to a file instead",
            where=str(target),
        )
    from shared.kube import rest

    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": target.name,
            "namespace": target.namespace,
            "labels": {"app.kubernetes.io/name": "aicr", "app.kubernetes.io/component": component},
        },
        "data": {f"{component}.{fmt}": text, "format": fmt},
    }
    path = rest.core_path("configmaps", target.namespace, target.name)
    rest.apply(api(), path, body, field_manager=FIELD_MANAGER, what=str(target))
