"""The HTTP face of the emulator: one request in, one Kubernetes-shaped answer out.

Per request, in order: read the body (refusing more than 3 MiB), authenticate the bearer token
(401), resolve the URL (404), authorize with RBAC (403), apply injected faults (latency, errors,
a cut connection), run the verb, record the audit line. Responses are JSON with the status codes
the official client checks (201 on create), lists are assembled from stored bytes, and watches
stream chunked JSON lines. HTTP/1.1 keep-alive with Nagle off: without it every request would
wait ~40 ms for a delayed ACK.
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import json
import logging
import select
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from shared.sim.apiserver import (
    admission,
    api,
    apierrors,
    audit,
    bodies,
    defaults,
    discovery,
    managedfields,
    openapi,
    protobuf,
    rbac,
    resources,
    reviews,
    routes,
    selectors,
    subresources,
    tables,
    watch,
)
from shared.sim.apiserver.apierrors import ApiError

if TYPE_CHECKING:
    from shared.sim.server import SimServer

logger = logging.getLogger(__name__)

_JSON = "application/json"
CONTROL_PREFIX = "/sim/v1/"
"""The simulator's own endpoints (faults, audit, hardware): a prefix no real server serves; the
server object answers them, so the API layer knows nothing of the GPU side."""


class _Drop(Exception):
    """Close the connection without answering."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "sim-apiserver/1"
    sim: SimServer  # set on the subclass the server builds
    _pending: audit.Record | None = None  # this request's audit line, until its answer goes out

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The ``Date`` header carries the cluster's virtual time."""
        return email.utils.formatdate(self.sim.vclock.time() if timestamp is None else timestamp, usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def setup(self) -> None:
        super().setup()
        self.sim._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.sim._track(self.connection, add=False)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # ------------------------------------------------------------ responses
    def _send(
        self,
        code: int,
        data: bytes,
        content_type: str = _JSON,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
    ) -> None:
        self._audit(code)
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        # As kube-apiserver: without it, kubectl's HTTP cache takes discovery answers dated in the
        # virtual future for fresh and never sees a CRD created later.
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in headers.items() if isinstance(headers, dict) else headers or ():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _audit(self, code: int) -> None:
        """Record the request before its answer leaves, so whoever reads the audit after a
        response sees the request in it (a client acts on the answer at once)."""
        pending: audit.Record | None = getattr(self, "_pending", None)
        self._pending = None
        if pending is not None:
            self.sim.audit.add(dataclasses.replace(pending, code=code, warnings=tuple(self._warnings)))

    def _send_json(self, code: int, obj: Any, headers: dict[str, str] | list[tuple[str, str]] | None = None) -> None:
        self._send(code, json.dumps(obj, separators=(",", ":")).encode(), headers=headers)

    def _drop(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    # ------------------------------------------------------------ request
    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length > defaults.MAX_REQUEST_BYTES:
            # Read (and drop) the body anyway, so the client gets the 413 instead of a reset.
            self.close_connection = True
            left = length
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            raise ApiError(
                413, "RequestEntityTooLarge", f"Request entity too large: limit is {defaults.MAX_REQUEST_BYTES}"
            )
        return self.rfile.read(length) if length else b""

    def _handle(self, method: str) -> None:
        started = time.perf_counter()
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        record: audit.Record | None = None
        self._pending = None
        self._warnings: list[str] = []
        try:
            raw = self._read_body()
            if parts.path.startswith(CONTROL_PREFIX):
                code, answer = self.sim.control(method, parts.path, query, raw, self._token())
                self._send_json(code, answer)
                return
            who = self.sim.identities.who(self._token())
            if who is None:
                raise ApiError(401, "Unauthorized", "Unauthorized")
            who = rbac.impersonate(self.sim.authorizer, who, self.headers.items())
            self._who = who
            if method == "GET" and self._non_resource(parts.path, who):
                return
            route = routes.parse(self.sim.table, parts.path)
            if route is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            watching = _flag(query, "watch")
            verb = route.verb(method, watch=watching)
            r = route.resource
            req = rbac.Request(
                verb=verb,
                group=r.group,
                resource=r.plural,
                subresource=route.subresource or "",
                # A namespace's own URL is in that namespace, for RBAC (apiserver RequestInfo).
                namespace=route.namespace or (route.name or "" if (r.group, r.plural) == ("", "namespaces") else ""),
                name=route.name or "",
            )
            record = audit.Record(
                who.user,
                verb,
                r.group,
                f"{r.plural}/{route.subresource}" if route.subresource else r.plural,
                route.namespace or "",
                route.name or "",
                0,
            )
            self._pending = record
            verdict = self.sim.authorizer.decide(who, req)
            if not verdict.allowed:
                raise ApiError(
                    403,
                    "Forbidden",
                    rbac.forbidden_message(who, req, verdict.reason),
                    details={"name": route.name or "", "group": r.group, "kind": r.plural},
                )
            decision = self.sim.faults.decide(user=who.user, verb=verb, resource=r.plural, name=route.name or "")
            if decision.delay:
                time.sleep(decision.delay)
            if decision.drop:
                raise _Drop()
            if decision.error is not None:
                raise decision.error
            self._dispatch(method, route, query, raw, watching)
        except _Drop:
            record = _with_code(record, 0) if record else None
            self._drop()
        except ApiError as exc:
            record = _with_code(record, exc.code) if record else None
            self._send_json(exc.code, exc.status(), exc.headers)
        except json.JSONDecodeError as exc:
            record = _with_code(record, 400) if record else None
            self._send_json(400, apierrors.bad_request(f"invalid JSON body: {exc}").status())
        except OSError:
            # The client went away (a reset, a TLS EOF, a closed watch): nothing left to answer.
            self.close_connection = True
        except Exception as exc:  # a bug in the emulator: answer like a server would, and say so
            logger.exception("internal error serving %s %s", method, parts.path)
            record = _with_code(record, 500) if record else None
            with contextlib.suppress(OSError):
                self._send_json(500, ApiError(500, "InternalError", f"Internal error occurred: {exc}").status())
        finally:
            if self._pending is not None and record is not None:
                self.sim.audit.add(record)  # no answer went out (a dropped or cut connection)
            logger.debug("%s %s took %.1f ms", method, parts.path, (time.perf_counter() - started) * 1000)

    def _token(self) -> str | None:
        header = self.headers.get("Authorization") or ""
        if header.lower().startswith("bearer "):
            return header[7:].strip()
        return None

    def _non_resource(self, path: str, who: rbac.Identity) -> bool:
        table = self.sim.table
        path = path.rstrip("/") or "/"
        if _is_non_resource(path):
            # Discovery, /version, /healthz and /openapi are authorized as non-resource URLs
            # (bootstrap ClusterRoles system:discovery and system:public-info-viewer grant them).
            asked = rbac.NonResourceRequest("get", path)
            verdict = self.sim.authorizer.decide(who, asked)
            if not verdict.allowed:
                raise ApiError(403, "Forbidden", rbac.forbidden_message(who, asked, verdict.reason))
        answer: Any = None
        if path == "/version":
            answer = discovery.VERSION
        elif path in ("/healthz", "/livez", "/readyz"):
            self._send(200, b"ok", "text/plain")
            return True
        elif path == "/api":
            answer = discovery.api_versions()
        elif path == "/apis":
            answer = discovery.group_list(table)
        elif path == openapi.PREFIX or path.startswith(openapi.PREFIX + "/"):
            reply = openapi.serve(
                table, self.sim.store, target=self.path, headers=self.headers, now=self.sim.vclock.time()
            )
            self.send_response(reply.code)
            for key, value in reply.headers:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(reply.body)
            return True
        else:
            segments = path.strip("/").split("/")
            if segments[0] == "api" and len(segments) == 2:
                answer = discovery.resource_list(table, "", segments[1])
            elif segments[0] == "apis" and len(segments) == 2:
                answer = discovery.group(table, segments[1])
            elif segments[0] == "apis" and len(segments) == 3:
                answer = discovery.resource_list(table, segments[1], segments[2])
            else:
                return False
            if answer is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
        self._send_json(200, answer)
        return True

    # ------------------------------------------------------------ verbs
    def _body(self, raw: bytes, into: tuple[str, str] | None = None) -> Any:
        """A subresource's or option's body: JSON, or protobuf from a typed client (kubectl
        drain's evictions, helm's DeleteOptions)."""
        media = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if media == bodies.PROTOBUF and raw:
            if into is None:
                raise bodies.unsupported_media_type((bodies.JSON, bodies.YAML))
            return protobuf.decode(raw, into=into)
        return json.loads(raw) if raw.strip() else None

    def _options(self, query: dict[str, str], operation: admission.Operation) -> admission.WriteOptions:
        options = admission.WriteOptions(
            directive=admission.directive_of(query.get("fieldValidation"), operation=operation),
            manager=query.get("fieldManager")
            or managedfields.manager_from_user_agent(self.headers.get("User-Agent") or ""),
            force=_flag(query, "force"),
        )
        self._warnings = options.warnings
        return options

    def _write_body(
        self, r: resources.Resource, raw: bytes, query: dict[str, str], operation: admission.Operation
    ) -> tuple[Any, admission.WriteOptions]:
        """The object a POST or PUT carries, decoded by its content type, and how to validate it."""
        options = self._options(query, operation)
        media = (self.headers.get("Content-Type") or bodies.JSON).split(";")[0].strip().lower()
        if media not in bodies.MEDIA_TYPES:
            raise bodies.unsupported_media_type(bodies.MEDIA_TYPES)
        if not raw.strip():
            return None, options
        if media == bodies.PROTOBUF:
            # Protobuf has no strict decoding: unknown fields vanish whatever the directive says.
            return protobuf.decode(raw, into=(r.group_version, r.kind), custom=bool(r.crd)), options
        if media == bodies.YAML:
            return _yaml(raw), options
        try:
            body, options.duplicates = bodies.parse_json(raw)
        except json.JSONDecodeError as exc:
            raise bodies.invalid_json(exc) from exc
        return body, options

    def _dispatch(self, method: str, route: routes.Route, query: dict[str, str], raw: bytes, watching: bool) -> int:
        sim, r, ns, name, sub = self.sim, route.resource, route.namespace, route.name, route.subresource
        if reviews.serves(r):  # access reviews: create-only, never stored, answered from RBAC
            reviews.check_request(method, name)
            body, options = self._write_body(r, raw, query, "create")
            manager = reviews.manager_of(query.get("fieldManager"), self.headers["User-Agent"])
            return self._answer(
                201, reviews.create(sim, r, ns, body, who=self._who, options=options, manager=manager), None
            )
        dry_run = _dry_run(query)
        if method == "GET" and name is None:
            if watching:
                self._watch(route, query)
                return 200
            self._list(route, query)
            return 200
        if name is None and method == "POST":
            body, options = self._write_body(r, raw, query, "create")
            return self._answer(201, sim.api.create(r, ns, body, dry_run=dry_run, options=options), r)
        if name is None and method == "DELETE":
            deleted = sim.api.delete_collection(
                r,
                ns,
                label_selector=query.get("labelSelector"),
                field_selector=query.get("fieldSelector"),
                options=self._delete_options(raw, query),
                dry_run=dry_run,
            )
            self._send_json(
                200,
                {
                    "kind": f"{r.kind}List",
                    "apiVersion": r.group_version,
                    "metadata": {"resourceVersion": str(sim.store.resource_version)},
                    "items": deleted,
                },
            )
            return 200
        assert name is not None
        if sub == "log":
            text = subresources.read_log(sim.api, sim.logs, r, ns or "", name, query)
            self._send(200, text.encode(), "text/plain")
            return 200
        if sub == "eviction":
            return self._answer(
                201,
                subresources.evict(
                    sim.api, r, ns or "", name, self._body(raw, ("policy/v1", "Eviction")), dry_run=dry_run
                ),
                None,
            )
        if sub == "binding":
            return self._answer(
                201,
                subresources.bind(sim.api, r, ns or "", name, self._body(raw, ("v1", "Binding")), dry_run=dry_run),
                None,
            )
        if sub == "token":
            return self._answer(
                201,
                subresources.request_token(
                    sim.api,
                    sim.identities,
                    r,
                    ns or "",
                    name,
                    self._body(raw, ("authentication.k8s.io/v1", "TokenRequest")),
                ),
                None,
            )
        if sub == "scale":
            return self._scale(method, route, raw, dry_run)
        if method == "GET":
            return self._answer(200, sim.api.get(r, ns, name), r)
        if method == "PUT":
            body, options = self._write_body(r, raw, query, "update")
            return self._answer(200, sim.api.update(r, ns, name, body, sub=sub, dry_run=dry_run, options=options), r)
        if method == "PATCH":
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            operation: admission.Operation = "apply" if content_type == api.APPLY else "patch"
            options = self._options(query, operation)
            body = self._patch_body(content_type, raw, options)
            return self._answer(
                200,
                sim.api.patch(
                    r,
                    ns,
                    name,
                    content_type,
                    body,
                    sub=sub,
                    dry_run=dry_run,
                    field_manager=query.get("fieldManager"),
                    options=options,
                ),
                r,
            )
        if method == "DELETE":
            return self._answer(200, sim.api.delete(r, ns, name, self._delete_options(raw, query), dry_run=dry_run), r)
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")

    def _answer(self, code: int, obj: dict[str, Any], r: Any) -> int:
        if r is not None and self._wants_table():
            obj = tables.table(r, [obj], now=self.sim.clock(), include_object=self._include_object())
        self._send_json(code, obj, warning_headers(getattr(self, "_warnings", [])))
        return code

    def _wants_table(self) -> bool:
        return "as=Table" in (self.headers.get("Accept") or "")

    def _include_object(self) -> str:
        query = parse_qs(urlsplit(self.path).query)
        return (query.get("includeObject") or ["Metadata"])[0]

    def _patch_body(self, content_type: str, raw: bytes, options: admission.WriteOptions) -> Any:
        if content_type == api.APPLY:
            try:
                body, options.duplicates = bodies.parse_json(raw)
                return body
            except json.JSONDecodeError:
                return _yaml(raw)
        if content_type in api.PATCH_TYPES and content_type != api.JSON_PATCH and raw.strip():
            try:
                body, options.duplicates = bodies.parse_json(raw)
            except json.JSONDecodeError as exc:
                raise bodies.invalid_json(exc) from exc
            return body
        return self._body(raw)

    def _delete_options(self, raw: bytes, query: dict[str, str]) -> dict[str, Any]:
        options = self._body(raw, ("meta.k8s.io/v1", "DeleteOptions")) or {}
        if not isinstance(options, dict):
            raise apierrors.bad_request("DeleteOptions must be an object")
        if "propagationPolicy" in query:
            options["propagationPolicy"] = query["propagationPolicy"]
        return options

    def _scale(self, method: str, route: routes.Route, raw: bytes, dry_run: bool) -> int:
        sim, r, ns, name = self.sim, route.resource, route.namespace or "", route.name or ""
        if method == "GET":
            return self._answer(200, subresources.scale_of(sim.api, r, ns, name), None)
        if method not in ("PUT", "PATCH"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on scale")
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip() if method == "PATCH" else ""
        return self._answer(
            200,
            subresources.change_scale(
                sim.api, r, ns, name, self._body(raw, ("autoscaling/v1", "Scale")), content_type, dry_run=dry_run
            ),
            None,
        )

    # ------------------------------------------------------------ list and watch
    def _list(self, route: routes.Route, query: dict[str, str]) -> None:
        r = route.resource
        try:
            limit = int(query.get("limit") or 0)
        except ValueError as exc:
            raise apierrors.bad_request(f"invalid limit: {query.get('limit')}") from exc
        result = self.sim.api.list(
            r,
            route.namespace,
            label_selector=query.get("labelSelector"),
            field_selector=query.get("fieldSelector"),
            limit=limit,
            continue_token=query.get("continue"),
        )
        meta: dict[str, Any] = {"resourceVersion": str(result.resource_version)}
        if result.continue_token:
            meta["continue"] = result.continue_token
            meta["remainingItemCount"] = result.remaining
        if self._wants_table():
            objects = [self.sim.api.as_version(r, e.object()) for e in result.items]
            self._send_json(
                200,
                tables.table(r, objects, now=self.sim.clock(), include_object=self._include_object(), list_meta=meta),
            )
            return
        if r.storage_version and r.storage_version != r.version:
            raws = [json.dumps(self.sim.api.as_version(r, e.object())).encode() for e in result.items]
        elif self.sim.api.views.applies(r):  # objects computed on read (heartbeats, events.k8s.io)
            raws = self.sim.api.views.raws(r, result.items)
        else:
            raws = [e.raw for e in result.items]
        head = json.dumps(
            {"kind": f"{r.kind}List", "apiVersion": r.group_version, "metadata": meta}, separators=(",", ":")
        ).encode()
        self._send(200, head[:-1] + b',"items":[' + b",".join(raws) + b"]}")

    def _watch(self, route: routes.Route, query: dict[str, str]) -> None:
        r = route.resource
        try:
            labels = selectors.parse_labels(query.get("labelSelector"))
            fields = selectors.parse_fields(query.get("fieldSelector"), r)
            timeout = float(query.get("timeoutSeconds") or self.sim.settings.max_watch_seconds)
        except (selectors.SelectorError, ValueError) as exc:
            raise apierrors.bad_request(str(exc)) from exc
        timeout = min(timeout, self.sim.settings.max_watch_seconds)
        initial = _watch_list(query)
        req = watch.WatchRequest(
            resource=r,
            namespace=route.namespace,
            labels=labels,
            fields=fields,
            resource_version=query.get("resourceVersion"),
            timeout=timeout,
            bookmarks=_flag(query, "allowWatchBookmarks"),
            initial_events=initial,
        )
        epoch = self.sim.faults.watch_epoch
        stream = watch.Stream(
            self.sim.store,
            req,
            bookmark_interval=self.sim.settings.bookmark_interval,
            should_drop=lambda: self.sim.closing or self.sim.faults.watch_epoch != epoch or self._client_gone(),
            views=self.sim.api.views,
        )
        table = self._wants_table()
        self._audit(200)
        self.send_response(200)
        self.send_header("Content-Type", _JSON)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for line in stream:
                if table:
                    line = self._table_event(r, line)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except watch.Dropped:
            self._drop()

    def _client_gone(self) -> bool:
        """During a watch a client sends nothing, so anything readable is its close (or EOF)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _table_event(self, r: Any, line: bytes) -> bytes:
        event = json.loads(line)
        if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
            event["object"] = tables.table(
                r, [event["object"]], now=self.sim.clock(), include_object=self._include_object()
            )
        return json.dumps(event, separators=(",", ":")).encode() + b"\n"


def _with_code(record: audit.Record | None, code: int, warnings: tuple[str, ...] = ()) -> audit.Record | None:
    if record is None:
        return None
    return dataclasses.replace(record, code=code, warnings=warnings)


def _yaml(raw: bytes) -> Any:
    from shared import errors, yamlio

    try:
        return yamlio.loads(raw.decode("utf-8", errors="replace"), source="request body")
    except errors.InvalidInput as exc:
        raise apierrors.bad_request(f"error converting YAML to JSON: {exc}") from exc


_WARNING_BUDGET = 4096
_WARNING_CUT = 256


def warning_headers(texts: list[str]) -> list[tuple[str, str]]:
    """``Warning`` headers, one per text; past 4096 runes in all each is cut to 256
    (apiserver:pkg/endpoints/filters/warning.go)."""
    if sum(len(t) for t in texts) > _WARNING_BUDGET:
        texts = [t if len(t) <= _WARNING_CUT else t[: _WARNING_CUT - 3] + "..." for t in texts]
    return [("Warning", admission.warning_header(t)) for t in texts]


def _watch_list(query: dict[str, str]) -> bool:
    """Whether a watch asks for a streaming list, checked as ``ValidateListOptions`` checks it
    (apimachinery:pkg/apis/meta/internalversion/validation/validation.go)."""
    if not _flag(query, "sendInitialEvents"):
        return False
    errors = []
    if query.get("resourceVersionMatch") != "NotOlderThan":
        errors.append(
            apierrors.forbidden(
                "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
            )
        )
    if not _flag(query, "allowWatchBookmarks"):
        errors.append(
            apierrors.forbidden("allowWatchBookmarks", "sendInitialEvents requires setting allowWatchBookmarks to true")
        )
    if errors:
        raise apierrors.invalid("ListOptions", "", errors, group="meta.k8s.io")
    return True


def _is_non_resource(path: str) -> bool:
    """Paths served by ``_non_resource``: everything but resource URLs under /api and /apis."""
    if path in ("/version", "/healthz", "/livez", "/readyz", "/api", "/apis") or path.startswith("/openapi"):
        return True
    segments = path.strip("/").split("/")
    return (segments[0] == "api" and len(segments) == 2) or (segments[0] == "apis" and len(segments) in (2, 3))


def _flag(query: dict[str, str], name: str) -> bool:
    """Boolean query parameters as Go's strconv.ParseBool reads them (the Python client sends ``True``)."""
    return query.get(name, "").lower() in ("true", "1", "t")


def _dry_run(query: dict[str, str]) -> bool:
    value = query.get("dryRun")
    if value in (None, ""):
        return False
    if value != "All":
        raise apierrors.bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
    return True
