"""The emulator's own control endpoints under ``/sim/v1/`` and the client the CLI uses for them.

Fault injection, the audit record, history compaction and the simulated hardware are not
Kubernetes APIs, so they live under a prefix no real server has, and only the admin token may
use them; the one exception is ``GET /sim/v1/clock``, the virtual time, which any authenticated
identity may read (it is how the product's clock follows the simulation). ``python -m shared.sim
api-faults|audit`` call these; tests use the server object directly instead.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shared import errors
from shared.sim.apiserver import handler
from shared.sim.apiserver.apierrors import ApiError
from shared.sim.gpu import fabriccontrol

if TYPE_CHECKING:
    from shared.sim.apiserver.kubeconfig import Target
    from shared.sim.server import SimServer

PREFIX = handler.CONTROL_PREFIX
_FAULT_FIELDS = (
    "latency_ms",
    "conflict_rate",
    "error_rate",
    "throttle_rate",
    "stored_error_rate",
    "down_seconds",
    "kill_after_writes",
    "kill_identity",
    "drop_watches",
)


def handle(
    sim: SimServer, method: str, path: str, query: dict[str, str], raw: bytes, token: str | None
) -> tuple[int, Any]:
    """Serve one control request; only the admin identity may call these."""
    who = sim.identities.who(token)
    if who is None:
        raise ApiError(401, "Unauthorized", "Unauthorized")
    what = path[len(PREFIX) :].strip("/")
    if what == "clock" and method == "GET":  # any identity may read the time, as any may read /version
        return 200, fabriccontrol.clock(sim)
    if not who.is_admin:
        raise ApiError(403, "Forbidden", f'User "{who.user}" cannot use the simulator control API')
    body = json.loads(raw) if raw.strip() else {}
    if what in fabriccontrol.ENDPOINTS:
        return fabriccontrol.handle(sim, method, what, body)
    route = _ROUTES.get((what, method))
    if route is None:
        raise ApiError(404, "NotFound", f"no control endpoint {method} {path}")
    return 200, route(sim, body, query)


def _faults(sim: SimServer, body: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    return sim.faults.settings.public()


def _set_faults(sim: SimServer, body: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    if body.get("clear"):
        sim.faults.clear()
    changes = {k: body[k] for k in _FAULT_FIELDS if body.get(k) is not None}
    try:
        sim.faults.configure(**changes)
    except (TypeError, ValueError) as exc:
        raise ApiError(400, "BadRequest", str(exc)) from exc
    return sim.faults.settings.public()


def _audit(sim: SimServer, body: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    records = sim.audit.records(identity=query.get("identity") or None)
    return {"records": [r.as_dict() for r in records]}


def _compact(sim: SimServer, body: dict[str, Any], query: dict[str, str]) -> dict[str, Any]:
    sim.store.compact(int(body.get("keep", 0)))
    return {"compacted": sim.store.compacted}


_ROUTES: dict[tuple[str, str], Callable[[SimServer, dict[str, Any], dict[str, str]], Any]] = {
    ("faults", "GET"): _faults,
    ("faults", "PUT"): _set_faults,
    ("faults", "POST"): _set_faults,
    ("audit", "GET"): _audit,
    ("compact", "POST"): _compact,
}
"""(endpoint, method) -> what answers it, for the endpoints that are not the hardware's."""


def call(target: Target, method: str, what: str, body: dict[str, Any] | None = None, query: str = "") -> Any:
    """Call a control endpoint of the server ``target`` names; errors become ToolErrors."""
    data = json.dumps(body).encode() if body is not None else None
    url = f"{target.server}{PREFIX}{what}" + (f"?{query}" if query else "")
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    if target.token:
        request.add_header("Authorization", f"Bearer {target.token}")
    return _send(request, target)


def api_request(target: Target, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """A plain Kubernetes API call (the sim CLI must not import the kubernetes client)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{target.server}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
    )
    if target.token:
        request.add_header("Authorization", f"Bearer {target.token}")
    return _send(request, target)


def _send(request: urllib.request.Request, target: Target) -> Any:
    context = None
    if target.ca_pem:
        context = ssl.create_default_context(cadata=target.ca_pem)
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("message", exc.reason)
        except ValueError:
            message = exc.reason
        if exc.code in (401, 403):
            raise errors.Unauthorized(str(message), where=request.full_url) from exc
        if exc.code == 404:
            raise errors.NotFound(str(message), where=request.full_url) from exc
        if exc.code in (400, 422):
            raise errors.InvalidInput(str(message), where=request.full_url) from exc
        raise errors.Unavailable(f"{exc.code}: {message}", where=request.full_url) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise errors.Unavailable(f"cannot reach the simulator: {exc}", where=request.full_url) from exc
