"""Talking to an OCI registry through oras (oras-py): upload blobs, put and get manifests, get blobs.

The only module that imports oras, and only the ``oci://`` path imports it (``aicr bundle`` to a
folder and ``aicr verify DIR`` never do: start-up cost). oras's ``push`` takes no artifact type,
so the artifact is sent through its lower level: ``upload_blob`` for the config and the layer, then
the manifest, as the exact bytes ``oci.pack`` made (so the digest we print is the one we computed).
oras-py's docker-config credentials and bearer-token negotiation are used; a held token that lacks
a request's scope (pull, then push) is replaced once, for the scope the registry's challenge names,
and a credential that worked is sent with the following requests.

Two things of oras-py are replaced by ``_Registry.do_request``: its retry sleeps up to two minutes
against a registry that is down, and it sends requests without a timeout. Here every request has
``CONNECT_TIMEOUT``/``READ_TIMEOUT``, a 429 or 502-504 is retried ``ATTEMPTS`` times with a short
backoff, and anything else comes back at once as one ``ToolError`` line naming the reference:
unreachable or timing out is Unavailable (6), 401/403 Unauthorized (4), 404 NotFound (3), another
4xx InvalidInput (2, the registry's own error code and message), a 5xx Unavailable (6).
"""

from __future__ import annotations

import contextlib
import logging
import time
import urllib.parse
from collections.abc import Collection
from pathlib import Path
from typing import Any

import oras.container
import oras.provider
import requests
import requests.adapters

from shared import errors, files
from shared.bundle import oci

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection: a registry on the same network answers in milliseconds."""
READ_TIMEOUT = 120.0
"""Seconds between two reads of an answer: generous for a registry writing a blob to slow storage."""
ATTEMPTS = 3
"""Tries of a request the registry answered 429 or 502-504 (busy or restarting), 0.5 s then 1 s apart."""
_RETRY_STATUSES = frozenset({429, 502, 503, 504})
_ACCEPT = f"{oci.MANIFEST_MEDIA_TYPE}, application/vnd.oci.image.index.v1+json"

# oras-py logs the registry's error bodies itself; we report each failure once, as one line.
logging.getLogger("oras").setLevel(logging.CRITICAL)


class _TimeoutAdapter(requests.adapters.HTTPAdapter):
    """Gives every request of the session a timeout (oras-py and its token requests pass none)."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = (CONNECT_TIMEOUT, READ_TIMEOUT)
        return super().send(request, **kwargs)


class _Registry(oras.provider.Registry):  # type: ignore[misc]
    """oras-py's registry client with bounded waits and our errors."""

    def __init__(self, reference: oci.Reference, *, plain_http: bool, insecure_tls: bool) -> None:
        super().__init__(hostname=reference.registry, insecure=plain_http, tls_verify=not insecure_tls)
        adapter = _TimeoutAdapter()
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.reference = reference
        self.last_response: requests.Response | None = None
        self._granted: dict[str, str] = {}

    def do_request(
        self,
        url: str,
        method: str = "GET",
        data: Any = None,
        headers: dict[str, str] | None = None,
        json: Any = None,
        stream: bool = False,
    ) -> requests.Response:
        """One request, answered once: with a credential if the registry asks for one (401), again
        after 429/502-504 up to ``ATTEMPTS`` times. A network failure is Unavailable."""
        headers = {**(headers or {}), **self._granted}
        for attempt in range(1, ATTEMPTS + 1):
            response = self._send(method, url, data=data, headers=headers, json=json, stream=stream)
            if response.status_code in (401, 403):
                # Once per request: a token held already may lack this request's scope (a pull
                # token on a push), so it is dropped and one for the challenge's scope asked for.
                headers, changed = self._authenticate(response, headers, refresh="Authorization" in headers)
                if changed:
                    response = self._send(method, url, data=data, headers=headers, json=json, stream=stream)
                    if response.status_code not in (401, 403):
                        # Sent with the following requests, so each does not start with a refusal.
                        self._granted = {"Authorization": headers["Authorization"]}
            self.last_response = response
            if response.status_code in (401, 403):
                # Fatal whatever the caller was doing (oras-py would go on to fail on the missing Location).
                raise _refused(response, f"{method} {urllib.parse.urlsplit(url).path}", self.reference)
            if response.status_code not in _RETRY_STATUSES or attempt == ATTEMPTS:
                return response
            response.close()
            time.sleep(0.5 * attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        try:
            response: requests.Response = self.session.request(method, url, verify=self._tls_verify, **kwargs)
        except requests.exceptions.SSLError:
            raise errors.Unavailable(
                f"TLS with registry {self.reference.registry} failed (a registry that speaks plain HTTP needs "
                "--plain-http; one with a self-signed certificate --insecure-tls)",
                where=self.reference.text,
            ) from None
        except requests.exceptions.Timeout:
            raise errors.Unavailable(
                f"registry {self.reference.registry} did not answer within {READ_TIMEOUT:.0f} s",
                where=self.reference.text,
            ) from None
        except requests.exceptions.RequestException as exc:
            raise errors.Unavailable(
                f"cannot reach registry {self.reference.registry} ({_reason(exc)})", where=self.reference.text
            ) from None
        return response

    def _authenticate(
        self, response: requests.Response, headers: dict[str, str], *, refresh: bool
    ) -> tuple[dict[str, str], bool]:
        """A credential for the challenge: HTTP basic from the docker config as it is, otherwise a
        bearer token through oras-py (which mishandles a basic challenge by asking its realm for one)."""
        challenge = response.headers.get("Www-Authenticate", "")
        if challenge.lower().startswith("basic"):
            basic = getattr(self.auth, "_basic_auth", None)
            if not basic or refresh:
                return headers, False
            return {**headers, "Authorization": f"Basic {basic}"}, True
        try:
            updated, changed = self.auth.authenticate_request(response, dict(headers), refresh=refresh)
        except (requests.exceptions.RequestException, ValueError):
            return headers, False
        return dict(updated), bool(changed)


def _reason(exc: BaseException) -> str:
    """The innermost cause of a connection failure, in a few words (not urllib3's whole chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if "Name or service not known" in str(seen) or "nodename nor servname" in str(seen):
            return "unknown host"
        inner = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
        seen = seen.__cause__ or seen.__context__ or inner
    return type(exc).__name__


def _registry_message(response: requests.Response) -> str:
    """``CODE: message`` of the first error of a registry's error body, or the HTTP reason."""
    try:
        body = response.json()
        first = body["errors"][0]
        return f"{first.get('code', '')}: {first.get('message', '')}".strip(": ")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return response.reason or "no reason given"


def _refused(response: requests.Response, action: str, reference: oci.Reference) -> errors.ToolError:
    """The one error line for a registry's refusal of ``action``, its class by the HTTP status."""
    status = response.status_code
    detail = f"{status} {_registry_message(response)}"
    where = reference.text
    if status in (401, 403):
        return errors.Unauthorized(
            f"{action} was refused ({detail}): log in with 'docker login {reference.registry}' or check the "
            "repository's permissions",
            where=where,
        )
    if status == 404:
        return errors.NotFound(f"{action}: not found ({detail})", where=where)
    if status in _RETRY_STATUSES or status >= 500:
        return errors.Unavailable(f"{action} failed: the registry answered {detail}", where=where)
    return errors.InvalidInput(f"{action} was refused ({detail})", where=where)


def _container(client: _Registry, reference: oci.Reference) -> oras.container.Container:
    """oras's container for the reference, its fields set from our parse (oras's own regex takes a
    first path component with a '.' for a registry)."""
    container = oras.container.Container(reference.name, registry=reference.registry)
    namespace, _, repository = reference.repository.rpartition("/")
    container.registry = reference.registry
    container.namespace = namespace or None
    container.repository = repository
    container.tag = reference.tag
    container.digest = reference.digest
    client.auth.load_configs(container)
    return container


def _check(response: requests.Response, action: str, reference: oci.Reference, ok: Collection[int]) -> None:
    if response.status_code not in ok:
        raise _refused(response, action, reference)


def push(
    artifact: oci.Artifact, reference: oci.Reference, *, scratch: Path, plain_http: bool, insecure_tls: bool
) -> str:
    """Upload ``artifact`` and tag it ``reference.tag``; returns the manifest digest the registry stored.

    ``scratch`` is a private folder for the blobs (oras uploads from files). Raises a ToolError
    (see the module docstring) when the registry cannot be reached or refuses."""
    client = _Registry(reference, plain_http=plain_http, insecure_tls=insecure_tls)
    with contextlib.closing(client.session):
        return _push(client, artifact, reference, scratch=scratch)


def _push(client: _Registry, artifact: oci.Artifact, reference: oci.Reference, *, scratch: Path) -> str:
    container = _container(client, reference)
    for media_type, data in ((oci.EMPTY_MEDIA_TYPE, artifact.config), (oci.LAYER_MEDIA_TYPE, artifact.layer)):
        layer = oci.descriptor(media_type, data)
        action = f"upload of blob {layer['digest']}"
        path = scratch / str(layer["digest"]).replace(":", "-")
        files.write_staged(path, data, mode=0o600)
        try:
            response = client.upload_blob(str(path), container, layer)
        except ValueError:
            # oras-py raises a bare ValueError when the registry starts no upload session.
            if client.last_response is None:
                raise
            raise _refused(client.last_response, action, reference) from None
        _check(response, action, reference, {200, 201, 202, 204})
    url = f"{client.prefix}://{container.manifest_url(reference.tag)}"
    response = client.do_request(url, "PUT", data=artifact.manifest, headers={"Content-Type": oci.MANIFEST_MEDIA_TYPE})
    _check(response, "push of the manifest", reference, {200, 201, 202})
    stored = response.headers.get("Docker-Content-Digest") or artifact.digest
    if stored != artifact.digest:
        raise errors.Internal(
            f"the registry stored the manifest as {stored}, not as the {artifact.digest} sent", where=reference.text
        )
    logger.debug("pushed artifact", extra={"reference": reference.text, "digest": stored})
    return stored


def _read_body(response: requests.Response, *, limit: int, what: str, reference: oci.Reference) -> bytes:
    """At most ``limit`` bytes of a streamed answer (reading stops there): a registry cannot make us
    hold more, and one that sends more than it should is seen by the length."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in response.iter_content(chunk_size=1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
    except requests.exceptions.RequestException as exc:
        raise errors.Unavailable(f"reading {what} failed ({_reason(exc)})", where=reference.text) from None
    finally:
        response.close()
    return b"".join(chunks)[:limit]


def pull(reference: oci.Reference, *, plain_http: bool, insecure_tls: bool) -> tuple[str, bytes, oci.Layer, bytes]:
    """Fetch the manifest ``reference`` names and its bundle layer.

    Returns (manifest digest, manifest bytes, the layer it names, the layer's bytes as served).
    A manifest that is not an aicr bundle is InvalidInput; a manifest whose digest is not the one
    the reference pins is InvalidInput too (the registry answered for something else). Whether
    the layer's bytes are what the manifest says is the caller's to judge (``oci.layer_problems``)."""
    client = _Registry(reference, plain_http=plain_http, insecure_tls=insecure_tls)
    with contextlib.closing(client.session):
        return _pull(client, reference)


def _pull(client: _Registry, reference: oci.Reference) -> tuple[str, bytes, oci.Layer, bytes]:
    container = _container(client, reference)
    url = f"{client.prefix}://{container.manifest_url(reference.manifest_ref)}"
    response = client.do_request(url, "GET", headers={"Accept": _ACCEPT}, stream=True)
    _check(response, f"pull of manifest {reference.manifest_ref!r}", reference, {200})
    manifest = _read_body(response, limit=oci.MAX_MANIFEST_BYTES + 1, what="the manifest", reference=reference)
    if len(manifest) > oci.MAX_MANIFEST_BYTES:
        raise errors.InvalidInput(f"the manifest is larger than {oci.MAX_MANIFEST_BYTES} bytes", where=reference.text)
    digest = oci.sha256_digest(manifest)
    if reference.digest and digest != reference.digest:
        raise errors.InvalidInput(f"the registry answered with manifest {digest}", where=reference.text)
    layer = oci.bundle_layer(manifest, where=reference.text)
    response = client.get_blob(container, layer.digest, stream=True)
    _check(response, f"pull of blob {layer.digest}", reference, {200})
    # One byte past the manifest's size is enough to see a blob that is not the one named.
    blob = _read_body(response, limit=layer.size + 1, what=f"blob {layer.digest}", reference=reference)
    return digest, manifest, layer, blob
