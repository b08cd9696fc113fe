"""``/openapi/v3``: the discovery document and the group-version documents, as kube-apiserver serves them.

``/openapi/v3`` lists every document as ``{"paths": {"apis/apps/v1": {"serverRelativeURL":
"/openapi/v3/apis/apps/v1?hash=<HEX>"}}}`` where the hash (also the document's ``Etag``) is the
uppercase hex SHA-512 of the document's bytes. A document asked for with its current hash is
immutable (``Cache-Control: public, immutable``, ``Expires`` a year on); with a stale hash the answer
is a 301 to the current URL; an unknown key is a bare 404; ``If-None-Match`` with the Etag is a 304
(``kube-openapi:pkg/handler3/handler.go``, ``kube-aggregator:pkg/controllers/openapiv3/aggregator``).
Only JSON is spoken: a client that accepts nothing but the protobuf form gets 406, where a real
server would answer in protobuf. Responses are never gzipped.

Documents are built by :mod:`shared.sim.apiserver.openapispec` and cached by content: built-in
group-versions once per process, a custom resource's group-version until its CRD changes (a new
table revision or CRD resourceVersion). The discovery document is cached per table revision.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from shared.sim.apiserver import openapispec, resources, store

PREFIX = "/openapi/v3"
_CRDS = ("apiextensions.k8s.io", "customresourcedefinitions")
_JSON = "application/json"
_KEEP_DOCUMENTS = 256  # cached group-version documents before the cache starts over


@dataclass(frozen=True)
class Document:
    body: bytes
    etag: str  # uppercase hex SHA-512 of body

    @classmethod
    def of(cls, text: str) -> Document:
        body = text.encode()
        return cls(body, hashlib.sha512(body).hexdigest().upper())


class Headers(Protocol):
    """Request headers, looked up case-insensitively (``http.server``'s message, or a dict in tests)."""

    def get(self, name: str, /) -> str | None: ...


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, headers (in order, repeats allowed) and body."""

    code: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""


# ---------------------------------------------------------------- documents

_lock = threading.Lock()
_documents: dict[Any, Document] = {}
_indexes: dict[int, tuple[weakref.ref[resources.ResourceTable], Any, dict[str, Document], Document]] = {}


def _cached(key: Any, build: Callable[..., str], *args: Any) -> Document:
    found = _documents.get(key)
    if found is None:
        found = Document.of(build(*args))
        if len(_documents) >= _KEEP_DOCUMENTS:
            _documents.clear()
        _documents[key] = found
    return found


def _crd_key(objects: store.Store, rows: list[resources.Resource]) -> tuple[tuple[str, bytes], ...]:
    """The stored CRDs serving ``rows``: documents built from them stay valid while these bytes do."""
    key = []
    for r in rows:
        entry = objects.get(_CRDS, "", r.crd) if r.crd else None
        if entry is not None:
            key.append((r.crd, entry.raw))
    return tuple(key)


def _crd_schemas(objects: store.Store, rows: list[resources.Resource]) -> dict[str, Any]:
    """Each custom resource's ``openAPIV3Schema`` for the version it is served at, by kind."""
    schemas = {}
    for r in rows:
        entry = objects.get(_CRDS, "", r.crd) if r.crd else None
        if entry is not None:
            crd = entry.object()
            versions = (crd.get("spec") or {}).get("versions") or []
            served: dict[str, Any] = next((v for v in versions if v.get("name") == r.version), {})
            schemas[r.kind] = (served.get("schema") or {}).get("openAPIV3Schema")
    return schemas


def _document(
    objects: store.Store, group: str, version: str, rows: tuple[resources.Resource, ...], custom: bool
) -> str:
    return openapispec.document(group, version, rows, _crd_schemas(objects, list(rows)) if custom else {})


def documents(table: resources.ResourceTable, objects: store.Store) -> tuple[dict[str, Document], Document]:
    """Every document by its key in ``/openapi/v3``, and the discovery document itself."""
    rows = list(table)
    by_gv: dict[tuple[str, str], list[resources.Resource]] = {}
    for r in rows:
        by_gv.setdefault((r.group, r.version), []).append(r)
    crds = {gv: _crd_key(objects, gv_rows) for gv, gv_rows in by_gv.items() if any(r.crd for r in gv_rows)}
    state = (table.revision, tuple(sorted(crds.items())))
    with _lock:
        cached = _indexes.get(id(table))
        if cached is not None and cached[0]() is table and cached[1] == state:
            return cached[2], cached[3]
        docs: dict[str, Document] = {}
        for (group, version), gv_rows in sorted(by_gv.items()):
            ordered = tuple(sorted(gv_rows, key=lambda row: row.plural))
            custom = (group, version) in crds
            docs[openapispec.gv_path(group, version)] = _cached(
                ("gv", ordered, crds.get((group, version))), _document, objects, group, version, ordered, custom
            )
        groups = sorted({r.group for r in rows if r.group and not r.crd})
        for key in ("api", "apis", "version", *(f"apis/{g}" for g in groups)):
            docs[key] = _cached(("non-resource", key), openapispec.non_resource_document, key)
        paths = {key: {"serverRelativeURL": f"{PREFIX}/{key}?hash={doc.etag}"} for key, doc in docs.items()}
        index = Document.of(json.dumps({"paths": paths}, separators=(",", ":"), sort_keys=True))
        for gone in [k for k, v in _indexes.items() if v[0]() is None]:
            del _indexes[gone]
        _indexes[id(table)] = (weakref.ref(table), state, docs, index)
        return docs, index


# ---------------------------------------------------------------- HTTP


def _accepts(header: str | None) -> bool | None:
    """Whether the Accept header lets us answer JSON; ``None`` when it names no media type at all."""
    clauses = [part.split(";")[0].strip().lower() for part in (header or "*/*").split(",")]
    clauses = [c for c in clauses if c]
    if not clauses:
        return None
    for clause in clauses:
        kind, _, sub = clause.partition("/")
        if kind in ("application", "*") and sub in ("json", "*"):
            return True
    return False


def _expires(now: float) -> str:
    """One calendar year on (Go's AddDate(1, 0, 0)), in Go's time.RFC1123 layout on a UTC clock."""
    moment = datetime.fromtimestamp(now, UTC)
    try:
        later = moment.replace(year=moment.year + 1)
    except ValueError:  # 29 February: Go normalises to 1 March
        later = moment.replace(year=moment.year + 1, month=3, day=1)
    return later.strftime("%a, %d %b %Y %H:%M:%S UTC")


def _not_modified(headers: Headers, etag: str) -> bool:
    wanted = headers.get("If-None-Match") or ""
    return any(tag.strip() in (f'"{etag}"', f'W/"{etag}"', "*") for tag in wanted.split(","))


def serve(table: resources.ResourceTable, objects: store.Store, *, target: str, headers: Headers, now: float) -> Reply:
    """Answer a GET of ``target`` (path and query) under ``/openapi/v3``."""
    parts = urlsplit(target)
    docs, index = documents(table, objects)
    private = ("Cache-Control", "no-cache, private")
    if parts.path == PREFIX:
        tag = ("Etag", f'"{index.etag}"')
        if _not_modified(headers, index.etag):
            return Reply(304, (private, tag))
        return Reply(200, (private, ("Content-Type", _JSON), tag, ("Content-Length", str(len(index.body)))), index.body)
    key = parts.path[len(PREFIX) + 1 :]
    doc = docs.get(key)
    if doc is None:
        return Reply(404, (private, ("Content-Length", "0")))
    accepted = _accepts(headers.get("Accept"))
    vary = ("Vary", "Accept")
    if not accepted:  # None: nothing asked for (an empty answer); empty: nothing we serve (406)
        return Reply(200 if accepted is None else 406, (private, vary, ("Content-Length", "0")))
    wanted = (parse_qs(parts.query).get("hash") or [""])[0]
    if wanted and wanted != doc.etag:
        return _moved(key, doc, (private, vary))
    return _group_version(doc, headers, now=now, pinned=bool(wanted), private=private, vary=vary)


def _moved(key: str, doc: Document, headers: tuple[tuple[str, str], ...]) -> Reply:
    """A hash that is not the document's: 301 to the current one."""
    location = f"{PREFIX}/{key}?hash={doc.etag}"
    body = f'<a href="{location}">Moved Permanently</a>.\n\n'.encode()
    return Reply(
        301,
        (
            *headers,
            ("Etag", f'"{doc.etag}"'),
            ("Location", location),
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(body))),
        ),
        body,
    )


def _group_version(
    doc: Document,
    headers: Headers,
    *,
    now: float,
    pinned: bool,
    private: tuple[str, str],
    vary: tuple[str, str],
) -> Reply:
    """One group-version's document: cached for good when asked by its hash, else revalidated."""
    out = [vary, ("Content-Type", _JSON), ("Etag", f'"{doc.etag}"')]
    if pinned:
        out = [("Cache-Control", "public, immutable"), *out, ("Expires", _expires(now))]
    else:
        out = [private, *out]
    if _not_modified(headers, doc.etag):
        return Reply(304, tuple(h for h in out if h[0] != "Content-Type"))
    return Reply(200, (*out, ("Vary", "Accept-Encoding"), ("Content-Length", str(len(doc.body)))), doc.body)
