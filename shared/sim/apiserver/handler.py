"""The HTTP face of the emulator: one request in, one Kubernetes-shaped answer out.

Per request, in order: read the body (refusing more than 3 MiB), authenticate the bearer token
(401), resolve the URL (404), authorize with RBAC (403), apply injected faults (latency, errors,
a cut connection), run the verb, record the audit line. Responses are JSON with the status codes
the official client checks (201 on create), lists are assembled from stored bytes, and watches
stream chunked JSON lines. What each verb does is :mod:`shared.sim.apiserver.verbs`; how an answer is
written, :mod:`shared.sim.apiserver.exchange`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from urllib.parse import parse_qs, urlsplit

from shared.sim.apiserver import (
    apierrors,
    audit,
    discovery,
    identities,
    impersonation,
    openapi,
    queryparams,
    rbac,
    reviews,
    routes,
    verbs,
)
from shared.sim.apiserver.apierrors import ApiError

logger = logging.getLogger(__name__)

CONTROL_PREFIX = "/sim/v1/"
"""The simulator's own endpoints (faults, audit, hardware): a prefix no real server serves; the
server object answers them, so the API layer knows nothing of the GPU side."""


class _Drop(Exception):
    """Close the connection without answering."""


class Handler(verbs.Verbs):
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

    # ------------------------------------------------------------ request
    def _handle(self, method: str) -> None:
        started = time.perf_counter()
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        self._pending = None
        self._warnings = []
        self._after_store = None
        try:
            self._serve(method, parts.path, query)
        except _Drop:
            self._pending = _with_code(self._pending, 0)
            self._drop()
        except ApiError as exc:
            self._pending = _with_code(self._pending, exc.code)
            self._send_json(exc.code, exc.status(), exc.headers)
        except json.JSONDecodeError as exc:
            self._pending = _with_code(self._pending, 400)
            self._send_json(400, apierrors.bad_request(f"invalid JSON body: {exc}").status())
        except OSError:
            # The client went away (a reset, a TLS EOF, a closed watch): nothing left to answer.
            self.close_connection = True
        except Exception as exc:  # a bug in the emulator: answer like a server would, and say so
            logger.exception("internal error serving %s %s", method, parts.path)
            self._pending = _with_code(self._pending, 500)
            with contextlib.suppress(OSError):
                self._send_json(500, ApiError(500, "InternalError", f"Internal error occurred: {exc}").status())
        finally:
            if self._pending is not None:
                self.sim.audit.add(self._pending)  # no answer went out (a dropped or cut connection)
            logger.debug("%s %s took %.1f ms", method, parts.path, (time.perf_counter() - started) * 1000)

    def _serve(self, method: str, path: str, query: dict[str, str]) -> None:
        raw = self._read_body()
        if path.startswith(CONTROL_PREFIX):
            code, answer = self.sim.control(method, path, query, raw, self._token())
            self._send_json(code, answer)
            return
        who = self._authenticate()
        if method == "GET" and self._non_resource(path, who):
            return
        watching = queryparams.flag(query, "watch")
        try:
            route = routes.parse(self.sim.table, path)
        except routes.Unserved as unserved:
            self._authorize(who, unserved.route, unserved.route.verb(method, watch=watching))
            raise
        if route is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        verb = route.verb(method, watch=watching)
        self._authorize(who, route, verb)
        self._inject_faults(who, route, verb)
        self._dispatch(method, route, query, raw, watching)

    def _authenticate(self) -> identities.Identity:
        who = self.sim.identities.who(self._token())
        if who is None:
            # audited as a real server audits failed authentication: no user, the request's path
            path = urlsplit(self.path).path
            self._pending = audit.Record(identities.ANONYMOUS, self.command.lower(), "", path, "", "", 0)
            raise ApiError(401, "Unauthorized", "Unauthorized")
        who = impersonation.impersonate(self.sim.authorizer, who, self.headers.items())
        self._who = who
        return who

    def _authorize(self, who: identities.Identity, route: routes.Route, verb: str) -> None:
        """RBAC's verdict on a resource request; from here on the request has its audit line."""
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
        self._pending = audit.Record(
            who.user,
            verb,
            r.group,
            f"{r.plural}/{route.subresource}" if route.subresource else r.plural,
            route.namespace or "",
            route.name or "",
            0,
        )
        verdict = self.sim.authorizer.decide(who, req)
        if not verdict.allowed:
            raise ApiError(
                403,
                "Forbidden",
                rbac.forbidden_message(who, req, verdict.reason),
                details={"name": route.name or "", "group": r.group, "kind": r.plural},
            )

    def _inject_faults(self, who: identities.Identity, route: routes.Route, verb: str) -> None:
        plural = route.resource.plural
        decision = self.sim.faults.decide(user=who.user, verb=verb, resource=plural, name=route.name or "")
        if decision.delay:
            time.sleep(decision.delay)
            self.sim.faults.record_delay(decision.delay)
        if decision.drop:
            raise _Drop()
        if decision.error is not None:
            raise decision.error
        self._after_store = decision.after_store

    def _non_resource(self, path: str, who: identities.Identity) -> bool:
        """Answer a GET of discovery, /version, health or OpenAPI; False when ``path`` is none of them."""
        path = path.rstrip("/") or "/"
        if discovery.is_non_resource(path):
            # Discovery, /version, /healthz and /openapi are authorized as non-resource URLs
            # (bootstrap ClusterRoles system:discovery and system:public-info-viewer grant them).
            asked = rbac.NonResourceRequest("get", path)
            verdict = self.sim.authorizer.decide(who, asked)
            if not verdict.allowed:
                raise ApiError(403, "Forbidden", rbac.forbidden_message(who, asked, verdict.reason))
        if path in discovery.HEALTH_PATHS:
            self._send(200, b"ok", "text/plain")
            return True
        if path == openapi.PREFIX or path.startswith(openapi.PREFIX + "/"):
            reply = openapi.serve(
                self.sim.table, self.sim.store, target=self.path, headers=self.headers, now=self.sim.vclock.time()
            )
            self.send_response(reply.code)
            for key, value in reply.headers:
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(reply.body)
            return True
        answer = discovery.document(self.sim.table, path)
        if answer is None:
            return False
        self._send_json(200, answer)
        return True

    # ------------------------------------------------------------ verbs
    def _dispatch(self, method: str, route: routes.Route, query: dict[str, str], raw: bytes, watching: bool) -> None:
        if reviews.serves(route.resource):  # access reviews: create-only, never stored, answered from RBAC
            self._review(method, route, query, raw)
            return
        call = verbs.Call(method, route, query, raw, queryparams.dry_run(query))
        if route.name is None and method == "GET":
            if watching:
                self._watch(route, query)
            else:
                self._list(route, query)
            return
        if route.name is None and method in verbs.COLLECTION_VERBS:
            verbs.COLLECTION_VERBS[method](self, call)
            return
        assert route.name is not None
        verb = verbs.SUBRESOURCE_VERBS.get(route.subresource or "") or verbs.OBJECT_VERBS.get(method)
        if verb is None:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        verb(self, call)


def _with_code(record: audit.Record | None, code: int) -> audit.Record | None:
    if record is None:
        return None
    return dataclasses.replace(record, code=code, warnings=())
