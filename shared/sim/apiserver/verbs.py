"""What each verb does over HTTP: the request's body decoded, the API called, the answer written.

The request pipeline (:mod:`shared.sim.apiserver.handler`: authentication, routing, RBAC, faults)
picks a method here by the request's method and subresource from the tables at the bottom; the
work itself is :mod:`shared.sim.apiserver.api` (verbs on stored objects),
:mod:`shared.sim.apiserver.subresources` and :mod:`shared.sim.apiserver.reviews`. How an answer is
written is :mod:`shared.sim.apiserver.exchange`.
"""

from __future__ import annotations

import gc
import json
import select
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shared.sim.apiserver import (
    admission,
    apierrors,
    bodies,
    identities,
    listwatch,
    managedfields,
    patchtypes,
    queryparams,
    resources,
    reviews,
    routes,
    store,
    subresources,
    tables,
    watch,
)
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.apiserver.exchange import JSON, Exchange


@dataclass(frozen=True)
class Call:
    """A resource request past authorization and faults, as the verbs see it."""

    method: str
    route: routes.Route
    query: dict[str, str]
    raw: bytes
    dry_run: bool

    @property
    def resource(self) -> resources.Resource:
        return self.route.resource

    @property
    def namespace(self) -> str:
        return self.route.namespace or ""

    @property
    def name(self) -> str:
        return self.route.name or ""


class Verbs(Exchange):
    _who: identities.Identity  # the authenticated (or impersonated) user, set per request

    def _review(self, method: str, route: routes.Route, query: dict[str, str], raw: bytes) -> None:
        reviews.check_request(method, route.name)
        r = route.resource
        body, options = self._write_body(r, raw, query, "create")
        manager = reviews.manager_of(query.get("fieldManager"), self.headers["User-Agent"])
        self._answer(
            201,
            reviews.create(self.sim, r, route.namespace, body, who=self._who, options=options, manager=manager),
            None,
        )

    def _create(self, call: Call) -> None:
        r = call.resource
        body, options = self._write_body(r, call.raw, call.query, "create")
        self._answer(201, self.sim.api.create(r, call.route.namespace, body, dry_run=call.dry_run, options=options), r)

    def _delete_collection(self, call: Call) -> None:
        r = call.resource
        deleted = self.sim.api.delete_collection(
            r,
            call.route.namespace,
            label_selector=call.query.get("labelSelector"),
            field_selector=call.query.get("fieldSelector"),
            options=self._delete_options(call.raw, call.query),
            dry_run=call.dry_run,
        )
        self._send_json(
            200,
            {
                "kind": f"{r.kind}List",
                "apiVersion": r.group_version,
                "metadata": {"resourceVersion": str(self.sim.store.resource_version)},
                "items": deleted,
            },
        )

    def _get(self, call: Call) -> None:
        self._answer(200, self.sim.api.get(call.resource, call.route.namespace, call.name), call.resource)

    def _update(self, call: Call) -> None:
        r, route = call.resource, call.route
        body, options = self._write_body(r, call.raw, call.query, "update")
        updated = self.sim.api.update(
            r, route.namespace, call.name, body, sub=route.subresource, dry_run=call.dry_run, options=options
        )
        self._answer(200, updated, r)

    def _patch(self, call: Call) -> None:
        r, route = call.resource, call.route
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        operation: admission.Operation = "apply" if content_type == patchtypes.APPLY else "patch"
        options = self._options(call.query, operation)
        body = self._patch_body(content_type, call.raw, options)
        patched = self.sim.api.patch(
            r,
            route.namespace,
            call.name,
            content_type,
            body,
            sub=route.subresource,
            dry_run=call.dry_run,
            field_manager=call.query.get("fieldManager"),
            options=options,
        )
        self._answer(200, patched, r)

    def _delete(self, call: Call) -> None:
        r = call.resource
        options = self._delete_options(call.raw, call.query)
        self._answer(200, self.sim.api.delete(r, call.route.namespace, call.name, options, dry_run=call.dry_run), r)

    def _log(self, call: Call) -> None:
        text = subresources.read_log(self.sim.api, self.sim.logs, call.resource, call.namespace, call.name, call.query)
        self._send(200, text.encode(), "text/plain")

    def _evict(self, call: Call) -> None:
        body = self._body(call.raw, ("policy/v1", "Eviction"))
        evicted = subresources.evict(self.sim.api, call.resource, call.namespace, call.name, body, dry_run=call.dry_run)
        self._answer(201, evicted, None)

    def _bind(self, call: Call) -> None:
        body = self._body(call.raw, ("v1", "Binding"))
        bound = subresources.bind(self.sim.api, call.resource, call.namespace, call.name, body, dry_run=call.dry_run)
        self._answer(201, bound, None)

    def _request_token(self, call: Call) -> None:
        body = self._body(call.raw, ("authentication.k8s.io/v1", "TokenRequest"))
        token = subresources.request_token(
            self.sim.api, self.sim.identities, call.resource, call.namespace, call.name, body
        )
        self._answer(201, token, None)

    def _scale(self, call: Call) -> None:
        sim, r, ns, name, method = self.sim, call.resource, call.namespace, call.name, call.method
        if method == "GET":
            self._answer(200, subresources.scale_of(sim.api, r, ns, name), None)
            return
        if method not in ("PUT", "PATCH"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on scale")
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip() if method == "PATCH" else ""
        body = self._body(call.raw, ("autoscaling/v1", "Scale"))
        self._answer(
            200, subresources.change_scale(sim.api, r, ns, name, body, content_type, dry_run=call.dry_run), None
        )

    # ------------------------------------------------------------ bodies
    def _body(self, raw: bytes, into: tuple[str, str] | None = None) -> Any:
        return bodies.decode(raw, bodies.media_type(self.headers.get("Content-Type")), into)

    def _options(self, query: dict[str, str], operation: admission.Operation) -> admission.WriteOptions:
        options = admission.WriteOptions(
            directive=admission.directive_of(query.get("fieldValidation"), operation=operation),
            manager=query.get("fieldManager")
            or managedfields.manager_from_user_agent(self.headers.get("User-Agent") or ""),
            force=queryparams.flag(query, "force"),
        )
        self._warnings = options.warnings
        return options

    def _write_body(
        self, r: resources.Resource, raw: bytes, query: dict[str, str], operation: admission.Operation
    ) -> tuple[Any, admission.WriteOptions]:
        """The object a POST or PUT carries, decoded by its content type, and how to validate it."""
        options = self._options(query, operation)
        media = bodies.media_type(self.headers.get("Content-Type"), bodies.JSON)
        body, duplicates = bodies.decode_object(raw, media, into=(r.group_version, r.kind), custom=bool(r.crd))
        if duplicates is not None:
            options.duplicates = duplicates
        return body, options

    def _patch_body(self, content_type: str, raw: bytes, options: admission.WriteOptions) -> Any:
        if content_type == patchtypes.APPLY:
            try:
                body, options.duplicates = bodies.parse_json(raw)
                return body
            except json.JSONDecodeError:
                return bodies.parse_yaml(raw)
        if content_type in patchtypes.PATCH_TYPES and content_type != patchtypes.JSON_PATCH and raw.strip():
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

    # ------------------------------------------------------------ list and watch
    def _list(self, route: routes.Route, query: dict[str, str]) -> None:
        r = route.resource
        result = self.sim.api.list(
            r,
            route.namespace,
            label_selector=query.get("labelSelector"),
            field_selector=query.get("fieldSelector"),
            limit=queryparams.limit(query),
            continue_token=query.get("continue"),
        )
        meta = listwatch.list_meta(result)
        if self._wants_table():
            self._send_json(200, self._list_table(r, result.items, meta))
            return
        self._send(200, listwatch.list_json(r, meta, listwatch.items_json(self.sim.api, r, result.items)))

    def _list_table(self, r: resources.Resource, entries: list[store.Entry], meta: dict[str, Any]) -> dict[str, Any]:
        """The list as a Table. Pods come from the rows printed when they were written, decoded only
        for an ``includeObject`` that shows them; the decoding pauses the cyclic collector, which
        would otherwise walk the whole store each time a page of objects is built."""
        include, now = self._include_object(), self.sim.clock()
        printed = [e.printed for e in entries]
        if include == "None" and all(p is not None for p in printed):
            rows = [(None, p) for p in printed if p is not None]
            return tables.pod_table(rows, now=now, include_object=include, list_meta=meta)
        enabled = gc.isenabled()
        gc.disable()
        try:
            objects = [self.sim.api.as_version(r, e.object()) for e in entries]
        finally:
            if enabled:
                gc.enable()
        return tables.table(r, objects, now=now, include_object=include, list_meta=meta)

    def _watch(self, route: routes.Route, query: dict[str, str]) -> None:
        r = route.resource
        req = listwatch.watch_request(route, query, max_seconds=self.sim.settings.max_watch_seconds)
        epoch = self.sim.faults.watch_epoch
        stream = watch.Stream(
            self.sim.store,
            req,
            bookmark_interval=self.sim.settings.bookmark_interval,
            should_drop=lambda: self.sim.closing or self.sim.faults.watch_epoch != epoch or self._client_gone(),
            views=self.sim.api.views,
        )

        def as_table(obj: dict[str, Any]) -> dict[str, Any]:
            return tables.table(r, [obj], now=self.sim.clock(), include_object=self._include_object())

        tabled = self._wants_table()
        self._audit(200)
        self.send_response(200)
        self.send_header("Content-Type", JSON)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for line in stream:
                chunk = listwatch.table_event(line, as_table) if tabled else line
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
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


Verb = Callable[[Verbs, Call], None]
COLLECTION_VERBS: dict[str, Verb] = {"POST": Verbs._create, "DELETE": Verbs._delete_collection}
OBJECT_VERBS: dict[str, Verb] = {
    "GET": Verbs._get,
    "PUT": Verbs._update,
    "PATCH": Verbs._patch,
    "DELETE": Verbs._delete,
}
SUBRESOURCE_VERBS: dict[str, Verb] = {
    # Answered whatever the method, as before any verb is looked at.
    "log": Verbs._log,
    "eviction": Verbs._evict,
    "binding": Verbs._bind,
    "token": Verbs._request_token,
    "scale": Verbs._scale,
}
